"""The engine in-process against the simulator: stopping at a step boundary."""

from __future__ import annotations

import dataclasses
import shutil
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from hrsync.config import Settings, load_settings
from hrsync.demo import CONFIG
from hrsync.outcome import Outcome
from hrsync.resources import shipped_dir
from hrsync.simulator.scenario import load_scenario
from hrsync.simulator.server import RunningSimulator, start_simulator
from hrsync.store.repo import Store
from hrsync.sync import SyncRequest, run_sync

SAMPLES = shipped_dir("config")


@pytest.fixture
def sim(request: pytest.FixtureRequest) -> Iterator[RunningSimulator]:
    delay = getattr(request, "param", 0.1)
    scenario = load_scenario(SAMPLES / "demo-scenario.json")
    with start_simulator(dataclasses.replace(scenario, import_delay_s=delay)) as running:
        yield running


@pytest.fixture
def settings(tmp_path: Path, sim: RunningSimulator) -> Settings:
    export = tmp_path / "people.csv"
    shutil.copy(SAMPLES / "sample-org.csv", export)
    config = tmp_path / "hrsync.toml"
    config.write_text(CONFIG.format(base_url=sim.base_url, export=export, db=tmp_path / "state.db"))
    return load_settings(config, {"HRSYNC_DX_TOKEN": "demo-org-token"})


def process_calls(sim: RunningSimulator) -> int:
    return sum(r.method_name == "orgfiles.teamHierarchy.process" for r in sim.dx.requests)


def test_a_stop_before_submitting_sends_nothing_and_resumes_at_once(
    settings: Settings, sim: RunningSimulator
) -> None:
    stop = threading.Event()
    stop.set()
    store = Store.open(settings.state.database_url)
    try:
        result = run_sync(settings, SyncRequest(trigger="schedule"), store=store, stop=stop)
        assert result.outcome is Outcome.DEFERRED
        assert result.reason == "shutting down before submitting; nothing was sent"
        assert process_calls(sim) == 0
        pending = store.pending_deferral()
        assert pending is not None and pending.resume_at == result.resume_at
    finally:
        store.close()


@pytest.mark.parametrize("sim", [1.0], indirect=True)
def test_a_stop_during_verification_leaves_it_to_the_next_start(
    settings: Settings, sim: RunningSimulator
) -> None:
    stop = threading.Event()
    store = Store.open(settings.state.database_url)
    try:
        results = []
        worker = threading.Thread(
            target=lambda: results.append(run_sync(settings, SyncRequest(), store=store, stop=stop))
        )
        worker.start()
        deadline = time.monotonic() + 10
        while process_calls(sim) == 0 and time.monotonic() < deadline:
            time.sleep(0.02)
        stop.set()
        worker.join(timeout=5)
        (stopped,) = results
        assert stopped.outcome is Outcome.UNVERIFIED
        assert "next start verifies" in (stopped.reason or "")
        unfinished = store.unfinished_submission()
        assert unfinished is not None and unfinished.status == "accepted"

        after = run_sync(settings, SyncRequest(), store=store)
        assert after.outcome is Outcome.IN_SYNC
        assert store.unfinished_submission() is None
        assert process_calls(sim) == 1
    finally:
        store.close()


PAYLOAD = [
    {"name": "Root", "reference_id": "r-0", "team_lead_email": "a@x.test"},
    {"name": "Child", "reference_id": "r-1", "team_lead_email": "b@x.test"},
]


@pytest.mark.parametrize(
    ("details", "expected"),
    [
        (
            {"rows": [{"index": 1, "field": "team_lead_email", "message": "user not found"}]},
            [(1, "r-1", "Child", "b@x.test", "team_lead_email", "user not found")],
        ),
        (
            {"errors": [{"reference_id": "r-0", "error": "bad"}]},
            [(0, "r-0", "Root", "a@x.test", None, "bad")],
        ),
        ([{"row": 0, "message": "m"}], [(0, "r-0", "Root", "a@x.test", None, "m")]),
        ({"rows": [{"index": 9, "message": "m"}]}, [(9, None, None, None, None, "m")]),
        ({"message": "no rows here"}, []),
        ("a string", []),
        (None, []),
        ({"rows": ["not an object", {"index": 0}]}, [(0, "r-0", "Root", "a@x.test", None, None)]),
    ],
)
def test_rows_named_by_dx_are_joined_with_what_was_sent(
    details: object, expected: list[tuple[object, ...]]
) -> None:
    from hrsync.sync import _named_rows

    found = [
        (r["index"], r["reference_id"], r["team"], r["lead"], r["field"], r["problem"])
        for r in _named_rows(details, PAYLOAD)
    ]
    assert found == expected
