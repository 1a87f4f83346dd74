"""The next snapshot in the store, `status`, the metrics and the one readiness notice: a
real SQLite store and a real local webhook receiver (no mocks of our modules)."""

from __future__ import annotations

from datetime import UTC, date, datetime, timedelta
from typing import Any

import pytest

from hrsync.commands.status import gather, render
from hrsync.core.gate.snapshot_ahead import NextSnapshot
from hrsync.core.settings import NotifySettings, Settings, SyncSettings
from hrsync.core.teams.identity import KnownIdentity
from hrsync.monitor.reporting import Monitor
from hrsync.outcome import Outcome
from hrsync.store.repo import Store
from hrsync.sync.results import SyncResult
from tests.monitor.exposition import sample
from tests.monitor.test_monitoring import receiver

NOW = datetime(2026, 11, 22, 6, 0, tzinfo=UTC)
SNAP = NextSnapshot("snap-dec", date(2026, 12, 4))  # starts 12-04 00:00Z: in 11 days
H = timedelta(hours=1)


def record(store: Store, run_id: str, outcome: Outcome, at: datetime, **extra: Any) -> None:
    counts = extra.pop("counts", {})
    store.runs.start(run_id, "schedule", at, dry_run=False)
    store.runs.finish(
        run_id,
        at,
        outcome=outcome.value,
        exit_code=outcome.exit_code,
        counts=counts,
        reason=extra.pop("reason", None),
        **extra,
    )


def test_the_store_keeps_the_next_snapshot_and_forgets_it_when_none_is_ahead(
    store: Store,
) -> None:
    assert store.snapshot_outlook.next_snapshot() is None  # never read
    store.snapshot_outlook.save_next_snapshot(SNAP, NOW, "r1")
    seen = store.snapshot_outlook.next_snapshot()
    assert seen is not None and seen.snapshot == SNAP and seen.run_id == "r1"
    store.snapshot_outlook.save_next_snapshot(None, NOW + H, "r2")
    seen = store.snapshot_outlook.next_snapshot()
    assert seen is not None and seen.snapshot is None and seen.read_at == NOW + H


def test_the_last_run_outlook_carries_the_end_of_its_deferral(store: Store) -> None:
    ends = datetime(2026, 12, 28, 9, tzinfo=UTC)
    record(
        store,
        "d1",
        Outcome.DEFERRED,
        NOW,
        counts={"create": 10, "archive": 4, "unchanged": 3},
        reason="in its window",
        defer_kind="snapshot_window",
    )
    store.deferrals.add("d1", "in its window", ends, NOW)
    last = store.snapshot_outlook.last_run_outlook()
    assert last is not None and last.outcome == "deferred" and last.resume_at == ends


def test_status_says_what_the_next_snapshot_means(store: Store) -> None:
    settings = Settings(sync=SyncSettings(schedule="0 6 * * *"))
    store.snapshot_outlook.save_next_snapshot(SNAP, NOW, "r1")
    record(store, "r1", Outcome.IN_SYNC, NOW)
    doc = gather(settings, store, NOW)
    assert doc["next_snapshot"]["ready"] is True
    assert doc["next_snapshot"]["scheduled_for"] == "2026-12-04"
    assert (
        "Snapshot:    next snapshot 2026-12-04 (in 11 days): DX matches HR as of the last run"
        in render(doc)
    )
    record(
        store,
        "r2",
        Outcome.REFUSED,
        NOW + H,
        counts={"archive": 6, "held": 4},
        reason="would archive 6 teams, limit 5 (sync.max_archive)",
        action="hrsync sync --allow-archive 6",
    )
    doc = gather(settings, store, NOW + H)
    snapshot = doc["next_snapshot"]
    assert snapshot["ready"] is False
    assert snapshot["blockers"] == ["6 teams to archive await approval", "4 people held"]
    text = render(doc)
    assert (
        "next snapshot 2026-12-04 (in 11 days): DX is behind HR: "
        "6 teams to archive await approval, 4 people held" in text
    )
    assert "  resolve:   hrsync sync --allow-archive 6" in text


def test_status_shows_what_waits_for_the_window_to_close(store: Store) -> None:
    settings = Settings(sync=SyncSettings(schedule="0 6 * * *"))
    ends = datetime(2026, 12, 28, 9, tzinfo=UTC)
    record(
        store,
        "d1",
        Outcome.DEFERRED,
        NOW,
        counts={"create": 10, "archive": 4, "unchanged": 3},
        reason="snapshot s1 is in its window",
        defer_kind="snapshot_window",
    )
    store.deferrals.add("d1", "snapshot s1 is in its window", ends, NOW)
    store.snapshot_outlook.save_next_snapshot(None, NOW, "d1")
    doc = gather(settings, store, NOW)
    assert doc["deferral"]["waiting"] == "14 changes wait for the window to close on 2026-12-28"
    assert doc["next_snapshot"] is None
    text = render(doc)
    assert "Waiting:     14 changes wait for the window to close on 2026-12-28" in text
    # A live snapshot (a deferral says so) is not the next one: "none scheduled" alone read
    # as though no snapshot were going on.
    assert "Snapshot:    no next snapshot scheduled" in text


def test_gauges_say_when_the_next_snapshot_starts_and_whether_dx_is_ready(store: Store) -> None:
    monitor = Monitor(Settings(), store, lambda: NOW)
    monitor.refresh(quarantined=False)
    text = monitor.metrics.exposition().decode()
    assert sample(text, "hrsync_next_snapshot_timestamp_seconds") == 0
    assert sample(text, "hrsync_snapshot_ready") == 0  # no run yet
    store.snapshot_outlook.save_next_snapshot(SNAP, NOW, "r1")
    record(store, "r1", Outcome.APPLIED, NOW)
    monitor.run_finished(SyncResult("r1", Outcome.APPLIED), 1.0, quarantined=False)
    text = monitor.metrics.exposition().decode()
    assert sample(text, "hrsync_next_snapshot_timestamp_seconds") == SNAP.starts_at.timestamp()
    assert sample(text, "hrsync_snapshot_ready") == 1
    record(store, "r2", Outcome.IN_SYNC, NOW + H, counts={"held": 1})
    monitor.run_finished(SyncResult("r2", Outcome.IN_SYNC), 1.0, quarantined=False)
    assert sample(monitor.metrics.exposition().decode(), "hrsync_snapshot_ready") == 0
    # a restarted daemon reads both back from the store
    again = Monitor(Settings(), store, lambda: NOW)
    again.refresh(quarantined=False)
    text = again.metrics.exposition().decode()
    assert sample(text, "hrsync_next_snapshot_timestamp_seconds") == SNAP.starts_at.timestamp()
    assert sample(text, "hrsync_snapshot_ready") == 0


def test_not_ready_close_to_a_snapshot_is_told_once_and_ready_once_more(
    store: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    close = SNAP.starts_at - 40 * H  # within the 48 hours
    clock = [SNAP.starts_at - 60 * H]
    with receiver() as (url, got):
        monkeypatch.setenv("HOOK", url)
        monitor = Monitor(
            Settings(
                notify=NotifySettings(
                    webhook_url_env="HOOK", on=("snapshot_not_ready", "snapshot_ready")
                )
            ),
            store,
            lambda: clock[0],
        )
        store.snapshot_outlook.save_next_snapshot(SNAP, clock[0], "r1")

        def refused(run_id: str) -> None:
            record(
                store,
                run_id,
                Outcome.REFUSED,
                clock[0],
                counts={"archive": 6},
                reason="would archive 6 teams",
                action="hrsync sync --allow-archive 6",
            )
            monitor.run_finished(SyncResult(run_id, Outcome.REFUSED), 1.0, quarantined=False)

        refused("r1")  # 60 h away: the daemon's own sync before the snapshot comes first
        assert got == []
        clock[0] = close
        refused("r2")
        refused("r3")  # the same news: not told again
        assert [n["event"] for n in got] == ["snapshot_not_ready"]
        body = got[0]
        assert body["snapshot_id"] == "snap-dec" and body["scheduled_for"] == "2026-12-04"
        assert body["blockers"] == ["6 teams to archive await approval"]
        assert body["action"] == "hrsync sync --allow-archive 6"
        assert "To resolve it: hrsync sync --allow-archive 6" in body["text"]
        clock[0] = close + H
        record(store, "r4", Outcome.APPLIED, clock[0], counts={"archive": 6})
        monitor.run_finished(SyncResult("r4", Outcome.APPLIED), 1.0, quarantined=False)
        record(store, "r5", Outcome.IN_SYNC, clock[0] + H)
        monitor.run_finished(SyncResult("r5", Outcome.IN_SYNC), 1.0, quarantined=False)
        assert [n["event"] for n in got] == ["snapshot_not_ready", "snapshot_ready"]
        assert got[1]["ready"] is True


def test_readiness_left_out_of_notify_on_is_not_told(
    store: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    with receiver() as (url, got):
        monkeypatch.setenv("HOOK", url)
        monitor = Monitor(
            Settings(notify=NotifySettings(webhook_url_env="HOOK", on=("refused",))),
            store,
            lambda: SNAP.starts_at - 10 * H,
        )
        store.snapshot_outlook.save_next_snapshot(SNAP, NOW, "r1")
        record(store, "r1", Outcome.IN_SYNC, NOW, counts={"held": 2})
        monitor.run_finished(SyncResult("r1", Outcome.IN_SYNC), 1.0, quarantined=False)
        assert got == []


def test_the_notice_names_teams_dx_leaves_out_even_when_dx_is_ready(
    store: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    close = SNAP.starts_at - 10 * H
    with receiver() as (url, got):
        monkeypatch.setenv("HOOK", url)
        monitor = Monitor(
            Settings(notify=NotifySettings(webhook_url_env="HOOK", on=("snapshot_ready",))),
            store,
            lambda: close,
        )
        store.snapshot_outlook.save_next_snapshot(SNAP, close, "r1")
        store.identities.save(
            [
                KnownIdentity(
                    "E112",
                    "ref-android",
                    "Mobile Android",
                    None,
                    "kwame@x",
                    ("oliver@x", "zainab@x"),
                ),
                KnownIdentity(
                    "E020", "ref-infra", "Infrastructure", None, "jonas@x", ("a@x", "b@x", "c@x")
                ),
            ],
            close,
        )
        for run_id in ("r1", "r2"):
            record(store, run_id, Outcome.IN_SYNC, close)
            monitor.run_finished(SyncResult(run_id, Outcome.IN_SYNC), 1.0, quarantined=False)
        # Told once, before the snapshot: not weeks later, from an empty dashboard.
        assert [n["event"] for n in got] == ["snapshot_ready"]
        body = got[0]
        assert [t["name"] for t in body["under_floor"]["teams"]] == ["Mobile Android"]
        assert '"Mobile Android": 2 (oliver@x, zainab@x)' in body["text"]
        assert "DX leaves it out of the snapshot's results" in body["text"]
        assert "mapping.min_team_size" in body["text"]
