"""The daemon's scheduling decisions, with a paused scheduler and an explicit clock.

`run_sync` here is a stand-in that records each request and, like the engine, each
run's outcome in the store: these tests are about when runs happen, not what they do.
The end-to-end `hrsync run` against the simulator lives with the CLI tests.
"""

from __future__ import annotations

import dataclasses
import os
import signal
import threading
import time
from collections.abc import Callable, Iterator, MutableMapping
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from apscheduler.events import EVENT_JOB_MAX_INSTANCES, JobSubmissionEvent
from structlog.testing import capture_logs

from hrsync.config.loading import Settings, SyncSettings
from hrsync.core.attributes import AttributeOutcome
from hrsync.daemon import process as daemon_module
from hrsync.daemon.scheduler import (
    APPROVAL_JOB,
    CATCH_UP_JOB,
    HEARTBEAT_JOB,
    RESUME_JOB,
    SCHEDULE_JOB,
    STARTUP_JOB,
)
from hrsync.daemon.service import Daemon
from hrsync.outcome import Outcome
from hrsync.store.repo import Store
from hrsync.store.submission_record import SubmissionStatus, SubmittedPlan
from hrsync.sync.results import AttributeResult, SyncRequest, SyncResult
from hrsync.sync.story import record_end

# Far enough ahead of the real clock that a paused scheduler's jobs are all "future".
T0 = datetime(2030, 3, 30, 12, 0, tzinfo=UTC)  # Saturday; Berlin springs forward on the 31st
H = timedelta(hours=1)
MIN = timedelta(minutes=1)


class Clock:
    def __init__(self, now: datetime) -> None:
        self.now = now

    def __call__(self) -> datetime:
        return self.now

    def advance(self, delta: timedelta) -> datetime:
        self.now += delta
        return self.now


Script = tuple[Outcome, str | None, datetime | None]


class RecordingSync:
    """Stands in for `run_sync`: records requests, writes the run like the engine does."""

    def __init__(self, store: Store, clock: Clock, *script: Script) -> None:
        self.store, self.clock = store, clock
        self.script = list(script)
        self.requests: list[SyncRequest] = []

    def then(self, *script: Script) -> RecordingSync:
        self.script.extend(script)
        return self

    def __call__(self, request: SyncRequest) -> SyncResult:
        self.requests.append(request)
        outcome, reason, resume_at = (
            self.script.pop(0) if self.script else (Outcome.IN_SYNC, None, None)
        )
        run_id = f"run-{len(self.requests)}"
        self.store.runs.start(run_id, request.trigger, self.clock(), dry_run=False)
        result = SyncResult(run_id, outcome, reason=reason, resume_at=resume_at)
        # The run's own record step: the run, and its deferral (written there only).
        record_end(self.store, self.clock, request, result)
        return result

    @property
    def triggers(self) -> list[str]:
        return [r.trigger for r in self.requests]


def failed(reason: str = "DX unreachable after 5 attempts") -> Script:
    return (Outcome.FAILED, reason, None)


OK: Script = (Outcome.APPLIED, None, None)


def settings_with(**sync: Any) -> Settings:
    base = SyncSettings(schedule="0 6 * * *", timezone="Europe/Berlin", quarantine_after=3)
    return Settings(sync=dataclasses.replace(base, **sync))


@pytest.fixture(scope="module")
def migrated_db(tmp_path_factory: pytest.TempPathFactory) -> bytes:
    # Migrating once and copying the file keeps each test fast.
    path = tmp_path_factory.mktemp("template") / "state.db"
    Store.open(f"sqlite:///{path}").close()  # the last connection folds the WAL back in
    assert not path.with_name("state.db-wal").exists()
    return path.read_bytes()


@pytest.fixture
def store(tmp_path: Path, migrated_db: bytes) -> Iterator[Store]:
    path = tmp_path / "state.db"
    path.write_bytes(migrated_db)
    s = Store.open(f"sqlite:///{path}", migrate=False)
    yield s
    s.close()


@pytest.fixture
def clock() -> Clock:
    return Clock(T0)


class Harness:
    def __init__(self, store: Store, clock: Clock) -> None:
        self.store, self.clock = store, clock
        self.daemons: list[Daemon] = []

    def start(
        self, sync: RecordingSync, *, now: bool = False, settings: Settings | None = None
    ) -> Daemon:
        d = Daemon(settings or settings_with(), store=self.store, run_sync=sync, clock=self.clock)
        d.start(now=now, paused=True)
        self.daemons.append(d)
        return d

    def close(self) -> None:
        for d in self.daemons:
            if d.scheduler.running:
                d.scheduler.shutdown(wait=False)


@pytest.fixture
def harness(store: Store, clock: Clock) -> Iterator[Harness]:
    h = Harness(store, clock)
    yield h
    h.close()


def job_time(d: Daemon, job_id: str) -> datetime | None:
    job = d.scheduler.get_job(job_id)
    return None if job is None else job.next_run_time


def fire(d: Daemon, job_id: str) -> None:
    """Run a job the way the scheduler would, without waiting for its time."""
    job = d.scheduler.get_job(job_id)
    assert job is not None, f"no {job_id} job"
    job.func(*job.args, **job.kwargs)


def events(logs: list[MutableMapping[str, Any]], name: str) -> list[MutableMapping[str, Any]]:
    return [e for e in logs if e["event"] == name]


# ------------------------------------------------------------- schedule


def test_next_run_time_comes_from_the_cron_in_the_configured_zone(
    harness: Harness, store: Store, clock: Clock
) -> None:
    with capture_logs() as logs:
        d = harness.start(RecordingSync(store, clock))
    # 06:00 in Berlin on the morning clocks go forward: CEST, so 04:00 UTC.
    expected = datetime(2030, 3, 31, 4, 0, tzinfo=UTC)
    assert job_time(d, SCHEDULE_JOB) == expected
    (started,) = events(logs, "daemon.started")
    assert started["schedule"] == "0 6 * * *"
    assert started["timezone"] == "Europe/Berlin"
    assert started["next_run_time"] == expected.isoformat()
    job = d.scheduler.get_job(SCHEDULE_JOB)
    assert job.coalesce is True and job.max_instances == 1 and job.misfire_grace_time is None


def test_the_cron_keeps_firing_on_local_time_after_the_first_run(
    harness: Harness, store: Store, clock: Clock
) -> None:
    d = harness.start(RecordingSync(store, clock), settings=settings_with(schedule="0 6 * * 1-5"))
    trigger = d.scheduler.get_job(SCHEDULE_JOB).trigger
    first = job_time(d, SCHEDULE_JOB)
    # Saturday noon -> Monday 06:00 CEST (crontab's 1-5 is Monday to Friday).
    assert first == datetime(2030, 4, 1, 4, 0, tzinfo=UTC)
    second = trigger.get_next_fire_time(first, first)
    assert second is not None and second > first
    assert trigger.get_next_fire_time(first, first + MIN) == datetime(2030, 4, 2, 4, 0, tzinfo=UTC)


def test_scheduled_job_runs_a_sync_with_the_schedule_trigger(
    harness: Harness, store: Store, clock: Clock
) -> None:
    sync = RecordingSync(store, clock)
    d = harness.start(sync)
    fire(d, SCHEDULE_JOB)
    assert sync.triggers == ["schedule"]


def test_now_adds_a_run_at_start(harness: Harness, store: Store, clock: Clock) -> None:
    sync = RecordingSync(store, clock)
    d = harness.start(sync, now=True)
    assert job_time(d, STARTUP_JOB) == T0
    fire(d, STARTUP_JOB)
    assert sync.triggers == ["startup"]


def test_without_now_nothing_runs_at_start(harness: Harness, store: Store, clock: Clock) -> None:
    d = harness.start(RecordingSync(store, clock))
    assert d.scheduler.get_job(STARTUP_JOB) is None
    assert d.scheduler.get_job(RESUME_JOB) is None


# ------------------------------------------------------------- deferrals


def deferred_run(store: Store, reason: str, resume_at: datetime) -> None:
    """What an earlier process left behind: a deferred run and its deferral."""
    store.runs.start("run-0", "schedule", T0 - H, dry_run=False)
    store.runs.finish("run-0", T0 - H, outcome="deferred", exit_code=3, counts={}, reason=reason)
    store.deferrals.add("run-0", reason, resume_at, T0 - H)


def test_a_stored_deferral_is_resumed_at_the_end_of_its_window(
    harness: Harness, store: Store, clock: Clock
) -> None:
    window_end = T0 + timedelta(days=3, hours=5)
    deferred_run(store, "snapshot s-41 in its retro window", window_end)
    sync = RecordingSync(store, clock)
    with capture_logs() as logs:
        d = harness.start(sync)
    assert job_time(d, RESUME_JOB) == window_end
    (registered,) = events(logs, "daemon.resume_registered")
    assert registered["resume_at"] == window_end.isoformat()
    assert registered["reason"] == "snapshot s-41 in its retro window"
    clock.now = window_end
    fire(d, RESUME_JOB)
    assert sync.triggers == ["resume"]


def test_a_deferral_whose_time_has_passed_runs_at_once(
    harness: Harness, store: Store, clock: Clock
) -> None:
    deferred_run(store, "import in progress", T0 - 10 * MIN)
    d = harness.start(RecordingSync(store, clock))
    assert job_time(d, RESUME_JOB) == T0


def left_submitted(store: Store, status: SubmissionStatus, ended: datetime | None) -> int:
    """What an earlier process left: a run that submitted, its submission at `status`, and
    the run ended unverified at `ended` (None: the process died during the run)."""
    store.runs.start("run-0", "schedule", T0 - H, dry_run=False)
    sid = store.submissions.record(
        "run-0", SubmittedPlan(rows=(), digest="d"), people_count=0, now=T0 - H
    )
    store.submissions.mark(sid, status, T0 - H)
    if ended is not None:
        store.runs.finish(
            "run-0", ended, outcome="unverified", exit_code=5, counts={}, reason="timed out"
        )
    return sid


def test_a_submission_left_unverified_is_verified_at_start(
    harness: Harness, store: Store, clock: Clock
) -> None:
    # The last process was killed (OOM, a node lost, the grace period exceeded) after DX
    # accepted the hierarchy and before it saw it applied: the next start looks at once,
    # not at tomorrow's schedule.
    sid = left_submitted(store, SubmissionStatus.ACCEPTED, ended=None)
    sync = RecordingSync(store, clock)
    with capture_logs() as logs:
        d = harness.start(sync)
    assert job_time(d, RESUME_JOB) == T0
    (registered,) = events(logs, "daemon.resume_registered")
    assert registered["reason"] == f"verify submission {sid} (accepted), which run run-0 left"
    (started,) = events(logs, "daemon.started")
    assert started["resume_at"] == T0.isoformat()
    fire(d, RESUME_JOB)
    assert sync.triggers == ["resume"]


def test_an_unverified_run_s_retry_keeps_its_back_off_across_a_restart(
    harness: Harness, store: Store, clock: Clock
) -> None:
    # Its retry was a job in memory, gone with the process. Looking again at once could
    # find DX still importing and send again: the retry comes when it would have come.
    sid = left_submitted(store, SubmissionStatus.UNVERIFIED, ended=T0 - MIN)
    sync = RecordingSync(store, clock)
    with capture_logs() as logs:
        d = harness.start(sync)
    assert job_time(d, RESUME_JOB) == T0 + MIN  # 2 minutes after it ended
    (registered,) = events(logs, "daemon.resume_registered")
    assert registered["reason"] == f"verify submission {sid} (unverified), which run run-0 left"
    clock.now = T0 + MIN
    fire(d, RESUME_JOB)
    assert sync.triggers == ["resume"]


def test_a_deferred_run_registers_a_resume_job_and_keeps_it_in_the_store(
    harness: Harness, store: Store, clock: Clock
) -> None:
    until = T0 + timedelta(days=2)
    later = T0 + timedelta(days=4)
    sync = RecordingSync(
        store,
        clock,
        (Outcome.DEFERRED, "snapshot in window", until),
        (Outcome.DEFERRED, "another snapshot", later),
    )
    d = harness.start(sync)
    fire(d, SCHEDULE_JOB)
    assert job_time(d, RESUME_JOB) == until
    pending = store.deferrals.pending()
    assert pending is not None and pending.resume_at == until and pending.run_id == "run-1"
    # A newer deferral replaces the resume job: there is only ever one.
    clock.now = until
    fire(d, RESUME_JOB)
    assert job_time(d, RESUME_JOB) == later
    assert [j.id for j in d.scheduler.get_jobs()].count(RESUME_JOB) == 1
    # A restart finds the newest deferral and resumes at its end.
    d.scheduler.shutdown(wait=False)
    restarted = harness.start(RecordingSync(store, clock))
    assert job_time(restarted, RESUME_JOB) == later


def test_a_run_that_goes_ahead_settles_the_stored_deferral(
    harness: Harness, store: Store, clock: Clock
) -> None:
    deferred_run(store, "snapshot in window", T0 + H)
    sync = RecordingSync(store, clock, OK)
    d = harness.start(sync)
    clock.now = T0 + H
    fire(d, RESUME_JOB)
    assert store.deferrals.pending() is None
    d.scheduler.shutdown(wait=False)
    restarted = harness.start(RecordingSync(store, clock))
    assert restarted.scheduler.get_job(RESUME_JOB) is None


def test_a_deferral_already_recorded_by_the_engine_is_not_recorded_twice(
    harness: Harness, store: Store, clock: Clock
) -> None:
    until = T0 + timedelta(days=2)

    class EngineThatRecords(RecordingSync):
        def __call__(self, request: SyncRequest) -> SyncResult:
            result = super().__call__(request)
            store.deferrals.add(result.run_id, "snapshot in window", until, clock())
            self.recorded = store.deferrals.pending()
            return result

    sync = EngineThatRecords(store, clock, (Outcome.DEFERRED, "window", until))
    d = harness.start(sync)
    fire(d, SCHEDULE_JOB)
    assert sync.recorded is not None
    assert store.deferrals.pending() == sync.recorded
    assert job_time(d, RESUME_JOB) == until


# ------------------------------------------------------------- quarantine


def test_quarantine_backs_off_and_clears_after_a_success(
    harness: Harness, store: Store, clock: Clock
) -> None:
    sync = RecordingSync(store, clock, failed("timeout 1"), failed("timeout 2"), failed("HTTP 503"))
    d = harness.start(sync)
    with capture_logs() as logs:
        for _ in range(3):
            clock.advance(H)
            fire(d, SCHEDULE_JOB)
    third_failure = clock.now
    (quarantined,) = events(logs, "sync.quarantined")
    assert quarantined["failures"] == 3
    assert quarantined["reasons"] == ["HTTP 503", "timeout 2", "timeout 1"]
    assert quarantined["next_attempt_at"] == (third_failure + H).isoformat()
    assert d.quarantine is not None and d.quarantine.since == third_failure

    # Inside the first hour scheduled runs are skipped; the attempt after it fails again.
    clock.advance(30 * MIN)
    with capture_logs() as logs:
        fire(d, SCHEDULE_JOB)
    assert len(sync.requests) == 3
    assert (
        events(logs, "sync.quarantine_skip")[0]["next_attempt_at"]
        == (third_failure + H).isoformat()
    )
    clock.now = third_failure + H
    sync.then(failed("HTTP 503"))
    fire(d, SCHEDULE_JOB)
    assert len(sync.requests) == 4
    fourth_failure = clock.now
    # The pause doubles: skipped at +1 h 59 min, attempted at +2 h.
    assert d.quarantine is not None and d.quarantine.next_attempt_at == fourth_failure + 2 * H
    clock.now = fourth_failure + 2 * H - MIN
    fire(d, SCHEDULE_JOB)
    assert len(sync.requests) == 4
    clock.now = fourth_failure + 2 * H
    sync.then(OK)
    with capture_logs() as logs:
        fire(d, SCHEDULE_JOB)
    assert len(sync.requests) == 5
    (cleared,) = events(logs, "sync.quarantine_cleared")
    assert cleared["outcome"] == "applied" and cleared["failures"] == 4
    assert d.quarantine is None
    # Back to normal: the very next scheduled run goes ahead.
    clock.advance(MIN)
    fire(d, SCHEDULE_JOB)
    assert len(sync.requests) == 6


def test_a_successful_run_by_hand_ends_the_quarantine(
    harness: Harness, store: Store, clock: Clock
) -> None:
    sync = RecordingSync(store, clock, failed(), failed(), failed())
    d = harness.start(sync)
    for _ in range(3):
        clock.advance(H)
        fire(d, SCHEDULE_JOB)
    assert d.quarantine is not None
    # An operator fixes the cause and runs `hrsync sync` in another process.
    clock.advance(10 * MIN)
    store.runs.start("manual-1", "manual", clock(), dry_run=False)
    store.runs.finish("manual-1", clock(), outcome="applied", exit_code=0, counts={}, reason=None)
    clock.advance(MIN)
    with capture_logs() as logs:
        fire(d, SCHEDULE_JOB)
    assert len(sync.requests) == 4  # not held back any more
    assert events(logs, "sync.quarantine_cleared")[0]["failures"] == 3


def test_the_heartbeat_sees_a_run_by_hand_end_the_quarantine_and_tells_the_monitor(
    store: Store, clock: Clock
) -> None:
    """Not only at the next fire (a day away): the beat re-reads the failure streak, so
    the heartbeat row, /readyz and the gauges follow within a beat, on every replica."""
    told: list[bool] = []
    sync = RecordingSync(store, clock, failed(), failed(), failed())
    d = Daemon(settings_with(), store=store, run_sync=sync, clock=clock, on_beat=told.append)
    d.start(paused=True)
    try:
        for _ in range(3):
            clock.advance(H)
            fire(d, SCHEDULE_JOB)
        fire(d, HEARTBEAT_JOB)
        assert told == [True]
        clock.advance(10 * MIN)
        store.runs.start("manual-1", "manual", clock(), dry_run=False)
        store.runs.finish(
            "manual-1", clock(), outcome="applied", exit_code=0, counts={}, reason=None
        )
        clock.advance(MIN)
        with capture_logs() as logs:
            fire(d, HEARTBEAT_JOB)
        assert told == [True, False]
        assert d.quarantine is None
        assert events(logs, "sync.quarantine_cleared")[0]["failures"] == 3
        beat = store.heartbeat.read()
        assert beat is not None and beat.state == "idle" and beat.quarantined_since is None
        assert len(sync.requests) == 3  # the beat runs nothing
    finally:
        d.scheduler.shutdown(wait=False)


def test_quarantine_survives_a_restart_because_it_lives_in_the_store(
    harness: Harness, store: Store, clock: Clock
) -> None:
    sync = RecordingSync(store, clock, failed(), failed(), failed())
    d = harness.start(sync)
    for _ in range(3):
        clock.advance(H)
        fire(d, SCHEDULE_JOB)
    last = clock.now
    d.scheduler.shutdown(wait=False)
    clock.advance(10 * MIN)
    with capture_logs() as logs:
        restarted = harness.start(sync)
    assert events(logs, "daemon.started")[0]["next_attempt_at"] == (last + H).isoformat()
    fire(restarted, SCHEDULE_JOB)
    assert len(sync.requests) == 3  # still inside the pause


def test_a_threshold_above_fifty_still_quarantines_and_counts_the_whole_streak(
    harness: Harness, store: Store, clock: Clock
) -> None:
    # The streak was read from the newest 50 runs only: a threshold above that never
    # quarantined, and a longer streak was reported as 50 since its 50th-newest run.
    first = clock.now
    for i in range(60):
        store.runs.start(f"f{i}", "schedule", first + i * MIN, dry_run=False)
        store.runs.finish(
            f"f{i}", first + i * MIN, outcome="failed", exit_code=1, counts={}, reason="down"
        )
    clock.advance(H)
    d = harness.start(RecordingSync(store, clock), settings=settings_with(quarantine_after=60))
    assert d.quarantine is not None
    assert (d.quarantine.failures, d.quarantine.since) == (60, first + 59 * MIN)
    d = harness.start(RecordingSync(store, clock), settings=settings_with(quarantine_after=5))
    assert d.quarantine is not None
    assert (d.quarantine.failures, d.quarantine.since) == (60, first + 4 * MIN)


def test_run_at_start_is_a_person_asking_and_bypasses_quarantine(
    harness: Harness, store: Store, clock: Clock
) -> None:
    sync = RecordingSync(store, clock, failed(), failed(), failed())
    d = harness.start(sync)
    for _ in range(3):
        clock.advance(H)
        fire(d, SCHEDULE_JOB)
    d.scheduler.shutdown(wait=False)
    clock.advance(MIN)
    restarted = harness.start(sync, now=True)
    fire(restarted, STARTUP_JOB)
    assert sync.triggers[-1] == "startup" and len(sync.requests) == 4


def test_refused_runs_are_not_failures_but_are_repeated_in_the_log(
    harness: Harness, store: Store, clock: Clock
) -> None:
    refusal = "would archive 40 of 120 teams (limit 10); nothing sent"
    sync = RecordingSync(store, clock, *[(Outcome.REFUSED, refusal, None)] * 5)
    d = harness.start(sync)
    with capture_logs() as logs:
        for _ in range(5):
            clock.advance(H)
            fire(d, SCHEDULE_JOB)
    pending = events(logs, "sync.refused_pending")
    assert len(pending) == 5
    assert all(e["reason"] == refusal for e in pending)
    assert "--allow-archive" in pending[0]["action"]
    assert events(logs, "sync.quarantined") == []
    assert d.quarantine is None and len(sync.requests) == 5


def pending_after_one_run(
    harness: Harness, store: Store, clock: Clock, ending: Callable[[str], SyncResult]
) -> list[MutableMapping[str, Any]]:
    """The `sync.refused_pending` events of one scheduled run ending as `ending(run_id)`."""

    def run(request: SyncRequest) -> SyncResult:
        run_id = f"run-{request.trigger}"
        store.runs.start(run_id, request.trigger, clock(), dry_run=False)
        result = ending(run_id)
        record_end(store, clock, request, result)
        return result

    d = Daemon(settings_with(), store=store, run_sync=run, clock=clock)
    d.start(paused=True)
    harness.daemons.append(d)
    with capture_logs() as logs:
        d.execute("schedule")
    return events(logs, "sync.refused_pending")


def test_a_refusal_that_names_its_approval_is_repeated_with_that_exact_command(
    harness: Harness, store: Store, clock: Clock
) -> None:
    approve = "hrsync --config /etc/hrsync/hrsync.toml sync --allow-archive 40"
    (pending,) = pending_after_one_run(
        harness,
        store,
        clock,
        lambda run_id: SyncResult(
            run_id, Outcome.REFUSED, reason="would archive 40 of 120 teams", action=approve
        ),
    )
    # The number to approve, not a placeholder to fill in.
    assert f"`{approve}`" in pending["action"]
    assert "--allow-archive N" not in pending["action"]


def test_a_refused_attribute_step_after_an_applied_hierarchy_is_repeated_in_the_log(
    harness: Harness, store: Store, clock: Clock
) -> None:
    approve = "hrsync --config /etc/hrsync/hrsync.toml sync --allow-attribute-changes"
    refused = AttributeResult(AttributeOutcome.REFUSED, reason="would change 900 of 1000")
    (pending,) = pending_after_one_run(
        harness,
        store,
        clock,
        lambda run_id: SyncResult(run_id, Outcome.APPLIED, attributes=refused, action=approve),
    )
    assert f"`{approve}`" in pending["action"]


def test_other_outcomes_break_the_failure_streak(
    harness: Harness, store: Store, clock: Clock
) -> None:
    sync = RecordingSync(
        store, clock, failed(), failed(), (Outcome.REJECTED, "invalid_rows", None), failed()
    )
    d = harness.start(sync)
    for _ in range(4):
        clock.advance(H)
        fire(d, SCHEDULE_JOB)
    assert d.quarantine is None


# ------------------------------------------------------------- heartbeat


def test_heartbeat_records_state_and_next_run(harness: Harness, store: Store, clock: Clock) -> None:
    d = harness.start(RecordingSync(store, clock))
    clock.advance(30 * timedelta(seconds=1))
    fire(d, HEARTBEAT_JOB)
    beat = store.heartbeat.read()
    assert beat is not None
    assert beat.beat_at == clock.now
    assert beat.pid == os.getpid()
    assert beat.state == "idle"
    assert beat.quarantined_since is None and beat.consecutive_failures == 0
    assert beat.detail["next_run_time"] == datetime(2030, 3, 31, 4, 0, tzinfo=UTC).isoformat()
    job = d.scheduler.get_job(HEARTBEAT_JOB)
    assert job.trigger.interval == timedelta(seconds=30)
    assert job.next_run_time == T0 + timedelta(seconds=30)


def test_heartbeat_reports_quarantine(harness: Harness, store: Store, clock: Clock) -> None:
    sync = RecordingSync(store, clock, failed(), failed(), failed())
    d = harness.start(sync)
    for _ in range(3):
        clock.advance(H)
        fire(d, SCHEDULE_JOB)
    since = clock.now
    clock.advance(MIN)
    d.beat()
    beat = store.heartbeat.read()
    assert beat is not None
    assert beat.state == "quarantined"
    assert beat.quarantined_since == since and beat.consecutive_failures == 3
    assert beat.detail["next_attempt_at"] == (since + H).isoformat()


def test_start_writes_a_first_heartbeat(harness: Harness, store: Store, clock: Clock) -> None:
    assert store.heartbeat.read() is None
    harness.start(RecordingSync(store, clock))
    beat = store.heartbeat.read()
    assert beat is not None and beat.beat_at == T0


# ------------------------------------------------------------- one run at a time


class BlockingSync:
    """A run that holds until released, to test overlap and shutdown."""

    def __init__(self) -> None:
        self.started = threading.Event()
        self.release = threading.Event()
        self.requests: list[SyncRequest] = []

    def __call__(self, request: SyncRequest) -> SyncResult:
        self.requests.append(request)
        self.started.set()
        self.release.wait(10)
        return SyncResult("run-b", Outcome.IN_SYNC)


def test_a_job_firing_during_a_run_is_skipped(store: Store, clock: Clock) -> None:
    sync = BlockingSync()
    d = Daemon(settings_with(), store=store, run_sync=sync, clock=clock)
    d.start(paused=True)
    try:
        worker = threading.Thread(target=d.execute, args=("schedule",))
        worker.start()
        assert sync.started.wait(2)
        with capture_logs() as logs:
            assert d.execute("resume") is None
        assert events(logs, "daemon.run_skipped")[0]["reason"] == "run_in_progress"
        sync.release.set()
        worker.join(2)
        assert [r.trigger for r in sync.requests] == ["schedule"]
    finally:
        sync.release.set()
        d.stop(grace_s=1)


def test_a_crashing_run_is_logged_and_the_daemon_carries_on(
    harness: Harness, store: Store, clock: Clock
) -> None:
    calls: list[str] = []

    def explode(request: SyncRequest) -> SyncResult:
        calls.append(request.trigger)
        raise RuntimeError("bug in the engine")

    d = Daemon(settings_with(), store=store, run_sync=explode, clock=clock)
    d.start(paused=True)
    harness.daemons.append(d)
    with capture_logs() as logs:
        assert getattr(d.execute("schedule"), "outcome", None) is Outcome.FAILED
        assert getattr(d.execute("schedule"), "outcome", None) is Outcome.FAILED
    assert calls == ["schedule", "schedule"]
    assert events(logs, "daemon.run_crashed")[0]["error"] == "bug in the engine"


def crashing_daemon(
    harness: Harness, store: Store, clock: Clock, error: str = "bug in the engine"
) -> tuple[Daemon, list[tuple[SyncResult, bool]]]:
    """A started (paused) daemon whose every run raises `error`, and what its monitor hears:
    each result with whether the daemon was quarantined."""

    def explode(request: SyncRequest) -> SyncResult:
        raise RuntimeError(error)

    told: list[tuple[SyncResult, bool]] = []
    d = Daemon(
        settings_with(),
        store=store,
        run_sync=explode,
        clock=clock,
        on_finished=lambda result, _duration, quarantined: told.append((result, quarantined)),
    )
    d.start(paused=True)
    harness.daemons.append(d)
    return d, told


def test_crashing_runs_count_as_failed_runs_and_end_in_quarantine(
    harness: Harness, store: Store, clock: Clock
) -> None:
    # A daemon whose every run crashes must not look idle: each crash is a failed run in
    # the store (the quarantine's streak, `hrsync status`) and is told to the monitor
    # (metrics, the webhook), and three in a row quarantine it, loudly.
    d, told = crashing_daemon(harness, store, clock)
    with capture_logs() as logs:
        for _ in range(3):
            assert getattr(d.execute("schedule"), "outcome", None) is Outcome.FAILED
    assert [(r.outcome, q) for r, q in told] == [
        (Outcome.FAILED, False),
        (Outcome.FAILED, False),
        (Outcome.FAILED, True),
    ]
    assert told[0][0].reason == "hrsync crashed: RuntimeError: bug in the engine"
    runs = store.runs.recent(5)
    assert [(r.outcome, r.trigger) for r in runs] == [("failed", "schedule")] * 3
    assert runs[0].reason == "hrsync crashed: RuntimeError: bug in the engine"
    assert d.quarantined()
    assert events(logs, "sync.quarantined")


def test_a_crash_the_store_cannot_record_is_still_told_to_the_monitor(
    harness: Harness, store: Store, clock: Clock
) -> None:
    # The store failing is a likely cause of the crash itself: the metrics and the webhook
    # are then the only ones left to hear of it.
    d, heard = crashing_daemon(harness, store, clock)
    with store.engine.begin() as c:
        c.exec_driver_sql("ALTER TABLE runs RENAME TO runs_gone")
    with capture_logs() as logs:
        assert getattr(d.execute("schedule"), "outcome", None) is Outcome.FAILED
    assert events(logs, "daemon.store_unavailable")
    told = [result for result, _ in heard]
    assert [(r.outcome, r.reason) for r in told] == [
        (Outcome.FAILED, "hrsync crashed: RuntimeError: bug in the engine")
    ]


# ------------------------------------------------------------- shutdown


def test_stop_lets_the_current_run_finish_and_starts_no_new_one(store: Store, clock: Clock) -> None:
    sync = BlockingSync()
    d = Daemon(settings_with(), store=store, run_sync=sync, clock=clock, shutdown_grace_s=5)
    d.start(paused=True)
    worker = threading.Thread(target=d.execute, args=("schedule",))
    worker.start()
    assert sync.started.wait(2)
    outcome: list[bool] = []
    stopper = threading.Thread(target=lambda: outcome.append(d.stop()))
    with capture_logs() as logs:
        stopper.start()
        assert d.stopping.wait(2)
        # A job that starts after stopping returns at once, without a run.
        assert d.execute("schedule") is None
        assert not d.scheduler.running or d.stopping.is_set()
        sync.release.set()
        stopper.join(3)
        worker.join(3)
    assert outcome == [True]
    assert len(sync.requests) == 1
    names = [e["event"] for e in logs]
    assert names.index("daemon.stopping") < names.index("daemon.stopped")
    assert events(logs, "daemon.run_skipped")[0]["reason"] == "stopping"
    assert events(logs, "daemon.stopping")[0]["run_in_progress"] is True
    beat = store.heartbeat.read()
    assert beat is not None and beat.state == "stopped"


def run_in_thread(
    settings: Settings,
    store: Store,
    sync: Any,
    stop: threading.Event,
    *,
    shutdown_grace_s: float = 30.0,
) -> tuple[threading.Thread, list[int]]:
    codes: list[int] = []

    def target() -> None:
        codes.append(
            daemon_module.run(
                settings,
                now=True,
                store=store,
                run_sync=sync,
                stop_event=stop,
                shutdown_grace_s=shutdown_grace_s,
            )
        )

    thread = threading.Thread(target=target)
    thread.start()
    return thread, codes


def test_run_returns_0_once_the_current_run_finishes(store: Store) -> None:
    sync = BlockingSync()
    stop = threading.Event()
    settings = settings_with(heartbeat_s=0.05)
    thread, codes = run_in_thread(settings, store, sync, stop, shutdown_grace_s=3)
    assert sync.started.wait(3), "--now did not start a run"
    stop.set()
    threading.Timer(0.2, sync.release.set).start()
    began = time.monotonic()
    thread.join(4)
    assert not thread.is_alive() and codes == [0]
    assert time.monotonic() - began < 3
    assert [r.trigger for r in sync.requests] == ["startup"]
    beat = store.heartbeat.read()
    assert beat is not None and beat.state == "stopped"


def test_runs_happen_in_daemon_threads_so_an_overdue_run_cannot_hold_the_exit(
    store: Store,
) -> None:
    seen: list[bool] = []
    ran = threading.Event()

    def record_thread(request: SyncRequest) -> SyncResult:
        seen.append(threading.current_thread().daemon)
        ran.set()
        return SyncResult("run-t", Outcome.IN_SYNC)

    d = Daemon(settings_with(), store=store, run_sync=record_thread)
    d.start(now=True)
    try:
        assert ran.wait(3)
    finally:
        d.stop(grace_s=1)
    assert seen == [True]


def test_run_exits_0_when_the_grace_expires(store: Store) -> None:
    sync = BlockingSync()
    stop = threading.Event()
    thread, codes = run_in_thread(settings_with(), store, sync, stop, shutdown_grace_s=0.2)
    try:
        assert sync.started.wait(3)
        with capture_logs() as logs:
            began = time.monotonic()
            stop.set()
            thread.join(3)
            took = time.monotonic() - began
        assert codes == [0]
        assert 0.2 <= took < 1.5
        assert events(logs, "daemon.grace_expired")[0]["grace_s"] == 0.2
        assert events(logs, "daemon.stopped")[0]["run_finished"] is False
        beat = store.heartbeat.read()
        assert beat is not None and beat.state == "stopped"
    finally:
        sync.release.set()


def test_sigterm_stops_the_daemon_gracefully(store: Store) -> None:
    sync = BlockingSync()
    before = signal.getsignal(signal.SIGTERM)

    def terminate_once_running() -> None:
        if sync.started.wait(5):
            os.kill(os.getpid(), signal.SIGTERM)
            time.sleep(0.1)
            sync.release.set()

    threading.Thread(target=terminate_once_running, daemon=True).start()
    with capture_logs() as logs:
        code = daemon_module.run(
            settings_with(), now=True, store=store, run_sync=sync, shutdown_grace_s=3
        )
    assert code == 0
    assert events(logs, "daemon.signal")[0]["signal"] == "SIGTERM"
    assert events(logs, "daemon.stopped")[0]["run_finished"] is True
    assert len(sync.requests) == 1
    assert signal.getsignal(signal.SIGTERM) == before


# ------------------------------------------------------------- catch-up


def test_a_restart_across_the_scheduled_time_runs_the_missed_sync(
    harness: Harness, store: Store, clock: Clock
) -> None:
    sync = RecordingSync(store, clock)
    # The last run was yesterday 06:00 Berlin; the container was down this morning.
    clock.now = datetime(2030, 4, 2, 4, 0, tzinfo=UTC)
    sync(SyncRequest(trigger="schedule"))
    clock.now = datetime(2030, 4, 3, 9, 30, tzinfo=UTC)
    with capture_logs() as logs:
        d = harness.start(sync)
    assert job_time(d, CATCH_UP_JOB) == clock.now
    (caught,) = events(logs, "daemon.catch_up")
    assert caught["missed"] == datetime(2030, 4, 3, 4, 0, tzinfo=UTC).isoformat()
    fire(d, CATCH_UP_JOB)
    assert sync.triggers == ["schedule", "schedule"]


@pytest.mark.parametrize(
    "last_run",
    [
        None,  # a fresh install waits for its schedule
        datetime(2030, 4, 3, 4, 0, 5, tzinfo=UTC),  # this morning's run happened
    ],
)
def test_no_catch_up_when_nothing_was_missed(
    harness: Harness, store: Store, clock: Clock, last_run: datetime | None
) -> None:
    sync = RecordingSync(store, clock)
    if last_run is not None:
        clock.now = last_run
        sync(SyncRequest(trigger="schedule"))
    clock.now = datetime(2030, 4, 3, 9, 30, tzinfo=UTC)
    d = harness.start(sync)
    assert job_time(d, CATCH_UP_JOB) is None


def test_a_fire_apscheduler_skips_during_a_run_is_our_own_warning(
    store: Store, clock: Clock
) -> None:
    # The real scheduler, real threads: the cron job fires while its previous run still
    # holds, and APScheduler refuses a second instance (EVENT_JOB_MAX_INSTANCES).
    sync = BlockingSync()
    d = Daemon(settings_with(), store=store, run_sync=sync, clock=clock)
    d.start(paused=True)
    try:
        with capture_logs() as logs:
            job = d.scheduler.get_job(SCHEDULE_JOB)
            job.modify(next_run_time=datetime.now(UTC))
            d.scheduler.resume()
            assert sync.started.wait(3)
            fired_again = datetime.now(UTC).replace(microsecond=0)
            job.modify(next_run_time=fired_again)
            d.scheduler.wakeup()
            deadline = time.monotonic() + 3
            while not events(logs, "daemon.run_skipped") and time.monotonic() < deadline:
                time.sleep(0.02)
        (skipped,) = events(logs, "daemon.run_skipped")
        assert skipped["log_level"] == "warning"
        assert skipped["reason"] == "run_in_progress"
        assert skipped["trigger"] == "schedule"
        assert skipped["scheduled_at"] == fired_again.isoformat()
        assert [r.trigger for r in sync.requests] == ["schedule"]
    finally:
        sync.release.set()
        d.stop(grace_s=1)


def test_max_instances_listener_names_the_trigger_and_every_skipped_time(
    harness: Harness, store: Store, clock: Clock
) -> None:
    d = harness.start(RecordingSync(store, clock))
    times = [T0, T0 + MIN]
    with capture_logs() as logs:
        d.on_max_instances(
            JobSubmissionEvent(EVENT_JOB_MAX_INSTANCES, RESUME_JOB, "default", times)
        )
        d.on_max_instances(
            JobSubmissionEvent(EVENT_JOB_MAX_INSTANCES, CATCH_UP_JOB, "default", [T0])
        )
        d.on_max_instances(
            JobSubmissionEvent(EVENT_JOB_MAX_INSTANCES, HEARTBEAT_JOB, "default", [T0])
        )
    skipped = events(logs, "daemon.run_skipped")
    assert [(e["trigger"], e["log_level"]) for e in skipped] == [
        ("resume", "warning"),
        ("schedule", "warning"),
    ]
    assert skipped[0]["scheduled_at"] == (T0 + MIN).isoformat()
    assert skipped[0]["skipped_fires"] == [T0.isoformat(), (T0 + MIN).isoformat()]
    assert events(logs, "daemon.heartbeat_skipped")


def test_a_run_skipped_by_our_own_lock_is_a_warning_with_its_time(
    store: Store, clock: Clock
) -> None:
    sync = BlockingSync()
    d = Daemon(settings_with(), store=store, run_sync=sync, clock=clock)
    d.start(paused=True)
    try:
        worker = threading.Thread(target=d.execute, args=("schedule",))
        worker.start()
        assert sync.started.wait(2)
        with capture_logs() as logs:
            assert d.execute("resume") is None
        (skipped,) = events(logs, "daemon.run_skipped")
        assert skipped["log_level"] == "warning"
        assert skipped["scheduled_at"] == T0.isoformat()
    finally:
        sync.release.set()
        d.stop(grace_s=1)


# ------------------------------------------------------------- unverified


UNVERIFIED: Script = (Outcome.UNVERIFIED, "DX did not show the submitted hierarchy", None)


def test_an_unverified_run_is_retried_in_minutes_backing_off_not_at_the_next_fire(
    harness: Harness, store: Store, clock: Clock
) -> None:
    sync = RecordingSync(store, clock, UNVERIFIED, UNVERIFIED, UNVERIFIED, OK)
    d = harness.start(sync)
    fire(d, SCHEDULE_JOB)
    assert job_time(d, RESUME_JOB) == T0 + 2 * MIN
    for expected in (4 * MIN, 8 * MIN):
        clock.now = job_time(d, RESUME_JOB)  # type: ignore[assignment]
        fire(d, RESUME_JOB)
        assert job_time(d, RESUME_JOB) == clock.now + expected
    clock.now = job_time(d, RESUME_JOB)  # type: ignore[assignment]
    fire(d, RESUME_JOB)  # verified at last: no further retry is registered
    assert job_time(d, RESUME_JOB) == clock.now  # the spent one-off (fired by hand here)
    assert sync.triggers == ["schedule", "resume", "resume", "resume"]


def test_the_unverified_backoff_is_capped_by_an_hour_and_by_the_schedule() -> None:
    from hrsync.daemon.followups import unverified_retry_delay

    assert [unverified_retry_delay(n) for n in (1, 2, 3, 6, 7, 50)] == [
        2 * MIN,
        4 * MIN,
        8 * MIN,
        H,
        H,
        H,
    ]


def test_no_retry_when_the_schedule_fires_sooner(
    harness: Harness, store: Store, clock: Clock
) -> None:
    d = harness.start(
        RecordingSync(store, clock, UNVERIFIED), settings=settings_with(schedule="* * * * *")
    )
    fire(d, SCHEDULE_JOB)
    assert d.scheduler.get_job(RESUME_JOB) is None


def test_a_crash_keeps_secrets_out_of_the_store_and_the_monitor(
    harness: Harness, store: Store, clock: Clock
) -> None:
    from hrsync.logs import register_secret

    secret = "dxp_crash-secret-4711"
    register_secret(secret)
    d, heard = crashing_daemon(
        harness, store, clock, f"request failed with Authorization: Bearer {secret}"
    )
    with capture_logs():
        d.execute("schedule")
    told = [result for result, _ in heard]
    [run] = store.runs.recent(1)
    assert run.reason is not None and "hrsync crashed: RuntimeError" in run.reason
    assert secret not in run.reason
    assert told and secret not in (told[0].reason or "")


# ------------------------------------------------------------- approvals (issue 23)


def test_the_daemon_looks_for_approvals_every_minute_and_runs_once_per_approval(
    harness: Harness, store: Store, clock: Clock
) -> None:
    sync = RecordingSync(store, clock, (Outcome.REFUSED, "would archive 6 teams", None))
    d = harness.start(sync)
    assert job_time(d, APPROVAL_JOB) == T0 + MIN
    fire(d, APPROVAL_JOB)
    assert sync.triggers == []  # nothing approved: a store read, no run

    clock.advance(MIN)
    store.approvals.add(
        "3f9c2a11", approved_by="ana", note=None, now=clock(), expires_at=clock() + 72 * H
    )
    with capture_logs() as logs:
        fire(d, APPROVAL_JOB)
    assert sync.triggers == ["approval"]
    (found,) = events(logs, "daemon.approval_found")
    assert found["plan_ids"] == ["3f9c2a11"] and found["approved_by"] == ["ana"]

    # The run refused (HR changed): the approval stays pending, but the daemon does not
    # sync every minute until it expires.
    clock.advance(MIN)
    fire(d, APPROVAL_JOB)
    assert sync.triggers == ["approval"]

    # A new approval is news again.
    store.approvals.add(
        "0badc0de", approved_by="ana", note=None, now=clock(), expires_at=clock() + 72 * H
    )
    fire(d, APPROVAL_JOB)
    assert sync.triggers == ["approval", "approval"]


def test_an_expired_approval_starts_no_run(harness: Harness, store: Store, clock: Clock) -> None:
    sync = RecordingSync(store, clock)
    d = harness.start(sync)
    store.approvals.add(
        "3f9c2a11", approved_by="ana", note=None, now=clock() - 73 * H, expires_at=clock() - H
    )
    fire(d, APPROVAL_JOB)
    assert sync.triggers == []


def test_an_approval_whose_run_crashes_starts_no_more_runs(
    harness: Harness, store: Store, clock: Clock
) -> None:
    calls: list[str] = []

    def explode(request: SyncRequest) -> SyncResult:
        calls.append(request.trigger)
        raise RuntimeError("bug in the engine")

    d = Daemon(settings_with(), store=store, run_sync=explode, clock=clock)
    d.start(paused=True)
    harness.daemons.append(d)
    store.approvals.add(
        "3f9c2a11", approved_by="ana", note=None, now=clock(), expires_at=clock() + 72 * H
    )
    for _ in range(5):
        fire(d, APPROVAL_JOB)
        clock.advance(MIN)
    # One run per approval, as the docs promise; the quarantine does not hold 'approval'.
    assert calls == ["approval"], calls


def test_the_approval_check_meeting_a_long_run_skips_it_without_a_warning(
    store: Store, clock: Clock
) -> None:
    sync = BlockingSync()
    d = Daemon(settings_with(), store=store, run_sync=sync, clock=clock)
    d.start(paused=True)
    try:
        worker = threading.Thread(target=d.execute, args=("schedule",))
        worker.start()
        assert sync.started.wait(2)
        store.approvals.add(
            "3f9c2a11", approved_by="ana", note=None, now=clock(), expires_at=clock() + 72 * H
        )
        with capture_logs() as logs:
            assert d.approvals.check() is None
        (skipped,) = events(logs, "daemon.run_skipped")
        assert (skipped["trigger"], skipped["log_level"]) == ("approval", "info")
    finally:
        sync.release.set()
        d.stop(grace_s=1)
