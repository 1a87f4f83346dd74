"""The package's shape: the functional core stays pure, the rooms import only downward, no
import circle, a root of entry points and leaves, one stem per module.

The core imports nothing that does I/O, reads no clock, opens no file.

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
import re
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
        "hrsync.terminal",  # one field on one line, for reports and notices
        "hrsync.words",  # counts in words: plurals
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
    assert {"hrsync.core.export.rows", "hrsync.dx.models", "hrsync.dx.errors"} <= checked


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


# The rooms, bottom to top. A module imports from its own line and the lines below it,
# never from a line above; the cycle check keeps the rooms of one line honest. An entry
# names a module or a package (then every module in it); the most specific entry wins.
LAYERS: tuple[tuple[str, ...], ...] = (
    # leaves: import no other hrsync module but each other
    (
        "hrsync",
        "hrsync.outcome",
        "hrsync.secret",
        "hrsync.clock",
        "hrsync.resources",
        "hrsync.gcpause",
        "hrsync.logs",
        "hrsync.log_messages",
        "hrsync.logcap",
        "hrsync.capped_body",
        "hrsync.terminal",
        "hrsync.words",
        # cron maths, which `config` checks a schedule with: a leaf inside the daemon's room
        "hrsync.daemon.cron",
    ),
    # DX's vocabulary: plain data the core reads
    ("hrsync.dx.models", "hrsync.dx.errors", "hrsync.dx.methods", "hrsync.dx.payload"),
    # the core, by the step each part serves; its root holds what every step shares
    (
        "hrsync.core",
        "hrsync.core.settings",
        "hrsync.core.defaults",
        "hrsync.core.text",
        "hrsync.core.tree",
        "hrsync.core.listing",
        "hrsync.core.command_lines",
        "hrsync.core.listen",
        "hrsync.core.run_bounds",
    ),
    ("hrsync.core.export",),
    ("hrsync.core.people",),
    ("hrsync.core.teams",),
    ("hrsync.core.gate",),
    ("hrsync.core.confirmation", "hrsync.core.attributes"),
    ("hrsync.core.report", "hrsync.core.starter"),
    # the shell's services
    ("hrsync.config", "hrsync.store", "hrsync.sources", "hrsync.dx", "hrsync.simulator"),
    ("hrsync.sync",),
    ("hrsync.monitor",),
    ("hrsync.daemon",),
    ("hrsync.commands",),
    ("hrsync.cli", "hrsync.__main__"),
)

# The package root: entry points and leaves only; everything else lives in a room.
ROOT_MODULES = frozenset(
    {"__init__", "__main__", "cli", "clock", "gcpause", "logcap", "logs", "outcome"}
    | {"resources", "secret", "capped_body", "terminal"}
    | {"log_messages", "words"}
)


def all_modules() -> list[str]:
    return sorted(module_name(path) for path in PACKAGE.rglob("*.py"))


def layer_of(module: str) -> int:
    best: tuple[int, int] | None = None  # (specificity, layer)
    for layer, entries in enumerate(LAYERS):
        for entry in entries:
            inside = module == entry or (entry != "hrsync" and module.startswith(entry + "."))
            if inside and (best is None or len(entry) > best[0]):
                best = (len(entry), layer)
    assert best is not None, f"{module} is in no layer: add its room to LAYERS"
    return best[1]


def hrsync_imports(module: str) -> list[tuple[int, str]]:
    """Every hrsync module `module` imports, with the line: at the top, inside functions,
    and under TYPE_CHECKING alike (a type-only import is an import circle too)."""
    source = module_path(module).read_text(encoding="utf-8")
    found: list[tuple[int, str]] = []
    for node in ast.walk(ast.parse(source, filename=module)):
        if isinstance(node, ast.Import | ast.ImportFrom):
            for target in imported(node, module):
                if target.split(".")[0] == "hrsync" and module_path(target).exists():
                    found.append((node.lineno, target))
    return found


def import_graph() -> dict[str, set[str]]:
    return {
        module: {target for _, target in hrsync_imports(module) if target != module}
        for module in all_modules()
    }


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan's algorithm)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for nxt in sorted(graph.get(node, ())):
            if nxt not in index:
                visit(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in on_stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            component: list[str] = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.append(member)
                if member == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return found


def upward_imports() -> list[str]:
    found = []
    for module in all_modules():
        for line, target in hrsync_imports(module):
            if layer_of(target) > layer_of(module):
                found.append(f"{module} line {line}: imports {target}, a layer above it")
    return found


def test_every_import_runs_down_the_layers() -> None:
    found = upward_imports()
    assert not found, "imports that run upward (LAYERS):\n" + "\n".join(found)


def test_the_layer_check_finds_an_upward_import() -> None:
    assert layer_of("hrsync.core.gate.plan") < layer_of("hrsync.sync.story")
    assert layer_of("hrsync.daemon.cron") < layer_of("hrsync.config.crosschecks")
    assert layer_of("hrsync.daemon.cron") < layer_of("hrsync.daemon.service")
    assert layer_of("hrsync.dx.models") < layer_of("hrsync.core.gate.plan") < layer_of("hrsync.dx")


def test_no_import_circle_even_type_only() -> None:
    found = cycles(import_graph())
    assert not found, "import circles:\n" + "\n".join(" <-> ".join(c) for c in found)


def test_the_cycle_check_finds_a_circle() -> None:
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}, "e": set()}
    assert cycles(graph) == [["a", "b", "c"]]


def test_the_root_holds_only_entry_points_and_leaves() -> None:
    stems = {path.stem for path in PACKAGE.glob("*.py")}
    assert stems <= ROOT_MODULES, f"move into a room: {sorted(stems - ROOT_MODULES)}"
    leaves = set(LAYERS[0]) | {"hrsync.cli", "hrsync.__main__"}
    for stem in stems - {"__init__"}:
        assert f"hrsync.{stem}" in leaves, f"hrsync/{stem}.py is at the root but in no layer"


def test_no_two_modules_share_a_stem() -> None:
    by_stem: dict[str, list[str]] = {}
    for path in PACKAGE.rglob("*.py"):
        if path.name != "__init__.py":
            by_stem.setdefault(path.stem, []).append(str(path.relative_to(ROOT)))
    shared = {stem: paths for stem, paths in by_stem.items() if len(paths) > 1}
    assert not shared, f"modules sharing a name across rooms: {shared}"


def test_a_rooms_init_imports_nothing_outside_its_room() -> None:
    """Importing one leaf of a room (`hrsync.daemon.cron`) must not load the room."""
    found = []
    for path in PACKAGE.rglob("__init__.py"):
        package = module_name(path)
        for line, target in hrsync_imports(package):
            if not target.startswith(package + "."):
                found.append(f"{package} line {line}: imports {target}")
    assert not found, "\n".join(found)


def test_the_run_is_typed_without_any() -> None:
    """The orchestration's types say what flows between stages: no `Any` in `sync/`."""
    found = []
    for path in (PACKAGE / "sync").rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            named = isinstance(node, ast.Name) and node.id == "Any"
            attr = isinstance(node, ast.Attribute) and node.attr == "Any"
            if named or attr:
                found.append(f"{path.relative_to(ROOT)} line {node.lineno}")
    assert not found, "Any in sync/: " + ", ".join(found)


def test_the_architecture_page_names_every_module() -> None:
    """docs/explanation/architecture.md promises one line per module: a new module
    without its line would leave a newcomer guessing where a thing is decided."""
    page = (ROOT / "docs" / "explanation" / "architecture.md").read_text(encoding="utf-8")
    named = set(re.findall(r"^\s+(\w+\.py)\s", page, re.MULTILINE))
    modules = {p.name for p in PACKAGE.rglob("*.py") if p.name != "__init__.py"}
    assert sorted(modules - named) == []


def test_the_core_is_grouped_by_step() -> None:
    """The core's root keeps only what every step shares; each step is a sub-package that
    says in one line what it serves, and is a line of LAYERS."""
    core = PACKAGE / "core"
    root_modules = sorted(path.stem for path in core.glob("*.py") if path.stem != "__init__")
    assert len(root_modules) <= 12, f"core/ root holds {len(root_modules)}: {root_modules}"
    declared = {entry for line in LAYERS for entry in line}
    for package in sorted(path.parent for path in core.glob("*/__init__.py")):
        name = f"hrsync.core.{package.name}"
        assert name in declared, f"{name} is not a line of LAYERS"
        docstring = ast.get_docstring(ast.parse((package / "__init__.py").read_text("utf-8")))
        summary = (docstring or "").split("\n\n")[0]
        assert summary and "\n" not in summary, f"{name}: a docstring opening with one line"


# Records that stop growing: what a run planned travels in its result as one value (the
# Planned), and what reading the export found travels in the plan as one (the Reading),
# rather than each new finding copied field by field from stage to stage.
MAX_RECORD_FIELDS = 12


def test_the_run_s_records_keep_to_a_dozen_fields() -> None:
    from dataclasses import fields

    from hrsync.sync.context import Mapped
    from hrsync.sync.results import Planned, Reading, SyncResult

    for record in (Planned, SyncResult, Reading, Mapped):
        named = [f.name for f in fields(record)]
        assert len(named) <= MAX_RECORD_FIELDS, (record.__name__, len(named), named)
