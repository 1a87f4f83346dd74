"""Problems of one kind are told once, in the report and in the log (issue 11): a wrong
manager column made 404 problems printed twice, 812 lines."""

from __future__ import annotations

import pytest

from tests.e2e.conftest import Workspace, read_rows

pytestmark = pytest.mark.slow


def _wrong_manager_ids(workspace: Workspace) -> int:
    rows = read_rows("sample-org.csv")
    for r in rows:
        if r["Manager ID"]:
            r["Manager ID"] = "X" + r["Manager ID"]
    workspace.write_export(rows)
    return sum(1 for r in rows if r["Manager ID"] and r["Status"] == "Active")


def test_a_wrong_manager_column_is_one_grouped_problem(workspace: Workspace) -> None:
    wrong = _wrong_manager_ids(workspace)
    run = workspace.hrsync("plan")
    assert run.code == 4, run.stdout + run.stderr
    lines = [line for line in run.stdout.splitlines() if "Manager ID must be" in line]
    assert len(lines) == 1, run.stdout
    assert f"{wrong} rows: Manager ID must be the employee id of a person" in lines[0]
    assert "got 'XE001', 'XE002'" in lines[0] and "; first at " in lines[0]
    # So many people held at once is a broken export: the guard says so first.
    guard, grouped = run.named("export.problem")
    assert "would be held, more than sync.max_held" in guard["detail"]
    # The log (and the stored reason, the webhook) say where, not the HR values.
    assert grouped["detail"].startswith(f"{wrong} rows, first at people.csv line 3: Manager ID")
    assert "XE001" not in grouped["detail"]
    assert not workspace.process_requests()


def test_check_shows_the_grouped_problem(workspace: Workspace) -> None:
    wrong = _wrong_manager_ids(workspace)
    run = workspace.hrsync("check")
    assert run.code == 1
    assert "[FAIL] export:" in run.stdout
    assert f"{wrong} rows: Manager ID must be" in run.stdout
    assert run.stdout.count("Manager ID must be") == 1
