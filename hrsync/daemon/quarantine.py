"""The daemon's quarantine: read from the store's failure streak, entered and left loudly.

The streak lives in the store (a run by hand counts too), so the view is re-read before
each run and after it; the rule itself is hrsync.daemon.cron's.
"""

from __future__ import annotations

from datetime import datetime

from sqlalchemy.exc import SQLAlchemyError

from hrsync.config.loading import SyncSettings
from hrsync.daemon.cron import FailedRun, Quarantine, quarantine_from_streak
from hrsync.daemon.scheduler import iso
from hrsync.logs import get_logger
from hrsync.outcome import Outcome
from hrsync.store.repo import Store
from hrsync.sync.results import SyncResult

log = get_logger(__name__)

# Triggers the quarantine holds back. `--now` at start is a person asking for a run.
QUARANTINED_TRIGGERS = frozenset({"schedule", "resume"})


class QuarantineWatch:
    """The current quarantine (None when not quarantined), as of the last look."""

    def __init__(self, store: Store, sync: SyncSettings) -> None:
        self.store = store
        self.sync = sync
        self.current: Quarantine | None = None

    def refresh(self) -> None:
        streak = [
            FailedRun(at=run.finished_at or run.started_at, reason=run.reason)
            for run in self.store.runs.consecutive_failures()
        ]
        self.current = quarantine_from_streak(streak, self.sync.quarantine_after)

    def update(self, result: SyncResult | None, *, say_unavailable: bool = True) -> None:
        """Re-read the failure streak; log entering (on a failed run) and leaving quarantine.
        A store that cannot be read keeps the last view (logged if `say_unavailable`)."""
        previous = self.current
        try:
            self.refresh()
        except SQLAlchemyError as exc:
            if say_unavailable:
                log.warning("daemon.store_unavailable", error=str(exc))
            return
        current = self.current
        if current is not None and result is not None and result.outcome is Outcome.FAILED:
            log.error(
                "sync.quarantined",
                run_id=result.run_id,
                failures=current.failures,
                threshold=self.sync.quarantine_after,
                since=iso(current.since),
                next_attempt_at=iso(current.next_attempt_at),
                reasons=list(current.reasons),
            )
        elif current is None and previous is not None:
            log.info(
                "sync.quarantine_cleared",
                run_id=result.run_id if result else None,
                outcome=str(result.outcome) if result else None,
                failures=previous.failures,
                quarantined_since=iso(previous.since),
            )

    def holds_back(self, trigger: str, now: datetime) -> bool:
        """True, logged, when the quarantine skips this fire."""
        quarantine = self.current
        if trigger not in QUARANTINED_TRIGGERS or quarantine is None or not quarantine.skips(now):
            return False
        log.info(
            "sync.quarantine_skip",
            trigger=trigger,
            failures=quarantine.failures,
            next_attempt_at=iso(quarantine.next_attempt_at),
        )
        return True
