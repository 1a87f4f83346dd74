"""Tokens, scopes and the identity and key methods, over HTTP."""

from __future__ import annotations

import httpx
import pytest

from hrsync.simulator.server import RunningSimulator

from .conftest import ORG_TOKEN, PERSONAL_TOKEN, READONLY_TOKEN, Api, FakeClock, current_hierarchy

GET_METHODS = ["auth.whoami", "apiKeys.list", "snapshots.list", "teams.list", "teams.auditTrail"]
POST_METHODS = [
    "orgfiles.teamHierarchy.preview",
    "orgfiles.teamHierarchy.process",
    "users.attributes.update",
]


@pytest.mark.parametrize("method", GET_METHODS)
def test_no_token_is_not_authed(sim: RunningSimulator, method: str) -> None:
    reply = Api(sim.base_url, token=None).get(method)
    assert reply.status_code == 401
    assert reply.json() == {"ok": False, "error": "not_authed", "message": reply.json()["message"]}


@pytest.mark.parametrize("method", POST_METHODS)
def test_post_without_token_is_not_authed(sim: RunningSimulator, method: str) -> None:
    reply = Api(sim.base_url, token=None).post(method, {"teams": []})
    assert reply.json()["error"] == "not_authed"


def test_a_non_bearer_header_is_not_authed(sim: RunningSimulator) -> None:
    reply = httpx.get(f"{sim.base_url}/teams.list", headers={"Authorization": "Basic abc"})
    assert reply.json()["error"] == "not_authed"


@pytest.mark.parametrize("method", GET_METHODS)
def test_unknown_token_is_invalid_auth(sim: RunningSimulator, method: str) -> None:
    reply = Api(sim.base_url, token="not-a-real-token").get(method)
    assert reply.status_code == 401
    assert reply.json()["ok"] is False
    assert reply.json()["error"] == "invalid_auth"


@pytest.mark.parametrize(
    ("method", "body"),
    [
        ("orgfiles.teamHierarchy.process", {"teams": current_hierarchy()}),
        ("orgfiles.teamHierarchy.preview", {"teams": current_hierarchy()}),
        ("users.attributes.update", {"email": "ada@acme.example", "attributes": []}),
    ],
)
def test_readonly_token_may_not_write(sim: RunningSimulator, method: str, body: object) -> None:
    reply = Api(sim.base_url, token=READONLY_TOKEN).post(method, body)
    assert reply.status_code == 403
    assert reply.json()["error"] == "not_authorized"
    assert sim.dx.imports == []


def test_readonly_token_may_not_list_keys(sim: RunningSimulator) -> None:
    reply = Api(sim.base_url, token=READONLY_TOKEN).get("apiKeys.list")
    assert reply.json()["error"] == "not_authorized"


@pytest.mark.parametrize("method", ["snapshots.list", "teams.list", "teams.auditTrail"])
def test_readonly_token_may_read(sim: RunningSimulator, method: str) -> None:
    reply = Api(sim.base_url, token=READONLY_TOKEN).get(method)
    assert reply.status_code == 200
    assert "error" not in reply.json()


def test_a_token_without_read_scope_may_not_read_teams(clock: FakeClock) -> None:
    from dataclasses import replace

    from hrsync.simulator.scenario import ScenarioToken, default_scenario
    from tests.simulating import start_simulator

    scenario = default_scenario()
    keys_only = ScenarioToken("keys-only", "account_web_api_token", ("apiKeys:read",))
    with start_simulator(replace(scenario, tokens=(keys_only,)), clock=clock) as sim:
        api = Api(sim.base_url, token="keys-only")
        assert api.get("teams.list").json()["error"] == "not_authorized"
        assert api.get("snapshots.list").json()["error"] == "not_authorized"
        assert api.get("apiKeys.list").json()["ok"] is True
        assert api.get("auth.whoami").json()["ok"] is True  # needs no scope


def test_whoami_for_an_org_token(api: Api) -> None:
    body = api.get("auth.whoami").json()
    assert body == {
        "ok": True,
        "auth_token_type": "account_web_api_token",
        "account": {"name": "Acme Robotics (simulated)"},
        "user": None,
        "team": None,
    }


def test_whoami_for_a_personal_token_names_user_and_team(sim: RunningSimulator) -> None:
    body = Api(sim.base_url, token=PERSONAL_TOKEN).get("auth.whoami").json()
    assert body["auth_token_type"] == "personal_access_token"
    assert body["user"]["email"] == "grace@acme.example"
    assert body["user"]["name"] == "Grace Hopper"
    assert body["team"]["name"] == "Engineering"  # Grace is a contributor there
    assert body["team"]["lead"]["email"] == "ada@acme.example"
    emails = [person["email"] for person in body["team"]["contributors"]]
    assert emails == ["grace@acme.example", "alan@acme.example"]


def test_api_keys_are_listed_newest_first_without_token_values(api: Api) -> None:
    body = api.get("apiKeys.list").json()
    keys = body["api_keys"]
    assert [key["id"] for key in keys] == ["key-readonly", "key-org"]
    assert [key["created_at"] for key in keys] == sorted(
        (key["created_at"] for key in keys), reverse=True
    )
    assert set(keys[0]) == {"id", "name", "scopes", "last_used_at", "created_at"}
    assert ORG_TOKEN not in api.get("apiKeys.list").text
    assert READONLY_TOKEN not in api.get("apiKeys.list").text


def test_last_used_at_moves_at_most_once_a_minute(api: Api, clock: FakeClock) -> None:
    def org_key_last_used() -> str:
        keys = api.get("apiKeys.list").json()["api_keys"]
        return str(next(k for k in keys if k["id"] == "key-org")["last_used_at"])

    first = org_key_last_used()
    assert first == "2026-11-22T09:00:00.000Z"
    clock.advance(30)
    assert org_key_last_used() == first
    clock.advance(31)
    assert org_key_last_used() == "2026-11-22T09:01:01.000Z"


def test_unknown_method_is_404_with_a_json_body(api: Api) -> None:
    reply = api.get("teams.delete")
    assert reply.status_code == 404
    assert reply.json()["ok"] is False
    assert reply.json()["error"] == "unknown_method"


def test_a_get_method_called_with_post_is_refused(api: Api) -> None:
    reply = api.post("teams.list", {})
    assert reply.status_code == 405
    assert reply.json()["ok"] is False


def test_requests_are_recorded_with_token_kind_but_never_the_token(sim: RunningSimulator) -> None:
    Api(sim.base_url).get("teams.list")
    Api(sim.base_url, token="wrong").get("teams.list")
    Api(sim.base_url).post("orgfiles.teamHierarchy.preview", {"teams": current_hierarchy()})
    recorded = sim.dx.requests
    assert [(r.method_name, r.http_method, r.token_kind, r.status) for r in recorded] == [
        ("teams.list", "GET", "account_web_api_token", 200),
        ("teams.list", "GET", None, 401),
        ("orgfiles.teamHierarchy.preview", "POST", "account_web_api_token", 200),
    ]
    assert recorded[2].body == {"teams": current_hierarchy()}
    assert recorded[1].error == "invalid_auth"
    assert ORG_TOKEN not in repr(recorded)


def test_users_attributes_update(api: Api, sim: RunningSimulator) -> None:
    body = {
        "email": "Ken@Acme.example",
        "attributes": [{"name": "Cost center", "value": "CC-42"}, {"value": "no name"}],
    }
    first = api.post("users.attributes.update", body).json()
    assert first["ok"] is True
    assert first["user"]["email"] == "ken@acme.example"
    assert first["user"]["attributes"] == [
        {"name": "Cost center", "value": "CC-42", "updated": True}
    ]
    assert len(first["user"]["failures"]) == 1
    again = api.post("users.attributes.update", body).json()
    assert again["user"]["attributes"][0]["updated"] is False
    assert sim.dx.user_attributes("ken@acme.example") == {"Cost center": "CC-42"}
    unknown = api.post("users.attributes.update", {"email": "nobody@x.example", "attributes": []})
    assert unknown.json()["ok"] is False


def test_users_attributes_update_unknown_user_and_new_groups(
    api: Api, sim: RunningSimulator
) -> None:
    # The spec shows no error for an unknown user: the simulator's assumption is
    # HTTP 404 with user_not_found (see hrsync/simulator/core.py).
    unknown = api.post(
        "users.attributes.update",
        {"email": "nobody@x.example", "attributes": [{"name": "Location", "value": "Oslo"}]},
    )
    assert unknown.status_code == 404
    assert unknown.json()["error"] == "user_not_found"
    assert sim.dx.attribute_groups() == []
    body = {"email": "ken@acme.example", "attributes": [{"name": "Location", "value": "Oslo"}]}
    assert api.post("users.attributes.update", body).json()["ok"] is True
    assert sim.dx.attribute_groups() == ["Location"]
