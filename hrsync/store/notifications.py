"""The notify_state table: the daemon's last notification sent, so one POST per change
of state survives restarts."""

from __future__ import annotations

from dataclasses import asdict

from sqlalchemy import select

from hrsync.core.report.notify import Sent
from hrsync.store import tables
from hrsync.store.sessions import StoreSessions
from hrsync.store.upsert import swap, upsert


class NotificationQueries(StoreSessions):
    def state(self, name: str = "webhook") -> Sent | None:
        notify_state = tables.notify_state
        with self._read() as s:
            row = s.execute(select(notify_state).where(notify_state.c.name == name)).first()
            if row is None:
                return None
            return Sent(row.state, row.digest, row.notified_at, row.run_id)

    def save_state(self, record: Sent, name: str = "webhook") -> None:
        with self._write() as s:
            s.execute(upsert(self.engine, tables.notify_state, {"name": name}, _values(record)))

    def claim_state(self, expected: Sent, record: Sent, name: str = "webhook") -> bool:
        """Replace the state with `record` only if it is still `expected`: True when this
        caller did. Two replicas (or a run and a heartbeat) that see the same news race
        here, and one wins (`swap`)."""
        with self._write() as s:
            claimed = s.execute(
                swap(tables.notify_state, {"name": name}, _values(expected), _values(record))
            )
            return claimed.rowcount == 1


def _values(record: Sent) -> dict[str, object]:
    # The record's fields are the table's columns but its key (`name`).
    return asdict(record)
