"""The daemon's APScheduler: job ids, the executor, one-off and periodic jobs, skipped fires.

Jobs live in memory only (see hrsync.daemon): this module knows how jobs are added,
found and removed, not what they do.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

from apscheduler.events import EVENT_JOB_MAX_INSTANCES, JobSubmissionEvent
from apscheduler.executors.base import BaseExecutor, run_job
from apscheduler.job import Job
from apscheduler.schedulers.background import BackgroundScheduler
from apscheduler.triggers.date import DateTrigger
from apscheduler.triggers.interval import IntervalTrigger

from hrsync.logs import get_logger

log = get_logger(__name__)

SCHEDULE_JOB = "schedule"
RESUME_JOB = "resume"
STARTUP_JOB = "startup"
CATCH_UP_JOB = "catch-up"
HEARTBEAT_JOB = "heartbeat"
STANDBY_JOB = "standby"
TAKEOVER_JOB = "takeover"
PRE_SNAPSHOT_JOB = "pre-snapshot"
APPROVAL_JOB = "approvals"
PRUNE_JOB = "prune"

# The trigger a job's run carries (see the Daemon's job functions).
JOB_TRIGGERS = {
    SCHEDULE_JOB: "schedule",
    CATCH_UP_JOB: "schedule",
    RESUME_JOB: "resume",
    STARTUP_JOB: "startup",
    TAKEOVER_JOB: "resume",
    PRE_SNAPSHOT_JOB: "pre_snapshot",
    APPROVAL_JOB: "approval",
}


def iso(value: datetime | None) -> str | None:
    return value.astimezone(UTC).isoformat() if value is not None else None


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


class Jobs:
    """The BackgroundScheduler and the few ways the daemon uses it."""

    def __init__(self) -> None:
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

    def add(
        self, func: Callable[[], object], job_id: str, name: str, trigger: Any, first: datetime
    ) -> Job:
        """Add (or replace) the job `job_id`, first firing at `first`."""
        return self.scheduler.add_job(
            func,
            trigger=trigger,
            id=job_id,
            name=name,
            next_run_time=first,
            replace_existing=True,
        )

    def one_off(self, func: Callable[[], object], job_id: str, name: str, at: datetime) -> Job:
        """A job that runs once at `at`, replacing any earlier one of the same id."""
        return self.add(func, job_id, name, DateTrigger(run_date=at, timezone=UTC), at)

    def every(
        self, func: Callable[[], object], job_id: str, name: str, seconds: float, first: datetime
    ) -> Job:
        """A job that runs every `seconds`, first at `first`."""
        return self.add(func, job_id, name, IntervalTrigger(seconds=seconds, timezone=UTC), first)

    def get(self, job_id: str) -> Job | None:
        if not self.scheduler.running:
            return None
        job: Job | None = self.scheduler.get_job(job_id)
        return job

    def remove(self, job_id: str) -> None:
        if self.get(job_id) is not None:
            self.scheduler.remove_job(job_id)

    def next_run_time(self) -> datetime | None:
        job = self.get(SCHEDULE_JOB)
        return job.next_run_time if job is not None else None

    def on_max_instances(self, event: JobSubmissionEvent) -> None:
        """A fire APScheduler skipped because the same job was still running."""
        fires = [iso(t) for t in event.scheduled_run_times]
        if event.job_id == HEARTBEAT_JOB:
            log.info("daemon.heartbeat_skipped", scheduled_at=fires[-1] if fires else None)
            return
        if event.job_id in (STANDBY_JOB, PRUNE_JOB):
            return  # a slow look at the lease, or a prune: the next one comes anyway
        # The minute's look for approvals, still in its run: noise, not a warning.
        level = "info" if event.job_id == APPROVAL_JOB else "warning"
        getattr(log, level)(
            "daemon.run_skipped",
            trigger=JOB_TRIGGERS.get(event.job_id, event.job_id),
            reason="run_in_progress",
            scheduled_at=fires[-1] if fires else None,
            skipped_fires=fires,
        )


__all__ = [
    "CATCH_UP_JOB",
    "HEARTBEAT_JOB",
    "JOB_TRIGGERS",
    "PRE_SNAPSHOT_JOB",
    "PRUNE_JOB",
    "RESUME_JOB",
    "SCHEDULE_JOB",
    "STANDBY_JOB",
    "STARTUP_JOB",
    "TAKEOVER_JOB",
    "DaemonThreadExecutor",
    "Jobs",
    "iso",
]
