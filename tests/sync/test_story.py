"""The engine in-process against the simulator: stopping at a step boundary."""

from __future__ import annotations

import dataclasses
import shutil
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from hrsync.clock import utcnow
from hrsync.commands.demo import CONFIG
from hrsync.config.loading import Settings, load_settings
from hrsync.outcome import Outcome
from hrsync.resources import shipped_dir
from hrsync.simulator.scenario import load_scenario
from hrsync.simulator.server import RunningSimulator
from hrsync.store.repo import Store
from hrsync.store.submission_record import SubmissionStatus
from hrsync.sync.results import SyncRequest
from hrsync.sync.story import run_sync
from tests.simulating import start_simulator

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


@pytest.fixture
def store(settings: Settings) -> Iterator[Store]:
    opened = Store.open(settings.state.database_url)
    try:
        yield opened
    finally:
        opened.close()


def process_calls(sim: RunningSimulator) -> int:
    return sum(r.method_name == "orgfiles.teamHierarchy.process" for r in sim.dx.requests)


def test_a_stop_before_submitting_sends_nothing_and_resumes_at_once(
    settings: Settings, sim: RunningSimulator, store: Store
) -> None:
    stop = threading.Event()
    stop.set()
    result = run_sync(settings, SyncRequest(trigger="schedule"), store=store, stop=stop)
    assert result.outcome is Outcome.DEFERRED
    assert result.reason == "shutting down before submitting; nothing was sent"
    assert process_calls(sim) == 0
    pending = store.deferrals.pending()
    assert pending is not None and pending.resume_at == result.resume_at


@pytest.mark.parametrize("sim", [1.0], indirect=True)
def test_a_stop_during_verification_leaves_it_to_the_next_start(
    settings: Settings, sim: RunningSimulator, store: Store
) -> None:
    stop = threading.Event()
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
    # Not a verdict, so not `unverified` (which pages): a rolling restart during the
    # verification window is routine, and the next start verifies what DX took.
    assert stopped.outcome is Outcome.DEFERRED and stopped.defer_kind == "stopped_verifying"
    assert "next start verifies" in (stopped.reason or "")
    pending = store.deferrals.pending()
    assert stopped.resume_at is not None and pending is not None
    assert pending.resume_at == stopped.resume_at
    unfinished = store.submissions.unfinished()
    assert unfinished is not None and unfinished.status == "accepted"

    after = run_sync(settings, SyncRequest(), store=store)
    assert after.outcome is Outcome.IN_SYNC
    assert store.submissions.unfinished() is None
    assert process_calls(sim) == 1


def _write_rows(path: Path, rows: list[dict[str, str]]) -> None:
    import csv

    with path.open("w", newline="", encoding="utf-8") as fh:
        writer = csv.DictWriter(fh, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)


def _sample_rows() -> list[dict[str, str]]:
    import csv

    with (SAMPLES / "sample-org.csv").open(encoding="utf-8-sig", newline="") as fh:
        return list(csv.DictReader(fh))


def _settings_with(settings: Settings, **sync: Any) -> Settings:
    return dataclasses.replace(settings, sync=dataclasses.replace(settings.sync, **sync))


@pytest.mark.parametrize("sim", [1.0], indirect=True)
def test_a_lead_change_alone_is_verified_only_once_dx_applied_it(
    settings: Settings, sim: RunningSimulator, store: Store
) -> None:
    # teams.list shows no lead e-mail: without waiting for evidence (last_changed_at),
    # the first poll would "converge" before DX had done anything.
    assert run_sync(settings, SyncRequest(), store=store).outcome is Outcome.APPLIED
    rows = _sample_rows()
    for row in rows:
        if row["Employee ID"] == "E026":  # Hannah leaves
            row["Status"] = "Terminated"
        elif row["Manager ID"] == "E026":  # her reports now report to Sara...
            row["Manager ID"] = "E123"
    for row in rows:
        if row["Employee ID"] == "E123":  # ...who reports to Hannah's manager
            row["Manager ID"] = "E012"
    assert settings.source.path is not None
    _write_rows(settings.source.path, rows)
    result = run_sync(settings, SyncRequest(), store=store)
    assert result.outcome is Outcome.APPLIED
    assert result.counts["lead_change"] == 1
    assert result.counts["rename"] == result.counts["move"] == result.counts["create"] == 0
    (team,) = [t for t in sim.dx.teams_view() if t["name"] == "Machine Learning"]
    sara = next(u for u in sim.dx.users_view() if u["email"] == "sara.haddad@example.com")
    assert team["manager_id"] == sara["id"], "the run ended before DX applied the import"


@pytest.mark.parametrize("sim", [1.0], indirect=True)
def test_an_unverified_submission_is_verified_by_the_next_run_not_resent(
    settings: Settings, sim: RunningSimulator, store: Store
) -> None:
    impatient = _settings_with(settings, verify_timeout_s=0.1)
    first = run_sync(impatient, SyncRequest(), store=store)
    assert first.outcome is Outcome.UNVERIFIED
    deadline = time.monotonic() + 10
    while len(sim.dx.teams_view()) < 13 and time.monotonic() < deadline:
        time.sleep(0.05)
    after = run_sync(settings, SyncRequest(), store=store)
    assert after.outcome is Outcome.IN_SYNC
    assert process_calls(sim) == 1
    assert store.submissions.last_verified() is not None


@pytest.mark.parametrize("sim", [1.0], indirect=True)
def test_a_stop_while_recovering_leaves_the_earlier_submission_alone(
    settings: Settings, sim: RunningSimulator, store: Store
) -> None:
    stop = threading.Event()
    stop.set()
    # An accepted submission the previous run never verified:
    impatient = _settings_with(settings, verify_timeout_s=0.1)
    run_sync(impatient, SyncRequest(), store=store, stop=threading.Event())
    store.submissions.mark(store.submissions.unfinished().id, SubmissionStatus.ACCEPTED, utcnow())  # type: ignore[union-attr]
    result = run_sync(settings, SyncRequest(), store=store, stop=stop)
    assert result.outcome is Outcome.DEFERRED
    assert result.reason == "shutting down while verifying an earlier submission"
    pending = store.submissions.unfinished()
    assert pending is not None and pending.status == "accepted"
    assert process_calls(sim) == 1


def test_a_rejected_request_keeps_no_identities_and_a_preview_no_state(
    settings: Settings, sim: RunningSimulator, store: Store
) -> None:
    preview = run_sync(settings, SyncRequest(preview=True), store=store)
    assert preview.outcome is Outcome.PLANNED and preview.preview_url
    assert store.runs.recent(1)[0].dry_run  # not an operational run
    assert store.identities.load() == []

    rows = _sample_rows()
    # The CEO leads the top team: nobody above can stand in, so DX's refusal stands.
    rows[0]["Work Email"] = "not.a.dx.user@example.com"
    assert settings.source.path is not None
    _write_rows(settings.source.path, rows)
    rejected = run_sync(settings, SyncRequest(), store=store)
    assert rejected.outcome is Outcome.REJECTED
    assert store.identities.load() == []


def _move_carlos(settings: Settings) -> None:
    """Carlos moves from Platform Infrastructure (Jonas) to Developer Experience (Aisha)."""
    rows = _sample_rows()
    for row in rows:
        if row["Employee ID"] == "E104":
            row["Manager ID"], row["Department"] = "E021", "Developer Experience"
    assert settings.source.path is not None
    _write_rows(settings.source.path, rows)


def _members(sim: RunningSimulator, team: str) -> int:
    (found,) = [t for t in sim.dx.teams_view() if t["name"] == team]
    return int(found["contributors"])


def test_a_move_dx_never_took_is_never_called_applied(
    settings: Settings, sim: RunningSimulator, store: Store
) -> None:
    # Issue 9.1: process answered 503 (DX did nothing) every time; names, parents and
    # archives all match, so only the members could tell. It used to end "applied".
    from hrsync.simulator.faults import Fault

    assert run_sync(settings, SyncRequest(), store=store).outcome is Outcome.APPLIED
    _move_carlos(settings)
    sim.dx.add_fault(Fault(method="orgfiles.teamHierarchy.process", kind="503", count=10))
    quick = _settings_with(settings, verify_timeout_s=2.0, max_resends=2)
    result = run_sync(quick, SyncRequest(), store=store)
    assert result.outcome is Outcome.UNVERIFIED, result.reason
    assert "after 2 resends" in (result.reason or "")
    assert process_calls(sim) == 1 + 3  # the first sync, then one send and two resends
    assert _members(sim, "Platform Infrastructure") == 4  # DX still has Carlos there
    # Never the baseline: the next run plans the move again, and this time DX takes it.
    sim.dx.clear_faults()
    after = run_sync(settings, SyncRequest(), store=store)
    assert after.outcome is Outcome.APPLIED
    assert after.counts["membership_change"] == 2
    assert _members(sim, "Platform Infrastructure") == 3
    assert _members(sim, "Developer Experience") == 4


def test_a_lost_answer_is_resolved_by_sending_the_same_payload_again(
    settings: Settings, sim: RunningSimulator, store: Store
) -> None:
    # Issue 9.2: one 503 on process; DX shows nothing within the short window, so the
    # run sends the same payload again (same digest) and ends applied, not unverified.
    from hrsync.simulator.faults import Fault

    assert run_sync(settings, SyncRequest(), store=store).outcome is Outcome.APPLIED
    _move_carlos(settings)
    sim.dx.add_fault(Fault(method="orgfiles.teamHierarchy.process", kind="503", count=1))
    result = run_sync(_settings_with(settings, verify_timeout_s=10.0), SyncRequest(), store=store)
    assert result.outcome is Outcome.APPLIED, result.reason
    sent = [r.body for r in sim.dx.requests if r.method_name == "orgfiles.teamHierarchy.process"]
    assert len(sent) == 3 and sent[1] == sent[2]
    assert _members(sim, "Developer Experience") == 4
    verified = store.submissions.last_verified()
    assert verified is not None and verified.payload_digest == result.plan.payload_digest  # type: ignore[union-attr]


@pytest.mark.parametrize("sim", [2.0], indirect=True)
def test_a_membership_change_is_applied_only_once_dx_ran_the_import(
    settings: Settings, sim: RunningSimulator, store: Store
) -> None:
    assert run_sync(settings, SyncRequest(), store=store).outcome is Outcome.APPLIED
    _move_carlos(settings)
    result = run_sync(settings, SyncRequest(), store=store)
    assert result.outcome is Outcome.APPLIED
    assert result.counts["membership_change"] == 2 and result.counts["lead_change"] == 0
    # When the run said applied, DX had imported it.
    assert _members(sim, "Platform Infrastructure") == 3, "applied before DX imported"
    assert _members(sim, "Developer Experience") == 4


def test_a_lost_answer_left_by_a_crash_is_looked_at_briefly_then_sent_again(
    settings: Settings, sim: RunningSimulator, store: Store
) -> None:
    # A run died after process went unanswered (DX never took it): the next run gives it
    # the short window a lost answer gets, not the whole verify timeout, then re-plans.
    from hrsync.simulator.faults import Fault

    assert run_sync(settings, SyncRequest(), store=store).outcome is Outcome.APPLIED
    _move_carlos(settings)
    sim.dx.add_fault(Fault(method="orgfiles.teamHierarchy.process", kind="503", count=1))
    lost = run_sync(_settings_with(settings, verify_timeout_s=0.5, max_resends=0),
                    SyncRequest(), store=store)  # fmt: skip
    assert lost.outcome is Outcome.UNVERIFIED
    left = store.submissions.unfinished()
    assert left is not None
    # as a crash leaves it:
    store.submissions.mark(left.id, SubmissionStatus.OUTCOME_UNKNOWN, utcnow())
    started = time.monotonic()
    after = run_sync(_settings_with(settings, verify_timeout_s=40.0), SyncRequest(), store=store)
    assert after.outcome is Outcome.APPLIED
    assert time.monotonic() - started < 15, "waited the whole verify timeout"
    assert _members(sim, "Developer Experience") == 4


@pytest.mark.parametrize("sim", [0.1], indirect=True)
def test_a_lead_change_dx_gives_no_timestamp_for_is_applied_only_with_a_warning(
    settings: Settings, sim: RunningSimulator, monkeypatch: pytest.MonkeyPatch, store: Store
) -> None:
    # Without DX's last_changed_at, a new lead cannot be awaited: the run may say
    # "applied" before DX did anything, and it must say so where someone hears it.
    from structlog.testing import capture_logs

    from hrsync.dx.client import DxClient

    assert run_sync(settings, SyncRequest(), store=store).outcome is Outcome.APPLIED
    rows = _sample_rows()
    for row in rows:
        if row["Employee ID"] == "E026":
            row["Status"] = "Terminated"
        elif row["Manager ID"] == "E026":
            row["Manager ID"] = "E123"
    for row in rows:
        if row["Employee ID"] == "E123":
            row["Manager ID"] = "E012"
    assert settings.source.path is not None
    _write_rows(settings.source.path, rows)
    teams = DxClient.teams
    monkeypatch.setattr(
        DxClient,
        "teams",
        lambda self: [dataclasses.replace(t, last_changed_at=None) for t in teams(self)],
    )
    with capture_logs() as logs:
        result = run_sync(settings, SyncRequest(), store=store)
    assert result.outcome is Outcome.APPLIED
    assert result.counts["lead_change"] == 1
    (blind,) = [e for e in logs if e["event"] == "verify.no_evidence"]
    assert blind["log_level"] == "warning"
    assert "Machine Learning" in blind["teams"]


def test_a_lost_lease_while_verifying_an_ambiguous_submission_sends_it_no_more(
    settings: Settings, sim: RunningSimulator, monkeypatch: pytest.MonkeyPatch, store: Store
) -> None:
    # Another sync holds the lease now and may be submitting: resending ours over it
    # would be two writers at once.
    from hrsync.simulator.faults import Fault

    sim.dx.add_fault(Fault(method="orgfiles.teamHierarchy.process", kind="503", count=1))
    renew = Store.renew_lease

    def lost_once_sent(self: Store, *args: Any, **kwargs: Any) -> bool:
        return renew(self, *args, **kwargs) and process_calls(sim) == 0

    monkeypatch.setattr(Store, "renew_lease", lost_once_sent)
    result = run_sync(_settings_with(settings, verify_timeout_s=2.0), SyncRequest(), store=store)
    assert process_calls(sim) == 1
    assert result.outcome is Outcome.UNVERIFIED
    assert result.reason is not None and "lease" in result.reason
