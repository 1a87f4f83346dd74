"""The attribute step in-process against the simulator: after any hierarchy outcome."""

from __future__ import annotations

import csv
import dataclasses
from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path

import pytest

from hrsync.commands.demo import CONFIG
from hrsync.config.loading import Settings, load_settings
from hrsync.core.attributes import AttributeOutcome
from hrsync.outcome import Outcome
from hrsync.resources import shipped_dir
from hrsync.simulator.scenario import ScenarioSnapshot, load_scenario
from hrsync.simulator.server import RunningSimulator
from hrsync.store.repo import Store
from hrsync.sync.results import SyncRequest, SyncResult
from hrsync.sync.story import run_sync
from tests.simulating import start_simulator

SAMPLES = shipped_dir("config")
UPDATE = "users.attributes.update"


@pytest.fixture
def sim() -> Iterator[RunningSimulator]:
    # A snapshot live since yesterday: every hierarchy import is deferred.
    scenario = load_scenario(SAMPLES / "demo-scenario.json")
    live = ScenarioSnapshot("snap-live", scheduled_for=timedelta(days=-1), completed_at=None)
    scenario = dataclasses.replace(
        scenario, import_delay_s=0.1, snapshots=(*scenario.snapshots, live)
    )
    with start_simulator(scenario) as running:
        yield running


def settings_for(tmp_path: Path, sim: RunningSimulator, extra: str = "") -> Settings:
    with (SAMPLES / "sample-org.csv").open(encoding="utf-8", newline="") as fh:
        rows = list(csv.DictReader(fh))
    for index, row in enumerate(rows):
        row["Office"] = ("Berlin", "Lisbon")[index % 2]
    export = tmp_path / "people.csv"
    with export.open("w", encoding="utf-8", newline="") as fh:
        writer = csv.DictWriter(fh, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)
    config = tmp_path / "hrsync.toml"
    text = CONFIG.format(base_url=sim.base_url, export=export, db=tmp_path / "state.db")
    config.write_text(text + '\n[attributes]\n"Location" = "{Office}"\n' + extra)
    return load_settings(config, {"HRSYNC_DX_TOKEN": "demo-org-token"})


def sync_once(settings: Settings) -> SyncResult:
    """One run on the state store `settings` names, opened and closed around it."""
    store = Store.open(settings.state.database_url)
    try:
        return run_sync(settings, SyncRequest(), store=store)
    finally:
        store.close()


def calls(sim: RunningSimulator) -> int:
    return sum(r.method_name == UPDATE for r in sim.dx.requests)


def test_a_deferred_hierarchy_still_syncs_attributes(tmp_path: Path, sim: RunningSimulator) -> None:
    settings = settings_for(tmp_path, sim)
    result = sync_once(settings)
    assert result.outcome is Outcome.DEFERRED
    assert result.attributes is not None
    assert result.attributes.outcome is AttributeOutcome.APPLIED
    assert result.exit_code == 3  # deferred is the more serious of the two
    assert calls(sim) == result.counts["attributes_updated"] > 0
    assert not any(r.method_name.endswith(".process") for r in sim.dx.requests)


def test_with_hierarchy_only_skips_attributes_after_a_deferred_hierarchy(
    tmp_path: Path, sim: RunningSimulator
) -> None:
    settings = settings_for(tmp_path, sim, "with_hierarchy_only = true\n")
    result = sync_once(settings)
    assert result.outcome is Outcome.DEFERRED
    assert result.attributes is not None
    assert result.attributes.outcome is AttributeOutcome.SKIPPED
    assert "with_hierarchy_only" in (result.attributes.reason or "")
    assert calls(sim) == 0 and result.exit_code == 3


def test_a_preview_and_a_dry_run_send_no_attributes(tmp_path: Path, sim: RunningSimulator) -> None:
    settings = settings_for(tmp_path, sim)
    store = Store.open(settings.state.database_url)
    try:
        dry = run_sync(settings, SyncRequest(dry_run=True), store=store)
        preview = run_sync(settings, SyncRequest(preview=True), store=store)
    finally:
        store.close()
    assert dry.attributes is not None and dry.attributes.outcome is AttributeOutcome.PLANNED
    assert "Attributes: 37 people to update (37 values), 0 unchanged." in dry.report
    assert preview.attributes is not None
    assert preview.attributes.outcome is AttributeOutcome.SKIPPED
    assert calls(sim) == 0


def test_no_attribute_is_sent_once_another_sync_holds_the_lease(
    tmp_path: Path, sim: RunningSimulator, monkeypatch: pytest.MonkeyPatch
) -> None:
    settings = settings_for(tmp_path, sim)
    monkeypatch.setattr(Store, "renew_lease", lambda self, *args, **kwargs: False)
    result = sync_once(settings)
    assert result.attributes is not None
    assert result.attributes.outcome is AttributeOutcome.FAILED
    assert "lease" in (result.attributes.reason or "")
    assert calls(sim) == 0


def test_a_step_dx_refuses_for_every_person_is_failed_not_applied(
    tmp_path: Path, sim: RunningSimulator
) -> None:
    # Nobody in the export is a DX user (or DX takes the attribute from nobody): that is a
    # setting to fix, not 37 people's problems behind an "applied" step.
    settings = settings_for(tmp_path, sim)
    export = settings.source.path
    assert export is not None
    export.write_text(export.read_text(encoding="utf-8").replace("@", ".gone@"), "utf-8")
    result = sync_once(settings)
    assert result.attributes is not None
    assert calls(sim) > 0
    assert result.attributes.outcome is AttributeOutcome.FAILED
    assert "refused every one" in (result.attributes.reason or "")
    assert result.exit_code == 1


@pytest.fixture
def open_sim() -> Iterator[RunningSimulator]:
    """No snapshot in the way: the hierarchy is applied."""
    scenario = dataclasses.replace(
        load_scenario(SAMPLES / "demo-scenario.json"), import_delay_s=0.05
    )
    with start_simulator(scenario) as running:
        yield running


def add_new_hire(settings: Settings) -> str:
    """A new hire in HR, with an office, who is no DX user yet."""
    export = settings.source.path
    assert export is not None
    email = "nina.newhire@example.com"
    with export.open("a", encoding="utf-8", newline="") as fh:
        csv.writer(fh).writerow(
            ["E990", "Nina Newhire", email, "E108", "Payments", "Active", "Engineer", "Lisbon"]
        )
    return email


def test_a_lone_new_hire_dx_does_not_know_waits_and_the_run_succeeds(
    tmp_path: Path, open_sim: RunningSimulator
) -> None:
    settings = settings_for(tmp_path, open_sim)
    first = sync_once(settings)
    assert first.exit_code == 0 and first.attributes is not None
    newcomer = add_new_hire(settings)
    before = calls(open_sim)
    result = sync_once(settings)
    attributes = result.attributes
    assert attributes is not None
    assert result.exit_code == 0, result.reason
    assert attributes.outcome in (AttributeOutcome.APPLIED, AttributeOutcome.IN_SYNC)
    assert attributes.waiting == (newcomer,) and attributes.failed == 0
    assert f"{newcomer}: waiting" in attributes.report
    # The hierarchy learned DX ignores them, or DX's answer taught it: not asked again.
    asked = calls(open_sim) - before
    again = sync_once(settings)
    assert again.exit_code == 0 and calls(open_sim) == before + asked
    assert again.attributes is not None and again.attributes.waiting == (newcomer,)
    assert again.attributes.outcome is AttributeOutcome.IN_SYNC


def test_an_answer_naming_an_unknown_user_teaches_that_they_wait(
    tmp_path: Path, sim: RunningSimulator
) -> None:
    # The hierarchy is deferred (a live snapshot): only DX's answer can tell.
    settings = settings_for(tmp_path, sim)
    assert sync_once(settings).attributes is not None
    newcomer = add_new_hire(settings)
    before = calls(sim)
    result = sync_once(settings)
    attributes = result.attributes
    assert attributes is not None and calls(sim) == before + 1
    assert attributes.outcome is AttributeOutcome.APPLIED, attributes.reason
    assert result.exit_code == 3  # the hierarchy's deferral, nothing of the attributes
    assert attributes.waiting == (newcomer,) and attributes.failures == {}
    assert f"{newcomer}: waiting" in attributes.report
    again = sync_once(settings)
    assert again.attributes is not None and again.attributes.waiting == (newcomer,)
    assert again.attributes.outcome is AttributeOutcome.IN_SYNC and calls(sim) == before + 1


def test_five_new_hires_dx_does_not_know_yet_wait_and_fail_nothing(
    tmp_path: Path, sim: RunningSimulator
) -> None:
    # An ordinary week: five new hires, none a DX user yet, and nothing else changed, so
    # they are all the step sends. DX knows the rest of the export (the first run's
    # answers confirmed them): not a setting of ours, just people who have not joined.
    settings = settings_for(tmp_path, sim)
    first = sync_once(settings)
    assert first.attributes is not None and first.attributes.updated > 0
    export = settings.source.path
    assert export is not None
    hires = [f"hire{n}@example.com" for n in range(5)]
    with export.open("a", encoding="utf-8", newline="") as fh:
        for n, email in enumerate(hires):
            row = [f"E98{n}", f"Hire {n}", email, "E108", "Payments", "Active", "Eng", "Lisbon"]
            csv.writer(fh).writerow(row)
    before = calls(sim)
    result = sync_once(settings)
    attributes = result.attributes
    assert attributes is not None and calls(sim) == before + 5
    assert attributes.outcome is AttributeOutcome.APPLIED, attributes.reason
    assert sorted(attributes.waiting) == hires and attributes.failures == {}
    assert result.exit_code == 3  # the hierarchy's deferral, nothing of the attributes
