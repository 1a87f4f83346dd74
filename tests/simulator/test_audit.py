"""Audit events for what an import changed, newest first, paged by opaque cursors."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace
from datetime import timedelta
from typing import Any

import pytest

from hrsync.simulator.scenario import default_scenario
from hrsync.simulator.server import RunningSimulator
from hrsync.simulator.variation import MAX_LAG_S
from tests.simulating import start_simulator

from .conftest import START, Api, FakeClock, current_hierarchy


def renamed(**names: str) -> list[dict[str, Any]]:
    """The default hierarchy with teams renamed by reference_id (children follow)."""
    teams = current_hierarchy()
    new_names = {
        team["reference_id"]: names.get(team["reference_id"].replace("-", "_"), team["name"])
        for team in teams
    }
    for team in teams:
        team["name"] = new_names[team["reference_id"]]
        if team["parent_team_reference_id"]:
            team["parent_team_name"] = new_names[team["parent_team_reference_id"]]
    return teams


def apply(api: Api, clock: FakeClock, teams: list[dict[str, Any]]) -> None:
    assert api.process(teams).json()["ok"] is True
    clock.advance(2 + MAX_LAG_S)  # the import, then its events (the seed's lag)


def test_no_events_before_any_import(api: Api) -> None:
    body = api.get("teams.auditTrail").json()
    assert body == {"events": [], "response_metadata": {"next_cursor": None}}


def test_rename_and_lead_change_are_recorded(
    api: Api, clock: FakeClock, sim: RunningSimulator
) -> None:
    teams = renamed(eng_002="Platform Engineering")
    teams[2]["team_lead_email"] = "ken@acme.example"
    apply(api, clock, teams)
    body = api.get("teams.auditTrail").json()
    assert "ok" not in body
    users = {user["email"]: user for user in sim.dx.users_view()}
    applied_at = int((START + timedelta(seconds=2)).timestamp())
    events = body["events"]
    assert [(e["action"], e["team"]) for e in events] == [
        ("change_manager", "Apps"),
        ("change_name", "Platform"),
    ]
    assert events[1]["metadata"] == {"from": "Platform", "to": "Platform Engineering"}
    assert events[0]["metadata"] == {
        "from": users["alan@acme.example"],
        "to": users["ken@acme.example"],
    }
    assert all(e["created"] == applied_at for e in events)
    assert all(e["actor"] == "web-api@dx.example" for e in events)
    assert len({e["id"] for e in events}) == 2
    assert body["response_metadata"] == {"next_cursor": None}


def test_an_unchanged_import_records_nothing(api: Api, clock: FakeClock) -> None:
    apply(api, clock, current_hierarchy())
    assert api.get("teams.auditTrail").json()["events"] == []


def test_events_are_newest_first(api: Api, clock: FakeClock) -> None:
    apply(api, clock, renamed(eng_003="Apps 2"))
    clock.advance(60)
    apply(api, clock, renamed(eng_003="Apps 3"))
    events = api.get("teams.auditTrail").json()["events"]
    assert [e["metadata"]["to"] for e in events] == ["Apps 3", "Apps 2"]
    assert events[0]["created"] > events[1]["created"]


@pytest.fixture
def paged(clock: FakeClock) -> Iterator[RunningSimulator]:
    """Five renames of Apps, audited two events a page."""
    scenario = replace(default_scenario(), audit_page_size=2, import_delay_s=0)
    with start_simulator(scenario, clock=clock) as running:
        api = Api(running.base_url)
        for round_number in range(5):
            assert api.process(renamed(eng_003=f"Apps {round_number}")).json()["ok"] is True
            clock.advance(1)
        yield running


def test_paging_with_cursors(paged: RunningSimulator) -> None:
    api = Api(paged.base_url)
    seen: list[str] = []
    cursor: str | None = None
    pages = 0
    while True:
        body = api.get("teams.auditTrail", **({"cursor": cursor} if cursor else {})).json()
        assert "ok" not in body
        pages += 1
        assert len(body["events"]) <= 2
        seen.extend(e["metadata"]["to"] for e in body["events"])
        cursor = body["response_metadata"]["next_cursor"]
        if cursor is None:
            break
    assert pages == 3
    assert seen == ["Apps 4", "Apps 3", "Apps 2", "Apps 1", "Apps 0"]


def test_a_full_last_page_has_no_next_cursor(clock: FakeClock) -> None:
    scenario = replace(default_scenario(), audit_page_size=2, import_delay_s=0)
    with start_simulator(scenario, clock=clock) as sim:
        api = Api(sim.base_url)
        for name in ("A1", "A2"):
            api.process(renamed(eng_003=name))
            clock.advance(1)
        body = api.get("teams.auditTrail").json()
        assert len(body["events"]) == 2
        assert body["response_metadata"]["next_cursor"] is None


def test_new_events_do_not_shift_later_pages(paged: RunningSimulator, clock: FakeClock) -> None:
    api = Api(paged.base_url)
    first = api.get("teams.auditTrail").json()
    api.process(renamed(eng_003="Apps late"))
    clock.advance(1)
    second = api.get("teams.auditTrail", cursor=first["response_metadata"]["next_cursor"]).json()
    assert [e["metadata"]["to"] for e in second["events"]] == ["Apps 2", "Apps 1"]


@pytest.mark.parametrize("cursor", ["garbage!", "bm9wZQ", "YmVmb3JlOng"])
def test_an_invalid_cursor_is_invalid_arguments(api: Api, cursor: str) -> None:
    body = api.get("teams.auditTrail", cursor=cursor).json()
    assert body["ok"] is False
    assert body["error"] == "invalid_arguments"


def test_the_page_size_defaults_to_50(clock: FakeClock) -> None:
    scenario = replace(default_scenario(), import_delay_s=0)
    with start_simulator(scenario, clock=clock) as sim:
        api = Api(sim.base_url)
        for round_number in range(51):
            api.process(renamed(eng_003=f"Apps {round_number}"))
            clock.advance(1)
        body = api.get("teams.auditTrail").json()
        assert len(body["events"]) == 50
        rest = api.get("teams.auditTrail", cursor=body["response_metadata"]["next_cursor"]).json()
        assert [e["metadata"]["to"] for e in rest["events"]] == ["Apps 0"]
