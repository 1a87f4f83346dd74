"""A manager who leaves while HR re-points their reports days later: the team stays in DX
(same reference_id) with a stand-in lead, and is back to normal once HR re-points them;
also when the manager's row is dropped from the export. Against the simulator over HTTP."""

from __future__ import annotations

import json

import pytest

from tests.e2e.conftest import Workspace, read_rows
from tests.e2e.test_held_people_e2e import changed, lead_of
from tests.e2e.test_plan_output_e2e import SCHEMA, validate

pytestmark = pytest.mark.slow

PAYMENTS = ["samuel.osei@example.com", "lucia.fernandez@example.com"]


def test_the_team_of_a_manager_who_left_stays_until_hr_re_points_its_people(
    workspace: Workspace,
) -> None:
    # Day 1: the org as it is.
    day1 = workspace.hrsync("sync")
    assert day1.finished["outcome"] == "applied", day1.stdout[-3000:]
    before = workspace.dx_teams()["Payments"]

    # Day 2: Katherine (E022, lead of Payments) is Terminated; her reports still name her.
    rows = read_rows("sample-org.csv")
    changed(rows, "E022", Status="Terminated")
    workspace.write_export(rows)
    plan = workspace.hrsync("plan", "--format", "json")
    assert plan.code == 0, plan.stderr[-3000:]
    document = json.loads(plan.stdout)
    validate(document, SCHEMA)
    (gone,) = document["leads_left"]
    assert gone["employee_id"] == "E022" and gone["team"] == "Payments"
    assert gone["reference_id"] == before["reference_id"]
    assert gone["stand_in"]["employee_id"] == "E011"  # her manager, Tomás
    assert not [p for p in document["people_in_no_team"] if p["needs_person"]]

    day2 = workspace.hrsync("sync")
    assert day2.finished["outcome"] == "applied", day2.stdout[-3000:]
    assert day2.finished["counts"]["no_team"] == 0
    (event,) = day2.named("mapping.lead_left")
    assert event["stand_in"] == "tomas.herrera@example.com"
    payments = workspace.dx_teams()["Payments"]
    assert payments["reference_id"] == before["reference_id"]  # DX keeps its history
    assert lead_of(workspace, payments) == "tomas.herrera@example.com"
    assert set(PAYMENTS) <= set(payments["member_emails"])
    status = workspace.hrsync("status")
    assert "Lead left:   tomas.herrera@example.com stands in for Katherine Adeyemi (E022)" in (
        status.stdout
    ), status.stdout

    # Day N: HR names Samuel the new lead of Payments; the others report to him.
    for eid in ("E109", "E110", "E111"):
        changed(rows, eid, Manager_ID="E108")
    changed(rows, "E108", Manager_ID="E011")
    workspace.write_export(rows)
    dayn = workspace.hrsync("sync")
    assert dayn.finished["outcome"] == "applied", dayn.stdout[-3000:]
    assert not dayn.named("mapping.lead_left")
    assert "Lead left" not in workspace.hrsync("status").stdout


def test_the_team_of_a_manager_whose_row_is_removed_stays_until_hr_re_points_its_people(
    workspace: Workspace,
) -> None:
    day1 = workspace.hrsync("sync")
    assert day1.finished["outcome"] == "applied", day1.stdout[-3000:]
    before = workspace.dx_teams()["Payments"]

    # Day 2: Katherine's row is dropped from the export altogether (many HR exports drop
    # leavers); her reports still name her. hrsync knows her team from what DX took.
    rows = [r for r in read_rows("sample-org.csv") if r["Employee ID"] != "E022"]
    workspace.write_export(rows)
    plan = workspace.hrsync("plan", "--format", "json")
    assert plan.code == 0, plan.stderr[-3000:]
    document = json.loads(plan.stdout)
    validate(document, SCHEMA)
    (gone,) = document["leads_left"]
    assert (gone["employee_id"], gone["team"]) == ("E022", "Payments")
    assert gone["reference_id"] == before["reference_id"]
    assert gone["stand_in"]["employee_id"] == "E011"
    assert not document["held"], document["held"]
    explained = workspace.hrsync("explain", "samuel.osei@example.com")
    # Named as the plan, the log and status name her (her row is gone; DX took her e-mail).
    assert (
        "katherine.adeyemi@example.com (E022) left (no longer in the export); HR"
    ) in explained.stdout, explained.stdout
    assert "E022 (E022)" not in explained.stdout, explained.stdout

    day2 = workspace.hrsync("sync")
    assert day2.finished["outcome"] == "applied", day2.stdout[-3000:]
    assert day2.finished["counts"]["no_team"] == 0
    assert not day2.named("sync.held")
    (event,) = day2.named("mapping.lead_left")
    assert event["stand_in"] == "tomas.herrera@example.com"
    assert event["why"] == "no longer in the export"
    # One fact, told once: not a warning for each of her reports' rows as well, and her
    # id not given twice for want of her name (her row is gone).
    assert not day2.named("export.warning"), day2.named("export.warning")
    # ... but which rows still name her is told: the plan names the people HR must
    # re-point, as the warnings on their rows used to.
    shown = workspace.hrsync("plan")
    assert "Managers who left (1)" in shown.stdout, shown.stdout
    assert all(p in shown.stdout for p in PAYMENTS), shown.stdout
    assert event["message"].startswith(
        "katherine.adeyemi@example.com (E022) left (no longer in the export)"
    ), event
    payments = workspace.dx_teams()["Payments"]
    assert payments["reference_id"] == before["reference_id"]
    assert lead_of(workspace, payments) == "tomas.herrera@example.com"
    assert set(PAYMENTS) <= set(payments["member_emails"])
    status = workspace.hrsync("status")
    assert "stands in for" in status.stdout and "E022" in status.stdout, status.stdout
    # Her row is gone, but hrsync knows the e-mail DX took for her id: she is named by it
    # (an HR id alone, a GUID in Entra ID, tells a reader nothing).
    assert "stands in for katherine.adeyemi@example.com (E022)" in status.stdout, status.stdout
    assert "katherine.adeyemi@example.com (E022)" in shown.stdout, shown.stdout
