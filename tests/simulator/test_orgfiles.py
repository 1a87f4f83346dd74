"""The team hierarchy import: validation, check order, asynchronous full replacement."""

from __future__ import annotations

import dataclasses
from datetime import timedelta
from typing import Any

import httpx
import pytest

from hrsync.simulator.server import RunningSimulator
from hrsync.simulator.variation import MAX_LAG_S

from .conftest import PERSONAL_TOKEN, START, Api, FakeClock, current_hierarchy, hteam


@pytest.fixture(autouse=True)
def rows_by_field(sim: RunningSimulator) -> None:
    """These tests read which row and field DX refuses: the seed's `fields` shape says
    it (the other shapes are tests/simulator/test_variation.py's)."""
    sim.dx.variation = dataclasses.replace(sim.dx.variation, invalid_rows="fields")


PROCESS = "orgfiles.teamHierarchy.process"
PREVIEW = "orgfiles.teamHierarchy.preview"
ADA = "ada@acme.example"
GRACE = "grace@acme.example"


def apply(api: Api, clock: FakeClock, teams: list[dict[str, Any]], **extra: Any) -> None:
    reply = api.process(teams, **extra)
    assert reply.json()["ok"] is True, reply.text
    clock.advance(2.0 + MAX_LAG_S)  # the import, then its counts and events (the seed's lag)


# ---- validation ---------------------------------------------------------------------


def rows_error(reply: httpx.Response) -> list[dict[str, Any]]:
    body = reply.json()
    assert body["ok"] is False
    assert body["error"] == "invalid_rows", body
    assert body["message"]
    rows: list[dict[str, Any]] = body["error_details"]["rows"]
    return rows


@pytest.mark.parametrize("endpoint", [PROCESS, PREVIEW])
def test_unknown_lead_is_invalid_rows_naming_the_row(api: Api, endpoint: str) -> None:
    teams = [*current_hierarchy(), hteam("Ghosts", "eng-009", "nobody@acme.example")]
    reply = api.post(endpoint, {"teams": teams})
    assert rows_error(reply) == [
        {
            "index": 3,
            "reference_id": "eng-009",
            "field": "team_lead_email",
            "message": "user not found",
        }
    ]


@pytest.mark.parametrize(
    ("change", "field"),
    [
        ({"name": ""}, "name"),
        ({"name": None}, "name"),
        ({"reference_id": None}, "reference_id"),
        ({"team_lead_email": 7}, "team_lead_email"),
        ({"contributors": None}, "contributors"),
        ({"contributors": "ada@acme.example"}, "contributors"),
        ({"contributors": [1]}, "contributors"),
        ({"parent_team_reference_id": "eng-001"}, "parent_team_reference_id"),
        ({"parent_team_name": "Engineering"}, "parent_team_reference_id"),
    ],
)
def test_a_bad_field_is_invalid_rows(api: Api, change: dict[str, Any], field: str) -> None:
    teams = current_hierarchy()
    teams.append({**hteam("New", "eng-010", ADA), **change})
    problems = rows_error(api.process(teams))
    assert [(p["index"], p["field"]) for p in problems] == [(3, field)]


def test_missing_fields_are_invalid_rows(api: Api) -> None:
    problems = rows_error(api.process([{"name": "Only a name"}]))
    assert {p["field"] for p in problems} == {"reference_id", "team_lead_email", "contributors"}


def test_a_team_that_is_not_an_object_is_invalid_rows(api: Api) -> None:
    assert rows_error(api.process(["eng-001"]))[0]["index"] == 0


def test_duplicate_reference_ids_are_invalid_rows(api: Api) -> None:
    teams = [*current_hierarchy(), hteam("Copy", "eng-002", ADA)]
    problems = rows_error(api.process(teams))
    assert [(p["index"], p["field"], p["reference_id"]) for p in problems] == [
        (3, "reference_id", "eng-002")
    ]


def test_unknown_parent_reference_is_invalid_rows(api: Api) -> None:
    teams = [*current_hierarchy(), hteam("Orphan", "eng-011", ADA, parent=("eng-404", "Lost"))]
    problems = rows_error(api.process(teams))
    assert [(p["index"], p["field"]) for p in problems] == [(3, "parent_team_reference_id")]


def test_parent_name_must_match_the_parent(api: Api) -> None:
    teams = [*current_hierarchy(), hteam("Kid", "eng-012", ADA, parent=("eng-001", "Wrong"))]
    problems = rows_error(api.process(teams))
    assert [(p["index"], p["field"]) for p in problems] == [(3, "parent_team_name")]


def test_all_problems_are_reported_in_row_order(api: Api) -> None:
    teams = [hteam("A", "a", "nobody@x.example"), hteam("B", "a", ADA), {"name": "C"}]
    problems = rows_error(api.process(teams))
    assert [p["index"] for p in problems] == sorted(p["index"] for p in problems)
    assert {p["index"] for p in problems} == {0, 1, 2}


def test_a_cycle_is_circular_reference(api: Api, sim: RunningSimulator) -> None:
    teams = [
        hteam("Root", "r", ADA),
        hteam("A", "a", ADA, parent=("c", "C")),
        hteam("B", "b", ADA, parent=("a", "A")),
        hteam("C", "c", ADA, parent=("b", "B")),
    ]
    body = api.process(teams).json()
    assert body["ok"] is False
    assert body["error"] == "circular_reference"
    cycle = body["error_details"]["cycle"]
    assert cycle[0] == cycle[-1]
    assert set(cycle) == {"a", "b", "c"}
    assert sim.dx.imports == []


def test_a_team_that_is_its_own_parent_is_circular(api: Api) -> None:
    body = api.process([hteam("Self", "s", ADA, parent=("s", "Self"))]).json()
    assert body["error"] == "circular_reference"
    assert body["error_details"]["cycle"] == ["s", "s"]


def test_teams_over_5_mb_are_payload_too_large(api: Api, sim: RunningSimulator) -> None:
    filler = [f"person{i:07d}@nowhere.example" for i in range(180_000)]
    assert len(",".join(filler)) > 5_000_000
    reply = api.process([hteam("Huge", "huge", ADA, filler)])
    assert reply.json()["ok"] is False
    assert reply.json()["error"] == "payload_too_large"
    assert sim.dx.imports == []


def test_teams_just_under_5_mb_are_accepted(api: Api) -> None:
    team = hteam("Big", "big", ADA, [])
    base = len(httpx.Request("POST", "/", json=[team]).content)
    team["contributors"] = ["x" * (5_000_000 - base - 4)]
    assert api.process([team]).json()["ok"] is True


@pytest.mark.parametrize("email", ["not-an-address", "a@b", "two@@x.example", 42, ""])
def test_a_malformed_notification_email_is_invalid_email(api: Api, email: object) -> None:
    body = api.process(current_hierarchy(), email=email).json()
    assert body["ok"] is False
    assert body["error"] == "invalid_email"


def test_malformed_json_is_invalid_arguments(sim: RunningSimulator) -> None:
    reply = httpx.post(
        f"{sim.base_url}/{PROCESS}",
        content=b'{"teams": [',
        headers={"Authorization": "Bearer sim-org-token", "Content-Type": "application/json"},
    )
    assert reply.status_code == 400
    assert reply.json()["ok"] is False
    assert reply.json()["error"] == "invalid_arguments"


def test_a_body_that_is_not_json_typed_is_invalid_arguments(sim: RunningSimulator) -> None:
    reply = httpx.post(
        f"{sim.base_url}/{PROCESS}",
        content=b"teams=1",
        headers={"Authorization": "Bearer sim-org-token"},
    )
    assert reply.json()["error"] == "invalid_arguments"


@pytest.mark.parametrize("body", [{}, {"teams": {"a": 1}}, {"teams": None}, [1, 2]])
def test_teams_must_be_an_array(api: Api, body: Any) -> None:
    assert api.post(PROCESS, body).json()["error"] == "invalid_arguments"


# ---- check order: auth, scope, arguments/size, windows, import running, rows ----------


def test_arguments_are_checked_before_the_snapshot_window(api: Api, sim: RunningSimulator) -> None:
    sim.dx.add_snapshot()  # live
    assert api.process(current_hierarchy(), email="bad").json()["error"] == "invalid_email"
    assert api.post(PROCESS, {}).json()["error"] == "invalid_arguments"
    assert api.process(current_hierarchy()).json()["error"] == "snapshot_in_progress"


def test_window_is_checked_before_running_import(api: Api, sim: RunningSimulator) -> None:
    assert api.process(current_hierarchy()).json()["ok"] is True
    sim.dx.add_snapshot()
    assert api.process(current_hierarchy()).json()["error"] == "snapshot_in_progress"


def test_running_import_is_checked_before_rows(api: Api) -> None:
    assert api.process(current_hierarchy()).json()["ok"] is True
    bad_rows = [hteam("X", "x", "nobody@acme.example")]
    assert api.process(bad_rows).json()["error"] == "import_in_progress"
    assert api.preview(bad_rows).json()["error"] == "import_in_progress"


def test_auth_comes_before_everything(sim: RunningSimulator) -> None:
    reply = Api(sim.base_url, token="nope").post(PROCESS, {})
    assert reply.json()["error"] == "invalid_auth"


# ---- asynchronous apply ---------------------------------------------------------------


def test_process_is_applied_after_the_delay(
    api: Api, clock: FakeClock, sim: RunningSimulator
) -> None:
    teams = current_hierarchy()
    teams[1]["name"] = "Platform Engineering"
    reply = api.process(teams)
    assert reply.status_code == 200
    body = reply.json()
    assert body["ok"] is True
    assert isinstance(body["import_id"], str)
    assert api.team_by_ref()["eng-002"]["name"] == "Platform"
    clock.advance(1.9)
    assert api.team_by_ref()["eng-002"]["name"] == "Platform"
    assert api.process(teams).json()["error"] == "import_in_progress"
    assert api.preview(teams).json()["error"] == "import_in_progress"
    clock.advance(0.1)
    assert api.team_by_ref()["eng-002"]["name"] == "Platform Engineering"
    assert api.process(teams).json()["ok"] is True  # the account is free again
    record = sim.dx.imports[0]
    assert record.applied_at == START + timedelta(seconds=2)


def test_the_delay_comes_from_the_scenario(clock: FakeClock) -> None:
    from dataclasses import replace

    from hrsync.simulator.scenario import default_scenario
    from tests.simulating import start_simulator

    with start_simulator(replace(default_scenario(), import_delay_s=0), clock=clock) as sim:
        api = Api(sim.base_url)
        teams = current_hierarchy()
        teams[2]["name"] = "Applications"
        assert api.process(teams).json()["ok"] is True
        assert api.team_by_ref()["eng-003"]["name"] == "Applications"


def test_full_replacement(api: Api, clock: FakeClock, sim: RunningSimulator) -> None:
    before = api.team_by_ref()
    teams = [
        hteam("Engineering", "eng-001", ADA, [GRACE]),
        hteam(
            "Platform",
            "eng-002",
            GRACE,
            ["barbara@acme.example"],
            parent=("eng-001", "Engineering"),
        ),
        hteam(
            "Data",
            "eng-020",
            "edsger@acme.example",
            ["edsger@acme.example"],
            parent=("eng-002", "Platform"),
        ),
    ]
    apply(api, clock, teams)
    after = api.team_by_ref()
    assert set(after) == {"eng-001", "eng-002", "eng-020"}
    # Matched teams keep their ids; the new team gets a fresh one.
    assert after["eng-001"]["id"] == before["eng-001"]["id"]
    assert after["eng-002"]["id"] == before["eng-002"]["id"]
    new_id = after["eng-020"]["id"]
    assert new_id not in {team["id"] for team in before.values()}
    assert after["eng-020"]["parent_id"] == after["eng-002"]["id"]
    assert after["eng-020"]["ancestors"] == [
        "LTE",
        after["eng-001"]["id"],
        after["eng-002"]["id"],
        new_id,
    ]
    assert after["eng-020"]["parent"] is False
    assert after["eng-002"]["parent"] is True
    assert after["eng-001"]["parent_id"] == "LTE"
    assert after["eng-001"]["contributors"] == 1
    assert after["eng-020"]["last_changed_at"] == "2026-11-22T09:00:02.000Z"
    # Absent teams are archived, including the one made in the web app without reference_id.
    archived = {team["name"]: team for team in sim.dx.archived_teams()}
    assert set(archived) == {"Apps", "Design Guild"}
    assert archived["Design Guild"]["reference_id"] is None
    assert None not in after


def test_moves_and_lead_changes_are_applied(
    api: Api, clock: FakeClock, sim: RunningSimulator
) -> None:
    teams = current_hierarchy()
    teams[2] = hteam("Apps", "eng-003", "ken@acme.example", [], parent=("eng-002", "Platform"))
    apply(api, clock, teams)
    after = api.team_by_ref()
    assert after["eng-003"]["parent_id"] == after["eng-002"]["id"]
    assert after["eng-003"]["ancestors"][-2:] == [after["eng-002"]["id"], after["eng-003"]["id"]]
    ken = next(user for user in sim.dx.users_view() if user["email"] == "ken@acme.example")
    assert after["eng-003"]["manager_id"] == ken["id"]
    assert after["eng-003"]["contributors"] == 0


def test_unknown_contributors_are_dropped_silently(
    api: Api, clock: FakeClock, sim: RunningSimulator
) -> None:
    teams = current_hierarchy()
    teams[2]["contributors"] = ["ken@acme.example", "stranger@acme.example", "KEN@acme.example"]
    reply = api.process(teams)
    assert reply.json() == {"ok": True, "import_id": reply.json()["import_id"]}
    clock.advance(2)
    assert api.team_by_ref()["eng-003"]["contributors"] == 1
    apps = next(t for t in sim.dx.teams_view() if t["reference_id"] == "eng-003")
    assert apps["member_emails"] == ["ken@acme.example"]


def test_a_lead_email_matches_regardless_of_case(api: Api) -> None:
    teams = current_hierarchy()
    teams[0]["team_lead_email"] = "ADA@Acme.Example"
    assert api.process(teams).json()["ok"] is True


def test_a_user_added_later_can_lead(api: Api, clock: FakeClock, sim: RunningSimulator) -> None:
    teams = [*current_hierarchy(), hteam("Newcomers", "eng-030", "new@acme.example")]
    assert rows_error(api.process(teams))
    sim.dx.add_user("New Person", "new@acme.example")
    apply(api, clock, teams)
    assert api.team_by_ref()["eng-030"]["contributors"] == 0


def test_an_archived_team_comes_back_with_its_id(api: Api, clock: FakeClock) -> None:
    original_id = api.team_by_ref()["eng-003"]["id"]
    apply(api, clock, current_hierarchy()[:2])
    assert "eng-003" not in api.team_by_ref()
    apply(api, clock, current_hierarchy())
    assert api.team_by_ref()["eng-003"]["id"] == original_id


def test_an_empty_hierarchy_archives_everything(
    api: Api, clock: FakeClock, sim: RunningSimulator
) -> None:
    apply(api, clock, [])
    assert api.teams() == []
    assert len(sim.dx.archived_teams()) == 4


def test_notification_email_is_sent_when_the_import_ends(
    api: Api, clock: FakeClock, sim: RunningSimulator
) -> None:
    api.process(current_hierarchy(), email="ops@acme.example")
    assert sim.dx.notifications == []
    clock.advance(2)
    api.teams()
    assert [(n.email, n.outcome) for n in sim.dx.notifications] == [
        ("ops@acme.example", "succeeded")
    ]


def test_preview_applies_nothing(api: Api, clock: FakeClock, sim: RunningSimulator) -> None:
    before = api.teams()
    body = api.preview([hteam("Only", "only", ADA)]).json()
    assert body["ok"] is True
    assert body["preview_url"] == f"https://app.dx.example/admin/teams/imports/{body['import_id']}"
    clock.advance(3600)
    # The same teams (in whatever order the seed lists them).
    assert sorted(api.teams(), key=lambda t: t["id"]) == sorted(before, key=lambda t: t["id"])
    assert api.process(current_hierarchy()).json()["ok"] is True  # no import is running


def test_personal_token_imports_are_attributed_to_the_user(
    sim: RunningSimulator, clock: FakeClock
) -> None:
    api = Api(sim.base_url, token=PERSONAL_TOKEN)
    teams = current_hierarchy()
    teams[2]["name"] = "Applications"
    apply(api, clock, teams)
    assert sim.dx.audit_events()[0]["actor"] == GRACE
