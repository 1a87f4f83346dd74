"""What the daemon says while a run is in progress, and when the store cannot be written
(issue 27): the heartbeat and /readyz name the run and how long it has taken; a run far
past every bound a run has makes /readyz not ready; so does a heartbeat the state store
would not take (a full disk). Paused scheduler and explicit clock, as in test_service.py;
the monitor's probes are asked directly."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from datetime import timedelta

import pytest
from sqlalchemy import text
from structlog.testing import capture_logs

from hrsync.core.run_bounds import overdue_after_s
from hrsync.daemon.scheduler import HEARTBEAT_JOB
from hrsync.daemon.service import Daemon
from hrsync.monitor.reporting import Monitor
from hrsync.outcome import Outcome
from hrsync.store.repo import Store
from hrsync.sync.results import SyncRequest, SyncResult
from tests.daemon.test_service import T0, Clock, events, fire, settings_with


class HeldRun:
    """A run that holds until released."""

    def __init__(self) -> None:
        self.started = threading.Event()
        self.release = threading.Event()

    def __call__(self, request: SyncRequest) -> SyncResult:
        self.started.set()
        self.release.wait(10)
        return SyncResult("run-held", Outcome.IN_SYNC)


@pytest.fixture
def running(store: Store, clock: Clock) -> Iterator[tuple[Daemon, Monitor, HeldRun]]:
    """A daemon with a run in progress since T0, and its monitor."""
    settings = settings_with()
    held = HeldRun()
    daemon = Daemon(settings, store=store, run_sync=held, clock=clock)
    daemon.start(paused=True)
    monitor = Monitor(settings, store, clock)
    monitor.start(daemon)
    worker = threading.Thread(target=daemon.execute, args=("schedule",))
    worker.start()
    assert held.started.wait(3)
    try:
        yield daemon, monitor, held
    finally:
        held.release.set()
        worker.join(3)
        daemon.stop(grace_s=1)


def test_the_heartbeat_and_readyz_say_a_sync_is_in_progress_and_for_how_long(
    running: tuple[Daemon, Monitor, HeldRun], store: Store, clock: Clock
) -> None:
    daemon, monitor, held = running
    clock.advance(timedelta(seconds=42))
    fire(daemon, HEARTBEAT_JOB)
    beat = store.heartbeat.read()
    assert beat is not None and beat.state == "running"
    assert beat.detail["run_started_at"] == T0.isoformat()
    assert beat.detail["run_trigger"] == "schedule"
    # A run is normal: ready, and saying so.
    assert monitor.ready() == (True, "ready: sync in progress for 42 s")
    held.release.set()
    deadline = threading.Event()
    while daemon.running_since() is not None and not deadline.wait(0.01):
        pass
    fire(daemon, HEARTBEAT_JOB)
    beat = store.heartbeat.read()
    assert beat is not None and beat.state == "idle"
    assert "run_started_at" not in beat.detail
    assert monitor.ready() == (True, "ready")


def test_a_run_far_past_every_bound_makes_readyz_not_ready_and_is_told_once(
    running: tuple[Daemon, Monitor, HeldRun], clock: Clock
) -> None:
    daemon, monitor, _ = running
    limit = overdue_after_s(daemon.settings)
    clock.advance(timedelta(seconds=limit - 1))
    with capture_logs() as logs:
        fire(daemon, HEARTBEAT_JOB)
    assert monitor.ready()[0] is True
    assert not events(logs, "daemon.run_overdue")
    clock.advance(timedelta(seconds=2))
    with capture_logs() as logs:
        fire(daemon, HEARTBEAT_JOB)
        fire(daemon, HEARTBEAT_JOB)
    ready, why = monitor.ready()
    assert ready is False
    assert why.startswith(f"not ready: a sync has been in progress for {limit + 1:.0f} s")
    assert "source.deadline_s + sync.verify_timeout_s" in why
    (overdue,) = events(logs, "daemon.run_overdue")
    assert overdue["log_level"] == "warning" and overdue["trigger"] == "schedule"
    assert overdue["running_s"] == pytest.approx(limit + 1)
    assert overdue["limit_s"] == limit


def test_overdue_means_longer_than_the_read_the_verification_and_an_hour() -> None:
    settings = settings_with()
    assert overdue_after_s(settings) == 300 + 600 + 3600


def refuse_heartbeats(store: Store) -> None:
    """The store takes no heartbeat any more, as on a full disk (reads still work)."""
    with store.engine.begin() as c:
        for when in ("INSERT", "UPDATE"):
            c.execute(
                text(
                    f"CREATE TRIGGER full_{when.lower()} BEFORE {when} ON heartbeats "
                    "BEGIN SELECT RAISE(ABORT, 'database or disk is full'); END"
                )
            )


def test_a_heartbeat_the_store_will_not_take_makes_readyz_not_ready(
    store: Store, clock: Clock
) -> None:
    settings = settings_with()
    daemon = Daemon(
        settings, store=store, run_sync=lambda r: SyncResult("x", Outcome.IN_SYNC), clock=clock
    )
    daemon.start(paused=True)
    monitor = Monitor(settings, store, clock)
    monitor.start(daemon)
    try:
        assert monitor.ready() == (True, "ready")
        refuse_heartbeats(store)
        clock.advance(timedelta(seconds=30))
        with capture_logs() as logs:
            fire(daemon, HEARTBEAT_JOB)
        assert events(logs, "daemon.heartbeat_failed")
        ready, why = monitor.ready()
        assert ready is False
        assert why.startswith("not ready: the state store cannot be written")
        assert "database or disk is full" in why and T0.isoformat() not in why
        with store.engine.begin() as c:
            c.execute(text("DROP TRIGGER full_insert"))
            c.execute(text("DROP TRIGGER full_update"))
        fire(daemon, HEARTBEAT_JOB)
        assert monitor.ready() == (True, "ready")
    finally:
        daemon.stop(grace_s=1)


def test_status_says_since_when_a_sync_is_running(
    running: tuple[Daemon, Monitor, HeldRun], store: Store, clock: Clock
) -> None:
    from hrsync.commands.status import gather, render

    daemon, _, _ = running
    clock.advance(timedelta(seconds=90))
    fire(daemon, HEARTBEAT_JOB)
    doc = gather(daemon.settings, store, clock.now)
    assert doc["heartbeat"]["run"] == {
        "started_at": T0.isoformat(),
        "running_s": 90.0,
        "trigger": "schedule",
    }
    assert "Daemon:      running (a schedule sync for 90 s, since " in render(doc)
