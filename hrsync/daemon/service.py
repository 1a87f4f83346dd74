"""The Daemon: owns the scheduler's jobs and decides, at each fire, whether a run happens.

The parts it wires together each keep one concern: `scheduler` (APScheduler, job ids,
skipped fires), `quarantine` (the failure streak), `standby` (another process's lease),
`followups` (resume, retry after unverified, refused) and `heartbeat`.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from datetime import datetime, timedelta

from apscheduler.events import JobSubmissionEvent
from apscheduler.job import Job
from apscheduler.schedulers.background import BackgroundScheduler
from sqlalchemy.exc import SQLAlchemyError

from hrsync.clock import Clock, utcnow
from hrsync.config.loading import Settings
from hrsync.core import defaults
from hrsync.core.run_bounds import overdue_after_s
from hrsync.daemon.approval_watch import APPROVAL_CHECK_S, APPROVAL_TRIGGER, ApprovalWatch
from hrsync.daemon.cron import Quarantine, cron_trigger, missed_fire, next_cron_fire
from hrsync.daemon.followups import Followups
from hrsync.daemon.heartbeat import Heartbeat
from hrsync.daemon.housekeeping import PRUNE_EVERY_S, PRUNE_FIRST_AFTER_S, Housekeeping
from hrsync.daemon.presnapshot import PreSnapshot
from hrsync.daemon.quarantine import QuarantineWatch
from hrsync.daemon.scheduler import (
    APPROVAL_JOB,
    CATCH_UP_JOB,
    HEARTBEAT_JOB,
    PRUNE_JOB,
    RESUME_JOB,
    SCHEDULE_JOB,
    STARTUP_JOB,
    Jobs,
    iso,
)
from hrsync.daemon.standby import Standby
from hrsync.logs import get_logger, new_run_id, scrub
from hrsync.outcome import Outcome
from hrsync.store.repo import Store
from hrsync.sync.results import SyncRequest, SyncResult

log = get_logger(__name__)

RunSync = Callable[[SyncRequest], SyncResult]


class Daemon:
    """The scheduler and the decisions around each run. `start`, then `stop`."""

    def __init__(
        self,
        settings: Settings,
        *,
        store: Store,
        run_sync: RunSync,
        clock: Clock = utcnow,
        on_finished: Callable[[SyncResult, float, bool], None] | None = None,
        on_beat: Callable[[bool], None] | None = None,
        shutdown_grace_s: float = defaults.SHUTDOWN_GRACE_S,
    ) -> None:
        # How long a SIGTERM waits for the current step: hrsync's, not the user's (the
        # orchestrator's own grace period must be longer).
        self.shutdown_grace_s = shutdown_grace_s
        self.settings = settings
        # The monitor (metrics, webhook): told of each run with its duration and quarantine,
        # and of each periodic heartbeat with the quarantine.
        self._on_finished = on_finished
        self._on_beat = on_beat
        self.sync = settings.sync
        self.store = store
        self.clock = clock
        self._run_sync = run_sync
        self.jobs = Jobs()
        self.scheduler: BackgroundScheduler = self.jobs.scheduler
        self.stopping = threading.Event()
        self._run_lock = threading.Lock()
        self._idle = threading.Event()
        self._idle.set()
        # The run in progress: when it started and its trigger (the heartbeat, /readyz).
        self._run: tuple[datetime, str] | None = None
        self._overdue_told = False
        self._quarantine = QuarantineWatch(store, self.sync)
        self._heartbeat = Heartbeat(store, clock, self.sync)
        self._standby = Standby(
            store=store,
            clock=clock,
            jobs=self.jobs,
            stopping=self.stopping,
            beat=self._safe_beat,
            execute=self.execute,
            resume=lambda d: self.register_resume(d.resume_at, reason=d.reason, run_id=d.run_id),
        )
        self._followups = Followups(
            settings, store=store, clock=clock, jobs=self.jobs, execute=self.execute
        )
        self._pre_snapshot = PreSnapshot(
            self.sync, store=store, clock=clock, jobs=self.jobs, execute=self.execute
        )
        self.approvals = ApprovalWatch(store, clock, self.execute)
        self.housekeeping = Housekeeping(store, clock, settings.state.keep_days)

    # ----------------------------------------------------------- lifecycle

    def start(self, *, now: bool = False, paused: bool = False) -> None:
        """Register every job and start the scheduler (`paused` for tests)."""
        started_at = self.clock()
        # Jobs are added while paused so none fires before all are in place.
        self.scheduler.start(paused=True)
        self.jobs.add(
            self._scheduled,
            SCHEDULE_JOB,
            "scheduled sync",
            cron_trigger(self.sync.schedule, self.sync.timezone),
            next_cron_fire(self.sync.schedule, self.sync.timezone, started_at),
        )
        self.jobs.every(
            self._periodic_beat,
            HEARTBEAT_JOB,
            "heartbeat",
            self.sync.heartbeat_s,
            started_at + timedelta(seconds=self.sync.heartbeat_s),
        )
        self.jobs.every(
            self.approvals.check,
            APPROVAL_JOB,
            "look for new approvals",
            APPROVAL_CHECK_S,
            started_at + timedelta(seconds=APPROVAL_CHECK_S),
        )
        if self.housekeeping.keep_days:  # 0: keep all history
            self.jobs.every(
                self.housekeeping.prune,
                PRUNE_JOB,
                "prune old history",
                PRUNE_EVERY_S,
                started_at + timedelta(seconds=PRUNE_FIRST_AFTER_S),
            )
        pending = self.store.deferrals.pending()
        resume_at = pending.resume_at if pending is not None else None
        if pending is not None:
            self.register_resume(pending.resume_at, reason=pending.reason, run_id=pending.run_id)
        elif (unfinished := self.store.submissions.unfinished()) is not None:
            resume_at = self._followups.resume_unfinished(unfinished, started_at)
        last_runs = self.store.runs.recent(1, operational_only=True)
        missed = missed_fire(
            self.sync.schedule,
            self.sync.timezone,
            last_runs[0].started_at if last_runs else None,
            started_at,
        )
        if missed is not None and not now:
            # misfire_grace_time covers lateness while running; this covers a restart
            # across the scheduled time (a daily sync would otherwise wait a day).
            log.info("daemon.catch_up", missed=iso(missed))
            self.jobs.one_off(self._scheduled, CATCH_UP_JOB, "missed scheduled sync", started_at)
        if now:
            self.jobs.one_off(self._startup, STARTUP_JOB, "sync at start (--now)", started_at)
        self._pre_snapshot.refresh()
        self._quarantine.refresh()
        self.beat()
        quarantine = self._quarantine.current
        log.info(
            "daemon.started",
            schedule=self.sync.schedule,
            timezone=self.sync.timezone,
            next_run_time=iso(self.next_run_time()),
            run_at_start=now,
            resume_at=iso(resume_at),
            quarantined_since=iso(quarantine.since) if quarantine else None,
            next_attempt_at=iso(quarantine.next_attempt_at) if quarantine else None,
        )
        if not paused:
            self.scheduler.resume()

    def stop(self, grace_s: float | None = None) -> bool:
        """Start no new run, let the current one finish within the grace; True if it did."""
        grace = self.shutdown_grace_s if grace_s is None else grace_s
        self.stopping.set()
        running = not self._idle.is_set()
        log.info("daemon.stopping", run_in_progress=running, grace_s=grace)
        self._safe_beat("stopping")
        if self.scheduler.running:
            # wait=False: the main thread does its own bounded wait below.
            self.scheduler.shutdown(wait=False)
        finished = self._idle.wait(grace)
        if not finished:
            # The run is abandoned mid-step; its thread dies with the process. The
            # store recorded any submission before sending it, so the next start
            # verifies it instead of sending it again.
            log.warning("daemon.grace_expired", grace_s=grace)
        self._safe_beat("stopped")
        log.info("daemon.stopped", run_finished=finished)
        return finished

    # ---------------------------------------------------------------- runs

    def _scheduled(self) -> None:
        self.execute("schedule")

    def _startup(self) -> None:
        self.execute("startup")

    def execute(self, trigger: str) -> SyncResult | None:
        """One run for `trigger`, unless stopping, quarantined or already running: its
        result (a crash's is the failed run recorded for it), or None when no run was made."""
        if self.stopping.is_set():
            log.info("daemon.run_skipped", trigger=trigger, reason="stopping")
            return None
        # Read afresh: a run by hand (`hrsync sync`) may have ended the streak meanwhile.
        self._quarantine.update(None)
        if self._quarantine.holds_back(trigger, self.clock()):
            return None
        if self._standby.stands_by(trigger):
            return None
        if not self._run_lock.acquire(blocking=False):
            # A job fires at its time, so "now" is the time it was scheduled for. The
            # minute's look for approvals meets a long run often: no cause for a warning.
            level = "info" if trigger == APPROVAL_TRIGGER else "warning"
            getattr(log, level)(
                "daemon.run_skipped",
                trigger=trigger,
                reason="run_in_progress",
                scheduled_at=iso(self.clock()),
            )
            return None
        try:
            # Checked again under the lock: a stop may have arrived in between.
            if self.stopping.is_set():
                log.info("daemon.run_skipped", trigger=trigger, reason="stopping")
                return None
            self._idle.clear()
            self._run = (self.clock(), trigger)
            self._overdue_told = False
            self._safe_beat("running")
            started = time.monotonic()
            try:
                result = self._run_sync(SyncRequest(trigger=trigger))
            except Exception as exc:
                # run_sync reports failures as outcomes; anything escaping is a bug,
                # and the daemon must outlive it to try again on schedule.
                log.error("daemon.run_crashed", trigger=trigger, error=str(exc), exc_info=True)
                crashed = self._record_crash(trigger, exc)
                self._pre_snapshot.refresh()
                self._quarantine.update(crashed)
                self._tell_monitor(crashed, time.monotonic() - started)
                return crashed
            self._followups.after_run(result)
            # The run may have seen another next snapshot, or be the one that made it ready.
            self._pre_snapshot.refresh()
            self._quarantine.update(result)
            self._tell_monitor(result, time.monotonic() - started)
            if result.outcome is Outcome.DEFERRED:
                # Turned away by the lease between our look and the run's own: stand by.
                self._standby.stands_by(trigger)
            return result
        finally:
            self._run = None
            # Beat before marking idle: `stop` waits for idle and then writes "stopped",
            # which must be the last word.
            if not self.stopping.is_set():
                self._safe_beat(self._resting_state())
            self._idle.set()
            self._run_lock.release()

    def _record_crash(self, trigger: str, exc: Exception) -> SyncResult:
        """A crash as a failed run of its own: in the store (the quarantine's streak and
        `hrsync status` see it) and for the monitor (metrics, the webhook). A daemon whose
        every run crashes must not look idle. A store that cannot take it is logged; the
        monitor is told all the same (a failing store may be what crashed the run)."""
        reason = scrub(f"hrsync crashed: {type(exc).__name__}: {exc}")[:500]
        result = SyncResult(run_id=new_run_id(), outcome=Outcome.FAILED, reason=reason)
        now = self.clock()
        try:
            self.store.runs.start(result.run_id, trigger, now, dry_run=False)
            self.store.runs.finish(
                result.run_id,
                now,
                outcome=result.outcome.value,
                exit_code=result.exit_code,
                counts={},
                reason=reason,
            )
        except SQLAlchemyError as failure:
            log.warning("daemon.store_unavailable", error=str(failure))
        return result

    def on_max_instances(self, event: JobSubmissionEvent) -> None:
        """A fire APScheduler skipped because the same job was still running."""
        self.jobs.on_max_instances(event)

    def register_resume(
        self, resume_at: datetime, *, reason: str | None = None, run_id: str | None = None
    ) -> Job:
        """(Re)place the one-off resume job at `resume_at`, or now if that has passed."""
        return self._followups.register_resume(resume_at, reason=reason, run_id=run_id)

    def _tell_monitor(self, result: SyncResult, duration_s: float) -> None:
        if self._on_finished is None:
            return
        try:
            self._on_finished(result, duration_s, self.quarantined())
        except Exception as exc:  # metrics or a webhook never take the daemon down
            log.warning("daemon.monitor_failed", error=str(exc), exc_info=True)

    # ----------------------------------------------------------- heartbeat

    def beat(self, state: str | None = None) -> None:
        """Write the heartbeat: what the daemon is doing and when it runs next."""
        # One read of the run: "running" exactly when the beat names the run (a beat
        # between the run's end and the daemon marking itself idle said "running" with
        # no run in it).
        run = self._run
        if state is None:
            state = "running" if run is not None else self._resting_state()
        resume = self.jobs.get(RESUME_JOB)
        self._heartbeat.write(
            state,
            quarantine=self._quarantine.current,
            next_run_time=self.next_run_time(),
            resume_at=resume.next_run_time if resume else None,
            run=run,
        )

    def _periodic_beat(self) -> None:
        # Once stopping, `stop` writes the last beats itself; a late periodic one must
        # not overwrite "stopped".
        if self.stopping.is_set():
            return
        if self._idle.is_set():
            # A run by hand or the other replica's may have ended the failure streak (or
            # lengthened it); a run of this process reads it itself when it ends. The
            # beat's own failure is the one said at every beat.
            self._quarantine.update(None, say_unavailable=False)
            # Likewise a snapshot (or a run) only a run by hand saw: checked for before it
            # whatever the cron says, not only after this process's next run.
            self._pre_snapshot.refresh(say_unavailable=False)
        self._safe_beat()
        self._tell_overdue()
        if self._on_beat is not None:
            try:
                self._on_beat(self.quarantined())
            except Exception as exc:  # metrics or a webhook never take the daemon down
                log.warning("daemon.monitor_failed", error=str(exc), exc_info=True)

    def _tell_overdue(self) -> None:
        """Warn once when the run in progress has outlasted every bound of a run."""
        run = self._run
        if run is None or self._overdue_told:
            return
        running_s = (self.clock() - run[0]).total_seconds()
        limit = overdue_after_s(self.settings)
        if running_s > limit:
            self._overdue_told = True
            log.warning(
                "daemon.run_overdue",
                trigger=run[1],
                run_started_at=iso(run[0]),
                running_s=running_s,
                limit_s=limit,
            )

    def _resting_state(self) -> str:
        if self._quarantine.current is not None:
            return "quarantined"
        return "standby" if self._standby.active else "idle"

    def _safe_beat(self, state: str | None = None) -> None:
        # A locked or unreachable store must not take the daemon down; a missed beat
        # shows up in the healthcheck instead.
        try:
            self.beat(state)
        except Exception as exc:
            log.warning("daemon.heartbeat_failed", error=str(exc))

    # ------------------------------------------------------------- views

    def next_run_time(self) -> datetime | None:
        return self.jobs.next_run_time()

    @property
    def quarantine(self) -> Quarantine | None:
        return self._quarantine.current

    # What the monitor's /healthz and /readyz ask (hrsync.monitor.reporting.DaemonView).

    def scheduler_alive(self) -> bool:
        return self.scheduler.running and not self.stopping.is_set()

    def last_beat_at(self) -> datetime | None:
        return self._heartbeat.ok_at

    def heartbeat_failure(self) -> tuple[datetime, str] | None:
        return self._heartbeat.failure

    def running_since(self) -> datetime | None:
        run = self._run
        return run[0] if run is not None else None

    def quarantined(self) -> bool:
        return self._quarantine.current is not None
