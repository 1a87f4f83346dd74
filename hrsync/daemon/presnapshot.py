"""The checks before each snapshot: from `sync.pre_snapshot_hours` before the next
snapshot's day starts (UTC), a sync at least every few hours after the last run,
whoever made it, and a last one a few hours before the day starts, whatever the cron
schedule says (the times: core.snapshot_ahead). Each is an ordinary sync: it plans, and
sends only when something is pending, so a check with nothing pending sends nothing.

DX attributes a snapshot's results to the teams it has when the snapshot starts, so the
last chance to bring DX up to date matters more than any daily run. The job is one-off
and in memory like the others: it is placed again at start and after every run, from
the next snapshot the last run saw (the store) and the newest run (the store: a run by
hand or another replica's counts as much as this process's own); and at every heartbeat,
so that a snapshot or a run only a shell's `hrsync sync` saw is acted on without waiting
for this daemon's next run.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime, timedelta

from sqlalchemy.exc import SQLAlchemyError

from hrsync.clock import Clock
from hrsync.core.gate.guards import TURNED_AWAY
from hrsync.core.gate.snapshot_ahead import pre_snapshot_sync_at
from hrsync.core.settings import SyncSettings
from hrsync.daemon.scheduler import PRE_SNAPSHOT_JOB, Jobs, iso
from hrsync.logs import get_logger
from hrsync.store.repo import Store

log = get_logger(__name__)

TRIGGER = "pre_snapshot"
# A time already passed is caught up at once, but never sooner than this after the last
# fire of this job: a run that leaves no record (a crash the store could not take) would
# otherwise be caught up again and again, without pause.
CATCH_UP_GAP = timedelta(minutes=15)
# Runs read back to find the newest that decided something: runs another's lease turned
# away (and a run still going) come between them only a few at a time.
_RUNS_READ = 20


class PreSnapshot:
    def __init__(
        self,
        sync: SyncSettings,
        *,
        store: Store,
        clock: Clock,
        jobs: Jobs,
        execute: Callable[[str], object],
    ) -> None:
        self.sync = sync
        self.store = store
        self.clock = clock
        self.jobs = jobs
        self._execute = execute
        self._fired_at: datetime | None = None

    def refresh(self, *, say_unavailable: bool = True) -> datetime | None:
        """(Re)place the one-off pre-snapshot job, or remove it when none is due; the time
        it runs at, or None. `say_unavailable`: log a store that cannot be read (the
        heartbeat's own failure already says it at every beat)."""
        try:
            at, snapshot_id, day = self._next_time()
        except SQLAlchemyError as exc:
            # The job stays as it was: a store that is down now may be up by then.
            if say_unavailable:
                log.warning("daemon.store_unavailable", error=str(exc))
            job = self.jobs.get(PRE_SNAPSHOT_JOB)
            return job.next_run_time if job is not None else None
        if at is not None and self._fired_at is not None:
            at = max(at, self._fired_at + CATCH_UP_GAP) if at <= self.clock() else at
        job = self.jobs.get(PRE_SNAPSHOT_JOB)
        if at is None:
            if job is not None:
                self.jobs.remove(PRE_SNAPSHOT_JOB)
            return None
        if job is None or job.next_run_time != at:
            self.jobs.one_off(self._fire, PRE_SNAPSHOT_JOB, "check before the next snapshot", at)
            log.info(
                "daemon.pre_snapshot_scheduled",
                snapshot_id=snapshot_id,
                scheduled_for=day,
                run_at=iso(at),
            )
        return at

    def _next_time(self) -> tuple[datetime | None, str | None, str | None]:
        seen = self.store.snapshot_outlook.next_snapshot()
        snapshot = seen.snapshot if seen is not None else None
        if snapshot is None:
            return None, None, None
        newest = next(
            (
                r
                for r in self.store.runs.recent(_RUNS_READ, operational_only=True)
                # A run the lease turned away decides nothing: the run holding it does.
                if r.outcome is not None and r.defer_kind != TURNED_AWAY
            ),
            None,
        )
        at = pre_snapshot_sync_at(
            snapshot,
            self.clock(),
            hours=self.sync.pre_snapshot_hours,
            last_run_at=newest.started_at if newest is not None else None,
        )
        return at, snapshot.snapshot_id, snapshot.day.isoformat()

    def _fire(self) -> None:
        self._fired_at = self.clock()
        self._execute(TRIGGER)
