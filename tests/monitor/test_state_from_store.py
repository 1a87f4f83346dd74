"""The state gauges and `recovered` follow the state store, not this process's runs: a run
by hand or the other replica's shows at the next heartbeat (`Monitor.beat`), and its
end of an attention state is told once, by one replica. A real store (SQLite, and
PostgreSQL where two replicas race) and a real local webhook receiver."""

from __future__ import annotations

import threading
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from sqlalchemy import text
from structlog.testing import capture_logs

from hrsync.core.report.notify import Sent
from hrsync.core.settings import NotifySettings, Settings
from hrsync.monitor.gauges import read_state
from hrsync.monitor.metrics import STATE_GAUGES, Metrics
from hrsync.monitor.reporting import Monitor
from hrsync.outcome import Outcome
from hrsync.store.repo import Store
from hrsync.sync.results import SyncResult
from tests.monitor.exposition import sample
from tests.monitor.test_monitoring import receiver

NOW = datetime(2026, 11, 22, 6, 0, tzinfo=UTC)
MIN = timedelta(minutes=1)
REFUSED = 'hrsync_attention_required{reason="refused"}'
LAST_SUCCESS = "hrsync_last_success_timestamp_seconds"


def record(
    store: Store, run_id: str, outcome: Outcome, at: datetime, trigger: str = "schedule"
) -> None:
    store.runs.start(run_id, trigger, at, dry_run=False)
    store.runs.finish(
        run_id,
        at,
        outcome=outcome.value,
        exit_code=outcome.exit_code,
        counts={"archive": 1} if outcome is Outcome.REFUSED else {},
        reason="would archive 1 team" if outcome is Outcome.REFUSED else None,
        action="hrsync sync --allow-archive 1" if outcome is Outcome.REFUSED else None,
    )


def monitor_on(store: Store, clock: list[datetime], **notify: Any) -> Monitor:
    return Monitor(
        Settings(notify=NotifySettings(webhook_url_env="HOOK", **notify)), store, lambda: clock[0]
    )


def daemon_refuses(monitor: Monitor, store: Store, run_id: str, at: datetime) -> None:
    """The daemon's own run, refused: recorded by the run, then told by the monitor."""
    record(store, run_id, Outcome.REFUSED, at)
    monitor.run_finished(
        SyncResult(run_id, Outcome.REFUSED, reason="would archive 1 team"), 1.0, quarantined=False
    )


def gauges(monitor: Monitor) -> str:
    return monitor.metrics.exposition().decode()


def hrsync_lines(monitor: Monitor) -> list[str]:
    """hrsync's own samples (not the process's CPU time, which moves on its own)."""
    return [line for line in gauges(monitor).splitlines() if line.startswith("hrsync_")]


def test_a_fix_by_hand_shows_at_the_next_beat_and_is_told_recovered_once(
    store: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    clock = [NOW]
    with receiver() as (url, got):
        monkeypatch.setenv("HOOK", url)
        monitor = monitor_on(store, clock)
        daemon_refuses(monitor, store, "r1", NOW)
        assert sample(gauges(monitor), REFUSED) == 1
        assert [n["event"] for n in got] == ["refused"]
        # A person runs the approving command by hand, in another process.
        clock[0] = NOW + 10 * MIN
        record(store, "manual-1", Outcome.APPLIED, clock[0], trigger="manual")
        clock[0] += MIN
        monitor.beat(quarantined=False)
        text = gauges(monitor)
        assert sample(text, REFUSED) == 0
        assert sample(text, LAST_SUCCESS) == (NOW + 10 * MIN).timestamp()
        assert sample(text, 'hrsync_runs_total{outcome="applied"}') == 0  # not this process's
        assert [(n["event"], n["run_id"]) for n in got] == [
            ("refused", "r1"),
            ("recovered", "manual-1"),
        ]
        for _ in range(3):  # once
            clock[0] += MIN
            monitor.beat(quarantined=False)
        # The daemon's own next run, in sync: nothing more to tell either.
        record(store, "r2", Outcome.IN_SYNC, clock[0])
        monitor.run_finished(SyncResult("r2", Outcome.IN_SYNC), 1.0, quarantined=False)
        monitor.beat(quarantined=False)
        assert [n["event"] for n in got] == ["refused", "recovered"]


def test_a_refusal_by_hand_shows_in_the_gauges_but_does_not_page(
    store: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The person who ran it saw the refusal; the daemon's own next run tells it."""
    clock = [NOW]
    with receiver() as (url, got):
        monkeypatch.setenv("HOOK", url)
        monitor = monitor_on(store, clock)
        record(store, "a1", Outcome.APPLIED, NOW)
        monitor.run_finished(SyncResult("a1", Outcome.APPLIED), 1.0, quarantined=False)
        clock[0] += 10 * MIN
        record(store, "manual-1", Outcome.REFUSED, clock[0], trigger="manual")
        monitor.beat(quarantined=False)
        assert sample(gauges(monitor), REFUSED) == 1
        assert got == []
        daemon_refuses(monitor, store, "r2", clock[0] + MIN)
        assert [n["event"] for n in got] == ["refused"]


def test_no_recovered_while_quarantined_nor_for_a_success_older_than_the_news(
    store: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    clock = [NOW]
    with receiver() as (url, got):
        monkeypatch.setenv("HOOK", url)
        monitor = monitor_on(store, clock)
        record(store, "a1", Outcome.APPLIED, NOW)
        for i in range(3):
            record(store, f"f{i}", Outcome.FAILED, NOW + (i + 1) * MIN)
        monitor.run_finished(SyncResult("f2", Outcome.FAILED), 1.0, quarantined=True)
        assert [n["event"] for n in got] == ["quarantined"]
        # a1 is the newest decisive run, but older than the failures told about.
        monitor.beat(quarantined=True)
        monitor.beat(quarantined=False)
        assert [n["event"] for n in got] == ["quarantined"]
        assert sample(gauges(monitor), 'hrsync_attention_required{reason="quarantined"}') == 0


def test_a_recovered_the_webhook_did_not_take_is_told_after_the_next_run(
    store: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Not at every beat (a webhook that is down would be asked every 30 s): once from
    the beat, then, as for any notice, after the daemon's next run."""
    clock = [NOW]
    with receiver() as (url, got):
        monkeypatch.setenv("HOOK", url)
        monitor = monitor_on(store, clock)
        daemon_refuses(monitor, store, "r1", NOW)
    with receiver(status=500) as (url, refused_posts):
        monkeypatch.setenv("HOOK", url)
        monitor = monitor_on(store, clock)
        clock[0] += 10 * MIN
        record(store, "manual-1", Outcome.APPLIED, clock[0], trigger="manual")
        for _ in range(3):
            monitor.beat(quarantined=False)
        assert [n["event"] for n in refused_posts] == ["recovered"]
        told = store.notifications.state()
        assert told is not None and (told.state, told.run_id) == ("refused", "r1")
    with receiver() as (url, got):
        monkeypatch.setenv("HOOK", url)
        monitor = monitor_on(store, clock)
        monitor.beat(quarantined=False)  # a restarted daemon tries once more
        assert [n["event"] for n in got] == ["recovered"]


def test_left_out_of_notify_on_a_fix_by_hand_is_remembered_quietly(
    store: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    clock = [NOW]
    with receiver() as (url, got):
        monkeypatch.setenv("HOOK", url)
        monitor = monitor_on(store, clock, on=("refused",))
        daemon_refuses(monitor, store, "r1", NOW)
        clock[0] += 10 * MIN
        record(store, "manual-1", Outcome.APPLIED, clock[0], trigger="manual")
        monitor.beat(quarantined=False)
        assert [n["event"] for n in got] == ["refused"]
        told = store.notifications.state()
        assert told is not None and (told.state, told.run_id) == ("ok", "manual-1")
        # so the same refusal again is news
        daemon_refuses(monitor, store, "r2", clock[0] + MIN)
        assert [n["event"] for n in got] == ["refused", "refused"]


def test_a_store_that_cannot_be_read_keeps_the_gauges_and_is_said_once(
    store: Store,
) -> None:
    monitor = Monitor(Settings(), store, lambda: NOW)
    record(store, "r1", Outcome.REFUSED, NOW)
    monitor.beat(quarantined=False)
    before = hrsync_lines(monitor)
    assert sample(gauges(monitor), REFUSED) == 1

    def runs_table(name: str, to: str) -> None:
        with store.engine.begin() as c:
            c.execute(text(f"ALTER TABLE {name} RENAME TO {to}"))

    runs_table("runs", "runs_away")
    try:
        with capture_logs() as logs:
            for _ in range(3):
                monitor.beat(quarantined=False)
                assert monitor.refresh(quarantined=False) is None
    finally:
        runs_table("runs_away", "runs")
    assert hrsync_lines(monitor) == before
    (said,) = [e for e in logs if e["event"] == "daemon.store_unavailable"]
    assert said["log_level"] == "warning" and "last values" in said["detail"]
    # Readable again: read at the next beat; a later outage is said again.
    record(store, "a1", Outcome.APPLIED, NOW + MIN)
    monitor.beat(quarantined=False)
    assert sample(gauges(monitor), REFUSED) == 0
    runs_table("runs", "runs_away")
    try:
        with capture_logs() as logs:
            monitor.beat(quarantined=False)
    finally:
        runs_table("runs_away", "runs")
    assert [e["event"] for e in logs] == ["daemon.store_unavailable"]


def test_every_gauge_is_either_read_from_the_store_or_the_processs_own(store: Store) -> None:
    """A new gauge must be one or the other: a state gauge fed from a run would be stale on
    the other replica (and after a run by hand) again."""
    own = {"hrsync_build_info"}
    gauges_ = {
        m.name
        for m in Metrics().registry.collect()
        if m.type == "gauge" and m.name.startswith("hrsync_")
    }
    assert gauges_ == set(STATE_GAUGES) | own
    record(store, "r1", Outcome.REFUSED, NOW)
    m = Metrics()
    m.show(read_state(store), quarantined=False)
    text = m.exposition().decode()
    for name in STATE_GAUGES:
        assert any(line.startswith(name) for line in text.splitlines()), name


# ------------------------------------------------------------ two replicas


def test_of_two_replicas_seeing_a_fix_by_hand_at_once_one_tells_it(
    database_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    stores = [Store.open(database_url) for _ in range(2)]
    try:
        clock = [NOW]
        with receiver() as (url, got):
            monkeypatch.setenv("HOOK", url)
            active, standby = (monitor_on(s, clock) for s in stores)
            daemon_refuses(active, stores[0], "r1", NOW)
            clock[0] += 10 * MIN
            record(stores[0], "manual-1", Outcome.APPLIED, clock[0], trigger="manual")
            start = threading.Barrier(2)

            def beat(monitor: Monitor) -> None:
                start.wait(5)
                monitor.beat(quarantined=False)

            threads = [threading.Thread(target=beat, args=(m,)) for m in (active, standby)]
            for t in threads:
                t.start()
            for t in threads:
                t.join(10)
            assert [n["event"] for n in got] == ["refused", "recovered"]
            # Both serve the same state gauges.
            for name in (REFUSED, LAST_SUCCESS, 'hrsync_people{state="synced"}'):
                assert sample(gauges(active), name) == sample(gauges(standby), name), name
    finally:
        for s in stores:
            s.close()


def test_a_claim_on_the_notify_state_is_won_once(database_url: str) -> None:
    """The compare-and-set the `recovered` notice rests on: of many claims from the same
    state at the same moment, exactly one wins, on SQLite and on PostgreSQL."""
    stores = [Store.open(database_url) for _ in range(4)]
    try:
        told = Sent("refused", "d1", NOW, "r1")
        stores[0].notifications.save_state(told)
        start = threading.Barrier(len(stores))
        won: list[str] = []

        def claim(i: int) -> None:
            start.wait(5)
            if stores[i].notifications.claim_state(told, Sent("ok", "d2", NOW + MIN, f"m{i}")):
                won.append(f"m{i}")

        threads = [threading.Thread(target=claim, args=(i,)) for i in range(len(stores))]
        for t in threads:
            t.start()
        for t in threads:
            t.join(30)
        assert len(won) == 1
        now = stores[0].notifications.state()
        assert now is not None and now.run_id == won[0]
        # A claim from a state that is gone wins nothing, and changes nothing.
        assert not stores[1].notifications.claim_state(told, Sent("ok", "d3", NOW, "x"))
        assert stores[1].notifications.state() == now
    finally:
        for s in stores:
            s.close()
