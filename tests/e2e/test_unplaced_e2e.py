"""People in no team are never silent: `check`, `plan` and the run's log name them, and
a manager who left keeps their team with a stand-in lead, against the simulator."""

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
    # Reports to E128, who is Terminated: E128's team stays, led by E128's manager.
    rows.append(
        {**base, "Employee ID": "E901", "Full Name": "Orphan Report", "Manager ID": "E128",
         "Work Email": "orphan.report@example.com", "Status": "Active"}
    )  # fmt: skip
    workspace.write_export(rows)


def test_check_lists_people_in_no_team_and_the_managers_who_left(workspace: Workspace) -> None:
    _with_loners(workspace)
    run = workspace.hrsync("check")
    assert run.code == 0, run.stdout
    assert "[WARN] people in no team: 1 kept from the export" in run.stdout, run.stdout
    assert "- Lone Wolf (E900, " in run.stdout and "line 42): no manager and nobody" in run.stdout
    # Meant to be in no team (no manager, no reports): nobody is needed for them.
    assert "need a person" not in run.stdout
    assert (
        "[WARN] managers who left: 1 manager gone from the export or filtered out while "
        "people still name them"
    ) in run.stdout
    assert "stands in for Rohan Gupta (E128) (excluded by filter.active_status)" in run.stdout
    assert run.stdout.rstrip().endswith("ready")


def test_check_counts_people_nobody_can_stand_in_for(workspace: Workspace) -> None:
    rows = read_rows("sample-org.csv")
    base = dict(rows[-1])
    rows += [
        {**base, "Employee ID": "E950", "Full Name": "Gone Boss", "Manager ID": "",
         "Work Email": "gone.boss@example.com", "Status": "Terminated"},
        {**base, "Employee ID": "E951", "Full Name": "Left Behind", "Manager ID": "E950",
         "Work Email": "left.behind@example.com", "Status": "Active"},
    ]  # fmt: skip
    workspace.write_export(rows)
    run = workspace.hrsync("check")
    assert run.code == 0, run.stdout
    assert "1 kept from the export, neither lead nor member of a team (1 need a person)" in (
        run.stdout
    )
    assert "nobody up their chain is kept" in run.stdout
    assert run.stdout.rstrip().endswith("ready; 1 person in no team need a person")


def test_plan_and_the_log_name_people_in_no_team(workspace: Workspace) -> None:
    _with_loners(workspace)
    run = workspace.hrsync("plan")
    assert run.code == 0, run.stdout + run.stderr
    assert "People in no team (1): kept from the export, but neither lead nor member:" in (
        run.stdout
    )
    assert "  - Lone Wolf (E900, " in run.stdout
    warnings = run.named("mapping.person_in_no_team")
    assert [(w["person"], w["level"], w["needs_person"]) for w in warnings] == [
        ("E900", "warning", False)
    ]
    assert warnings[0]["reason"] == "no manager and nobody reports to them"
    (total,) = run.named("mapping.people_in_no_team")
    assert total["total"] == 1 and total["level"] == "warning"
    assert "Managers who left (1): their teams stay until HR re-points their people:" in (
        run.stdout
    )
    (gone,) = run.named("mapping.lead_left")
    assert (gone["lead"], gone["why"], gone["people"]) == ("E128", "filter.active_status", 1)
    assert gone["stand_in"] and gone["level"] == "warning"


def test_a_sample_export_with_everyone_placed_has_no_section(workspace: Workspace) -> None:
    run = workspace.hrsync("plan")
    assert "People in no team" not in run.stdout
    assert not run.named("mapping.person_in_no_team")
    check = workspace.hrsync("check")
    assert "people in no team" not in check.stdout
