"""`hrsync run`: APScheduler wiring, deferral resumption, quarantine, heartbeat, signals.

The scheduler keeps its jobs in memory only. Everything that must survive a
restart (a pending deferral, the failure streak) lives in our state store and is
turned back into jobs at start: APScheduler's persistent job stores silently drop
jobs they cannot unpickle.

Jobs:
- `schedule`  the cron job from `sync.schedule` in `sync.timezone`;
- `resume`    a one-off run at the end of a deferral (replaced by each new deferral);
- `startup`   a one-off run at start with `--now`;
- `heartbeat` every `sync.heartbeat_s`, so `hrsync healthcheck` can tell we are alive;
- `standby`   while another process (a second replica) holds the lease: watches it
              every few seconds and takes over at once if that run dies unfinished.

Runs never overlap: a job that fires while another run is in progress is skipped
(that run already does the work), and logged as `daemon.run_skipped` (warning), whether
our lock or APScheduler's `max_instances` skipped it. `run_sync` is expected to record
its run in the store (start_run/finish_run) before returning: quarantine is computed
from there.
"""

from __future__ import annotations

import logging
import signal
import threading
import time
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from types import FrameType
from typing import TYPE_CHECKING, Any

from apscheduler.events import EVENT_JOB_MAX_INSTANCES, JobSubmissionEvent
from apscheduler.executors.base import BaseExecutor, run_job
from apscheduler.job import Job
from apscheduler.schedulers.background import BackgroundScheduler
from apscheduler.triggers.date import DateTrigger
from apscheduler.triggers.interval import IntervalTrigger
from sqlalchemy.exc import SQLAlchemyError

from hrsync.config import Settings
from hrsync.logs import get_logger
from hrsync.outcome import EXIT_OK, Outcome
from hrsync.render import hrsync_command
from hrsync.schedule import (
    FailedRun,
    Quarantine,
    cron_trigger,
    missed_fire,
    next_cron_fire,
    quarantine_from_streak,
)
from hrsync.store.lease import LeaseState
from hrsync.store.repo import RunRecord, Store
from hrsync.sync import SyncRequest, SyncResult, utcnow

if TYPE_CHECKING:
    from hrsync.monitor import Monitor

log = get_logger(__name__)

Clock = Callable[[], datetime]
RunSync = Callable[[SyncRequest], SyncResult]

SCHEDULE_JOB = "schedule"
RESUME_JOB = "resume"
STARTUP_JOB = "startup"
CATCH_UP_JOB = "catch-up"
HEARTBEAT_JOB = "heartbeat"
STANDBY_JOB = "standby"
TAKEOVER_JOB = "takeover"
# How often a standby looks at the lease. On PostgreSQL the lock is gone the moment its
# holder's session dies, so this is most of the takeover time.
STANDBY_POLL_S = 2.0
# After an unverified run DX may still be importing, or our request was lost: look again
# soon (the retry verifies the submission before planning anything new), backing off.
UNVERIFIED_RETRY_FIRST = timedelta(minutes=2)
UNVERIFIED_RETRY_MAX = timedelta(hours=1)


def unverified_retry_delay(streak: int) -> timedelta:
    """Delay before the retry after the `streak`-th unverified run in a row: 2, 4, 8 … min,
    at most an hour."""
    doubled = UNVERIFIED_RETRY_FIRST * (1 << min(max(streak - 1, 0), 10))
    return min(doubled, UNVERIFIED_RETRY_MAX)


# The trigger a job's run carries (see the job functions below).
_JOB_TRIGGERS = {
    SCHEDULE_JOB: "schedule",
    CATCH_UP_JOB: "schedule",
    RESUME_JOB: "resume",
    STARTUP_JOB: "startup",
    TAKEOVER_JOB: "resume",
}

# Triggers the quarantine holds back. `--now` at start is a person asking for a run.
QUARANTINED_TRIGGERS = frozenset({"schedule", "resume"})


def _quiet_logger(name: str) -> logging.Logger:
    # APScheduler narrates every job added, run and removed at INFO; with the heartbeat
    # every 30 s that buries the sync events. Our own daemon.* events say what happens;
    # APScheduler's warnings and errors still show.
    logger = logging.getLogger(name)
    logger.setLevel(logging.WARNING)
    return logger


class DaemonThreadExecutor(BaseExecutor):  # type: ignore[misc]
    """Runs each job in its own daemon thread.

    The stock thread pool's workers are joined at interpreter exit, so a sync stuck
    past the shutdown grace would keep the process alive. Daemon threads do not:
    when the grace expires the process exits, and the store's crash safety (the
    submission is recorded before it is sent) lets the next start pick up from there.
    """

    def start(self, scheduler: Any, alias: str) -> None:
        super().start(scheduler, alias)
        self._logger = _quiet_logger("hrsync.daemon.jobs")

    def _do_submit_job(self, job: Job, run_times: list[datetime]) -> None:
        def target() -> None:
            try:
                events = run_job(job, job._jobstore_alias, run_times, self._logger.name)
            except BaseException as exc:
                self._run_job_error(job.id, exc, exc.__traceback__)
            else:
                self._run_job_success(job.id, events)

        threading.Thread(target=target, name=f"hrsync-job-{job.id}", daemon=True).start()


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
    ) -> None:
        self.settings = settings
        # The monitor (metrics, webhook): told of each run with its duration and quarantine.
        self._on_finished = on_finished
        self._beat_ok_at: datetime | None = None
        self.sync = settings.sync
        self.store = store
        self.clock = clock
        self._run_sync = run_sync
        self.scheduler = BackgroundScheduler(
            timezone=UTC,
            logger=_quiet_logger("hrsync.daemon.scheduler"),
            executors={"default": DaemonThreadExecutor()},
            job_defaults={
                "coalesce": True,
                "max_instances": 1,
                # None: a late job still runs, however late. Lateness comes from a
                # suspended host or a frozen container; a sync skipped for that would
                # leave DX stale until the next day. Coalescing turns many missed
                # fires into one run.
                "misfire_grace_time": None,
            },
        )
        # APScheduler refuses a job's fire while its previous fire still runs
        # (max_instances) and says so only in its own words: say it in ours.
        self.scheduler.add_listener(self.on_max_instances, EVENT_JOB_MAX_INSTANCES)
        self.stopping = threading.Event()
        self._run_lock = threading.Lock()
        self._idle = threading.Event()
        self._idle.set()
        self._quarantine: Quarantine | None = None
        # The other process's run this daemon stands behind, while it does, and the
        # trigger of the fire it skipped for it.
        self._standby: LeaseState | None = None
        self._standby_trigger = "schedule"

    # ----------------------------------------------------------- lifecycle

    def start(self, *, now: bool = False, paused: bool = False) -> None:
        """Register every job and start the scheduler (`paused` for tests)."""
        started_at = self.clock()
        # Jobs are added while paused so none fires before all are in place.
        self.scheduler.start(paused=True)
        self.scheduler.add_job(
            self._scheduled,
            trigger=cron_trigger(self.sync.schedule, self.sync.timezone),
            id=SCHEDULE_JOB,
            name="scheduled sync",
            next_run_time=next_cron_fire(self.sync.schedule, self.sync.timezone, started_at),
            replace_existing=True,
        )
        self.scheduler.add_job(
            self._periodic_beat,
            trigger=IntervalTrigger(seconds=self.sync.heartbeat_s, timezone=UTC),
            id=HEARTBEAT_JOB,
            name="heartbeat",
            next_run_time=started_at + timedelta(seconds=self.sync.heartbeat_s),
            replace_existing=True,
        )
        pending = self.store.pending_deferral()
        if pending is not None:
            self.register_resume(pending.resume_at, reason=pending.reason, run_id=pending.run_id)
        last_runs = self.store.recent_runs(1, operational_only=True)
        missed = missed_fire(
            self.sync.schedule,
            self.sync.timezone,
            last_runs[0].started_at if last_runs else None,
            started_at,
        )
        if missed is not None and not now:
            # misfire_grace_time covers lateness while running; this covers a restart
            # across the scheduled time (a daily sync would otherwise wait a day).
            log.info("daemon.catch_up", missed=_iso(missed))
            self._one_off(self._scheduled, CATCH_UP_JOB, "missed scheduled sync", started_at)
        if now:
            self._one_off(self._startup, STARTUP_JOB, "sync at start (--now)", started_at)
        self._refresh_quarantine()
        self.beat()
        quarantine = self._quarantine
        log.info(
            "daemon.started",
            schedule=self.sync.schedule,
            timezone=self.sync.timezone,
            next_run_time=_iso(self.next_run_time()),
            run_at_start=now,
            resume_at=_iso(pending.resume_at) if pending else None,
            quarantined_since=_iso(quarantine.since) if quarantine else None,
            next_attempt_at=_iso(quarantine.next_attempt_at) if quarantine else None,
        )
        if not paused:
            self.scheduler.resume()

    def stop(self, grace_s: float | None = None) -> bool:
        """Start no new run, let the current one finish within the grace; True if it did."""
        grace = self.sync.shutdown_grace_s if grace_s is None else grace_s
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

    # ---------------------------------------------------------------- jobs

    def _scheduled(self) -> None:
        self.execute("schedule")

    def _resumed(self) -> None:
        self.execute("resume")

    def _startup(self) -> None:
        self.execute("startup")

    def execute(self, trigger: str) -> SyncResult | None:
        """One run for `trigger`, unless stopping, quarantined or already running."""
        if self.stopping.is_set():
            log.info("daemon.run_skipped", trigger=trigger, reason="stopping")
            return None
        # Read afresh: a run by hand (`hrsync sync`) may have ended the streak meanwhile.
        self._update_quarantine(None)
        quarantine = self._quarantine
        if (
            trigger in QUARANTINED_TRIGGERS
            and quarantine is not None
            and quarantine.skips(self.clock())
        ):
            log.info(
                "sync.quarantine_skip",
                trigger=trigger,
                failures=quarantine.failures,
                next_attempt_at=_iso(quarantine.next_attempt_at),
            )
            return None
        if self._stands_by(trigger):
            return None
        if not self._run_lock.acquire(blocking=False):
            # A job fires at its time, so "now" is the time it was scheduled for.
            log.warning(
                "daemon.run_skipped",
                trigger=trigger,
                reason="run_in_progress",
                scheduled_at=_iso(self.clock()),
            )
            return None
        try:
            # Checked again under the lock: a stop may have arrived in between.
            if self.stopping.is_set():
                log.info("daemon.run_skipped", trigger=trigger, reason="stopping")
                return None
            self._idle.clear()
            self._safe_beat("running")
            started = time.monotonic()
            try:
                result = self._run_sync(SyncRequest(trigger=trigger))
            except Exception as exc:
                # run_sync reports failures as outcomes; anything escaping is a bug,
                # and the daemon must outlive it to try again on schedule.
                log.error("daemon.run_crashed", trigger=trigger, error=str(exc), exc_info=True)
                self._update_quarantine(None)
                return None
            self._after_run(result)
            self._tell_monitor(result, time.monotonic() - started)
            if result.outcome is Outcome.DEFERRED:
                # Turned away by the lease between our look and the run's own: stand by.
                self._stands_by(trigger)
            return result
        finally:
            # Beat before marking idle: `stop` waits for idle and then writes "stopped",
            # which must be the last word.
            if not self.stopping.is_set():
                self._safe_beat(self._resting_state())
            self._idle.set()
            self._run_lock.release()

    def on_max_instances(self, event: JobSubmissionEvent) -> None:
        """A fire APScheduler skipped because the same job was still running."""
        fires = [_iso(t) for t in event.scheduled_run_times]
        if event.job_id == HEARTBEAT_JOB:
            log.info("daemon.heartbeat_skipped", scheduled_at=fires[-1] if fires else None)
            return
        if event.job_id == STANDBY_JOB:
            return  # a slow look at the lease; the next one comes in seconds
        log.warning(
            "daemon.run_skipped",
            trigger=_JOB_TRIGGERS.get(event.job_id, event.job_id),
            reason="run_in_progress",
            scheduled_at=fires[-1] if fires else None,
            skipped_fires=fires,
        )

    def _after_run(self, result: SyncResult) -> None:
        # The run itself recorded its deferral (or resolved the older ones): the daemon
        # only schedules the resume.
        if result.outcome is Outcome.DEFERRED and result.resume_at is not None:
            self.register_resume(result.resume_at, reason=result.reason, run_id=result.run_id)
        if result.outcome is Outcome.UNVERIFIED:
            self._retry_unverified(result)
        if result.outcome is Outcome.REFUSED:
            # Every run is refused the same way until the export or the guard changes.
            approve = hrsync_command(self.settings.config_path, "sync", "--allow-archive", "N")
            log.warning(
                "sync.refused_pending",
                run_id=result.run_id,
                reason=result.reason,
                action=(
                    "nothing is sent until a person acts: fix the export, or approve once "
                    f"with the command the refusal printed (`{approve}` or `--allow-shrink`)"
                ),
            )
        self._update_quarantine(result)

    def _tell_monitor(self, result: SyncResult, duration_s: float) -> None:
        if self._on_finished is None:
            return
        try:
            self._on_finished(result, duration_s, self._quarantine is not None)
        except Exception as exc:  # metrics or a webhook never take the daemon down
            log.warning("daemon.monitor_failed", error=str(exc), exc_info=True)

    def _update_quarantine(self, result: SyncResult | None) -> None:
        """Re-read the failure streak; log entering (on a failed run) and leaving quarantine."""
        previous = self._quarantine
        try:
            self._refresh_quarantine()
        except SQLAlchemyError as exc:
            log.warning("daemon.store_unavailable", error=str(exc))
            return
        current = self._quarantine
        if current is not None and result is not None and result.outcome is Outcome.FAILED:
            log.error(
                "sync.quarantined",
                run_id=result.run_id,
                failures=current.failures,
                threshold=self.sync.quarantine_after,
                since=_iso(current.since),
                next_attempt_at=_iso(current.next_attempt_at),
                reasons=list(current.reasons),
            )
        elif current is None and previous is not None:
            log.info(
                "sync.quarantine_cleared",
                run_id=result.run_id if result else None,
                outcome=str(result.outcome) if result else None,
                failures=previous.failures,
                quarantined_since=_iso(previous.since),
            )

    def _retry_unverified(self, result: SyncResult) -> None:
        try:
            streak = 0
            for run in self.store.recent_runs(20, operational_only=True):
                if run.outcome == Outcome.UNVERIFIED.value:
                    streak += 1
                elif run.outcome is not None:
                    break
        except SQLAlchemyError as exc:
            log.warning("daemon.store_unavailable", error=str(exc))
            streak = 1
        retry_at = self.clock() + unverified_retry_delay(max(streak, 1))
        scheduled = self.next_run_time()
        if scheduled is not None and scheduled <= retry_at:
            return  # the schedule fires first: that run verifies it
        log.warning(
            "daemon.retry_scheduled",
            run_id=result.run_id,
            retry_at=_iso(retry_at),
            unverified_in_a_row=streak,
            reason=result.reason,
        )
        self.register_resume(retry_at, reason="retry after an unverified run", run_id=result.run_id)

    def register_resume(
        self, resume_at: datetime, *, reason: str | None = None, run_id: str | None = None
    ) -> Job:
        """(Re)place the one-off resume job at `resume_at`, or now if that has passed."""
        run_at = max(resume_at, self.clock())
        job = self._one_off(self._resumed, RESUME_JOB, "sync at the end of a deferral", run_at)
        log.info(
            "daemon.resume_registered",
            resume_at=_iso(resume_at),
            run_at=_iso(run_at),
            reason=reason,
            deferred_run_id=run_id,
        )
        return job

    def _one_off(self, func: Callable[[], object], job_id: str, name: str, at: datetime) -> Job:
        """A job that runs once at `at`, replacing any earlier one of the same id."""
        return self.scheduler.add_job(
            func,
            trigger=DateTrigger(run_date=at, timezone=UTC),
            id=job_id,
            name=name,
            next_run_time=at,
            replace_existing=True,
        )

    # ------------------------------------------------------------- standby

    def _stands_by(self, trigger: str) -> bool:
        """True, logged, when another process holds the lease: this fire is its work."""
        try:
            lease = self.store.current_lease(self.clock())
        except SQLAlchemyError as exc:
            log.warning("daemon.store_unavailable", error=str(exc))
            return False  # the run's own lease decides
        if lease is None or lease.acquired:
            return False
        self._standby, self._standby_trigger = lease, trigger
        log.info(
            "daemon.standby",
            trigger=trigger,
            holder=lease.holder,
            holder_host=lease.host,
            holder_pid=lease.pid,
            holder_since=_iso(lease.acquired_at),
            detail="another process is syncing; this one takes over if that run dies unfinished",
        )
        if self._job(STANDBY_JOB) is None and not self.stopping.is_set():
            self.scheduler.add_job(
                self._watch_standby,
                trigger=IntervalTrigger(seconds=STANDBY_POLL_S, timezone=UTC),
                id=STANDBY_JOB,
                name="watch the active replica's lease",
                next_run_time=self.clock() + timedelta(seconds=STANDBY_POLL_S),
                replace_existing=True,
            )
        self._safe_beat()
        return True

    def _watch_standby(self) -> None:
        """While standing by: once the lease is free, take over if its run never ended."""
        awaited = self._standby
        if awaited is None or self.stopping.is_set():
            self._end_standby()
            return
        try:
            lease = self.store.current_lease(self.clock())
            if lease is not None and not lease.acquired:
                self._standby = lease  # perhaps the holder's next run: stand behind that
                return
            run = self._awaited_run(awaited)
        except SQLAlchemyError as exc:
            log.warning("daemon.store_unavailable", error=str(exc))
            return
        self._end_standby()
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
                trigger = self._standby_trigger
                self._one_off(
                    lambda: self.execute(trigger),
                    TAKEOVER_JOB,
                    "the fire a preview held",
                    self.clock(),
                )
            return
        log.warning(
            "daemon.takeover",
            holder=awaited.holder,
            holder_host=awaited.host,
            holder_pid=awaited.pid,
            holder_since=_iso(awaited.acquired_at),
            run_id=run.id if run else None,
            detail="the lease is free but that run never finished (its process or database "
            "session died): this process syncs now",
        )
        self._one_off(self._takeover, TAKEOVER_JOB, "sync after the holder died", self.clock())

    def _takeover(self) -> None:
        self.execute("resume")

    def _awaited_run(self, lease: LeaseState) -> RunRecord | None:
        # A holder is named host:pid:run_id (hrsync.sync); a name of another shape finds
        # no run, and an unknown run is taken over: one needless run beats a missed one.
        run_id = lease.holder.rpartition(":")[2]
        return next((r for r in self.store.recent_runs(50) if r.id == run_id), None)

    def _end_standby(self) -> None:
        self._standby = None
        if self._job(STANDBY_JOB) is not None:
            self.scheduler.remove_job(STANDBY_JOB)
        if not self.stopping.is_set():
            self._safe_beat()

    # ----------------------------------------------------------- heartbeat

    def beat(self, state: str | None = None) -> None:
        """Write the heartbeat: what the daemon is doing and when it runs next."""
        quarantine = self._quarantine
        if state is None:
            state = "running" if not self._idle.is_set() else self._resting_state()
        resume = self._job(RESUME_JOB)
        self.store.beat(
            self.clock(),
            state=state,
            quarantined_since=quarantine.since if quarantine else None,
            consecutive_failures=quarantine.failures if quarantine else 0,
            detail={
                "next_run_time": _iso(self.next_run_time()),
                "resume_at": _iso(resume.next_run_time) if resume else None,
                "next_attempt_at": _iso(quarantine.next_attempt_at) if quarantine else None,
                "schedule": self.sync.schedule,
                "timezone": self.sync.timezone,
            },
        )
        self._beat_ok_at = self.clock()

    def _periodic_beat(self) -> None:
        # Once stopping, `stop` writes the last beats itself; a late periodic one must
        # not overwrite "stopped".
        if not self.stopping.is_set():
            self._safe_beat()

    def _resting_state(self) -> str:
        if self._quarantine is not None:
            return "quarantined"
        return "standby" if self._standby is not None else "idle"

    def _safe_beat(self, state: str | None = None) -> None:
        # A locked or unreachable store must not take the daemon down; a missed beat
        # shows up in the healthcheck instead.
        try:
            self.beat(state)
        except Exception as exc:
            log.warning("daemon.heartbeat_failed", error=str(exc))

    # ------------------------------------------------------------- helpers

    def next_run_time(self) -> datetime | None:
        job = self._job(SCHEDULE_JOB)
        return job.next_run_time if job is not None else None

    def _job(self, job_id: str) -> Job | None:
        if not self.scheduler.running:
            return None
        job: Job | None = self.scheduler.get_job(job_id)
        return job

    def _refresh_quarantine(self) -> None:
        streak = [
            FailedRun(at=run.finished_at or run.started_at, reason=run.reason)
            for run in self.store.consecutive_failures()
        ]
        self._quarantine = quarantine_from_streak(streak, self.sync.quarantine_after)

    @property
    def quarantine(self) -> Quarantine | None:
        return self._quarantine

    # What the monitor's /healthz and /readyz ask (hrsync.monitor.DaemonView).

    def scheduler_alive(self) -> bool:
        return self.scheduler.running and not self.stopping.is_set()

    def last_beat_at(self) -> datetime | None:
        return self._beat_ok_at

    def quarantined(self) -> bool:
        return self._quarantine is not None


def run(
    settings: Settings,
    *,
    now: bool,
    store: Store,
    run_sync: RunSync,
    clock: Clock = utcnow,
    stop_event: threading.Event | None = None,
    monitor: Monitor | None = None,
) -> int:
    """`hrsync run`: schedule syncs until SIGTERM/SIGINT (or `stop_event`); returns 0.

    Signal handlers are installed only when called from the main thread; otherwise
    (tests, embedding) set `stop_event` to stop. Pass the same event to the engine
    so a run in progress can stop at the end of its current step.
    """
    stop = stop_event if stop_event is not None else threading.Event()
    restore = _install_signal_handlers(stop)
    daemon = Daemon(
        settings,
        store=store,
        run_sync=run_sync,
        clock=clock,
        on_finished=(
            (lambda r, s, q: monitor.run_finished(r, s, quarantined=q)) if monitor else None
        ),
    )
    try:
        daemon.start(now=now)
        if monitor is not None:
            monitor.start(daemon)
        # Short waits keep the main thread responsive to signals on every platform.
        while not stop.wait(1.0):
            pass
    finally:
        daemon.stop()
        if monitor is not None:
            monitor.stop()
        restore()
    return EXIT_OK


def _install_signal_handlers(stop: threading.Event) -> Callable[[], None]:
    if threading.current_thread() is not threading.main_thread():
        return lambda: None

    def handler(signum: int, _frame: FrameType | None) -> None:
        if not stop.is_set():
            log.info("daemon.signal", signal=signal.Signals(signum).name)
        stop.set()

    previous: dict[int, Any] = {}
    for sig in (signal.SIGTERM, signal.SIGINT):
        previous[sig] = signal.signal(sig, handler)

    def restore() -> None:
        for sig, old in previous.items():
            signal.signal(sig, old)

    return restore


def _iso(value: datetime | None) -> str | None:
    return value.astimezone(UTC).isoformat() if value is not None else None
