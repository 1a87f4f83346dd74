"""One sync at a time across the processes that share a state store: the lease.

SQLite (one machine): a row with a TTL. A holder on this machine is judged by its
process (gone, or its pid reused, means the lease is free); a holder elsewhere only by
the TTL, which every live run keeps renewing.

PostgreSQL (replicas on several machines): a session-level advisory lock, held on a
connection of its own for the whole run. The server drops it the moment that session
ends: a killed process closes its socket at once, and a dead node is noticed by the
server's TCP keepalives (set short on that connection). So a standby replica takes over
within seconds, never after a TTL. The row is still written, so that messages and
`status` can name the holder, but on PostgreSQL it is information, not the lock.

On both databases two acquirers that race to insert the row settle it as "one got it,
the other did not": an insert conflict is never an error.
"""

from __future__ import annotations

import dataclasses
import hashlib
import os
import socket
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

from sqlalchemy import Connection, Engine, delete, func, select, text, update
from sqlalchemy.exc import IntegrityError, SQLAlchemyError
from sqlalchemy.orm import Session, sessionmaker

from hrsync.store import models
from hrsync.store.upsert import insert_or_nothing, upsert

# How fast the PostgreSQL server gives up on a holder whose machine vanished without
# closing its socket: idle + interval * count seconds (about 25 s), instead of the
# operating system's default of two hours.
KEEPALIVE_SETTINGS = {
    "tcp_keepalives_idle": "10",
    "tcp_keepalives_interval": "5",
    "tcp_keepalives_count": "3",
    "tcp_user_timeout": "25000",
}


@dataclass(frozen=True, slots=True)
class LeaseState:
    """Who holds the lease; `acquired` says whether the caller (this Store) does."""

    acquired: bool
    holder: str
    host: str
    pid: int
    acquired_at: datetime
    expires_at: datetime


def this_host() -> str:
    return socket.gethostname()


def advisory_key(name: str) -> int:
    """A stable signed 64-bit key for `pg_advisory_lock`, the same in every process."""
    digest = hashlib.sha256(f"hrsync.lease.{name}".encode()).digest()
    return int.from_bytes(digest[:8], "big", signed=True)


def make_leases(engine: Engine, sessions: sessionmaker[Session]) -> RowLease:
    if engine.dialect.name == "postgresql":
        return AdvisoryLease(engine, sessions)
    return RowLease(engine, sessions)


class RowLease:
    """The lease as a row with a TTL (SQLite, and the information row on PostgreSQL)."""

    def __init__(self, engine: Engine, sessions: sessionmaker[Session]) -> None:
        self._engine = engine
        self._sessions = sessions
        self._mutex = threading.Lock()
        self._mine: set[tuple[str, str]] = set()  # (name, holder) taken by this Store

    @contextmanager
    def _write(self) -> Iterator[Session]:
        with self._sessions() as session, session.begin():
            yield session

    # ------------------------------------------------------------- public

    def acquire(self, holder: str, now: datetime, ttl_s: float, name: str) -> LeaseState:
        """Take the lease unless a live holder has it; returns who holds it now."""
        state = self._take_row(holder, now, ttl_s, name)
        if state.acquired:
            with self._mutex:
                self._mine.add((name, holder))
        return state

    def renew(self, holder: str, now: datetime, ttl_s: float, name: str) -> bool:
        """Extend the lease; False when `holder` no longer has it (it expired and was taken)."""
        return self._renew_row(holder, now, ttl_s, name)

    def release(self, holder: str, name: str) -> None:
        with self._mutex:
            self._mine.discard((name, holder))
        self._delete_row(holder, name)

    def current(self, now: datetime, name: str) -> LeaseState | None:
        """Who holds the lease now (None when nobody does), without taking it."""
        with self._sessions() as s:
            lease = s.get(models.Lease, name)
            if lease is None or lease_is_stale(lease, now):
                return None
            with self._mutex:
                mine = (name, lease.holder) in self._mine
            return _state(lease, acquired=mine)

    def close(self) -> None:
        """Nothing to let go: a row lease ends with its release or its TTL."""

    # ---------------------------------------------------------------- row

    def _take_row(
        self, holder: str, now: datetime, ttl_s: float, name: str, *, force: bool = False
    ) -> LeaseState:
        """Write the row for `holder`; unless `force`, only over a stale or absent row."""
        pid = os.getpid()
        values: dict[str, Any] = {
            "holder": holder,
            "host": this_host(),
            "pid": pid,
            "pid_started": process_started(pid),
            "acquired_at": now,
            "expires_at": now + timedelta(seconds=ttl_s),
        }
        taken = LeaseState(True, holder, values["host"], pid, now, values["expires_at"])
        try:
            with self._write() as s:
                if force:
                    s.execute(upsert(self._engine, models.Lease, {"name": name}, values))
                    return taken
                lease = s.get(models.Lease, name)
                if lease is None:
                    # Two acquirers may both find no row: the insert decides between them.
                    inserted = s.execute(
                        insert_or_nothing(self._engine, models.Lease, {"name": name}, values)
                    )
                    won = _rowcount(inserted) == 1
                elif lease.holder != holder and not lease_is_stale(lease, now):
                    return _state(lease, acquired=False)
                else:
                    # Compare-and-swap on the row we judged: a rival that replaced it
                    # in the meantime keeps it.
                    replaced = s.execute(
                        update(models.Lease)
                        .where(
                            models.Lease.name == name,
                            models.Lease.holder == lease.holder,
                            models.Lease.acquired_at == lease.acquired_at,
                        )
                        .values(**values)
                        .execution_options(synchronize_session=False)
                    )
                    won = _rowcount(replaced) == 1
                if won:
                    return taken
        except IntegrityError:
            pass  # the rival's row arrived first: not acquired, and not a crash
        return self._turned_away(now, name)

    def _turned_away(self, now: datetime, name: str) -> LeaseState:
        with self._sessions() as s:
            lease = s.get(models.Lease, name)
            if lease is not None:
                return _state(lease, acquired=False)
        # The winner has not written its row yet, or already deleted it.
        return LeaseState(False, "another sync (not named yet)", "unknown host", 0, now, now)

    def _renew_row(self, holder: str, now: datetime, ttl_s: float, name: str) -> bool:
        with self._write() as s:
            result = s.execute(
                update(models.Lease)
                .where(models.Lease.name == name, models.Lease.holder == holder)
                .values(expires_at=now + timedelta(seconds=ttl_s))
            )
            return _rowcount(result) > 0

    def _delete_row(self, holder: str, name: str) -> None:
        with self._write() as s:
            s.execute(
                delete(models.Lease).where(models.Lease.name == name, models.Lease.holder == holder)
            )


@dataclass(slots=True)
class _Held:
    holder: str
    conn: Connection


class AdvisoryLease(RowLease):
    """PostgreSQL: the lock is `pg_try_advisory_lock` on a dedicated session."""

    def __init__(self, engine: Engine, sessions: sessionmaker[Session]) -> None:
        super().__init__(engine, sessions)
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
        with self._sessions() as s:
            row = s.execute(_LOCK_HOLDERS, _key_params(name)).first()
            if row is None:
                return None
            lease = s.get(models.Lease, name)
        pid, session_name = int(row[0]), str(row[1] or "")
        if lease is not None and _same_holder(lease.holder, session_name):
            return _state(lease, acquired=False)
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
        conn = self._engine.connect().execution_options(isolation_level="AUTOCOMMIT")
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


def _rowcount(result: Any) -> int:
    return int(getattr(result, "rowcount", 0) or 0)


def _state(lease: models.Lease, *, acquired: bool) -> LeaseState:
    return LeaseState(
        acquired, lease.holder, lease.host, lease.pid, lease.acquired_at, lease.expires_at
    )


def lease_is_stale(lease: models.Lease, now: datetime) -> bool:
    """Whether a row lease may be taken over.

    On this machine (same host name and pid namespace) we can see the holder: it is
    stale exactly when its process is gone or its pid now belongs to another process
    (a restarted container gives hrsync the same pid every time), whatever the TTL
    says, so a slow but live run is never overtaken. Elsewhere only the TTL can tell.
    """
    recorded = lease.pid_started or ""
    visible = lease.host == this_host() and recorded.rpartition("@")[0] == _pid_namespace()
    if not visible:
        return lease.expires_at <= now
    if not _pid_alive(lease.pid):
        return True
    started_now = process_started(lease.pid)
    if None in (started_now, lease.pid_started):
        return lease.expires_at <= now  # no /proc: fall back to the TTL
    return started_now != lease.pid_started


def process_started(pid: int) -> str | None:
    """Which process `pid` is: its pid namespace and start time (clock ticks since boot),
    as ``namespace@ticks``; None where /proc is absent."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    # The command name (field 2) may hold spaces and parentheses: split after its end.
    fields = stat[stat.rfind(")") + 2 :].split()
    return f"{_pid_namespace()}@{fields[19]}" if len(fields) > 19 else None


def _pid_namespace() -> str:
    try:
        return os.readlink("/proc/self/ns/pid")
    except OSError:
        return ""


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True
