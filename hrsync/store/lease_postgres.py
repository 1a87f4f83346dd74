"""The lease on PostgreSQL: a session-level advisory lock on a connection of its own.

The server drops the lock the moment that session ends: a killed process closes its
socket at once, and a dead node is noticed by the server's TCP keepalives (set short on
that connection). The row (store/lease_row.py) only names the holder.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from datetime import datetime

from sqlalchemy import Connection, Engine, func, select, text
from sqlalchemy.exc import SQLAlchemyError

from hrsync.store.lease import LeaseState, advisory_key
from hrsync.store.lease_row import RowLease, lease_row, state_of

# How fast the PostgreSQL server gives up on a holder whose machine vanished without
# closing its socket: idle + interval * count seconds (about 25 s), instead of the
# operating system's default of two hours.
KEEPALIVE_SETTINGS = {
    "tcp_keepalives_idle": "10",
    "tcp_keepalives_interval": "5",
    "tcp_keepalives_count": "3",
    "tcp_user_timeout": "25000",
}


@dataclass(slots=True)
class _Held:
    holder: str
    conn: Connection


class AdvisoryLease(RowLease):
    """PostgreSQL: the lock is `pg_try_advisory_lock` on a dedicated session."""

    def __init__(self, engine: Engine) -> None:
        super().__init__(engine)
        self._held: dict[str, _Held] = {}

    def acquire(self, holder: str, now: datetime, ttl_s: float, name: str) -> LeaseState:
        with self._mutex:
            held = self._held.get(name)
            if held is not None and held.holder != holder:
                # Another run of this same process has it (sessions of one Store are
                # separate connections, so the server would say no as well).
                return self._turned_away(now, name)
            if held is not None and not self._still_held(held, name):
                self._drop(name)
                held = None
            if held is None:
                conn = self._lock_connection(holder)
                try:
                    got = conn.execute(select(func.pg_try_advisory_lock(advisory_key(name))))
                    acquired = bool(got.scalar())
                except BaseException:
                    _discard(conn)
                    raise
                if not acquired:
                    conn.close()
                    return self._turned_away(now, name)
                self._held[name] = _Held(holder, conn)
            try:
                # The previous row may be a dead holder's: we have the lock, so it is ours.
                return self._take_row(holder, now, ttl_s, name, force=True)
            except BaseException:
                self._drop(name)
                raise

    def renew(self, holder: str, now: datetime, ttl_s: float, name: str) -> bool:
        with self._mutex:
            held = self._held.get(name)
            if held is None or held.holder != holder:
                return False
            if not self._still_held(held, name):
                # The session died (server restart, network cut, terminated): the server
                # has released the lock and a standby may already run.
                self._drop(name)
                return False
        self._renew_row(holder, now, ttl_s, name)
        return True

    def release(self, holder: str, name: str) -> None:
        with self._mutex:
            held = self._held.get(name)
            if held is not None and held.holder == holder:
                self._drop(name)
        self._delete_row(holder, name)

    def current(self, now: datetime, name: str) -> LeaseState | None:
        state = self._lock_holder(now, name)
        if state is None:
            return None
        with self._mutex:
            held = self._held.get(name)
            mine = held is not None and _same_holder(held.holder, state.holder)
        return dataclasses.replace(state, acquired=mine)

    def _turned_away(self, now: datetime, name: str) -> LeaseState:
        return self._lock_holder(now, name) or super()._turned_away(now, name)

    def _lock_holder(self, now: datetime, name: str) -> LeaseState | None:
        """Who holds the lock, as the lock itself says: the holder's session carries its
        name (application_name), set before it took the lock, so a holder is named even
        before its row is written, and a dead holder's leftover row is not believed."""
        with self._read() as s:
            row = s.execute(_LOCK_HOLDERS, _key_params(name)).first()
            if row is None:
                return None
            lease = lease_row(s, name)
        pid, session_name = int(row[0]), str(row[1] or "")
        if lease is not None and _same_holder(lease.holder, session_name):
            return state_of(lease, acquired=False)
        holder = session_name or f"PostgreSQL session {pid}"
        return LeaseState(False, holder, "unknown host", 0, now, now)

    def close(self) -> None:
        with self._mutex:
            for name in list(self._held):
                self._drop(name)

    # ----------------------------------------------------------- helpers

    def _lock_connection(self, holder: str) -> Connection:
        # Autocommit: the session holds the lock, not a transaction; a transaction left
        # open for a whole run would also hold back vacuum.
        conn = self.engine.connect().execution_options(isolation_level="AUTOCOMMIT")
        settings = {**KEEPALIVE_SETTINGS, "application_name": _session_name(holder)}
        try:
            for setting, value in settings.items():
                conn.execute(text("SELECT set_config(:k, :v, false)"), {"k": setting, "v": value})
        except BaseException:
            _discard(conn)
            raise
        return conn

    def _still_held(self, held: _Held, name: str) -> bool:
        try:
            mine = held.conn.execute(_LOCK_HELD_HERE, _key_params(name)).scalar()
        except SQLAlchemyError:
            return False
        return bool(mine)

    def _drop(self, name: str) -> None:
        """Unlock and close the dedicated session (closing alone would unlock too)."""
        held = self._held.pop(name, None)
        if held is None:
            return
        try:
            held.conn.execute(select(func.pg_advisory_unlock(advisory_key(name))))
        except SQLAlchemyError:
            pass  # a dead session holds nothing
        finally:
            _discard(held.conn)


# A single bigint key shows in pg_locks as classid (high 32 bits), objid (low 32 bits)
# and objsubid 1.
_LOCK_WHERE = (
    "locktype = 'advisory' AND granted AND objsubid = 1"
    " AND database = (SELECT oid FROM pg_database WHERE datname = current_database())"
    " AND classid::bigint = :hi AND objid::bigint = :lo"
)
_LOCK_HOLDERS = text(
    "SELECT l.pid, a.application_name FROM pg_locks l"
    " LEFT JOIN pg_stat_activity a ON a.pid = l.pid"
    " WHERE l.locktype = 'advisory' AND l.granted AND l.objsubid = 1"
    " AND l.database = (SELECT oid FROM pg_database WHERE datname = current_database())"
    " AND l.classid::bigint = :hi AND l.objid::bigint = :lo"
)
_LOCK_HELD_HERE = text(
    f"SELECT EXISTS (SELECT 1 FROM pg_locks WHERE {_LOCK_WHERE} AND pid = pg_backend_pid())"
)


def _session_name(holder: str) -> str:
    # application_name keeps at most 63 bytes.
    return holder.encode()[:63].decode(errors="ignore")


def _same_holder(holder: str, session_name: str) -> bool:
    return _session_name(holder) == session_name


def _key_params(name: str) -> dict[str, int]:
    key = advisory_key(name) & 0xFFFF_FFFF_FFFF_FFFF
    return {"hi": key >> 32, "lo": key & 0xFFFF_FFFF}


def _discard(conn: Connection) -> None:
    # Never back to the pool: a pooled session must not carry the lock, or our
    # keepalive settings, into unrelated work.
    try:
        conn.invalidate()
    finally:
        conn.close()
