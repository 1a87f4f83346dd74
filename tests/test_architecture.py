"""The functional core stays pure: it imports nothing that does I/O, reads no clock, opens
no file.

Two checks, so neither a clever import nor a transitive one slips through:
- static: every module under hrsync/core/, and every non-core module it may import (an
  explicit allowlist, checked by the same rule, transitively, with the packages whose
  `__init__` an import runs), is parsed with `ast`; an import of an I/O module, of an
  hrsync module outside the allowlist, a clock read or a file call fails, naming module,
  line and what was found.
- runtime: a fresh interpreter imports every core module and must not have loaded the
  HTTP client, the database, the logging or the network stack.
"""

from __future__ import annotations

import ast
import json
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "hrsync"
CORE = PACKAGE / "core"

# Top-level names of modules that do I/O, keep global state, or read the clock.
FORBIDDEN_IMPORTS = frozenset(
    {
        "alembic",
        "apscheduler",
        "asyncio",
        "concurrent",
        "ctypes",
        "gc",
        "getpass",
        "http",
        "httpx",
        "importlib",
        "io",
        "logging",
        "multiprocessing",
        "os",
        "platform",
        "psycopg",
        "random",
        "secrets",
        "select",
        "selectors",
        "shutil",
        "signal",
        "socket",
        "sqlalchemy",
        "ssl",
        "structlog",
        "subprocess",
        "sys",
        "tempfile",
        "threading",
        "time",
        "tomllib",
        "urllib",
        "uuid",
        "zoneinfo",  # reads the time zone database from disk
    }
)

# hrsync modules outside the core that the core may import: plain data and pure functions.
# Each is held to the same rule as the core.
PURE_OUTSIDE_CORE = frozenset(
    {
        "hrsync",  # the package's __init__: a docstring and the version
        "hrsync.dx",
        "hrsync.dx.errors",  # DX's error types (dx.payload raises one)
        "hrsync.dx.methods",  # DX method names
        "hrsync.dx.models",  # DX's replies as typed data
        "hrsync.dx.payload",  # the request body and DX's 5 MB limit (guards)
        "hrsync.outcome",
        "hrsync.secret",  # the Secret type in the settings
        "hrsync.sources",
        "hrsync.sources.rows",  # what the readers yield
    }
)

# Calls that read the clock or the world, by the called attribute or name. `pathlib.Path`
# is allowed as a type only: its I/O methods count as calls here.
FORBIDDEN_CALLS = frozenset(
    {
        # the clock: it is passed in
        "now",
        "today",
        "utcnow",
        "monotonic",
        "perf_counter",
        # files and the terminal
        "open",
        "input",
        "print",
        "read_text",
        "read_bytes",
        "write_text",
        "write_bytes",
        "exists",
        "is_file",
        "is_dir",
        "stat",
        "iterdir",
        "glob",
        "rglob",
        "mkdir",
        "unlink",
        "resolve",
        "expanduser",
        "cwd",
        "home",
        # code from strings
        "eval",
        "exec",
        "__import__",
        "breakpoint",
    }
)


@dataclass(frozen=True)
class Finding:
    module: str
    line: int
    what: str

    def __str__(self) -> str:
        return f"{self.module} line {self.line}: {self.what}"


def module_name(path: Path) -> str:
    parts = path.relative_to(ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def module_path(name: str) -> Path:
    base = ROOT.joinpath(*name.split("."))
    return base / "__init__.py" if base.is_dir() else base.with_suffix(".py")


def core_modules() -> list[str]:
    # Every module under core/, its packages' too (core/people/ is one).
    return sorted(module_name(path) for path in CORE.rglob("*.py"))


def allowed_hrsync(name: str) -> bool:
    return name == "hrsync.core" or name.startswith("hrsync.core.") or name in PURE_OUTSIDE_CORE


def parents(name: str) -> list[str]:
    """The packages whose `__init__` importing `name` runs."""
    parts = name.split(".")
    return [".".join(parts[:i]) for i in range(1, len(parts))]


def imported(node: ast.Import | ast.ImportFrom, module: str) -> list[str]:
    if isinstance(node, ast.Import):
        return [alias.name for alias in node.names]
    if node.level:
        package = module if module_path(module).name == "__init__.py" else module.rpartition(".")[0]
        base = ".".join(package.split(".")[: len(package.split(".")) - node.level + 1])
        target = f"{base}.{node.module}" if node.module else base
    else:
        target = node.module or ""
    # `from hrsync.core import tree` imports a module: each name may be one.
    if not target.startswith("hrsync"):
        return [target]
    return [target, *(f"{target}.{alias.name}" for alias in node.names)]


def check_module(module: str, source: str | None = None) -> tuple[list[Finding], set[str]]:
    """The findings in one module, and the hrsync modules it imports (to check next)."""
    if source is None:
        source = module_path(module).read_text(encoding="utf-8")
    findings: list[Finding] = []
    hrsync_imports: set[str] = set()
    for node in ast.walk(ast.parse(source, filename=module)):
        if isinstance(node, ast.Import | ast.ImportFrom):
            for target in imported(node, module):
                top = target.split(".")[0]
                if top in FORBIDDEN_IMPORTS:
                    findings.append(Finding(module, node.lineno, f"imports {target} (I/O)"))
                elif top == "hrsync" and module_path(target).exists():
                    if not allowed_hrsync(target):
                        findings.append(
                            Finding(
                                module,
                                node.lineno,
                                f"imports {target}, which is not a pure module "
                                "(PURE_OUTSIDE_CORE in tests/test_architecture.py)",
                            )
                        )
                    hrsync_imports.add(target)
        elif isinstance(node, ast.Call):
            func = node.func
            called = (
                func.attr
                if isinstance(func, ast.Attribute)
                else func.id
                if isinstance(func, ast.Name)
                else None
            )
            if called in FORBIDDEN_CALLS:
                findings.append(Finding(module, node.lineno, f"calls {called}()"))
    return findings, hrsync_imports


def check_tree(start: list[str]) -> tuple[list[Finding], set[str]]:
    """Check `start` and every hrsync module they reach, with their packages."""
    findings: list[Finding] = []
    queue = [name for module in start for name in (*parents(module), module)]
    checked: set[str] = set()
    while queue:
        module = queue.pop()
        if module in checked:
            continue
        checked.add(module)
        found, reached = check_module(module)
        findings.extend(found)
        queue.extend(
            name
            for target in reached
            if allowed_hrsync(target)
            for name in (*parents(target), target)
        )
    return findings, checked


def test_the_core_and_what_it_imports_do_no_io() -> None:
    findings, checked = check_tree(core_modules())
    assert not findings, "the core must stay pure:\n" + "\n".join(map(str, findings))
    # The walk really went through the core and past it.
    assert set(core_modules()) <= checked
    assert {"hrsync.sources.rows", "hrsync.dx.models", "hrsync.sources"} <= checked


def test_the_static_check_finds_what_it_is_for() -> None:
    """The rule itself, on a module's text written for it (no test edits the core)."""
    source = (
        "import os\n"
        "from datetime import datetime\n"
        "from hrsync.store import repo\n"
        "from hrsync.dx.models import DxTeam\n"
        "def f(path):\n"
        "    return datetime.now(), path.read_text(), open('x')\n"
    )
    findings, _ = check_module("hrsync.core.probe", source)
    assert [(f.line, f.what.split(",")[0]) for f in findings] == [
        (1, "imports os (I/O)"),
        (3, "imports hrsync.store"),
        (3, "imports hrsync.store.repo"),
        (6, "calls now()"),
        (6, "calls read_text()"),
        (6, "calls open()"),
    ]


IO_MODULES = ("httpx", "sqlalchemy", "structlog", "alembic", "socket", "apscheduler", "psycopg")


def test_importing_the_core_loads_no_io_library() -> None:
    modules = core_modules()
    program = (
        "import json, sys\n"
        + "".join(f"import {name}\n" for name in modules)
        + f"print(json.dumps(sorted(m for m in {list(IO_MODULES)!r} if m in sys.modules)))\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", program], cwd=ROOT, capture_output=True, text=True, check=False
    )
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout) == [], f"importing the {len(modules)} core modules loaded"
