"""People in no team are never silent: `check`, `plan` and the run's log name them
(issue 11), against the simulator."""

from __future__ import annotations

import pytest

from tests.e2e.conftest import Workspace, read_rows

pytestmark = pytest.mark.slow


def _with_loners(workspace: Workspace) -> None:
    rows = read_rows("sample-org.csv")
    base = dict(rows[-1])
    rows.append(
        {**base, "Employee ID": "E900", "Full Name": "Lone Wolf", "Manager ID": "",
         "Work Email": "lone.wolf@example.com", "Status": "Active"}
    )  # fmt: skip
    # Reports to E128, who is Terminated: filtered out, so E901 has no team.
    rows.append(
        {**base, "Employee ID": "E901", "Full Name": "Orphan Report", "Manager ID": "E128",
         "Work Email": "orphan.report@example.com", "Status": "Active"}
    )  # fmt: skip
    workspace.write_export(rows)


def test_check_lists_people_in_no_team_with_line_and_why(workspace: Workspace) -> None:
    _with_loners(workspace)
    run = workspace.hrsync("check")
    assert run.code == 0, run.stdout
    assert "[WARN] people in no team: 2 kept from the export" in run.stdout
    assert "- Lone Wolf (E900, " in run.stdout and "line 42): no manager and nobody" in run.stdout
    assert "- Orphan Report (E901, " in run.stdout
    assert (
        "line 43): their manager 'E128' (Manager ID) is not among the people kept "
        "(filtered out) and nobody reports to them"
    ) in run.stdout


def test_plan_and_the_log_name_people_in_no_team(workspace: Workspace) -> None:
    _with_loners(workspace)
    run = workspace.hrsync("plan")
    assert run.code == 0, run.stdout + run.stderr
    assert "People in no team (2): kept from the export, but neither lead nor member:" in (
        run.stdout
    )
    assert "  - Lone Wolf (E900, " in run.stdout
    warnings = run.named("mapping.person_in_no_team")
    assert [(w["person"], w["level"]) for w in warnings] == [
        ("E900", "warning"),
        ("E901", "warning"),
    ]
    assert warnings[0]["reason"] == "no manager and nobody reports to them"
    (total,) = run.named("mapping.people_in_no_team")
    assert total["total"] == 2 and total["level"] == "warning"


def test_a_sample_export_with_everyone_placed_has_no_section(workspace: Workspace) -> None:
    run = workspace.hrsync("plan")
    assert "People in no team" not in run.stdout
    assert not run.named("mapping.person_in_no_team")
    check = workspace.hrsync("check")
    assert "people in no team" not in check.stdout
