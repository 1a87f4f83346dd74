"""The daemon's look for new approvals (issue 23): a person who runs `hrsync approve`
does not wait for tomorrow's cron.

At least every minute the daemon reads the pending approvals (one indexed read of a
small table) and, when one is there that it has not run for yet, runs a sync now. That
run applies the plan only if it is still the approved one, and never inside a snapshot
window (it defers, and the resume applies it). Each approval triggers one run: a
refused or deferred run does not make the daemon sync every minute until it expires.
"""

from __future__ import annotations

from collections.abc import Callable

from sqlalchemy.exc import SQLAlchemyError

from hrsync.clock import Clock
from hrsync.logs import get_logger
from hrsync.store.repo import Store
from hrsync.sync.results import SyncResult

log = get_logger(__name__)

# How often the daemon looks: the "at least every minute".
APPROVAL_CHECK_S = 60.0
APPROVAL_TRIGGER = "approval"


class ApprovalWatch:
    def __init__(
        self, store: Store, clock: Clock, execute: Callable[[str], SyncResult | None]
    ) -> None:
        self._store, self._clock, self._execute = store, clock, execute
        # Approvals a run has already been made for, by id (in memory: after a restart,
        # one more run for a still-pending approval is cheap and harmless).
        self._done: set[int] = set()

    def check(self) -> SyncResult | None:
        """Run a sync when an approval is pending that no run of this daemon has seen."""
        try:
            pending = self._store.approvals.pending(self._clock())
        except SQLAlchemyError as exc:
            log.warning("daemon.store_unavailable", error=str(exc))
            return None
        new = [a for a in pending if a.id not in self._done]
        if not new:
            return None
        log.info(
            "daemon.approval_found",
            plan_ids=[a.plan_id for a in new],
            approved_by=[a.approved_by for a in new],
        )
        result = self._execute(APPROVAL_TRIGGER)
        # Skipped (a run in progress, stopping, standing by): look again next minute. A
        # run made, whatever its end (a crash too), was this approval's one run: the
        # scheduled runs and the quarantine take over from there.
        if result is not None:
            self._done.update(a.id for a in new)
        return result
