"""The sync before each snapshot, with a paused scheduler and an explicit clock: placed
from the next snapshot the last run saw, whatever the cron says, and again 12 hours
before when it did not succeed (the engine is `RecordingSync`, as in test_service)."""

from __future__ import annotations

from datetime import UTC, date, datetime, timedelta

from structlog.testing import capture_logs

from hrsync.core.snapshot_ahead import NextSnapshot
from hrsync.daemon.presnapshot import CATCH_UP_GAP
from hrsync.daemon.scheduler import PRE_SNAPSHOT_JOB, SCHEDULE_JOB
from hrsync.outcome import Outcome
from hrsync.store.repo import Store
from hrsync.sync.results import SyncRequest, SyncResult
from tests.daemon.test_service import (
    OK,
    T0,
    Clock,
    Harness,
    RecordingSync,
    events,
    fire,
    job_time,
    settings_with,
)

H = timedelta(hours=1)
# T0 is 2030-03-30 12:00 UTC; the snapshot's day starts 2030-04-04 00:00 UTC.
SNAP = NextSnapshot("snap-apr", date(2030, 4, 4))
FIRST = SNAP.starts_at - 48 * H
RETRY = SNAP.starts_at - 12 * H
REFUSED = (Outcome.REFUSED, "would archive 6 teams", None)


def test_the_daemon_syncs_pre_snapshot_hours_before_the_snapshot_and_again_when_refused(
    harness: Harness, store: Store, clock: Clock
) -> None:
    store.save_next_snapshot(SNAP, T0 - H, "run-0")
    sync = RecordingSync(store, clock, REFUSED, REFUSED)
    with capture_logs() as logs:
        d = harness.start(sync)  # type: ignore[arg-type]  # a RecordingSync behind a wrapper
    assert job_time(d, PRE_SNAPSHOT_JOB) == FIRST
    (scheduled,) = events(logs, "daemon.pre_snapshot_scheduled")
    assert scheduled["snapshot_id"] == "snap-apr" and scheduled["scheduled_for"] == "2030-04-04"
    assert job_time(d, SCHEDULE_JOB) != FIRST  # not the cron's time: a job of its own

    clock.now = FIRST
    fire(d, PRE_SNAPSHOT_JOB)
    assert sync.triggers == ["pre_snapshot"]
    # Refused: again 12 hours before the snapshot's day starts.
    assert job_time(d, PRE_SNAPSHOT_JOB) == RETRY
    clock.now = RETRY
    fire(d, PRE_SNAPSHOT_JOB)
    assert sync.triggers == ["pre_snapshot", "pre_snapshot"]
    assert d.scheduler.get_job(PRE_SNAPSHOT_JOB) is None  # that was the last one


def test_no_second_sync_when_the_first_succeeded(
    harness: Harness, store: Store, clock: Clock
) -> None:
    store.save_next_snapshot(SNAP, T0 - H, "run-0")
    sync = RecordingSync(store, clock, OK)
    d = harness.start(sync)  # type: ignore[arg-type]  # a RecordingSync behind a wrapper
    clock.now = FIRST
    fire(d, PRE_SNAPSHOT_JOB)
    assert d.scheduler.get_job(PRE_SNAPSHOT_JOB) is None


def test_a_scheduled_run_that_succeeds_after_the_first_time_settles_it(
    harness: Harness, store: Store, clock: Clock
) -> None:
    store.save_next_snapshot(SNAP, T0 - H, "run-0")
    sync = RecordingSync(store, clock, REFUSED, OK)
    d = harness.start(sync)  # type: ignore[arg-type]  # a RecordingSync behind a wrapper
    clock.now = FIRST
    fire(d, PRE_SNAPSHOT_JOB)
    assert job_time(d, PRE_SNAPSHOT_JOB) == RETRY
    clock.now = FIRST + 6 * H
    fire(d, SCHEDULE_JOB)  # the cron's run, approved meanwhile: DX is up to date
    assert d.scheduler.get_job(PRE_SNAPSHOT_JOB) is None


def test_a_restart_after_the_first_time_with_no_run_since_syncs_at_once(
    harness: Harness, store: Store, clock: Clock
) -> None:
    store.save_next_snapshot(SNAP, T0 - H, "run-0")
    clock.now = FIRST + 3 * H  # the daemon was down at the first time
    d = harness.start(RecordingSync(store, clock))
    assert job_time(d, PRE_SNAPSHOT_JOB) == FIRST + 3 * H


def test_a_restart_between_a_refused_first_and_the_retry_keeps_the_retry(
    harness: Harness, store: Store, clock: Clock
) -> None:
    store.save_next_snapshot(SNAP, T0 - H, "run-0")
    store.start_run("run-1", "pre_snapshot", FIRST, dry_run=False)
    store.finish_run("run-1", FIRST, outcome="refused", exit_code=4, counts={}, reason="r")
    clock.now = FIRST + 2 * H
    d = harness.start(RecordingSync(store, clock))
    assert job_time(d, PRE_SNAPSHOT_JOB) == RETRY


def test_a_run_the_lease_turned_away_does_not_undo_the_first_sync_that_succeeded(
    harness: Harness, store: Store, clock: Clock
) -> None:
    store.save_next_snapshot(SNAP, T0 - H, "run-0")
    store.start_run("run-1", "pre_snapshot", FIRST, dry_run=False)
    store.finish_run("run-1", FIRST, outcome="in_sync", exit_code=0, counts={}, reason=None)
    # A shell's `hrsync sync` (or another replica) met the daemon's lease.
    store.start_run("run-2", "manual", FIRST + H, dry_run=False)
    store.finish_run("run-2", FIRST + H, outcome="deferred", exit_code=3, counts={},
                     reason="another sync is running", defer_kind="lease_held")  # fmt: skip
    clock.now = FIRST + 2 * H
    d = harness.start(RecordingSync(store, clock))
    assert d.scheduler.get_job(PRE_SNAPSHOT_JOB) is None


def test_a_run_that_sees_a_new_snapshot_places_the_job_and_none_ahead_removes_it(
    harness: Harness, store: Store, clock: Clock
) -> None:
    seen: list[NextSnapshot | None] = [SNAP, None]
    recording = RecordingSync(store, clock)

    def sync(request: SyncRequest) -> SyncResult:
        # What every run that reads snapshots.list does (sync/stages.py).
        store.save_next_snapshot(seen.pop(0), clock(), f"run-{len(recording.requests) + 1}")
        return recording(request)

    d = harness.start(sync)  # type: ignore[arg-type]  # a RecordingSync behind a wrapper
    assert d.scheduler.get_job(PRE_SNAPSHOT_JOB) is None  # nothing known yet
    fire(d, SCHEDULE_JOB)
    assert job_time(d, PRE_SNAPSHOT_JOB) == FIRST
    fire(d, SCHEDULE_JOB)  # the snapshot was deleted in DX
    assert d.scheduler.get_job(PRE_SNAPSHOT_JOB) is None


def test_the_sync_before_a_snapshot_runs_even_in_quarantine(
    harness: Harness, store: Store, clock: Clock
) -> None:
    # Quarantine backs off the cron's runs; the run before a snapshot is at most two and
    # the one that matters most, so it still goes.
    store.save_next_snapshot(SNAP, T0 - H, "run-0")
    failed = (Outcome.FAILED, "DX unreachable", None)
    sync = RecordingSync(store, clock, failed, failed, failed, failed)
    d = harness.start(sync, settings=settings_with(quarantine_after=3))
    for _ in range(3):
        fire(d, SCHEDULE_JOB)
        clock.advance(H)
    assert d.quarantined()
    clock.now = FIRST
    fire(d, PRE_SNAPSHOT_JOB)
    assert sync.triggers[-1] == "pre_snapshot"


def test_pre_snapshot_hours_moves_the_first_sync(
    harness: Harness, store: Store, clock: Clock
) -> None:
    store.save_next_snapshot(SNAP, T0 - H, "run-0")
    d = harness.start(RecordingSync(store, clock), settings=settings_with(pre_snapshot_hours=72))
    assert job_time(d, PRE_SNAPSHOT_JOB) == datetime(2030, 4, 1, 0, 0, tzinfo=UTC)


def test_a_run_that_leaves_no_record_is_not_caught_up_again_at_once(
    harness: Harness, store: Store, clock: Clock
) -> None:
    # A crash the store could not record leaves no run since the first time: caught up,
    # but not in a tight loop.
    store.save_next_snapshot(SNAP, T0 - H, "run-0")

    def unrecorded(request: SyncRequest) -> SyncResult:
        return SyncResult("lost", Outcome.FAILED, reason="the store was down")

    d = harness.start(unrecorded)  # type: ignore[arg-type]  # a stand-in of its own
    clock.now = FIRST
    fire(d, PRE_SNAPSHOT_JOB)
    assert job_time(d, PRE_SNAPSHOT_JOB) == FIRST + CATCH_UP_GAP
