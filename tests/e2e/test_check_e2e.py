"""`hrsync check`: the readiness report against the simulator."""

from __future__ import annotations

import pytest

from tests.e2e.conftest import Workspace, read_rows

pytestmark = pytest.mark.slow


def test_ready(workspace: Workspace) -> None:
    run = workspace.hrsync("check")
    assert run.code == 0, run.stdout
    assert "[  ok] token: organization token for Example Corp (demo)" in run.stdout
    assert "[  ok] export:" in run.stdout and "37 people kept" in run.stdout
    assert "[  ok] mapping: 13 teams" in run.stdout
    assert "[  ok] snapshot window" in run.stdout
    assert run.stdout.rstrip().endswith("ready")
    # check never writes to DX
    assert not [r for r in workspace.sim.dx.requests if r.http_method == "POST"]


def test_wrong_token_and_live_snapshot(workspace: Workspace) -> None:
    run = workspace.hrsync("check", env={"HRSYNC_DX_TOKEN": "not-a-valid-token"})
    assert run.code == 1
    assert "[FAIL] token:" in run.stdout and "invalid_auth" in run.stdout
    assert "not-a-valid-token" not in run.stdout + run.stderr
    workspace.sim.dx.add_snapshot(snapshot_id="live")
    live = workspace.hrsync("check")
    assert live.code == 0
    assert "[WARN] snapshot window: syncs defer until" in live.stdout


def test_invalid_export_is_reported(workspace: Workspace) -> None:
    rows = read_rows("sample-org.csv")
    rows[2]["Employee ID"] = rows[1]["Employee ID"]
    workspace.write_export(rows)
    # A duplicate id is a problem of those rows: by default they are held, named on the
    # held-people line, and the export itself reads.
    held = workspace.hrsync("check")
    assert "[  ok] export:" in held.stdout
    assert "[WARN] held people:" in held.stdout
    assert "people.csv line 3: Employee ID must be unique" in held.stdout
    # Refusing on a person's problem makes it the export's failure.
    run = workspace.hrsync("check", env={"HRSYNC_SYNC__MAX_HELD": "0"})
    assert run.code == 1
    assert "[FAIL] export:" in run.stdout and "Employee ID" in run.stdout


def test_an_export_with_warnings_is_a_warn_line_showing_them_grouped(
    workspace: Workspace,
) -> None:
    # 35 blank names were "[  ok] export: … 35 warnings": a count, said to be fine.
    rows = read_rows("sample-org.csv")
    for row in rows[2:]:
        row["Full Name"] = ""
    workspace.write_export(rows)
    run = workspace.hrsync("check")
    assert run.code == 0, run.stdout
    assert "[  ok] export:" not in run.stdout
    assert "[WARN] export:" in run.stdout and "35 warnings" in run.stdout
    grouped = [ln for ln in run.stdout.splitlines() if "Full Name should not be empty" in ln]
    assert len(grouped) == 1, run.stdout  # one line for the kind, not one per row
    assert "35 rows" in grouped[0]


def test_one_warning_is_said_in_the_singular(workspace: Workspace) -> None:
    rows = read_rows("sample-org.csv")
    rows[3]["Full Name"] = ""
    workspace.write_export(rows)
    warned = workspace.hrsync("check")
    assert "1 warning:" in warned.stdout and "1 warnings" not in warned.stdout, warned.stdout


def test_check_runs_the_guards_and_says_not_ready_when_the_plan_would_be_refused(
    workspace: Workspace,
) -> None:
    # Was "ready" throughout: check ran neither the guards nor a preview.
    assert workspace.hrsync("sync").code == 0
    workspace.use_export("sample-org-reorg.csv")
    env = {"HRSYNC_SYNC__MAX_ARCHIVE": "0"}
    run = workspace.hrsync("check", env=env)
    assert run.code == 1, run.stdout
    (line,) = [ln for ln in run.stdout.splitlines() if ln.startswith("[FAIL] plan:")]
    assert "refused" in line and "sync.max_archive" in line
    assert "approve " in run.stdout or "--allow-archive 1" in run.stdout
    assert run.stdout.rstrip().splitlines()[-1].startswith("not ready")
    assert len(workspace.process_requests()) == 1  # the first sync's only
    fine = workspace.hrsync("check")
    assert fine.code == 0, fine.stdout
    (line,) = [ln for ln in fine.stdout.splitlines() if ln.startswith("[  ok] plan: ")]
    # The changes in the plan's words, and what else it counted.
    assert line.startswith("[  ok] plan: no guard trips: 1 to create, "), line
    assert line.endswith(" unchanged"), line


def test_check_preview_asks_dx_to_validate_the_rows_and_applies_nothing(
    workspace: Workspace,
) -> None:
    # None of these leads is a DX user: DX's preview refuses the rows (invalid_rows),
    # which the plan's own guards cannot know.
    rows = read_rows("sample-org.csv")
    for row in rows:
        row["Work Email"] = row["Work Email"].replace("@example.com", "@elsewhere.test")
    workspace.write_export(rows)
    plain = workspace.hrsync("check")
    assert "[  ok] plan: " in plain.stdout, plain.stdout
    previewed = workspace.hrsync("check", "--preview")
    assert previewed.code == 1, previewed.stdout
    (line,) = [ln for ln in previewed.stdout.splitlines() if ln.startswith("[FAIL] preview:")]
    assert "DX" in line
    assert workspace.process_requests() == []
    assert not workspace.dx_teams()
