"""People who become DX users over time: a scenario's `joins_at`, and the simulator's own
`simulator.users.add` call. Until a person joins, DX drops their e-mail as a contributor
without a word, names their row when they lead a team, and has no attributes for them."""

from __future__ import annotations

import dataclasses
import json
import re
from dataclasses import replace
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest

from hrsync.simulator.core import SIMULATOR_USERS_ADD
from hrsync.simulator.scenario import (
    Scenario,
    ScenarioError,
    ScenarioUser,
    load_scenario,
)
from hrsync.simulator.server import RunningSimulator
from hrsync.simulator.variation import MAX_LAG_S
from tests.simulating import start_simulator

from .conftest import READONLY_TOKEN, START, Api, FakeClock, current_hierarchy, hteam

NINA = "nina.newhire@acme.example"
DAY = 86400.0


@pytest.fixture
def scenario(scenario: Scenario) -> Scenario:
    """The default account, with Nina joining DX two days after the simulator starts."""
    nina = ScenarioUser(name="Nina Newhire", email=NINA, joins_at=timedelta(days=2))
    return replace(scenario, users=(*scenario.users, nina))


def with_nina(contributor: bool = True) -> list[dict[str, Any]]:
    teams = current_hierarchy()
    if contributor:
        teams[2]["contributors"] = [*teams[2]["contributors"], NINA]
    return teams


def test_a_contributor_who_has_not_joined_is_dropped_then_counted_once_joined(
    api: Api, clock: FakeClock, sim: RunningSimulator
) -> None:
    before = api.team_by_ref()["eng-003"]["contributors"]
    assert api.process(with_nina()).json()["ok"] is True
    clock.advance(2)
    assert api.team_by_ref()["eng-003"]["contributors"] == before  # ignored, no error
    assert NINA not in {user["email"] for user in sim.dx.users_view()}

    clock.advance(2 * DAY)
    assert NINA in {user["email"] for user in sim.dx.users_view()}
    # DX does not remember e-mails it ignored: she is placed by the next import.
    assert api.team_by_ref()["eng-003"]["contributors"] == before
    assert api.process(with_nina()).json()["ok"] is True
    clock.advance(2 + MAX_LAG_S)  # the import, then its counts (the seed's lag)
    assert api.team_by_ref()["eng-003"]["contributors"] == before + 1


def test_a_lead_who_has_not_joined_is_named_in_invalid_rows(
    api: Api, clock: FakeClock, sim: RunningSimulator
) -> None:
    sim.dx.variation = dataclasses.replace(sim.dx.variation, invalid_rows="fields")
    teams = [*current_hierarchy(), hteam("Newcomers", "eng-030", NINA)]
    reply = api.process(teams).json()
    assert reply["error"] == "invalid_rows"
    (row,) = reply["error_details"]["rows"]
    assert (row["index"], row["field"], row["reference_id"]) == (
        len(teams) - 1,
        "team_lead_email",
        "eng-030",
    )
    clock.advance(2 * DAY)
    assert api.process(teams).json()["ok"] is True


def test_attributes_of_someone_not_yet_in_dx_are_user_not_found(api: Api, clock: FakeClock) -> None:
    body = {"email": NINA, "attributes": [{"name": "Location", "value": "Berlin"}]}
    reply = api.post("users.attributes.update", body)
    assert (reply.status_code, reply.json()["error"]) == (404, "user_not_found")
    clock.advance(2 * DAY)
    assert api.post("users.attributes.update", body).json()["ok"] is True


def test_joining_users_are_listed_with_when_they_join(sim: RunningSimulator) -> None:
    assert sim.dx.joining_users() == [(START + timedelta(days=2), NINA)]


def test_the_simulators_own_call_makes_a_person_a_dx_user_now(
    api: Api, clock: FakeClock, sim: RunningSimulator
) -> None:
    reply = api.post(SIMULATOR_USERS_ADD, {"name": "Nina Newhire", "email": NINA})
    assert reply.json()["ok"] is True
    assert reply.json()["user"]["email"] == NINA
    assert sim.dx.joining_users() == []  # joined early: the scenario's date no longer applies
    assert api.process(with_nina()).json()["ok"] is True
    clock.advance(2)
    apps = next(t for t in sim.dx.teams_view() if t["reference_id"] == "eng-003")
    assert NINA in apps["member_emails"]


@pytest.mark.parametrize(
    ("body", "status", "error"),
    [
        ({"name": "Ada again", "email": "ADA@acme.example"}, 409, "already_exists"),
        ({"name": "No address"}, 400, "invalid_arguments"),
        ({"name": "Bad", "email": "not-an-address"}, 400, "invalid_arguments"),
        ({"email": "someone@acme.example"}, 400, "invalid_arguments"),
    ],
)
def test_the_simulators_own_call_refuses_what_it_cannot_add(
    api: Api, body: dict[str, Any], status: int, error: str
) -> None:
    reply = api.post(SIMULATOR_USERS_ADD, body)
    assert (reply.status_code, reply.json()["error"]) == (status, error)


def test_the_simulators_own_call_needs_an_admin_token(sim: RunningSimulator) -> None:
    readonly = Api(sim.base_url, READONLY_TOKEN)
    try:
        reply = readonly.post(SIMULATOR_USERS_ADD, {"name": "N", "email": NINA})
    finally:
        readonly.http.close()
    assert (reply.status_code, reply.json()["error"]) == (403, "not_authorized")


def test_a_scenario_file_gives_joins_at_ahead_of_the_start(
    tmp_path: Path, clock: FakeClock
) -> None:
    data = {
        "account_name": "Acme",
        "app_url": "https://app.dx.example",
        "users": [
            {"name": "Ada", "email": "ada@acme.example"},
            {"name": "Nina", "email": NINA, "joins_at": {"in_hours": 6}},
            {"name": "Old", "email": "old@acme.example", "joins_at": {"days_ago": 3}},
        ],
        "tokens": [{"value": "t", "kind": "account_web_api_token", "scopes": []}],
    }
    path = tmp_path / "scenario.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    with start_simulator(load_scenario(path), clock=clock) as running:
        emails = {user["email"] for user in running.dx.users_view()}
        assert emails == {"ada@acme.example", "old@acme.example"}
        clock.advance(6 * 3600)
        assert NINA in {user["email"] for user in running.dx.users_view()}


@pytest.mark.parametrize(
    ("change", "where"),
    [
        (
            {"teams": [{"name": "E", "reference_id": "e", "lead_email": NINA}]},
            "teams[0].lead_email",
        ),
        (
            {"tokens": [{"value": "p", "kind": "personal_access_token", "user_email": NINA}]},
            "tokens[0].user_email",
        ),
    ],
)
def test_a_user_who_joins_later_cannot_lead_a_seeded_team_or_own_a_token(
    tmp_path: Path, change: dict[str, Any], where: str
) -> None:
    data: dict[str, Any] = {
        "account_name": "Acme",
        "app_url": "https://app.dx.example",
        "users": [{"name": "Nina", "email": NINA, "joins_at": {"in_days": 1}}],
        "tokens": [{"value": "t", "kind": "account_web_api_token", "scopes": []}],
        **change,
    }
    path = tmp_path / "scenario.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    with pytest.raises(ScenarioError, match=re.escape(where) + ".*from the start"):
        load_scenario(path)
