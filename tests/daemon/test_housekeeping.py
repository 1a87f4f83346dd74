"""The daemon prunes history older than `state.keep_days` once a day (issue 27, finding
5), on SQLite and PostgreSQL, with the time frozen; `keep_days = 0` keeps everything."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime, timedelta

import pytest
from apscheduler.triggers.interval import IntervalTrigger
from freezegun import freeze_time
from sqlalchemy import text
from structlog.testing import capture_logs

from hrsync.core.settings import Settings, StateSettings
from hrsync.daemon.scheduler import PRUNE_JOB
from hrsync.daemon.service import Daemon
from hrsync.store.repo import Store
from hrsync.sync.results import SyncRequest, SyncResult

NOW = datetime(2030, 6, 1, 12, 0, tzinfo=UTC)
DAY = timedelta(days=1)


def never(request: SyncRequest) -> SyncResult:
    raise AssertionError("no sync runs in these tests")


@pytest.fixture
def store(database_url: str) -> Iterator[Store]:
    s = Store.open(database_url)
    yield s
    s.close()


def history(store: Store) -> None:
    """Applied runs 400, 300 and 10 days ago (the newest applied stays in any case)."""
    for run_id, age in (("r400", 400 * DAY), ("r300", 300 * DAY), ("r10", 10 * DAY)):
        store.runs.start(run_id, "schedule", NOW - age, dry_run=False)
        store.runs.finish(run_id, NOW - age, outcome="applied", exit_code=0, counts={}, reason=None)


def start(store: Store, keep_days: int) -> Daemon:
    settings = Settings(state=StateSettings(database_url="unused", keep_days=keep_days))
    daemon = Daemon(settings, store=store, run_sync=never)
    daemon.start(paused=True)
    return daemon


def test_the_daemon_prunes_once_a_day_what_is_older_than_keep_days(store: Store) -> None:
    history(store)
    with freeze_time(NOW):
        daemon = start(store, keep_days=180)
        try:
            job = daemon.scheduler.get_job(PRUNE_JOB)
            assert job is not None
            assert isinstance(job.trigger, IntervalTrigger)
            assert job.trigger.interval == timedelta(days=1)
            # Not at the start itself: a start's own work (a catch-up run) comes first.
            assert NOW < job.next_run_time <= NOW + timedelta(hours=1)
            with capture_logs() as logs:
                job.func()
        finally:
            daemon.scheduler.shutdown(wait=False)
    assert [r.id for r in store.runs.recent()] == ["r10"]
    (pruned,) = [e for e in logs if e["event"] == "db.pruned"]
    assert pruned["keep_days"] == 180
    assert pruned["before"] == (NOW - 180 * DAY).isoformat()
    assert pruned["deleted"]["runs"] == 2


def test_a_later_day_prunes_what_has_aged_since(store: Store) -> None:
    history(store)
    with freeze_time(NOW) as frozen:
        daemon = start(store, keep_days=365)
        try:
            job = daemon.scheduler.get_job(PRUNE_JOB)
            assert job is not None
            job.func()
            assert [r.id for r in store.runs.recent()] == ["r10", "r300"]
            frozen.tick(70 * DAY)
            job.func()
            assert [r.id for r in store.runs.recent()] == ["r10"]
        finally:
            daemon.scheduler.shutdown(wait=False)


def test_keep_days_0_keeps_everything(store: Store) -> None:
    history(store)
    with freeze_time(NOW):
        daemon = start(store, keep_days=0)
        try:
            assert daemon.scheduler.get_job(PRUNE_JOB) is None
        finally:
            daemon.scheduler.shutdown(wait=False)
    assert len(store.runs.recent()) == 3


def test_a_store_that_fails_the_prune_is_a_warning_not_the_daemons_end(store: Store) -> None:
    history(store)
    with freeze_time(NOW):
        daemon = start(store, keep_days=180)
        try:
            job = daemon.scheduler.get_job(PRUNE_JOB)
            assert job is not None
            with store.engine.begin() as c:  # a store the prune cannot finish on
                c.execute(text("DROP TABLE refused_plans"))
            with capture_logs() as logs:
                job.func()
        finally:
            daemon.scheduler.shutdown(wait=False)
    (failed,) = [e for e in logs if e["event"] == "db.prune_failed"]
    assert failed["log_level"] == "warning" and "refused_plans" in failed["error"]
    assert len(store.runs.recent()) == 3  # one transaction: nothing half-pruned
