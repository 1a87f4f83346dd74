"""What the simulator varies where DX's contract is silent, by seed
(hrsync/simulator/variation.py)."""

from __future__ import annotations

import dataclasses
import io
import re
import threading
from pathlib import Path
from typing import Any

import pytest

from hrsync.simulator.scenario import default_scenario, load_scenario
from hrsync.simulator.serve import serve
from hrsync.simulator.server import RunningSimulator
from hrsync.simulator.variation import (
    INVALID_ROWS_SHAPES,
    MAX_LAG_S,
    STEADY_SEED,
    TEAMS_ORDERS,
    Variation,
    variation_for,
)
from tests.simulating import simulator_seed, start_simulator
from tests.simulator.conftest import Api, FakeClock, hteam
from tests.simulator.test_joining_users import current_hierarchy


def pin(sim: RunningSimulator, **choices: Any) -> None:
    sim.dx.variation = dataclasses.replace(sim.dx.variation, **choices)


def test_a_seed_always_makes_the_same_choices_and_three_seeds_every_shape() -> None:
    assert variation_for(12345) == variation_for(12345)
    for start in (0, 7, 1000):
        shapes = {variation_for(seed).invalid_rows for seed in range(start, start + 3)}
        assert shapes == set(INVALID_ROWS_SHAPES)
    chosen = [variation_for(seed) for seed in range(200)]
    assert {v.teams_order for v in chosen} == set(TEAMS_ORDERS)
    assert all(0 <= v.audit_lag_s <= MAX_LAG_S and 0 <= v.count_lag_s <= MAX_LAG_S for v in chosen)
    assert {v.audit_lag_s for v in chosen} > {0.0}


def test_the_seed_comes_from_the_call_else_the_scenario_else_is_chosen(tmp_path: Path) -> None:
    with start_simulator(dataclasses.replace(default_scenario(), seed=5)) as sim:
        assert sim.dx.seed == simulator_seed()  # the tests' seed wins over the scenario's
    from hrsync.simulator.server import start_simulator as plain_start

    with plain_start(dataclasses.replace(default_scenario(), seed=5)) as sim:
        assert sim.dx.variation == variation_for(5)
    with plain_start() as sim:
        assert isinstance(sim.dx.seed, int)
    path = tmp_path / "scenario.json"
    path.write_text(
        '{"account_name": "A", "app_url": "https://a.example", "users": [], "seed": 11}'
    )
    assert load_scenario(path).seed == 11


@pytest.mark.parametrize("seed", ["-1", "true", '"7"'])
def test_a_bad_seed_in_a_scenario_is_refused(tmp_path: Path, seed: str) -> None:
    from hrsync.simulator.scenario import ScenarioError

    path = tmp_path / "scenario.json"
    path.write_text(
        '{"account_name": "A", "app_url": "https://a.example", "users": [], "seed": ' + seed + "}"
    )
    with pytest.raises(ScenarioError, match="seed"):
        load_scenario(path)


def unknown_lead() -> list[dict[str, Any]]:
    return [
        *current_hierarchy(),
        hteam("New", "eng-9", "nobody@acme.example", [], ("eng-001", "Engineering")),
    ]


def test_invalid_rows_in_the_fields_shape(api: Api, sim: RunningSimulator) -> None:
    pin(sim, invalid_rows="fields")
    body = api.process(unknown_lead()).json()
    assert body["error_details"] == {
        "rows": [
            {
                "index": 3,
                "reference_id": "eng-9",
                "field": "team_lead_email",
                "message": "user not found",
            }
        ]
    }


def test_invalid_rows_in_the_reasons_shape(api: Api, sim: RunningSimulator) -> None:
    pin(sim, invalid_rows="reasons")
    body = api.process(unknown_lead()).json()
    assert body["error"] == "invalid_rows"
    assert body["error_details"] == {
        "errors": [
            {
                "index": 3,
                "reference_id": "eng-9",
                "reason": "team_lead_email 'nobody@acme.example' does not belong to a known user",
            }
        ]
    }


def test_invalid_rows_as_a_message_only(api: Api, sim: RunningSimulator) -> None:
    pin(sim, invalid_rows="message")
    body = api.preview(unknown_lead()).json()
    assert body == {"ok": False, "error": "invalid_rows", "message": "1 team entry is invalid"}


def test_teams_list_order(api: Api, sim: RunningSimulator) -> None:
    pin(sim, teams_order="created")
    created = [t["id"] for t in api.teams()]
    pin(sim, teams_order="newest_first")
    assert [t["id"] for t in api.teams()] == created[::-1]
    pin(sim, teams_order="shuffled")
    orders = {tuple(t["id"] for t in api.teams()) for _ in range(20)}
    assert len(orders) > 1 and all(sorted(o) == sorted(created) for o in orders)


def test_audit_events_and_counts_trail_the_import(
    api: Api, sim: RunningSimulator, clock: FakeClock
) -> None:
    pin(sim, audit_lag_s=0.6, count_lag_s=1.0)
    teams = current_hierarchy()
    teams[2]["contributors"] = ["ken@acme.example", "barbara@acme.example"]
    teams[1]["name"] = "Platform Engineering"
    before = api.team_by_ref()["eng-003"]["contributors"]
    assert api.process(teams).json()["ok"] is True
    clock.advance(sim.dx.scenario.import_delay_s)
    # The import is done: names show at once; events and counts a little later.
    assert api.team_by_ref()["eng-002"]["name"] == "Platform Engineering"
    assert api.team_by_ref()["eng-003"]["contributors"] == before
    assert api.get("teams.auditTrail").json()["events"] == []
    clock.advance(0.6)
    assert [e["action"] for e in api.get("teams.auditTrail").json()["events"]] == ["change_name"]
    assert api.team_by_ref()["eng-003"]["contributors"] == before
    clock.advance(0.4)
    assert api.team_by_ref()["eng-003"]["contributors"] == 2


def test_serve_prints_the_seed_with_the_url() -> None:
    out = io.StringIO()
    stop = threading.Event()
    result: list[int] = []
    worker = threading.Thread(
        target=lambda: result.append(serve(None, port=0, out=out, stop=stop, seed=42))
    )
    worker.start()
    try:
        for _ in range(200):
            if "replay with" in out.getvalue():
                break
            stop.wait(0.01)
    finally:
        stop.set()
        worker.join(5)
    text = out.getvalue()
    assert text.splitlines()[0].startswith("export HRSYNC_DX__BASE_URL=http://")
    assert f"# {variation_for(42).describe()}; replay with --seed 42" in text
    assert result == [0]


def test_describe_names_every_choice() -> None:
    text = Variation(9, "reasons", "shuffled", 0.3, 0.0).describe()
    assert text == (
        "seed 9: invalid_rows reasons, teams.list shuffled, audit events +0.3 s, "
        "contributor counts +0 s"
    )


def test_the_steady_seed_adds_no_lag_and_keeps_order() -> None:
    steady = variation_for(STEADY_SEED)
    assert (steady.teams_order, steady.audit_lag_s, steady.count_lag_s) == ("created", 0, 0)


def test_every_test_starts_the_simulator_with_the_runs_seed() -> None:
    """A test that starts a simulator without the seed would pass for one shape only."""
    tests = Path(__file__).resolve().parents[1]
    allowed = {tests / "simulating.py", Path(__file__).resolve()}
    direct = re.compile(
        r"from hrsync\.simulator\.server import [^\n]*start_simulator|SimulatedDx\("
    )
    offenders = [
        str(path.relative_to(tests))
        for path in tests.rglob("*.py")
        if path not in allowed and direct.search(path.read_text(encoding="utf-8"))
    ]
    assert offenders == [], "start it with tests/simulating.py's start_simulator or simulated_dx"
