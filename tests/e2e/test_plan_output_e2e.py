"""`plan --format json|tree`, `sync --dry-run --format json`, `history --format json`,
`--out FILE`, and the paragraph `sync` ends with on a terminal."""

from __future__ import annotations

import json
import os
import pty
import subprocess
import sys
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from hrsync.store.repo import Store
from tests.e2e.conftest import CONFIG, TOKEN, Workspace, read_rows

SCHEMA = json.loads((CONFIG / "plan.schema.json").read_text(encoding="utf-8"))
_TYPES: dict[str, Any] = {
    "object": dict,
    "array": list,
    "string": str,
    "integer": int,
    "boolean": bool,
    "null": type(None),
}


def validate(value: Any, schema: dict[str, Any], path: str = "$") -> list[str]:
    """The subset of JSON Schema plan.schema.json uses: type, const, enum, required,
    properties, additionalProperties, items, $ref (to #/$defs). Returns the problems."""
    if "$ref" in schema:
        name = schema["$ref"].removeprefix("#/$defs/")
        return validate(value, SCHEMA["$defs"][name], path)
    problems: list[str] = []
    types = schema.get("type")
    if types is not None:
        names = types if isinstance(types, list) else [types]
        ok = any(
            isinstance(value, _TYPES[n]) and not (n == "integer" and isinstance(value, bool))
            for n in names
        )
        if not ok:
            return [f"{path}: {value!r} is not {names}"]
    if "const" in schema and value != schema["const"]:
        problems.append(f"{path}: {value!r} != {schema['const']!r}")
    if "enum" in schema and value not in schema["enum"]:
        problems.append(f"{path}: {value!r} not in {schema['enum']}")
    if isinstance(value, dict):
        for key in schema.get("required", []):
            if key not in value:
                problems.append(f"{path}: missing {key!r}")
        props = schema.get("properties", {})
        for key, item in value.items():
            if key in props:
                problems += validate(item, props[key], f"{path}.{key}")
            elif isinstance(schema.get("additionalProperties"), dict):
                problems += validate(item, schema["additionalProperties"], f"{path}.{key}")
            elif key not in props and props and schema is not SCHEMA:
                # Every key a change or section may hold is documented in the schema.
                problems.append(f"{path}: undocumented key {key!r}")
    if isinstance(value, list) and "items" in schema:
        for i, item in enumerate(value):
            problems += validate(item, schema["items"], f"{path}[{i}]")
    return problems


def document(stdout: str) -> dict[str, Any]:
    doc = json.loads(stdout)  # the whole of stdout is one document: no log line in it
    assert isinstance(doc, dict)
    assert validate(doc, SCHEMA) == []
    return doc


def test_the_validator_finds_what_is_wrong() -> None:
    bad = {"schema": "hrsync.plan/2", "changes": [{"kind": "explode", "team": 3}]}
    problems = " ".join(validate(bad, SCHEMA))
    for phrase in ("hrsync.plan/2", "missing 'counts'", "'explode'", "3 is not"):
        assert phrase in problems


def test_plan_json_first_run_and_after_a_reorg(workspace: Workspace) -> None:
    first = workspace.hrsync("plan", "--format", "json")
    assert first.code == 0, first.stderr[-2000:]
    doc = document(first.stdout)
    assert doc["outcome"] == "planned" and doc["guards"]["decision"] == "go"
    assert doc["counts"]["create"] == len(doc["changes"]) == doc["teams"] > 0
    assert {c["kind"] for c in doc["changes"]} == {"create"}
    assert all(c["lead"] and c["contributors"] >= 0 for c in doc["changes"])
    # A new team lists its members, so a first sync's membership can be reviewed.
    for change in doc["changes"]:
        assert len(change["members_added"]) == change["contributors"]
        assert change["members_added"] == sorted(change["members_added"])
    members = {c["team"]: c["members_added"] for c in doc["changes"]}
    assert "emily.nguyen@example.com" in members["Payments"]
    assert "ada.okafor@example.com" not in {m for team in members.values() for m in team}
    assert ("people_in_no_team" in doc and doc["attributes"] is None) or doc["attributes"]
    assert first.named("sync.finished")  # the log is on stderr

    assert workspace.hrsync("sync").code == 0
    workspace.use_export("sample-org-reorg.csv")
    reorg = workspace.hrsync("plan", "--format", "json")
    doc = document(reorg.stdout)
    by_kind = {c["kind"]: c for c in doc["changes"]}
    assert by_kind["rename"]["from"] == "Developer Experience"
    assert by_kind["rename"]["to"] == by_kind["rename"]["team"] == "Developer Productivity"
    assert by_kind["move"]["team"] == "Growth" and by_kind["move"]["to"] == "Data"
    assert by_kind["archive"]["team"] == "Mobile Android" and by_kind["archive"]["dx_id"]
    lead = by_kind["lead_change"]
    assert lead["from"] and lead["to"] and lead["from"] != lead["to"]
    members = [c for c in doc["changes"] if c["kind"] == "membership_change"]
    for change in members:
        assert change["members_added"] or change["members_removed"] or change["drift"]
        assert all("@" in e for e in change["members_added"] + change["members_removed"])
    counts = doc["counts"]
    assert sum(counts[k] for k in counts if k != "unchanged") == len(doc["changes"])


def test_out_file_dry_run_json_and_history_json(workspace: Workspace) -> None:
    out = workspace.root / "plan.json"
    run = workspace.hrsync("plan", "--format", "json", "--out", str(out))
    assert run.code == 0 and run.stdout == ""
    assert f"written to {out}" in run.stderr
    assert document(out.read_text(encoding="utf-8"))["counts"]["create"] > 0

    dry = workspace.hrsync("sync", "--dry-run", "--format", "json")
    assert dry.code == 0
    assert document(dry.stdout)["outcome"] == "planned"
    assert len(workspace.process_requests()) == 0

    # A text dry run: the report owns stdout, the log is on stderr.
    text = workspace.hrsync("sync", "--dry-run")
    assert text.code == 0 and "Plan: " in text.stdout
    assert not [line for line in text.stdout.splitlines() if line.lstrip().startswith("{")]
    assert '"sync.finished"' in text.stderr

    history = workspace.hrsync("history", "--all", "--format", "json")
    doc = json.loads(history.stdout)
    assert doc["schema"] == "hrsync.history/1" and len(doc["runs"]) == 3
    assert all(r["dry_run"] and r["outcome"] == "planned" for r in doc["runs"])
    assert doc["runs"][0]["started_at"].endswith("+00:00")


def test_a_refused_plan_names_the_guard_and_the_approval(workspace: Workspace) -> None:
    assert workspace.hrsync("sync").code == 0
    workspace.use_export("sample-org-reorg.csv")
    run = workspace.hrsync("plan", "--format", "json", env={"HRSYNC_SYNC__MAX_ARCHIVE": "0"})
    doc = document(run.stdout)
    assert doc["outcome"] == "refused" and doc["guards"]["decision"] == "refuse"
    assert "sync.max_archive" in doc["guards"]["reason"]
    assert doc["counts"]["archive"] == 1


def test_plan_tree_marks_each_teams_change(workspace: Workspace) -> None:
    assert workspace.hrsync("sync").code == 0
    workspace.use_export("sample-org-reorg.csv")
    run = workspace.hrsync("plan", "--format", "tree")
    assert run.code == 0, run.stderr[-2000:]
    lines = run.stdout.splitlines()
    (renamed,) = [line for line in lines if line.lstrip().startswith("Developer Productivity")]
    assert 'renamed from "Developer Experience"' in renamed
    (data,) = [line for line in lines if line.lstrip().startswith("Data [")]
    (growth,) = [line for line in lines if line.lstrip().startswith("Growth [")]
    # Growth moved under Data: below it, one level deeper, marked.
    assert lines.index(growth) > lines.index(data)
    assert indent(growth) == indent(data) + 2
    assert "moved from under" in growth
    assert any("lead " in line and " -> " in line for line in lines)
    # Nothing was archived by a plan: the heading says what it would do.
    assert "To archive (not in the export):" in run.stdout and "Mobile Android" in run.stdout
    assert "Archived" not in run.stdout
    assert lines[-1].startswith("Plan: ")


def test_plan_tree_of_a_refused_plan_says_so_first(workspace: Workspace) -> None:
    assert workspace.hrsync("sync").code == 0
    workspace.use_export("sample-org-reorg.csv")
    env = {"HRSYNC_SYNC__MAX_ARCHIVE": "0"}
    run = workspace.hrsync("plan", "--format", "tree", env=env)
    assert run.code == 4, run.stderr[-2000:]
    first = run.stdout.splitlines()[0]
    assert first.startswith("Refused, nothing sent: ") and "sync.max_archive" in first, first
    assert "--allow-archive 1" in run.stdout
    assert "To archive (not in the export):" in run.stdout


def indent(line: str) -> int:
    return len(line) - len(line.lstrip())


def test_sync_ends_with_a_paragraph_for_a_person(workspace: Workspace) -> None:
    run = workspace.hrsync("sync", "--summary", "always")
    assert run.code == 0
    last = run.stdout.strip().splitlines()[-1]
    assert last.startswith("Applied: ") and "verified" in last and "Nothing to do" in last
    # No daemon has run on this store: the summary does not say one keeps DX in step.
    assert "the daemon keeps it in step" not in last
    assert f"`hrsync --config {workspace.config} run` (the daemon) keeps it in step" in last
    # A daemon that stopped (or whose heartbeat went stale) keeps nothing in step either;
    # one beating now does. Each run applies a change: one person less each time.
    rows = read_rows("sample-org.csv")
    managers = {row["Manager ID"] for row in rows}
    leavers = [row for row in rows if row["Employee ID"] not in managers][:3]
    for leaver, (state, age, running) in zip(
        leavers,
        (("stopped", 60, False), ("idle", 3 * 3600, False), ("idle", 0, True)),
        strict=True,
    ):
        rows.remove(leaver)
        workspace.write_export(rows)
        store = Store.open(f"sqlite:///{workspace.db}")
        store.heartbeat.beat(datetime.now(UTC) - timedelta(seconds=age), state=state)
        store.close()
        told = workspace.hrsync("sync", "--summary", "always").stdout.strip().splitlines()[-1]
        assert told.startswith("Applied: "), told
        assert ("the daemon keeps it in step" in told) is running, (state, age, told)
    again = workspace.hrsync("sync", "--summary", "always")
    assert again.stdout.strip().splitlines()[-1].startswith("In sync: ")
    # On a pipe (auto): the paragraph alone on stdout, the JSON log on stderr.
    piped = workspace.hrsync("sync")
    assert piped.stdout.strip().splitlines()[-1].startswith("In sync: ")
    assert '"event"' not in piped.stdout
    assert '"event": "sync.finished"' in piped.stderr
    # --summary never: no paragraph, the JSON log on stdout, as a script may read it.
    quiet = workspace.hrsync("sync", "--summary", "never")
    assert "In sync: " not in quiet.stdout
    assert '"event": "sync.finished"' in quiet.stdout


def test_the_paragraph_appears_on_a_terminal(workspace: Workspace, tmp_path: Path) -> None:
    assert workspace.hrsync("sync").code == 0
    workspace.use_export("sample-org-reorg.csv")
    env = {k: v for k, v in os.environ.items() if not k.startswith("HRSYNC_")}
    env |= {"HRSYNC_DX_TOKEN": TOKEN, "HRSYNC_SYNC__MAX_ARCHIVE": "0"}
    controller, terminal = pty.openpty()
    try:
        proc = subprocess.Popen(
            [sys.executable, "-m", "hrsync", "--config", str(workspace.config), "sync"],
            stdout=terminal,
            stderr=subprocess.DEVNULL,
            env=env,
            cwd=tmp_path,
        )
        os.close(terminal)
        chunks = []
        while True:
            try:
                chunk = os.read(controller, 65536)
            except OSError:  # the terminal closed: the child is done
                break
            if not chunk:
                break
            chunks.append(chunk)
        assert proc.wait(timeout=60) == 4
    finally:
        os.close(controller)
    text = b"".join(chunks).decode("utf-8", "replace").replace("\r\n", "\n")
    last = text.strip().splitlines()[-1]
    assert last.startswith("Refused, nothing sent: ") and "sync.max_archive" in last
    assert f"--config {workspace.config} sync --allow-archive 1" in last
    assert TOKEN not in text


def test_a_preview_past_a_guard_says_it_was_sent_and_which_command_applies_it(
    workspace: Workspace,
) -> None:
    # Was: "Planned, nothing sent … Run `hrsync sync` to apply it": the preview was sent,
    # and that command is refused; the one that applies it carries --allow-archive 1.
    assert workspace.hrsync("sync").code == 0
    workspace.use_export("sample-org-reorg.csv")
    env = {"HRSYNC_SYNC__MAX_ARCHIVE": "0"}
    run = workspace.hrsync(
        "sync", "--preview", "--allow-archive", "1", "--summary", "always", env=env
    )
    assert run.code == 0, run.stdout[-2000:]
    last = run.stdout.strip().splitlines()[-1]
    assert last.startswith("Previewed in DX, nothing applied: "), last
    assert "nothing sent" not in last
    assert f"`hrsync --config {workspace.config} sync --allow-archive 1` to apply it" in last


def on_a_terminal(workspace: Workspace, cwd: Path, *args: str) -> tuple[int, str]:
    """Run hrsync with stdout and stderr on one pseudo-terminal, as a person sees it."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("HRSYNC_")}
    env |= {"HRSYNC_DX_TOKEN": TOKEN}
    controller, terminal = pty.openpty()
    try:
        proc = subprocess.Popen(
            [sys.executable, "-m", "hrsync", "--config", str(workspace.config), *args],
            stdout=terminal,
            stderr=terminal,
            env=env,
            cwd=cwd,
        )
        os.close(terminal)
        chunks = []
        while True:
            try:
                chunk = os.read(controller, 65536)
            except OSError:
                break
            if not chunk:
                break
            chunks.append(chunk)
        code = proc.wait(timeout=60)
    finally:
        os.close(controller)
    return code, b"".join(chunks).decode("utf-8", "replace").replace("\r\n", "\n")


def test_a_terminal_shows_the_report_not_the_info_log(workspace: Workspace, tmp_path: Path) -> None:
    # Was about 40 log lines for 11 teams before the report.
    def info(text: str) -> bool:  # the workspace's config logs JSON, a terminal's console
        return '"level": "info"' in text or "[info" in text

    code, text = on_a_terminal(workspace, tmp_path, "plan")
    assert code == 0, text[-2000:]
    assert not info(text) and "Plan: " in text
    verbose_code, verbose = on_a_terminal(workspace, tmp_path, "plan", "-v")
    assert verbose_code == 0
    assert info(verbose) and "sync.finished" in verbose
    code, text = on_a_terminal(workspace, tmp_path, "sync")
    assert code == 0, text[-2000:]
    assert not info(text) and text.strip().splitlines()[-1].startswith("Applied: ")


def test_a_summary_on_a_pipe_keeps_the_json_log_on_stderr(workspace: Workspace) -> None:
    run = workspace.hrsync("sync", "--summary", "always")
    assert run.code == 0
    lines = run.stdout.strip().splitlines()
    assert lines and all(not line.startswith("{") for line in lines), run.stdout[:2000]
    assert lines[-1].startswith("Applied: ")
    assert [e for e in run.named("sync.finished")]  # the log is still there, on stderr
