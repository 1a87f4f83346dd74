"""requirements.lock against pyproject.toml: CI fails when the lock is out of date.

The image installs requirements.lock with --require-hashes and then the wheel with
--no-deps, so a dependency declared in pyproject.toml but missing from the lock would
only show up as an ImportError in production. This check needs no network: every
requirement declared for the image (the runtime dependencies and the extras the lock is
compiled with) must be a top-level pin of the lock whose version it accepts, the lock
must pin nothing top-level that is no longer declared, and every pin carries hashes.
Transitive completeness is checked by pip itself: in --require-hashes mode it refuses
to install a dependency the lock does not pin (CI installs it that way).
"""

from __future__ import annotations

import re
import tomllib
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name
from packaging.version import Version

ROOT = Path(__file__).resolve().parent.parent
PYPROJECT = ROOT / "pyproject.toml"
OURSELVES = "hrsync (pyproject.toml)"
UPDATE = "run `.venv/bin/pip-compile` (docs/reference/development.md: Updating the lock file)"


@dataclass
class Pin:
    name: str
    version: str
    line: int
    hashes: list[str] = field(default_factory=list)
    via: list[str] = field(default_factory=list)


def parse_lock(text: str) -> dict[str, Pin]:
    pins: dict[str, Pin] = {}
    current: Pin | None = None
    in_via = False
    for number, raw in enumerate(text.splitlines(), start=1):
        line = raw.strip()
        pinned = re.match(r"^([A-Za-z0-9][A-Za-z0-9._-]*)(\[[^\]]*\])?==([^\s\\;]+)", raw)
        if pinned:
            current = Pin(canonicalize_name(pinned.group(1)), pinned.group(3), number)
            pins[current.name] = current
            in_via = False
        elif current is None:
            continue
        elif line.startswith("--hash="):
            current.hashes.append(line.removeprefix("--hash=").rstrip(" \\"))
        elif line.startswith("# via") and line != "# via":
            current.via.append(line.removeprefix("# via").strip())
        elif line == "# via":
            in_via = True
        elif in_via and line.startswith("#   "):
            current.via.append(line.removeprefix("#").strip())
    return pins


def lock_settings(pyproject: dict[str, object]) -> tuple[Path, list[str]]:
    tool = pyproject.get("tool")
    assert isinstance(tool, dict), "pyproject.toml has no [tool] table"
    settings = tool.get("pip-tools")
    assert isinstance(settings, dict), "pyproject.toml has no [tool.pip-tools] table"
    return ROOT / str(settings["output-file"]), [str(e) for e in settings.get("extra", [])]


def declared(pyproject: dict[str, object], extras: list[str]) -> list[Requirement]:
    project = pyproject["project"]
    assert isinstance(project, dict)
    requirements = [Requirement(r) for r in project["dependencies"]]
    optional = project.get("optional-dependencies", {})
    for extra in extras:
        requirements += [Requirement(r) for r in optional[extra]]
    return requirements


def _capped(items: list[str]) -> str:
    shown = "; ".join(items[:20])
    return shown + (f"; and {len(items) - 20} more" if len(items) > 20 else "")


def lock_problems(pyproject_text: str, lock_text: str, lock_name: str) -> list[str]:
    pyproject = tomllib.loads(pyproject_text)
    _, extras = lock_settings(pyproject)
    pins = parse_lock(lock_text)
    problems: list[str] = []
    wanted = declared(pyproject, extras)
    wanted_names = {canonicalize_name(r.name) for r in wanted}
    for req in wanted:
        pin = pins.get(canonicalize_name(req.name))
        if pin is None:
            problems.append(f"{req} is declared in pyproject.toml but not pinned in {lock_name}")
        elif not req.specifier.contains(Version(pin.version), prereleases=True):
            problems.append(
                f"{lock_name}:{pin.line}: {pin.name}=={pin.version} does not satisfy "
                f"pyproject.toml's {req}"
            )
        elif OURSELVES not in pin.via:
            problems.append(f"{lock_name}:{pin.line}: {pin.name} is not pinned as declared")
    for pin in pins.values():
        if OURSELVES in pin.via and pin.name not in wanted_names:
            problems.append(
                f"{lock_name}:{pin.line}: {pin.name} is no longer declared in pyproject.toml"
            )
        if not pin.hashes:
            problems.append(f"{lock_name}:{pin.line}: {pin.name} has no --hash")
    header = "\n".join(line for line in lock_text.splitlines() if line.startswith("#"))
    for flag in ["--generate-hashes", *(f"--extra={extra}" for extra in extras)]:
        if flag not in header:
            problems.append(f"{lock_name} was not compiled with {flag}")
    return problems


def test_the_lock_is_up_to_date_with_pyproject() -> None:
    text = PYPROJECT.read_text(encoding="utf-8")
    lock, _ = lock_settings(tomllib.loads(text))
    assert lock.is_file(), f"{lock.name} is missing; {UPDATE}"
    problems = lock_problems(text, lock.read_text(encoding="utf-8"), lock.name)
    assert not problems, (
        f"{lock.name} is out of date with pyproject.toml: {_capped(problems)}; {UPDATE}"
    )


def test_the_image_gets_the_postgres_driver_through_the_lock() -> None:
    text = PYPROJECT.read_text(encoding="utf-8")
    lock, extras = lock_settings(tomllib.loads(text))
    assert "postgres" in extras
    pins = parse_lock(lock.read_text(encoding="utf-8"))
    assert {"psycopg", "psycopg-binary"} <= pins.keys()
    assert pins["psycopg"].version == pins["psycopg-binary"].version


def test_dev_tools_are_bounded_above() -> None:
    project = tomllib.loads(PYPROJECT.read_text(encoding="utf-8"))["project"]
    for raw in project["optional-dependencies"]["dev"]:
        req = Requirement(raw)
        assert any(s.operator in ("<", "<=", "==", "~=") for s in req.specifier), (
            f"{req.name} has no upper bound: a new release could break CI unnoticed"
        )


# ------------------------------------------------------------------ the check itself

PYPROJECT_SAMPLE = """
[project]
name = "hrsync"
dependencies = ["httpx>=0.27,<1", "tzdata>=2024.1"]
[project.optional-dependencies]
postgres = ["psycopg[binary]>=3.2,<4"]
dev = ["pytest>=8,<10"]
[tool.pip-tools]
extra = ["postgres"]
output-file = "requirements.lock"
"""

LOCK_SAMPLE = """\
#
#    pip-compile --extra=postgres --generate-hashes --output-file=requirements.lock pyproject.toml
#
anyio==4.16.0 \\
    --hash=sha256:aa
    # via httpx
httpx==0.28.1 \\
    --hash=sha256:bb \\
    --hash=sha256:cc
    # via hrsync (pyproject.toml)
psycopg==3.3.9 \\
    --hash=sha256:dd
    # via hrsync (pyproject.toml)
psycopg-binary==3.3.9 \\
    --hash=sha256:ee
    # via psycopg
tzdata==2026.6 \\
    --hash=sha256:ff
    # via
    #   hrsync (pyproject.toml)
    #   psycopg
"""


@pytest.mark.parametrize(
    ("pyproject", "lock", "expected"),
    [
        pytest.param(PYPROJECT_SAMPLE, LOCK_SAMPLE, [], id="in-date"),
        pytest.param(
            PYPROJECT_SAMPLE.replace('"tzdata>=2024.1"', '"tzdata>=2024.1", "rich>=13"'),
            LOCK_SAMPLE,
            ["rich>=13 is declared in pyproject.toml but not pinned in requirements.lock"],
            id="dependency-added",
        ),
        pytest.param(
            PYPROJECT_SAMPLE.replace("httpx>=0.27,<1", "httpx>=0.29,<1"),
            LOCK_SAMPLE,
            ["requirements.lock:7: httpx==0.28.1 does not satisfy pyproject.toml's httpx<1,>=0.29"],
            id="floor-raised",
        ),
        pytest.param(
            PYPROJECT_SAMPLE.replace(', "tzdata>=2024.1"', ""),
            LOCK_SAMPLE,
            ["requirements.lock:17: tzdata is no longer declared in pyproject.toml"],
            id="dependency-removed",
        ),
        pytest.param(
            PYPROJECT_SAMPLE.replace('extra = ["postgres"]', 'extra = ["postgres", "dev"]'),
            LOCK_SAMPLE,
            [
                "pytest<10,>=8 is declared in pyproject.toml but not pinned in requirements.lock",
                "requirements.lock was not compiled with --extra=dev",
            ],
            id="extra-added",
        ),
        pytest.param(
            PYPROJECT_SAMPLE,
            LOCK_SAMPLE.replace("anyio==4.16.0 \\\n    --hash=sha256:aa\n", "anyio==4.16.0\n"),
            ["requirements.lock:4: anyio has no --hash"],
            id="no-hash",
        ),
        pytest.param(
            PYPROJECT_SAMPLE,
            LOCK_SAMPLE.replace("--generate-hashes ", ""),
            ["requirements.lock was not compiled with --generate-hashes"],
            id="header",
        ),
    ],
)
def test_lock_problems(pyproject: str, lock: str, expected: list[str]) -> None:
    assert lock_problems(pyproject, lock, "requirements.lock") == expected
