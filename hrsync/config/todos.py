"""Values left as TODO (by `hrsync init`): refused when the config is loaded, each naming
its key.

`hrsync init` writes what it could not decide as a string starting with ``TODO``, so
that the config cannot be used until a person has decided: a column guessed wrong would
sync a wrong org, a TODO only stops at `hrsync check`. A TODO replaced through the
environment (`HRSYNC_SOURCE__FIELDS__MANAGER_ID`) counts as replaced.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from hrsync.core.text import TODO_PREFIX


def is_todo(value: object) -> bool:
    return isinstance(value, str) and value.strip().startswith(TODO_PREFIX)


def todo_problems(raw: Mapping[str, Any], path: Path | None) -> list[str]:
    """One problem per TODO value in the parsed file (tables and lists walked)."""
    found: list[str] = []
    where = f" in {path}" if path is not None else ""

    def walk(node: Any, dotted: str) -> None:
        if isinstance(node, Mapping):
            for key, value in node.items():
                walk(value, f"{dotted}.{key}" if dotted else str(key))
        elif isinstance(node, list):
            for item in node:
                walk(item, dotted)
        elif is_todo(node):
            found.append(f"{dotted} is a TODO left by hrsync init: replace {node.strip()!r}{where}")

    walk(raw, "")
    return found
