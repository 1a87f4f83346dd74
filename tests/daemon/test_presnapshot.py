"""The checks before each snapshot, with a paused scheduler and an explicit (or frozen)
clock: placed from the next snapshot the last run saw, whatever the cron says, a few
hours after the newest run whoever made it, and a last one shortly before the snapshot's
day starts (the engine is `RecordingSync`, as in test_service, or a small `Org`)."""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, date, datetime, timedelta

from freezegun import freeze_time
from freezegun.api import FrozenDateTimeFactory
from structlog.testing import capture_logs

from hrsync.clock import utcnow
from hrsync.core.gate.snapshot_ahead import CHECK_EVERY, LAST_CHECK_BEFORE, NextSnapshot
from hrsync.daemon.presnapshot import CATCH_UP_GAP
from hrsync.daemon.scheduler import (
    CATCH_UP_JOB,
    HEARTBEAT_JOB,
    PRE_SNAPSHOT_JOB,
    RESUME_JOB,
    SCHEDULE_JOB,
)
from hrsync.daemon.service import Daemon
from hrsync.monitor.reporting import Monitor
from hrsync.outcome import Outcome
from hrsync.store.repo import Store
from hrsync.sync.results import SyncRequest, SyncResult
from hrsync.sync.story import record_end
from tests.daemon.test_service import (
    MIN,
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
from tests.monitor.exposition import sample

H = timedelta(hours=1)
# T0 is 2030-03-30 12:00 UTC; the snapshot's day starts 2030-04-04 00:00 UTC.
SNAP = NextSnapshot("snap-apr", date(2030, 4, 4))
FIRST = SNAP.starts_at - 48 * H
LAST = SNAP.starts_at - LAST_CHECK_BEFORE
REFUSED = (Outcome.REFUSED, "would archive 6 teams", None)


def test_the_daemon_checks_from_pre_snapshot_hours_every_few_hours_and_last_shortly_before(
    harness: Harness, store: Store, clock: Clock
) -> None:
    store.snapshot_outlook.save_next_snapshot(SNAP, T0 - H, "run-0")
    sync = RecordingSync(store, clock, REFUSED, OK)
    with capture_logs() as logs:
        d = harness.start(sync)  # type: ignore[arg-type]  # a RecordingSync behind a wrapper
    assert job_time(d, PRE_SNAPSHOT_JOB) == FIRST
    (scheduled,) = events(logs, "daemon.pre_snapshot_scheduled")
    assert scheduled["snapshot_id"] == "snap-apr" and scheduled["scheduled_for"] == "2030-04-04"
    assert job_time(d, SCHEDULE_JOB) != FIRST  # not the cron's time: a job of its own

    fired = []
    while (at := job_time(d, PRE_SNAPSHOT_JOB)) is not None:
        clock.now = at
        fire(d, PRE_SNAPSHOT_JOB)
        fired.append(at)
    # Refused, then applied, then in sync: the checks go on whatever the outcome, every
    # CHECK_EVERY, and the last one LAST_CHECK_BEFORE the snapshot's day starts.
    assert fired == [FIRST + i * CHECK_EVERY for i in range(12)] + [LAST]
    assert set(sync.triggers) == {"pre_snapshot"}


def test_a_run_that_succeeded_does_not_end_the_checks(
    harness: Harness, store: Store, clock: Clock
) -> None:
    store.snapshot_outlook.save_next_snapshot(SNAP, T0 - H, "run-0")
    d = harness.start(RecordingSync(store, clock, OK))
    clock.now = FIRST
    fire(d, PRE_SNAPSHOT_JOB)
    # HR may change after it: checked again within a few hours.
    assert job_time(d, PRE_SNAPSHOT_JOB) == FIRST + CHECK_EVERY


def test_a_scheduled_run_in_the_window_counts_as_a_check(
    harness: Harness, store: Store, clock: Clock
) -> None:
    store.snapshot_outlook.save_next_snapshot(SNAP, T0 - H, "run-0")
    d = harness.start(RecordingSync(store, clock, REFUSED, OK))
    clock.now = FIRST
    fire(d, PRE_SNAPSHOT_JOB)
    clock.now = FIRST + 2 * H
    fire(d, SCHEDULE_JOB)  # the cron's run, approved meanwhile: a check as good as ours
    assert job_time(d, PRE_SNAPSHOT_JOB) == FIRST + 2 * H + CHECK_EVERY


def test_a_restart_after_the_first_time_with_no_run_since_syncs_at_once(
    harness: Harness, store: Store, clock: Clock
) -> None:
    store.snapshot_outlook.save_next_snapshot(SNAP, T0 - H, "run-0")
    clock.now = FIRST + 3 * H  # the daemon was down at the first time
    d = harness.start(RecordingSync(store, clock))
    assert job_time(d, PRE_SNAPSHOT_JOB) == FIRST + 3 * H


def test_a_restart_in_the_window_checks_a_few_hours_after_the_last_run(
    harness: Harness, store: Store, clock: Clock
) -> None:
    store.snapshot_outlook.save_next_snapshot(SNAP, T0 - H, "run-0")
    store.runs.start("run-1", "manual", FIRST + H, dry_run=False)
    store.runs.finish("run-1", FIRST + H, outcome="in_sync", exit_code=0, counts={}, reason=None)
    clock.now = FIRST + 2 * H
    d = harness.start(RecordingSync(store, clock))
    assert job_time(d, PRE_SNAPSHOT_JOB) == FIRST + H + CHECK_EVERY


def test_a_run_the_lease_turned_away_is_not_a_check(
    harness: Harness, store: Store, clock: Clock
) -> None:
    store.snapshot_outlook.save_next_snapshot(SNAP, T0 - H, "run-0")
    store.runs.start("run-1", "pre_snapshot", FIRST, dry_run=False)
    store.runs.finish("run-1", FIRST, outcome="in_sync", exit_code=0, counts={}, reason=None)
    # A shell's `hrsync sync` (or another replica) met the daemon's lease: it read nothing.
    store.runs.start("run-2", "manual", FIRST + H, dry_run=False)
    store.runs.finish("run-2", FIRST + H, outcome="deferred", exit_code=3, counts={},
                     reason="another sync is running", defer_kind="lease_held")  # fmt: skip
    clock.now = FIRST + 2 * H
    d = harness.start(RecordingSync(store, clock))
    assert job_time(d, PRE_SNAPSHOT_JOB) == FIRST + CHECK_EVERY


def test_no_check_after_the_last_one(harness: Harness, store: Store, clock: Clock) -> None:
    store.snapshot_outlook.save_next_snapshot(SNAP, T0 - H, "run-0")
    store.runs.start("run-1", "schedule", LAST + H, dry_run=False)
    store.runs.finish("run-1", LAST + H, outcome="in_sync", exit_code=0, counts={}, reason=None)
    clock.now = LAST + 2 * H
    d = harness.start(RecordingSync(store, clock))
    assert d.scheduler.get_job(PRE_SNAPSHOT_JOB) is None


def test_a_run_that_sees_a_new_snapshot_places_the_job_and_none_ahead_removes_it(
    harness: Harness, store: Store, clock: Clock
) -> None:
    seen: list[NextSnapshot | None] = [SNAP, None]
    recording = RecordingSync(store, clock)

    def sync(request: SyncRequest) -> SyncResult:
        # What every run that reads snapshots.list does (sync/stages.py).
        store.snapshot_outlook.save_next_snapshot(
            seen.pop(0), clock(), f"run-{len(recording.requests) + 1}"
        )
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
    store.snapshot_outlook.save_next_snapshot(SNAP, T0 - H, "run-0")
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
    store.snapshot_outlook.save_next_snapshot(SNAP, T0 - H, "run-0")
    d = harness.start(RecordingSync(store, clock), settings=settings_with(pre_snapshot_hours=72))
    assert job_time(d, PRE_SNAPSHOT_JOB) == datetime(2030, 4, 1, 0, 0, tzinfo=UTC)


def test_a_run_that_leaves_no_record_is_not_caught_up_again_at_once(
    harness: Harness, store: Store, clock: Clock
) -> None:
    # A crash the store could not record leaves no run since the first time: caught up,
    # but not in a tight loop.
    store.snapshot_outlook.save_next_snapshot(SNAP, T0 - H, "run-0")

    def unrecorded(request: SyncRequest) -> SyncResult:
        return SyncResult("lost", Outcome.FAILED, reason="the store was down")

    d = harness.start(unrecorded)  # type: ignore[arg-type]  # a stand-in of its own
    clock.now = FIRST
    fire(d, PRE_SNAPSHOT_JOB)
    assert job_time(d, PRE_SNAPSHOT_JOB) == FIRST + CATCH_UP_GAP


# ------------------------------------------------------------- checks in the window


class Org:
    """HR and DX as two versions of the org: a sync plans, and sends only when they
    differ (as the engine does); it writes its run to the store as the engine does."""

    def __init__(self, store: Store) -> None:
        self.store = store
        self.hr = 0
        self.dx = 0
        self.runs: list[tuple[datetime, str]] = []

    def sync(self, request: SyncRequest) -> SyncResult:
        now = utcnow()
        run_id = f"run-{len(self.runs) + 1}"
        self.runs.append((now, request.trigger))
        self.store.runs.start(run_id, request.trigger, now, dry_run=False)
        pending = self.hr != self.dx
        self.dx = self.hr
        result = SyncResult(
            run_id,
            Outcome.APPLIED if pending else Outcome.IN_SYNC,
            counts={"membership_change": 1} if pending else {},
        )
        record_end(self.store, utcnow, request, result)
        return result


SYNC_JOBS = (PRE_SNAPSHOT_JOB, SCHEDULE_JOB, RESUME_JOB, CATCH_UP_JOB)


def drive(
    frozen: FrozenDateTimeFactory,
    d: Daemon,
    until: datetime,
    happenings: list[tuple[datetime, Callable[[], object]]],
) -> None:
    """Move the frozen clock through the daemon's sync jobs and the world's happenings
    (a run by hand, an HR change), in time order, up to `until`."""
    ahead = sorted(happenings, key=lambda h: h[0])
    while True:
        due = [(t, j) for j in SYNC_JOBS if (t := job_time(d, j)) is not None and t < until]
        job = min(due, default=None)
        if ahead and (job is None or ahead[0][0] < job[0]):
            at, happen = ahead.pop(0)
            frozen.move_to(at)
            happen()
        elif job is not None:
            frozen.move_to(job[0])
            fire(d, job[1])
        else:
            return


def test_hr_changes_after_a_manual_run_past_the_mark_are_synced_before_the_snapshot(
    store: Store,
) -> None:
    # The snapshot is the day after tomorrow; the cron fires monthly, not before it.
    today = datetime(2030, 4, 2, 9, 0, tzinfo=UTC)
    snap = NextSnapshot("snap-apr", date(2030, 4, 4))
    settings = settings_with(schedule="0 6 1 * *", pre_snapshot_hours=48)
    org = Org(store)
    with freeze_time(today - 20 * H) as frozen:  # the daemon runs since yesterday
        store.snapshot_outlook.save_next_snapshot(snap, utcnow(), "run-0")
        monitor = Monitor(settings, store, utcnow)
        d = Daemon(
            settings,
            store=store,
            run_sync=org.sync,
            clock=utcnow,
            on_finished=lambda r, s, q: monitor.run_finished(r, s, quarantined=q),
        )
        d.start(paused=True)
        monitor.start(d)
        try:

            def change_hr() -> None:
                org.hr += 1

            drive(
                frozen,
                d,
                snap.starts_at,
                [
                    (today + H, lambda: org.sync(SyncRequest(trigger="manual"))),
                    (today + 2 * H, change_hr),
                ],
            )
            frozen.move_to(snap.starts_at - MIN)
            monitor.beat(quarantined=False)
            gauge = sample(monitor.metrics.exposition().decode(), "hrsync_snapshot_ready")
        finally:
            d.scheduler.shutdown(wait=False)
    assert "manual" in [t for _, t in org.runs]
    # The change HR made after the run by hand reached DX before the snapshot started,
    # and the gauge says ready because the latest check found nothing pending (it said 1
    # with the change never synced).
    assert (org.hr - org.dx, gauge) == (0, 1.0), f"runs: {org.runs}"
    # And a last check a few hours before the snapshot's day, whatever ran before.
    last_at, last_trigger = org.runs[-1]
    assert last_trigger == "pre_snapshot"
    assert snap.starts_at - 6 * H <= last_at < snap.starts_at


def test_a_snapshot_a_run_by_hand_saw_is_checked_for_without_waiting_for_the_cron(
    harness: Harness, store: Store, clock: Clock
) -> None:
    # The cron fires monthly: a snapshot first seen by `hrsync sync` from a shell must not
    # wait for the daemon's next own run to be prepared for.
    d = harness.start(RecordingSync(store, clock), settings=settings_with(schedule="0 6 1 * *"))
    assert d.scheduler.get_job(PRE_SNAPSHOT_JOB) is None
    store.snapshot_outlook.save_next_snapshot(SNAP, clock(), "manual-1")  # what that run keeps
    clock.advance(MIN)
    fire(d, HEARTBEAT_JOB)
    assert job_time(d, PRE_SNAPSHOT_JOB) == FIRST
