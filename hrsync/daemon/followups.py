"""What the daemon schedules after a run: the resume of a deferral, the retry after an
unverified run, and the loud reminder that a refused sync waits for a person.

The run itself recorded its deferral (or resolved the older ones) in the store: the
daemon only turns it into the one-off `resume` job.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime, timedelta

from apscheduler.job import Job
from sqlalchemy.exc import SQLAlchemyError

from hrsync.clock import Clock
from hrsync.config.loading import Settings
from hrsync.core.command_lines import hrsync_command
from hrsync.daemon.scheduler import RESUME_JOB, Jobs, iso
from hrsync.logs import get_logger
from hrsync.outcome import Outcome
from hrsync.store.repo import Store
from hrsync.store.submission_record import SubmissionStatus
from hrsync.store.submissions import SubmissionRecord
from hrsync.sync.results import SyncResult

log = get_logger(__name__)

# After an unverified run DX may still be importing, or our request was lost: look again
# soon (the retry verifies the submission before planning anything new), backing off.
UNVERIFIED_RETRY_FIRST = timedelta(minutes=2)
UNVERIFIED_RETRY_MAX = timedelta(hours=1)


def unverified_retry_delay(streak: int) -> timedelta:
    """Delay before the retry after the `streak`-th unverified run in a row: 2, 4, 8 … min,
    at most an hour."""
    doubled = UNVERIFIED_RETRY_FIRST * (1 << min(max(streak - 1, 0), 10))
    return min(doubled, UNVERIFIED_RETRY_MAX)


class Followups:
    def __init__(
        self,
        settings: Settings,
        *,
        store: Store,
        clock: Clock,
        jobs: Jobs,
        execute: Callable[[str], object],
    ) -> None:
        self.settings = settings
        self.store = store
        self.clock = clock
        self.jobs = jobs
        self._execute = execute

    def after_run(self, result: SyncResult) -> None:
        if result.outcome is Outcome.DEFERRED and result.resume_at is not None:
            self.register_resume(result.resume_at, reason=result.reason, run_id=result.run_id)
        if result.outcome is Outcome.UNVERIFIED:
            self._retry_unverified(result)
        if result.overall is Outcome.REFUSED:  # the hierarchy or its attribute step
            # Every run is refused the same way until the export or the guard changes.
            if result.action:
                approve = f"with `{result.action}`"
            else:
                config = self.settings.command_config
                command = hrsync_command(config, "sync", "--allow-archive", "N")
                approve = f"with the command the refusal printed (`{command}` or `--allow-shrink`)"
            log.warning(
                "sync.refused_pending",
                run_id=result.run_id,
                reason=result.reason,
                action=(
                    "nothing is sent until a person acts: fix the export, or approve once "
                    + approve
                ),
            )

    def register_resume(
        self, resume_at: datetime, *, reason: str | None = None, run_id: str | None = None
    ) -> Job:
        """(Re)place the one-off resume job at `resume_at`, or now if that has passed."""
        run_at = max(resume_at, self.clock())
        job = self.jobs.one_off(self._resumed, RESUME_JOB, "sync at the end of a deferral", run_at)
        log.info(
            "daemon.resume_registered",
            resume_at=iso(resume_at),
            run_at=iso(run_at),
            reason=reason,
            deferred_run_id=run_id,
        )
        return job

    def _resumed(self) -> None:
        self._execute("resume")

    def resume_unfinished(self, unfinished: SubmissionRecord, now: datetime) -> datetime:
        """At start, a submission an earlier process left unverified: a run verifies it now
        (the process was killed after DX accepted it), or, after an `unverified` run whose
        retry was a job in memory, when that retry would have come (looking at once could
        find DX still importing, and send again). When it resumes."""
        resume_at = now
        if unfinished.status == SubmissionStatus.UNVERIFIED:
            streak, ended = self._unverified_streak()
            resume_at = max(now, (ended or now) + unverified_retry_delay(streak))
        self.register_resume(
            resume_at,
            reason=f"verify submission {unfinished.id} ({unfinished.status}), which run "
            f"{unfinished.run_id} left",
            run_id=unfinished.run_id,
        )
        return resume_at

    def _unverified_streak(self) -> tuple[int, datetime | None]:
        """How many operational runs in a row ended unverified (at least 1), and when the
        newest of them ended."""
        streak, ended = 0, None
        try:
            for run in self.store.runs.recent(20, operational_only=True):
                if run.outcome == Outcome.UNVERIFIED.value:
                    streak += 1
                    ended = ended or run.finished_at
                elif run.outcome is not None:
                    break
        except SQLAlchemyError as exc:
            log.warning("daemon.store_unavailable", error=str(exc))
        return max(streak, 1), ended

    def _retry_unverified(self, result: SyncResult) -> None:
        streak, _ = self._unverified_streak()
        retry_at = self.clock() + unverified_retry_delay(streak)
        scheduled = self.jobs.next_run_time()
        if scheduled is not None and scheduled <= retry_at:
            return  # the schedule fires first: that run verifies it
        log.warning(
            "daemon.retry_scheduled",
            run_id=result.run_id,
            retry_at=iso(retry_at),
            unverified_in_a_row=streak,
            reason=result.reason,
        )
        self.register_resume(retry_at, reason="retry after an unverified run", run_id=result.run_id)
