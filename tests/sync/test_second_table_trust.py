"""A run in sync sends nothing, so no guard judges it; a second table that fell far since
the last accepted run must still not become its guard's baseline, while one that did not
fall does (in-process, against the simulator)."""

from __future__ import annotations

import csv
import dataclasses
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

from hrsync.commands.demo import CONFIG
from hrsync.config.loading import Settings, load_settings
from hrsync.core.people.second_tables import TableCount
from hrsync.outcome import Outcome
from hrsync.resources import shipped_dir
from hrsync.simulator.scenario import load_scenario
from hrsync.simulator.server import RunningSimulator
from hrsync.store.repo import Store
from hrsync.sync.results import SyncRequest
from hrsync.sync.story import run_sync
from tests.simulating import start_simulator

SAMPLES = shipped_dir("config")
# A joined table no team depends on: its columns are read by no field, so a run whose
# join matched far less still finds the teams as they were (in sync).
BADGES = """
[[source.join]]
name = "badges"
on = {{ employee_id = "ID" }}
match = "optional"
path = "{badges}"
"""


def ids() -> list[str]:
    with (SAMPLES / "sample-org.csv").open(encoding="utf-8", newline="") as fh:
        return [row["Employee ID"] for row in csv.DictReader(fh)]


def write_badges(path: Path, people: list[str]) -> None:
    rows = "".join(f"{person},B-{person}\n" for person in people)
    path.write_text("ID,BADGE\n" + rows, encoding="utf-8")


@pytest.fixture
def sim() -> Iterator[RunningSimulator]:
    scenario = load_scenario(SAMPLES / "demo-scenario.json")
    with start_simulator(dataclasses.replace(scenario, import_delay_s=0.1)) as running:
        yield running


@pytest.fixture
def settings(tmp_path: Path, sim: RunningSimulator) -> Settings:
    export = tmp_path / "people.csv"
    shutil.copy(SAMPLES / "sample-org.csv", export)
    badges = tmp_path / "badges.csv"
    write_badges(badges, ids())
    config = tmp_path / "hrsync.toml"
    config.write_text(
        CONFIG.format(base_url=sim.base_url, export=export, db=tmp_path / "state.db")
        + BADGES.format(badges=badges)
    )
    return load_settings(config, {"HRSYNC_DX_TOKEN": "demo-org-token"})


@pytest.fixture
def store(settings: Settings) -> Iterator[Store]:
    opened = Store.open(settings.state.database_url)
    try:
        yield opened
    finally:
        opened.close()


def sync(settings: Settings, store: Store) -> Outcome:
    return run_sync(settings, SyncRequest(trigger="manual"), store=store).outcome


def test_a_join_that_fell_in_a_run_in_sync_keeps_the_last_baseline(
    settings: Settings, store: Store
) -> None:
    everyone = ids()
    assert sync(settings, store) is Outcome.APPLIED
    baseline = TableCount.join("badges", len(everyone), len(everyone))
    assert store.runs.last_accepted_join_counts() == {"badges": baseline}
    # A cut export of the badges: a third of the people match; the teams are unchanged.
    badges = Path(settings.source.join[0].table.path or "")
    write_badges(badges, everyone[: len(everyone) // 3])
    assert sync(settings, store) is Outcome.IN_SYNC
    assert store.runs.last_accepted_join_counts() == {"badges": baseline}
    # A join that did not fall far is the next baseline.
    write_badges(badges, everyone[:-1])
    assert sync(settings, store) is Outcome.IN_SYNC
    assert store.runs.last_accepted_join_counts() == {
        "badges": TableCount.join("badges", len(everyone), len(everyone) - 1)
    }
