"""Scenario files: a good one seeds the account; a bad one names file, field and problem."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from hrsync.simulator.scenario import ScenarioError, default_scenario, load_scenario
from tests.simulating import start_simulator

from .conftest import START, Api, FakeClock


def minimal() -> dict[str, Any]:
    return {
        "account_name": "Tiny Co",
        "app_url": "https://tiny.dx.example/",
        "users": [
            {"name": "Lead", "email": "lead@tiny.example", "id": "U1"},
            {"name": "Dev", "email": "dev@tiny.example"},
        ],
        "tokens": [
            {"value": "tok", "kind": "account_web_api_token", "scopes": ["snapshots:read"]},
            {
                "value": "mine",
                "kind": "personal_access_token",
                "scopes": [],
                "user_email": "dev@tiny.example",
            },
        ],
        "teams": [
            {
                "name": "Root",
                "reference_id": "r",
                "lead_email": "lead@tiny.example",
                "last_changed_at": "2026-11-20T08:30:00Z",
            },
            {
                "name": "Web-app team",
                "reference_id": None,
                "parent_reference_id": "r",
                "lead_email": "lead@tiny.example",
                "contributors": ["dev@tiny.example", "ghost@tiny.example"],
            },
            {
                "name": "Child",
                "reference_id": "c",
                "parent_name": "Web-app team",
                "lead_email": "dev@tiny.example",
            },
        ],
        "snapshots": [
            {"id": "s", "scheduled_for": "2026-01-05", "completed_at": "2026-01-19T10:00:00Z"},
            {"id": "t", "scheduled_for": {"days_ago": 3}, "completed_at": {"hours_ago": 5}},
        ],
        "faults": [{"method": "teams.list", "kind": "429", "count": 1, "retry_after_s": 2}],
        "import_delay_s": 0.5,
        "audit_page_size": 10,
        "retro_window_days": 14,
    }


def write(tmp_path: Path, data: object) -> Path:
    path = tmp_path / "scenario.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    return path


def test_a_scenario_file_seeds_the_simulator(tmp_path: Path, clock: FakeClock) -> None:
    scenario = load_scenario(write(tmp_path, minimal()))
    assert scenario.app_url == "https://tiny.dx.example"
    assert (scenario.import_delay_s, scenario.audit_page_size, scenario.retro_window_days) == (
        0.5,
        10,
        14,
    )
    with start_simulator(scenario, clock=clock) as sim:
        api = Api(sim.base_url, token="tok")
        assert api.get("teams.list").status_code == 429  # the scenario's fault
        teams = {team["name"]: team for team in api.teams()}
        assert teams["Web-app team"]["reference_id"] is None
        assert teams["Web-app team"]["parent_id"] == teams["Root"]["id"]
        assert teams["Web-app team"]["contributors"] == 1  # ghost is unknown to DX
        assert teams["Child"]["ancestors"] == [
            "LTE",
            teams["Root"]["id"],
            teams["Web-app team"]["id"],
            teams["Child"]["id"],
        ]
        assert teams["Root"]["manager_id"] == "U1"
        # A kept DX started again tells when each team last changed, not its own start.
        assert teams["Root"]["last_changed_at"] == "2026-11-20T08:30:00.000Z"
        assert teams["Child"]["last_changed_at"] == teams["Web-app team"]["last_changed_at"]
        snapshots = {s["id"]: s for s in api.get("snapshots.list").json()["snapshots"]}
        assert snapshots["s"]["completed_at"] == "2026-01-19T10:00:00.000Z"
        assert snapshots["t"]["completed_at"] == "2026-11-22T04:00:00.000Z"  # 5 h before START
        assert snapshots["t"]["scheduled_for"] == "2026-11-19"
        # The snapshot completed five hours ago keeps the import window closed.
        whoami = Api(sim.base_url, token="mine").get("auth.whoami").json()
        assert whoami["user"]["email"] == "dev@tiny.example"
    assert START.year == 2026


def test_the_default_scenario_is_well_formed() -> None:
    scenario = default_scenario()
    kinds = {token.value: token.kind for token in scenario.tokens}
    assert kinds == {
        "sim-org-token": "account_web_api_token",
        "sim-readonly-token": "account_web_api_token",
        "sim-personal-token": "personal_access_token",
    }
    assert any(team.reference_id is None for team in scenario.teams)


def mutate(path: str, value: Any) -> dict[str, Any]:
    """``minimal()`` with the value at a dotted path (list indexes as numbers) replaced;
    the value ``...`` deletes the key."""
    data = minimal()
    *parents, last = path.split(".")
    target: Any = data
    for part in parents:
        target = target[int(part)] if part.isdigit() else target[part]
    if value is ...:
        del target[last]
    elif last.isdigit():
        target[int(last)] = value
    else:
        target[last] = value
    return data


@pytest.mark.parametrize(
    ("path", "value", "where", "words"),
    [
        ("account_name", "", "account_name", "non-empty string"),
        ("app_url", ..., "app_url", "non-empty string"),
        ("colour", "blue", "colour", "unknown field"),
        ("users.0.email", "not-mail", "users[0].email", "e-mail"),
        ("users.1.email", "LEAD@tiny.example", "users[1].email", "already used by users[0]"),
        ("users.0.shoe", 1, "users[0].shoe", "unknown field"),
        ("tokens.0.kind", "magic", "tokens[0].kind", "account_web_api_token"),
        ("tokens.1.user_email", None, "tokens[1].user_email", "owner"),
        ("tokens.1.user_email", "who@tiny.example", "tokens[1].user_email", "not one of the users"),
        ("tokens.0.scopes", "snapshots:read", "tokens[0].scopes", "array of strings"),
        ("teams.0.lead_email", "who@tiny.example", "teams[0].lead_email", "not one of the users"),
        ("teams.2.reference_id", "r", "teams[2].reference_id", "already used"),
        ("teams.2.parent_name", "Nope", "teams[2].parent_name", "0 teams are named"),
        ("teams.0.parent_reference_id", "zzz", "teams[0].parent_reference_id", "no team"),
        ("teams.0.parent_reference_id", "c", "teams[0]", "cycle"),
        ("snapshots.0.completed_at", "2026-01-19T10:00:00", "snapshots[0].completed_at", "zone"),
        ("snapshots.0.completed_at", "yesterday", "snapshots[0].completed_at", "ISO 8601"),
        ("snapshots.0.scheduled_for", "05/01/2026", "snapshots[0].scheduled_for", "YYYY-MM-DD"),
        ("snapshots.1.completed_at", {"weeks_ago": 1}, "snapshots[1].completed_at", "days_ago"),
        ("faults.0.kind", "explode", "faults[0].kind", "drop_after_send"),
        ("faults.0.count", 0, "faults[0]", "at least 1"),
        ("import_delay_s", -1, "import_delay_s", "at least 0"),
        ("audit_page_size", 0, "audit_page_size", ">= 1"),
        ("users", {"a": 1}, "users", "expected an array"),
    ],
)
def test_bad_scenarios_name_file_field_and_problem(
    tmp_path: Path, path: str, value: Any, where: str, words: str
) -> None:
    file = write(tmp_path, mutate(path, value))
    with pytest.raises(ScenarioError) as caught:
        load_scenario(file)
    message = str(caught.value)
    assert message.startswith(f"{file}: {where}: "), message
    assert words in message


def test_a_file_that_is_not_json(tmp_path: Path) -> None:
    path = tmp_path / "broken.json"
    path.write_text('{"account_name": ', encoding="utf-8")
    with pytest.raises(ScenarioError, match=r"broken\.json: not valid JSON \(line 1"):
        load_scenario(path)


def test_a_missing_file(tmp_path: Path) -> None:
    with pytest.raises(ScenarioError, match=r"absent\.json: cannot read"):
        load_scenario(tmp_path / "absent.json")


def test_a_top_level_that_is_not_an_object(tmp_path: Path) -> None:
    with pytest.raises(ScenarioError, match="expected an object"):
        load_scenario(write(tmp_path, [1, 2]))


def test_the_documented_example_loads() -> None:
    import hrsync.simulator.scenario as module
    from hrsync.simulator.scenario import scenario_from_dict

    doc = module.__doc__ or ""
    example = doc[doc.index("{") : doc.index("Only ``account_name``")]
    scenario = scenario_from_dict(json.loads(example), source="docstring")
    assert [team.reference_id for team in scenario.teams] == ["eng-001"]
    assert scenario.faults[0].kind == "429"
