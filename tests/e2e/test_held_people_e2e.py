"""A problem of one person's own row holds that person, not the org: DX keeps what it last
verifiably had for them, a person never synced is not sent, and everyone else is synced
in the same run. Too many held people still refuse the run."""

from __future__ import annotations

import json
from typing import Any

from tests.e2e.conftest import Run, Workspace, read_rows
from tests.e2e.test_plan_output_e2e import SCHEMA, validate

CARL = {
    "Employee ID": "E901",
    "Full Name": "Carl Contractor",
    "Work Email": "",
    "Manager ID": "E002",
    "Department": "Engineering",
    "Status": "Active",
    "Title": "Contractor",
}


def first_sync(workspace: Workspace) -> list[dict[str, str]]:
    run = workspace.hrsync("sync")
    assert run.code == 0 and run.finished["outcome"] == "applied", run.stdout[-3000:]
    return read_rows("sample-org.csv")


def changed(rows: list[dict[str, str]], employee_id: str, **values: str) -> None:
    (row,) = [r for r in rows if r["Employee ID"] == employee_id]
    for key, value in values.items():
        row[key.replace("_", " ")] = value


def team_of(workspace: Workspace, email: str) -> dict[str, Any]:
    (team,) = [t for t in workspace.sim.dx.teams_view() if email in t["member_emails"]]
    return team


def lead_of(workspace: Workspace, team: dict[str, Any]) -> str:
    by_id = {user["id"]: user["email"] for user in workspace.sim.dx.users_view()}
    return by_id[team["manager_id"]]


def held_events(run: Any) -> dict[str, dict[str, Any]]:
    return {e["person"]: e for e in run.named("sync.person_held")}


def test_a_person_without_an_email_is_held_and_everyone_else_is_synced(
    workspace: Workspace,
) -> None:
    rows = first_sync(workspace)
    rows.append(CARL)
    changed(rows, "E111", Manager_ID="E023")  # Emily moves from Payments to Mobile
    workspace.write_export(rows)

    plan = workspace.hrsync("plan")
    assert plan.code == 0, plan.stdout[-3000:]
    assert "Held (1)" in plan.stdout
    assert "Carl Contractor (E901)" in plan.stdout and "Work Email must not be empty" in plan.stdout
    assert "nothing was sent" not in plan.stdout

    document = json.loads(workspace.hrsync("plan", "--format", "json").stdout)
    assert validate(document, SCHEMA) == []
    assert document["counts"]["held"] == 1
    (held,) = document["held"]
    assert (held["person"], held["dx_email"], held["problems"][0]["field"]) == (
        "E901",
        None,
        "Work Email",
    )
    tree = workspace.hrsync("plan", "--format", "tree").stdout
    assert "Held (1), as DX last verifiably had them:" in tree and "Carl Contractor" in tree

    run = workspace.hrsync("sync")
    assert run.code == 0, run.stdout[-3000:]
    assert run.finished["outcome"] == "applied"
    assert run.finished["counts"]["held"] == 1
    (carl,) = run.finished["held"]
    assert carl["person"] == "E901" and "line 42" in carl["location"]
    assert "never synced" in held_events(run)["E901"]["kept"]
    assert team_of(workspace, "emily.nguyen@example.com")["name"] == "Mobile"

    status = json.loads(workspace.hrsync("status", "--format", "json").stdout)
    (listed,) = status["held"]
    assert listed["person"] == "E901" and "Work Email must not be empty" in listed["detail"]
    assert listed["name"] == "Carl Contractor"
    assert "Held:        Carl Contractor (E901) since" in workspace.hrsync("status").stdout
    check = workspace.hrsync("check")
    assert check.code == 0, check.stdout
    assert "held people" in check.stdout and "Carl Contractor (E901)" in check.stdout
    explained = workspace.hrsync("explain", "E901")
    assert explained.code == 0, explained.stdout
    assert "held since 20" in explained.stdout
    assert "never synced: not sent until their row is fixed" in explained.stdout

    # Fixed in HR: synced as the row says, and no longer held.
    rows[-1] = {**CARL, "Work Email": "marcus.lindqvist+carl@example.com"}
    workspace.sim.dx.add_user("Carl Contractor", "marcus.lindqvist+carl@example.com")
    workspace.write_export(rows)
    fixed = workspace.hrsync("sync")
    assert fixed.code == 0 and fixed.finished["counts"]["held"] == 0
    assert team_of(workspace, "marcus.lindqvist+carl@example.com")["name"] == "Engineering"
    assert json.loads(workspace.hrsync("status", "--format", "json").stdout)["held"] == []


def test_a_synced_person_whose_email_breaks_stays_in_their_team(workspace: Workspace) -> None:
    rows = first_sync(workspace)
    changed(rows, "E108", Work_Email="")
    workspace.write_export(rows)
    run = workspace.hrsync("sync")
    assert run.code == 0, run.stdout[-3000:]
    assert run.finished["outcome"] == "in_sync"
    assert "DX keeps them in 'Payments'" in held_events(run)["E108"]["kept"]
    assert team_of(workspace, "samuel.osei@example.com")["name"] == "Payments"
    explained = workspace.hrsync("explain", "E108")
    assert "DX keeps them in 'Payments'" in explained.stdout
    # Still held a day later: still found by their employee id, still kept.
    again = workspace.hrsync("sync")
    assert again.code == 0 and again.finished["outcome"] == "in_sync"
    assert "DX keeps them in 'Payments'" in held_events(again)["E108"]["kept"]


def test_a_lead_whose_email_breaks_keeps_leading_and_their_reports_stay(
    workspace: Workspace,
) -> None:
    rows = first_sync(workspace)
    before = team_of(workspace, "samuel.osei@example.com")
    changed(rows, "E022", Work_Email="katherine.adeyemi@")
    changed(rows, "E111", Manager_ID="E023")  # and a real change elsewhere
    workspace.write_export(rows)
    run = workspace.hrsync("sync")
    assert run.code == 0, run.stdout[-3000:]
    assert run.finished["outcome"] == "applied"
    held = held_events(run)["E022"]
    assert "leading 'Payments'" in held["kept"] and "'Product Engineering'" in held["kept"]
    payments = team_of(workspace, "samuel.osei@example.com")
    assert payments["reference_id"] == before["reference_id"]
    assert lead_of(workspace, payments) == "katherine.adeyemi@example.com"
    assert team_of(workspace, "emily.nguyen@example.com")["name"] == "Mobile"


def test_a_manager_who_matches_nobody_or_a_reporting_cycle_holds_those_people_where_they_were(
    workspace: Workspace,
) -> None:
    rows = first_sync(workspace)
    changed(rows, "E109", Manager_ID="E999")
    changed(rows, "E020", Manager_ID="E101")  # Jonas and Yuki now report to each other
    workspace.write_export(rows)
    # Three of this small org's 37 people are more than the default 2% share.
    run = workspace.hrsync("sync", env={"HRSYNC_SYNC__MAX_HELD_FRACTION": "0.1"})
    assert run.code == 0, run.stdout[-3000:]
    assert run.finished["outcome"] == "in_sync"
    assert sorted(held_events(run)) == ["E020", "E101", "E109"]
    assert team_of(workspace, "lucia.fernandez@example.com")["name"] == "Payments"
    infra = team_of(workspace, "yuki.tanaka@example.com")
    assert infra["name"] == "Platform Infrastructure"
    assert lead_of(workspace, infra) == "jonas.becker@example.com"
    assert team_of(workspace, "jonas.becker@example.com")["name"] == "Platform"


def test_a_duplicate_email_holds_both_rows_and_the_person_dx_has_stays(
    workspace: Workspace,
) -> None:
    rows = first_sync(workspace)
    rows.append(
        {
            **CARL,
            "Employee ID": "E902",
            "Work Email": "samuel.osei@example.com",
            "Manager ID": "E023",
        }
    )
    workspace.write_export(rows)
    run = workspace.hrsync("sync")
    assert run.code == 0, run.stdout[-3000:]
    assert run.finished["outcome"] == "in_sync"
    held = held_events(run)
    assert sorted(held) == ["E108", "E902"]
    assert "never synced" in held["E902"]["kept"]
    assert team_of(workspace, "samuel.osei@example.com")["name"] == "Payments"


def test_a_new_lead_without_an_email_is_stood_in_for_and_their_reports_are_synced(
    workspace: Workspace,
) -> None:
    rows = first_sync(workspace)
    rows.append({**CARL, "Employee ID": "E950", "Department": "Newcomers"})
    for employee_id, name in (("E951", "Report One"), ("E952", "Report Two")):
        email = f"{name.lower().replace(' ', '.')}@example.com"
        workspace.sim.dx.add_user(name, email)
        rows.append(
            {
                **CARL,
                "Employee ID": employee_id,
                "Full Name": name,
                "Work Email": email,
                "Manager ID": "E950",
            }
        )
    workspace.write_export(rows)
    run = workspace.hrsync("sync")
    assert run.code == 0, run.stdout[-3000:]
    assert run.finished["outcome"] == "applied"
    newcomers = team_of(workspace, "report.one@example.com")
    assert newcomers["name"] == "Newcomers"
    assert sorted(newcomers["member_emails"]) == [
        "report.one@example.com",
        "report.two@example.com",
    ]
    assert lead_of(workspace, newcomers) == "marcus.lindqvist@example.com"


def five_without_an_email(rows: list[dict[str, str]]) -> None:
    """Five rows lose their e-mail: more held people than the guard's share lets through."""
    for employee_id in ("E108", "E109", "E110", "E120", "E121"):
        changed(rows, employee_id, Work_Email="")


def refused_for_five_held(workspace: Workspace) -> Run:
    """After a first sync, five rows lose their e-mail and Emily moves to Mobile: the
    held guard refuses the run (returned)."""
    rows = first_sync(workspace)
    five_without_an_email(rows)
    changed(rows, "E111", Manager_ID="E023")
    workspace.write_export(rows)
    refused = workspace.hrsync("sync")
    assert refused.code == 4, refused.stdout[-3000:]
    return refused


def approved_five_held(workspace: Workspace) -> tuple[list[dict[str, str]], str]:
    """After a first sync, five rows lose their e-mail, the run is refused and a person
    approves its plan: the export's rows and that plan's id."""
    rows = first_sync(workspace)
    five_without_an_email(rows)
    workspace.write_export(rows)
    plan_id = workspace.hrsync("sync").finished["plan_id"]
    assert workspace.hrsync("approve", plan_id, "--by", "ana@example.com").code == 0
    return rows, plan_id


def test_more_held_people_than_the_guard_allows_refuse_the_run_until_allowed(
    workspace: Workspace,
) -> None:
    refused = refused_for_five_held(workspace)
    assert refused.finished["outcome"] == "refused", refused.stdout[-3000:]
    assert "sync.max_held_fraction" in refused.finished["reason"]
    assert "hrsync sync --allow-held 5" in refused.stdout + refused.stderr
    assert team_of(workspace, "emily.nguyen@example.com")["name"] == "Payments"

    allowed = workspace.hrsync("sync", "--allow-held", "5")
    assert allowed.code == 0 and allowed.finished["outcome"] == "applied"
    assert allowed.finished["counts"]["held"] == 5
    assert team_of(workspace, "emily.nguyen@example.com")["name"] == "Mobile"
    assert team_of(workspace, "samuel.osei@example.com")["name"] == "Payments"


def test_max_held_0_keeps_refusing_the_whole_export(workspace: Workspace) -> None:
    rows = first_sync(workspace)
    rows.append(CARL)
    workspace.write_export(rows)
    run = workspace.hrsync("sync", env={"HRSYNC_SYNC__MAX_HELD": "0"})
    assert run.finished["outcome"] == "refused"
    assert "Work Email must not be empty" in run.finished["reason"]
    assert run.named("sync.person_held") == []


def test_a_held_people_refusal_has_a_plan_id_that_a_person_approves(
    workspace: Workspace,
) -> None:
    # The held guard trips as every other guard does: a plan id, the approve command,
    # the refused plan kept; the next sync applies exactly that plan, the people held.
    refused = refused_for_five_held(workspace)
    plan_id = refused.finished["plan_id"]
    assert plan_id and f"approve {plan_id}" in refused.stdout, refused.stdout[-3000:]
    assert "sync --allow-held 5" in refused.stdout
    assert len(workspace.process_requests()) == 1

    approved = workspace.hrsync("approve", plan_id, "--by", "ana@example.com")
    assert approved.code == 0, approved.stderr
    assert "sync.max_held_fraction" in approved.stdout
    applied = workspace.hrsync("sync")
    assert applied.code == 0, applied.stdout[-3000:]
    assert applied.finished["outcome"] == "applied"
    assert applied.finished["approval"]["plan_id"] == plan_id
    assert applied.finished["counts"]["held"] == 5
    assert team_of(workspace, "emily.nguyen@example.com")["name"] == "Mobile"
    assert team_of(workspace, "samuel.osei@example.com")["name"] == "Payments"


def test_once_an_approved_held_plan_is_applied_the_same_export_is_not_refused_again(
    workspace: Workspace,
) -> None:
    # A person approved holding these five; until HR fixes their rows (or more go
    # wrong), each run meets the same plan: it is no new decision, not refused and
    # paged for again every day.
    rows, plan_id = approved_five_held(workspace)
    sent = len(workspace.process_requests())
    approved = workspace.hrsync("sync")  # DX has everyone else already: nothing to send
    assert approved.finished["outcome"] == "in_sync", approved.stdout[-3000:]
    assert approved.finished["approval"]["plan_id"] == plan_id
    assert "applied" in workspace.hrsync("approvals").stdout
    again = workspace.hrsync("sync")
    assert again.code == 0, again.stdout[-3000:]
    assert len(workspace.process_requests()) == sent  # nothing new to send
    assert again.finished["outcome"] in ("in_sync", "applied")
    assert again.finished["counts"]["held"] == 5
    changed(rows, "E111", Work_Email="")  # a sixth: a new decision for a person
    workspace.write_export(rows)
    worse = workspace.hrsync("sync")
    assert worse.code == 4 and worse.finished["plan_id"] != plan_id, worse.stdout[-3000:]


def test_a_changed_export_after_a_held_approval_is_refused_naming_the_difference(
    workspace: Workspace,
) -> None:
    rows, plan_id = approved_five_held(workspace)
    changed(rows, "E111", Manager_ID="E023")  # HR moves Emily meanwhile
    workspace.write_export(rows)
    again = workspace.hrsync("sync")
    assert again.code == 4, again.stdout[-3000:]
    new_id = again.finished["plan_id"]
    assert new_id != plan_id
    assert f"than plan {plan_id} approved by ana@example.com" in again.stdout, again.stdout
    assert f"approve {new_id}" in again.stdout
    assert team_of(workspace, "emily.nguyen@example.com")["name"] == "Payments"
    # HR moves her back: the approved plan again (nothing to change but the people it
    # holds), applied as approved.
    changed(rows, "E111", Manager_ID="E022")
    workspace.write_export(rows)
    applied = workspace.hrsync("sync")
    assert applied.code == 0, applied.stdout[-3000:]
    assert applied.finished["approval"]["plan_id"] == plan_id
    assert applied.finished["counts"]["held"] == 5


def test_the_plan_and_check_show_the_value_a_held_row_holds_and_the_store_does_not(
    workspace: Workspace,
) -> None:
    # A typo in a manager id: HR finds it faster with the value in front of them. The plan
    # and check are read on the operator's terminal; the store and the webhook keep what
    # is wrong in words only, as everywhere a run is told without its rows' values.
    rows = first_sync(workspace)
    changed(rows, "E111", Manager_ID="E0O2")
    workspace.write_export(rows)
    plan = workspace.hrsync("plan")
    assert "Manager ID must be the employee id of a person in the export" in plan.stdout
    assert "got 'E0O2'" in plan.stdout, plan.stdout
    check = workspace.hrsync("check")
    assert "got 'E0O2'" in check.stdout, check.stdout
    assert workspace.hrsync("sync").code == 0
    status = workspace.hrsync("status")
    assert "Manager ID must be" in status.stdout and "E0O2" not in status.stdout
