"""The daemon's daily housekeeping: history older than `state.keep_days` pruned from the
store (what is kept whatever its age: hrsync/store/pruning.py)."""

from __future__ import annotations

from datetime import timedelta

from sqlalchemy.exc import SQLAlchemyError

from hrsync.clock import Clock
from hrsync.daemon.scheduler import iso
from hrsync.logs import get_logger
from hrsync.store.repo import Store

log = get_logger(__name__)

PRUNE_EVERY_S = 86400.0
# Not at the start itself: a start's own work (a catch-up run, the first heartbeat)
# comes first, and a daemon restarted in a loop does not prune at every start.
PRUNE_FIRST_AFTER_S = 600.0


class Housekeeping:
    def __init__(self, store: Store, clock: Clock, keep_days: int) -> None:
        self._store, self._clock, self.keep_days = store, clock, keep_days

    def prune(self) -> dict[str, int] | None:
        """Prune what is older than `keep_days`; the rows deleted per table, or None when
        the store could not (a warning: the next day tries again)."""
        before = self._clock() - timedelta(days=self.keep_days)
        try:
            deleted = self._store.pruning.prune(before)
        except SQLAlchemyError as exc:
            log.warning("db.prune_failed", keep_days=self.keep_days, error=str(exc))
            return None
        log.info("db.pruned", keep_days=self.keep_days, before=iso(before), deleted=deleted)
        return deleted
