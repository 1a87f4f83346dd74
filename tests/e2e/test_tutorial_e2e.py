"""The first-sync tutorial, run from the page itself (issue 24): its ```sh blocks in
order, on a terminal as a reader runs them, with the second terminal's simulator in the
background; every command must succeed and every line the page shows as output must be
printed. And the issue's promise: a person with an export of their own reaches an applied
rehearsal sync with `init`, `simulator --users-from` and `sync`, changing at most the
TODOs `init` left."""

from __future__ import annotations

import csv
import os
import re
import shutil
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.e2e.conftest import CONFIG, ROOT
from tests.e2e.rehearsing import (
    clean_env,
    fenced_blocks,
    hrsync,
    on_terminal,
    rehearsing,
    run_on_terminal,
    shown,
)

pytestmark = pytest.mark.slow

PAGE = ROOT / "docs" / "tutorial" / "first-sync.md"
FIXTURES = ROOT / "tests" / "fixtures" / "init"
CONFIG_FILE = "first-sync/hrsync.toml"
PAGE_PORT = "8765"


@dataclass
class Step:
    """A ```sh block of the page and the plain block after it, if any: what it prints."""

    commands: list[str]
    output: list[str] | None


def steps(page: Path) -> list[Step]:
    blocks = fenced_blocks(page)
    found: list[Step] = []
    for i, (language, text) in enumerate(blocks):
        if language != "sh":
            continue
        after = blocks[i + 1] if i + 1 < len(blocks) else None
        output = after[1].splitlines() if after is not None and after[0] == "" else None
        found.append(Step(text.splitlines(), output))
    return found


def test_the_tutorial_s_commands_take_an_export_to_a_synced_reorganised_dx(
    tmp_path: Path,
) -> None:
    """Runs the page's own commands in order, as a reader would: a page that drifts from
    what hrsync does, or shows a line it does not print, fails here."""
    (tmp_path / "config").symlink_to(CONFIG)
    path = f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}"
    env = {**clean_env(), "PATH": path}
    page = steps(PAGE)
    install, *rest = page
    # The README's quick start, which CI runs; here hrsync is installed already.
    assert install.commands[0].startswith("python3 -m venv .venv && .venv/bin/pip install")
    (start,) = [i for i, step in enumerate(rest) if step.commands[0].startswith("hrsync sim")]
    # The second terminal starts in the working folder too, as the page says.
    assert rest[start].commands == ["hrsync simulator --rehearse hrsync.toml"]
    (daemon,) = [i for i, step in enumerate(rest) if step.commands[0].endswith(" run --now")]
    # The page's `cd` moves the reader, and so every later command (no --config to type).
    where = [tmp_path]

    def run_step(step: Step, env: dict[str, str]) -> str:
        printed = ""
        for command in step.commands:
            if command.startswith("cd "):
                where[0] = (where[0] / command.removeprefix("cd ").strip()).resolve()
                continue
            code, output = run_on_terminal(command, where[0], env)
            assert code == 0, f"{command}: exit {code}\n{output}"
            printed += output
        if step.output is not None:
            assert shown(step.output, printed) == [], printed
        return printed

    for step in rest[:start]:
        run_step(step, env)
    config = (tmp_path / CONFIG_FILE).read_text(encoding="utf-8")
    assert "TODO" not in config
    assert 'base_url = "http://127.0.0.1:8765"' in config, "init points at the simulator"

    # The second terminal: the simulator on a free port instead of the page's 8765.
    assert where[0] == tmp_path / "first-sync"
    with rehearsing(where[0], *rest[start].commands[0].split()[2:]) as rehearsal:
        port = rehearsal.base_url.rpartition(":")[2]
        as_shown = [line.replace(f":{port}", f":{PAGE_PORT}") for line in rehearsal.printed]
        printed = rest[start].output
        assert printed is not None
        assert shown(printed, "\n".join(as_shown)) == [], rehearsal.printed
        env = {**env, **rehearsal.env}
        outputs = [run_step(step, env) for step in rest[start + 1 : daemon]]
        for output in outputs:
            assert rehearsal.token not in output

        # The daemon, stopped with Ctrl-C once its first sync has finished.
        (command,) = rest[daemon].commands
        with on_terminal(command, where[0], env) as terminal:
            terminal.wait_for("sync.finished")
            terminal.interrupt()
            assert terminal.finish() == 0, terminal.output
        assert "daemon.stopped" in terminal.output
        logged = rest[daemon].output
        assert logged is not None
        assert shown(logged, terminal.output) == [], terminal.output
        teams = rehearsal.teams()

    # DX as the page left it: the reorganisation, then Platform flattened (approved).
    assert len(teams) == 10
    assert {"Data Quality", "Machine Learning", "Platform"} <= set(teams)
    gone = {"Mobile Android", "Growth", "Platform Infrastructure", "Developer Productivity"}
    assert not gone & set(teams)
    assert (tmp_path / "first-sync" / "rehearsal.db").exists()
    assert not (tmp_path / "first-sync" / "hrsync.db").exists(), "the rehearsal's own store"

    for step in rest[daemon + 1 :]:
        run_step(step, env)
    assert not (tmp_path / "first-sync").exists()


# Your own export: not the sample org's column names, and for one a TODO left by init.


def rows_of(path: Path) -> list[dict[str, str]]:
    with path.open(encoding="utf-8", newline="") as fh:
        return list(csv.DictReader(fh))


def directory_export(folder: Path) -> Path:
    """A directory's export: ids, sign-in names and managers, no display name (init
    leaves `source.fields.name` as a TODO)."""
    path = folder / "directory.csv"
    with path.open("w", encoding="utf-8", newline="") as fh:
        writer = csv.writer(fh)
        writer.writerow(["uid", "upn", "mgr_uid", "ou", "state"])
        for row in rows_of(FIXTURES / "bamboohr-report.csv"):
            writer.writerow(
                [
                    row["Employee #"],
                    row["Work Email"],
                    row["Supervisor EID"],
                    row["Department"],
                    row["Status"],
                ]
            )
    return path


def copied(name: str) -> Callable[[Path], Path]:
    def copy(folder: Path) -> Path:
        return Path(shutil.copy(FIXTURES / name, folder / name))

    return copy


@dataclass(frozen=True)
class OwnExport:
    """An export, what a person puts in place of init's TODOs, and, read independently
    of hrsync, who leads a team: a kept person someone kept reports to."""

    make: Callable[[Path], Path]
    todos: dict[str, str]
    key: str  # the column a manager column refers to
    manager: str
    name: Callable[[dict[str, str]], str]
    status: str
    kept: frozenset[str]

    def teams(self, export: Path) -> set[str]:
        people = [row for row in rows_of(export) if row[self.status] in self.kept]
        managers = {row[self.manager] for row in people}
        # init's default team name: "{lead_name}'s team".
        return {f"{self.name(row)}'s team" for row in people if row[self.key] in managers}


OWN_EXPORTS = {
    "bamboohr-csv": OwnExport(
        copied("bamboohr-report.csv"),
        {},
        "Employee #",
        "Supervisor EID",
        lambda row: f"{row['First Name']} {row['Last Name']}",
        "Status",
        frozenset({"Active"}),
    ),
    "hibob-csv-managers-by-name": OwnExport(
        copied("hibob-people.csv"),
        {},
        "Display name",
        "Reports to",
        lambda row: row["Display name"],
        "Lifecycle status",
        frozenset({"employed"}),
    ),
    "directory-without-names": OwnExport(
        directory_export,
        {"name": "{upn}"},
        "uid",
        "mgr_uid",
        lambda row: row["upn"],
        "state",
        frozenset({"Active"}),
    ),
}

TODO_LINE = re.compile(r'^(\w+) = "TODO[^"]*"$', re.MULTILINE)


@pytest.mark.parametrize("own", OWN_EXPORTS.values(), ids=OWN_EXPORTS.keys())
def test_your_own_export_reaches_an_applied_rehearsal_changing_only_init_s_todos(
    tmp_path: Path, own: OwnExport
) -> None:
    export = own.make(tmp_path)
    code, printed = run_on_terminal(
        f"{sys.executable} -m hrsync init --from {export.name}", tmp_path, clean_env()
    )
    assert code == 0, printed
    config = tmp_path / "hrsync.toml"
    written = config.read_text(encoding="utf-8")
    assert {m.group(1) for m in TODO_LINE.finditer(written)} == set(own.todos), written
    # The person's only edit: each TODO value replaced, nothing else.
    config.write_text(
        TODO_LINE.sub(lambda m: f'{m.group(1)} = "{own.todos[m.group(1)]}"', written),
        encoding="utf-8",
    )

    # In the folder of init's hrsync.toml: no --config, as a reader types it.
    with rehearsing(tmp_path, "--users-from", export.name) as rehearsal:
        assert rehearsal.env["HRSYNC_SOURCE__PATH"] == str(export)
        run = hrsync(tmp_path, rehearsal, "sync")
        assert run.code == 0, run.stdout[-3000:] + run.stderr[-3000:]
        assert run.finished["outcome"] == "applied"
        expected = own.teams(export)
        assert len(expected) > 5
        assert run.finished["counts"]["create"] == len(expected)
        assert set(rehearsal.teams()) == expected
