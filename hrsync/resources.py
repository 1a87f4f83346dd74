"""Files hrsync ships beside its code: migration scripts, sample exports, scenarios."""

from __future__ import annotations

from pathlib import Path

_PACKAGE = Path(__file__).resolve().parent


def shipped_dir(name: str) -> Path:
    """The top-level folder `name` of the repository, wherever hrsync runs from.

    A wheel carries it inside the package as ``_<name>`` (pyproject's
    force-include); a checkout or an editable install finds it at the top of
    the repository.
    """
    for candidate in (_PACKAGE / f"_{name}", _PACKAGE.parent / name):
        if candidate.is_dir():
            return candidate
    raise RuntimeError(f"hrsync's {name}/ folder is missing (looked beside {_PACKAGE})")
