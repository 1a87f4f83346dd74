"""Standing by while another process (a second replica) holds the lease, and taking over.

A fire that finds the lease held is that process's work: this daemon watches the lease
every few seconds and, once it is free, runs at once if the holder's run never finished
(its process or database session died), or if that run was only a preview.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from datetime import timedelta

from sqlalchemy.exc import SQLAlchemyError

from hrsync.clock import Clock
from hrsync.daemon.scheduler import STANDBY_JOB, TAKEOVER_JOB, Jobs, iso
from hrsync.logs import get_logger
from hrsync.store.deferrals import DeferralRecord
from hrsync.store.lease import LeaseState
from hrsync.store.repo import RunRecord, Store

log = get_logger(__name__)

# How often a standby looks at the lease. On PostgreSQL the lock is gone the moment its
# holder's session dies, so this is most of the takeover time.
STANDBY_POLL_S = 2.0


class Standby:
    """The other process's run this daemon stands behind, while it does."""

    def __init__(
        self,
        *,
        store: Store,
        clock: Clock,
        jobs: Jobs,
        stopping: threading.Event,
        beat: Callable[[], None],
        execute: Callable[[str], object],
        resume: Callable[[DeferralRecord], object],
    ) -> None:
        self.store = store
        self.clock = clock
        self.jobs = jobs
        self.stopping = stopping
        # Called when standing by starts or ends, so the heartbeat says so.
        self._beat = beat
        self._execute = execute
        self._resume = resume
        self.awaited: LeaseState | None = None
        # The trigger of the fire skipped for the awaited run.
        self.trigger = "schedule"

    @property
    def active(self) -> bool:
        return self.awaited is not None

    def stands_by(self, trigger: str) -> bool:
        """True, logged, when another process holds the lease: this fire is its work."""
        try:
            lease = self.store.current_lease(self.clock())
        except SQLAlchemyError as exc:
            log.warning("daemon.store_unavailable", error=str(exc))
            return False  # the run's own lease decides
        if lease is None or lease.acquired:
            return False
        self.awaited, self.trigger = lease, trigger
        log.info(
            "daemon.standby",
            trigger=trigger,
            holder=lease.holder,
            holder_host=lease.host,
            holder_pid=lease.pid,
            holder_since=iso(lease.acquired_at),
            detail="another process is syncing; this one takes over if that run dies unfinished",
        )
        if self.jobs.get(STANDBY_JOB) is None and not self.stopping.is_set():
            self.jobs.every(
                self.watch,
                STANDBY_JOB,
                "watch the active replica's lease",
                STANDBY_POLL_S,
                self.clock() + timedelta(seconds=STANDBY_POLL_S),
            )
        self._beat()
        return True

    def watch(self) -> None:
        """While standing by: once the lease is free, take over if its run never ended."""
        awaited = self.awaited
        if awaited is None or self.stopping.is_set():
            self._end()
            return
        try:
            lease = self.store.current_lease(self.clock())
            if lease is not None and not lease.acquired:
                self.awaited = lease  # perhaps the holder's next run: stand behind that
                return
            run = self._awaited_run(awaited)
        except SQLAlchemyError as exc:
            log.warning("daemon.store_unavailable", error=str(exc))
            return
        self._end()
        if run is not None and run.finished_at is not None:
            # A preview holds the lease too, but syncs nothing: the skipped fire is owed.
            owed = run.dry_run
            log.info(
                "daemon.standby_over",
                holder=awaited.holder,
                run_id=run.id,
                outcome=run.outcome,
                runs_now=owed,
            )
            if owed:
                trigger = self.trigger
                self.jobs.one_off(
                    lambda: self._execute(trigger),
                    TAKEOVER_JOB,
                    "the fire a preview held",
                    self.clock(),
                )
            elif run.outcome == "deferred":
                # Its resume is a job of the other process: if that process goes (scaled
                # down to one replica, stopped mid-verification), this one resumes it.
                self._adopt_deferral()
            return
        log.warning(
            "daemon.takeover",
            holder=awaited.holder,
            holder_host=awaited.host,
            holder_pid=awaited.pid,
            holder_since=iso(awaited.acquired_at),
            run_id=run.id if run else None,
            detail="the lease is free but that run never finished (its process or database "
            "session died): this process syncs now",
        )
        self.jobs.one_off(self._takeover, TAKEOVER_JOB, "sync after the holder died", self.clock())

    def _adopt_deferral(self) -> None:
        try:
            pending = self.store.deferrals.pending()
        except SQLAlchemyError as exc:
            log.warning("daemon.store_unavailable", error=str(exc))
            return
        if pending is not None:
            self._resume(pending)

    def _takeover(self) -> None:
        self._execute("resume")

    def _awaited_run(self, lease: LeaseState) -> RunRecord | None:
        # A holder is named host:pid:run_id (hrsync.sync); a name of another shape finds
        # no run, and an unknown run is taken over: one needless run beats a missed one.
        run_id = lease.holder.rpartition(":")[2]
        return next((r for r in self.store.runs.recent(50) if r.id == run_id), None)

    def _end(self) -> None:
        self.awaited = None
        self.jobs.remove(STANDBY_JOB)
        if not self.stopping.is_set():
            self._beat()
