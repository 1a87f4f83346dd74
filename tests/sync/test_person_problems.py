"""Problems of people's own rows, in-process against the simulator and through the real
store (SQLite and PostgreSQL): each is held and named, and none crashes a run."""

from __future__ import annotations

import csv
import dataclasses
from collections.abc import Iterator
from pathlib import Path

import pytest

from hrsync.commands.demo import CONFIG
from hrsync.config.loading import Settings, load_settings
from hrsync.resources import shipped_dir
from hrsync.simulator.scenario import load_scenario
from hrsync.simulator.server import RunningSimulator, start_simulator
from hrsync.store.repo import Store
from hrsync.sync.results import SyncRequest, SyncResult
from hrsync.sync.story import run_sync

SAMPLES = shipped_dir("config")


@pytest.fixture(scope="module")
def sim() -> Iterator[RunningSimulator]:
    scenario = dataclasses.replace(
        load_scenario(SAMPLES / "demo-scenario.json"), import_delay_s=0.05
    )
    with start_simulator(scenario) as running:
        yield running


def sample_rows() -> list[dict[str, str]]:
    with (SAMPLES / "sample-org.csv").open(encoding="utf-8", newline="") as fh:
        return list(csv.DictReader(fh))


def write_csv(path: Path, rows: list[dict[str, str]]) -> None:
    with path.open("w", encoding="utf-8", newline="") as fh:
        writer = csv.DictWriter(fh, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)


def settings_for(
    folder: Path, sim: RunningSimulator, database_url: str, export: Path, extra: str = ""
) -> Settings:
    config = folder / "hrsync.toml"
    text = CONFIG.format(base_url=sim.base_url, export=export, db="unused")
    text = text.replace('database_url = "sqlite:///unused"', f'database_url = "{database_url}"')
    config.write_text(text + extra, encoding="utf-8")
    return load_settings(config, {"HRSYNC_DX_TOKEN": "demo-org-token"})


def sync_once(settings: Settings) -> SyncResult:
    store = Store.open(settings.state.database_url)
    try:
        return run_sync(settings, SyncRequest(), store=store)
    finally:
        store.close()


def test_two_rows_with_one_employee_id_are_held_not_a_crash(
    tmp_path: Path, sim: RunningSimulator, database_url: str
) -> None:
    rows = sample_rows()
    twin = {**rows[20], "Full Name": "Sam Twin", "Work Email": "sam.twin@example.com"}
    rows.append(twin)
    export = tmp_path / "people.csv"
    write_csv(export, rows)
    settings = settings_for(tmp_path, sim, database_url, export)
    first = sync_once(settings)
    assert first.exit_code == 0, first.reason
    held = {h.person.location for h in first.held}
    # The sample's 21st row is on line 22 (after the header), the twin on the last line.
    twin_line = f"line {len(rows) + 1}"
    assert held == {"people.csv line 22", f"people.csv {twin_line}"}
    store = Store.open(settings.state.database_url)
    try:
        (record,) = store.held_people().values()
    finally:
        store.close()
    assert record.person == twin["Employee ID"]
    assert "line 22" in record.location and twin_line in record.location
    # The next run, the same export: still held, still no crash.
    again = sync_once(settings)
    assert again.exit_code == 0, again.reason
    assert len(again.held) == 2
