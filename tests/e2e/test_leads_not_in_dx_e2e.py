"""A team lead who is not a DX user yet (DX names the row in `invalid_rows`): the team is
led by the nearest manager above whom DX accepts, in the same run, and keeps its name,
members and reference_id; the real lead takes over once they join DX."""

from __future__ import annotations

import dataclasses
import json
from typing import Any

from tests.e2e.conftest import Workspace, read_rows

NEW_LEAD = "new.person@example.com"
REPORT = "report.person@example.com"
CEO = "ada.okafor@example.com"


def with_a_new_team(workspace: Workspace) -> None:
    """E900 joins under the CEO with one report: a new team whose lead DX does not know.
    The report is a DX user (people DX does not count are another matter)."""
    rows = read_rows("sample-org.csv")
    base = {**rows[-1], "Department": "Newcomers", "Status": "Active"}
    for employee_id, name, email, manager in (
        ("E900", "New Person", NEW_LEAD, "E001"),
        ("E901", "Report Person", REPORT, "E900"),
    ):
        person = {"Employee ID": employee_id, "Full Name": name, "Work Email": email}
        rows.append({**base, **person, "Manager ID": manager})
    workspace.write_export(rows)
    workspace.sim.dx.add_user("Report Person", REPORT)


def lead_of(workspace: Workspace, team: dict[str, Any]) -> str:
    by_id = {user["id"]: user["email"] for user in workspace.sim.dx.users_view()}
    return by_id[team["manager_id"]]


def stand_ins(workspace: Workspace) -> list[dict[str, str]]:
    status = workspace.hrsync("status", "--format", "json")
    assert status.code == 0, status.stderr
    listed: list[dict[str, str]] = json.loads(status.stdout)["stand_in_leads"]
    return listed


def newcomers(workspace: Workspace) -> dict[str, Any]:
    (team,) = [t for t in workspace.sim.dx.teams_view() if REPORT in t["member_emails"]]
    return team


def test_a_lead_dx_does_not_know_is_stood_in_for_by_the_manager_above(
    workspace: Workspace,
) -> None:
    # The org as DX already has it: then the newcomer is the one lead DX never showed as
    # a user, whether or not DX's refusal names the row (the seed picks how it words it).
    assert workspace.hrsync("sync").code == 0
    with_a_new_team(workspace)
    first = workspace.hrsync("sync")
    assert first.code == 0, first.stdout[-3000:]
    assert first.finished["outcome"] == "applied"
    (substituted,) = first.named("sync.lead_substituted")
    assert substituted["lead"] == NEW_LEAD and substituted["substitute"] == CEO
    team = newcomers(workspace)
    assert lead_of(workspace, team) == CEO
    assert team["name"] == substituted["team"]
    reference_id = team["reference_id"]
    (listed,) = first.finished["lead_substitutes"]
    assert listed == {
        "team": team["name"],
        "reference_id": reference_id,
        "lead": NEW_LEAD,
        "substitute": CEO,
    }

    assert stand_ins(workspace) == [
        {"team": team["name"], "reference_id": reference_id, "lead": NEW_LEAD, "stands_in": CEO}
    ]
    status = workspace.hrsync("status")
    assert f"Stand-in:    {CEO} leads {team['name']!r} until {NEW_LEAD} joins DX" in status.stdout

    # Still not in DX: DX already has the stand-in, so nothing changes and nothing is sent.
    imports = len([r for r in workspace.process_requests() if r.error is None])
    second = workspace.hrsync("sync")
    assert second.code == 0 and second.finished["outcome"] == "in_sync"
    assert second.named("sync.lead_substituted")
    assert len([r for r in workspace.process_requests() if r.error is None]) == imports

    # They join DX: the next run hands the team to them.
    workspace.sim.dx.add_user("New Person", NEW_LEAD)
    third = workspace.hrsync("sync")
    assert third.code == 0 and third.finished["outcome"] == "applied"
    assert third.named("sync.lead_substituted") == []
    team = newcomers(workspace)
    assert lead_of(workspace, team) == NEW_LEAD
    assert team["reference_id"] == reference_id
    assert stand_ins(workspace) == []


def test_a_top_team_whose_lead_dx_does_not_know_is_still_rejected(
    workspace: Workspace,
) -> None:
    """Nobody is above the top team's lead to stand in: DX's refusal stands."""
    rows = read_rows("sample-org.csv")
    rows[0] = {**rows[0], "Work Email": "new.ceo@example.com"}
    workspace.write_export(rows)
    run = workspace.hrsync("sync")
    assert run.code == 6 and run.finished["outcome"] == "rejected"
    if workspace.sim.dx.variation.invalid_rows != "message":
        (row,) = run.named("sync.rejected.row")
        assert row["lead"] == "new.ceo@example.com"
        assert run.named("sync.lead_substituted") == []


def use_shape(workspace: Workspace, shape: str) -> None:
    dx = workspace.sim.dx
    dx.variation = dataclasses.replace(dx.variation, invalid_rows=shape)  # type: ignore[arg-type]


def test_a_lead_named_only_in_a_sentence_is_stood_in_for(workspace: Workspace) -> None:
    """DX's details are not public: a row named by index and reference_id with a
    sentence for a reason still gets the stand-in, never a rejection."""
    use_shape(workspace, "reasons")
    with_a_new_team(workspace)
    run = workspace.hrsync("sync")
    assert run.code == 0, run.stdout[-3000:]
    assert run.finished["outcome"] == "applied"
    (substituted,) = run.named("sync.lead_substituted")
    assert substituted["lead"] == NEW_LEAD and substituted["substitute"] == CEO
    assert lead_of(workspace, newcomers(workspace)) == CEO
    assert run.named("sync.refusal_unread") == []


def test_a_refusal_naming_nothing_stands_in_for_the_new_leads(workspace: Workspace) -> None:
    """A message and no details: every lead DX never showed as a user stands in, once.
    After a first sync DX has shown the org's leads, so only the newcomer is new."""
    first = workspace.hrsync("sync")
    assert first.code == 0 and first.finished["outcome"] == "applied"
    use_shape(workspace, "message")
    with_a_new_team(workspace)
    run = workspace.hrsync("sync")
    assert run.code == 0, run.stdout[-3000:]
    assert run.finished["outcome"] == "applied"
    (unread,) = run.named("sync.refusal_unread")
    assert unread["suspects"] == 1
    (substituted,) = run.named("sync.lead_substituted")
    assert substituted["lead"] == NEW_LEAD and substituted["substitute"] == CEO
    assert lead_of(workspace, newcomers(workspace)) == CEO
    status = workspace.hrsync("status")
    assert f"{CEO} leads {substituted['team']!r} until {NEW_LEAD} joins DX" in status.stdout


def test_a_refusal_naming_nothing_stands_when_the_stand_ins_are_refused_too(
    workspace: Workspace,
) -> None:
    """The guess is wrong (a contributor is not what DX refuses, a top lead is): DX
    refuses the second request too, and its refusal stands."""
    use_shape(workspace, "message")
    rows = read_rows("sample-org.csv")
    rows[0] = {**rows[0], "Work Email": "new.ceo@example.com"}
    workspace.write_export(rows)
    run = workspace.hrsync("sync")
    assert run.code == 6 and run.finished["outcome"] == "rejected"
    assert len([r for r in workspace.process_requests() if r.error]) <= 2
    assert workspace.dx_teams() == {}
