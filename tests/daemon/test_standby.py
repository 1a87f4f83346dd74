"""A daemon whose lease another process (a second replica) holds: it stands by.

Paused scheduler and explicit clock as in tests/daemon/test_service.py; the lease is real, held by a
second Store on the same database (SQLite and PostgreSQL, as two replicas would).
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Iterator, MutableMapping
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from sqlalchemy import text
from structlog.testing import capture_logs

from hrsync.config.loading import Settings, SyncSettings
from hrsync.daemon.scheduler import RESUME_JOB, SCHEDULE_JOB, STANDBY_JOB, TAKEOVER_JOB
from hrsync.daemon.service import Daemon
from hrsync.outcome import Outcome
from hrsync.store.repo import Store
from hrsync.sync.results import SyncRequest, SyncResult

T0 = datetime(2030, 3, 30, 12, 0, tzinfo=UTC)
HOLDER = "replica-a:4242:run-a1"


@pytest.fixture
def store(database_url: str) -> Iterator[Store]:
    s = Store.open(database_url)
    yield s
    s.close()


@pytest.fixture
def active(database_url: str, store: Store) -> Iterator[Store]:
    """The other replica's store."""
    s = Store.open(database_url, migrate=False)
    yield s
    s.close()


class Runs:
    """Stands in for `run_sync`: records each request and its run, like the engine."""

    def __init__(self, store: Store) -> None:
        self.store = store
        self.requests: list[SyncRequest] = []
        self.before: list[Any] = []

    def __call__(self, request: SyncRequest) -> SyncResult:
        self.requests.append(request)
        for step in self.before:
            step()
        run_id = f"standby-run-{len(self.requests)}"
        self.store.runs.start(run_id, request.trigger, T0, dry_run=False)
        held = self.store.acquire_lease(f"replica-b:1:{run_id}", T0, 600)
        outcome = Outcome.IN_SYNC if held.acquired else Outcome.DEFERRED
        if held.acquired:
            self.store.release_lease(f"replica-b:1:{run_id}")
        self.store.runs.finish(
            run_id, T0, outcome=str(outcome), exit_code=outcome.exit_code, counts={}, reason=None
        )
        return SyncResult(run_id, outcome, reason=None)


@pytest.fixture
def daemon(store: Store) -> Iterator[tuple[Daemon, Runs]]:
    runs = Runs(store)
    settings = Settings(sync=dataclasses.replace(SyncSettings(), schedule="0 6 * * *"))
    d = Daemon(settings, store=store, run_sync=runs, clock=lambda: T0)
    d.start(paused=True)
    yield d, runs
    if d.scheduler.running:
        d.scheduler.shutdown(wait=False)


def fire(d: Daemon, job_id: str) -> None:
    job = d.scheduler.get_job(job_id)
    assert job is not None, f"no {job_id} job"
    job.func(*job.args, **job.kwargs)


def named(logs: list[MutableMapping[str, Any]], event: str) -> list[MutableMapping[str, Any]]:
    return [e for e in logs if e["event"] == event]


def die(active: Store) -> None:
    """The active replica dies mid-run, without releasing anything."""
    if active.engine.dialect.name == "sqlite":
        # Same host and pid here: a changed start time says "that process is gone".
        with active.engine.begin() as c:
            c.execute(text("update leases set pid_started = pid_started || '0'"))
    else:
        active.close()  # its session ends: the server drops the lock


def test_a_fire_while_another_replica_syncs_stands_by_quietly(
    daemon: tuple[Daemon, Runs], active: Store, store: Store
) -> None:
    d, runs = daemon
    assert active.acquire_lease(HOLDER, T0, 600).acquired
    with capture_logs() as logs:
        fire(d, SCHEDULE_JOB)
    assert runs.requests == []  # no run, no deferred run in the history, no sync.finished
    (standby,) = named(logs, "daemon.standby")
    assert standby["log_level"] == "info" and standby["holder"] == HOLDER
    assert (
        standby["trigger"] == "schedule" and standby["holder_pid"] == os.getpid()
    )  # the other Store is here
    assert [e for e in logs if e["log_level"] in ("warning", "error")] == []
    beat = store.heartbeat.read()
    assert beat is not None and beat.state == "standby"
    assert d.scheduler.get_job(STANDBY_JOB) is not None


def standing_by(d: Daemon, active: Store) -> None:
    """The other replica holds the lease for its run run-a1; this one's fire stands by."""
    active.acquire_lease(HOLDER, T0, 600)
    active.runs.start("run-a1", "schedule", T0, dry_run=False)
    fire(d, SCHEDULE_JOB)


def test_when_the_active_run_finishes_the_standby_ends_without_a_run(
    daemon: tuple[Daemon, Runs], active: Store, store: Store
) -> None:
    d, runs = daemon
    standing_by(d, active)
    with capture_logs() as logs:
        fire(d, STANDBY_JOB)  # still held: nothing to say
        assert logs == []
        active.runs.finish("run-a1", T0, outcome="applied", exit_code=0, counts={}, reason=None)
        active.release_lease(HOLDER)
        fire(d, STANDBY_JOB)
    (over,) = named(logs, "daemon.standby_over")
    assert over["run_id"] == "run-a1" and over["outcome"] == "applied"
    assert over["runs_now"] is False
    assert named(logs, "daemon.takeover") == [] and runs.requests == []
    assert d.scheduler.get_job(STANDBY_JOB) is None
    assert d.scheduler.get_job(TAKEOVER_JOB) is None
    beat = store.heartbeat.read()
    assert beat is not None and beat.state == "idle"


@pytest.mark.parametrize(
    "reason",
    [
        "snapshot s-9 in its retro window",
        "shutting down during verification; the next start verifies",
    ],
)
def test_a_deferral_the_active_replica_leaves_is_resumed_here_too(
    daemon: tuple[Daemon, Runs], active: Store, reason: str
) -> None:
    # The active replica's resume is a job of its own process: scaled down to one replica
    # (or stopped mid-verification), the deferral in the store would wait for this one's
    # daily schedule. The survivor takes the resume up too; the lease keeps it one run.
    d, runs = daemon
    standing_by(d, active)
    resume_at = T0 + timedelta(days=2)
    active.runs.finish("run-a1", T0, outcome="deferred", exit_code=3, counts={}, reason=reason)
    active.deferrals.add("run-a1", reason, resume_at, T0)
    active.release_lease(HOLDER)
    with capture_logs() as logs:
        fire(d, STANDBY_JOB)
    (registered,) = named(logs, "daemon.resume_registered")
    assert registered["reason"] == reason
    job = d.scheduler.get_job(RESUME_JOB)
    assert job is not None and job.next_run_time == resume_at
    assert runs.requests == []


def test_when_the_active_replica_dies_mid_run_the_standby_takes_over_at_once(
    daemon: tuple[Daemon, Runs], active: Store
) -> None:
    d, runs = daemon
    active.acquire_lease(HOLDER, T0, 600)
    active.runs.start("run-a1", "schedule", T0, dry_run=False)
    fire(d, SCHEDULE_JOB)
    die(active)
    with capture_logs() as logs:
        fire(d, STANDBY_JOB)
    (takeover,) = named(logs, "daemon.takeover")
    assert takeover["log_level"] == "warning" and takeover["holder"] == HOLDER
    assert takeover["run_id"] == "run-a1"
    assert d.scheduler.get_job(STANDBY_JOB) is None
    job = d.scheduler.get_job(TAKEOVER_JOB)
    assert job is not None and job.next_run_time == T0
    fire(d, TAKEOVER_JOB)
    assert [r.trigger for r in runs.requests] == ["resume"]


def test_a_run_turned_away_by_the_lease_stays_deferred_and_stands_by(
    daemon: tuple[Daemon, Runs], active: Store
) -> None:
    d, runs = daemon
    # The other replica takes the lease between the daemon's look and the run's own.
    runs.before.append(lambda: active.acquire_lease(HOLDER, T0, 600))
    with capture_logs() as logs:
        result = d.execute("schedule")
    assert result is not None and result.outcome is Outcome.DEFERRED and result.exit_code == 3
    (standby,) = named(logs, "daemon.standby")
    assert standby["holder"] == HOLDER
    assert d.scheduler.get_job(STANDBY_JOB) is not None


def test_a_preview_holding_the_lease_does_not_swallow_the_fire(
    daemon: tuple[Daemon, Runs], active: Store
) -> None:
    d, runs = daemon
    # `hrsync sync --preview` takes the lease but syncs nothing.
    active.acquire_lease(HOLDER, T0, 600)
    active.runs.start("run-a1", "manual", T0, dry_run=True)
    fire(d, SCHEDULE_JOB)
    active.runs.finish("run-a1", T0, outcome="planned", exit_code=0, counts={}, reason=None)
    active.release_lease(HOLDER)
    with capture_logs() as logs:
        fire(d, STANDBY_JOB)
    (over,) = named(logs, "daemon.standby_over")
    assert over["runs_now"] is True and over["outcome"] == "planned"
    fire(d, TAKEOVER_JOB)
    assert [r.trigger for r in runs.requests] == ["schedule"]
