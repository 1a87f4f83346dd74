"""The lease as a row with a TTL: the lease itself on SQLite, the information row
naming the holder on PostgreSQL (see store/lease.py)."""

from __future__ import annotations

import os
import threading
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

from sqlalchemy import Connection, Engine, Row, delete, select, update
from sqlalchemy.exc import IntegrityError

from hrsync.store import tables
from hrsync.store.lease import LeaseState, this_host
from hrsync.store.sessions import StoreSessions
from hrsync.store.upsert import insert_or_nothing, swap, upsert

_LEASES = tables.leases


class RowLease(StoreSessions):
    """The lease as a row with a TTL (SQLite, and the information row on PostgreSQL)."""

    def __init__(self, engine: Engine) -> None:
        super().__init__(engine)
        self._mutex = threading.Lock()
        self._mine: set[tuple[str, str]] = set()  # (name, holder) taken by this Store

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
        with self._read() as s:
            lease = lease_row(s, name)
            if lease is None or lease_is_stale(lease, now):
                return None
            with self._mutex:
                mine = (name, lease.holder) in self._mine
            return state_of(lease, acquired=mine)

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
                    s.execute(upsert(self.engine, _LEASES, {"name": name}, values))
                    return taken
                lease = lease_row(s, name)
                if lease is None:
                    # Two acquirers may both find no row: the insert decides between them.
                    inserted = s.execute(
                        insert_or_nothing(self.engine, _LEASES, {"name": name}, values)
                    )
                    won = _rowcount(inserted) == 1
                elif lease.holder != holder and not lease_is_stale(lease, now):
                    return state_of(lease, acquired=False)
                else:
                    # Compare-and-swap on the row we judged: a rival that replaced it
                    # in the meantime keeps it.
                    judged = {"holder": lease.holder, "acquired_at": lease.acquired_at}
                    replaced = s.execute(swap(_LEASES, {"name": name}, judged, values))
                    won = _rowcount(replaced) == 1
                if won:
                    return taken
        except IntegrityError:
            pass  # the rival's row arrived first: not acquired, and not a crash
        return self._turned_away(now, name)

    def _turned_away(self, now: datetime, name: str) -> LeaseState:
        with self._read() as s:
            lease = lease_row(s, name)
            if lease is not None:
                return state_of(lease, acquired=False)
        # The winner has not written its row yet, or already deleted it.
        return LeaseState(False, "another sync (not named yet)", "unknown host", 0, now, now)

    def _renew_row(self, holder: str, now: datetime, ttl_s: float, name: str) -> bool:
        with self._write() as s:
            result = s.execute(
                update(_LEASES)
                .where(_LEASES.c.name == name, _LEASES.c.holder == holder)
                .values(expires_at=now + timedelta(seconds=ttl_s))
            )
            return _rowcount(result) > 0

    def _delete_row(self, holder: str, name: str) -> None:
        with self._write() as s:
            s.execute(delete(_LEASES).where(_LEASES.c.name == name, _LEASES.c.holder == holder))


def lease_row(connection: Connection, name: str) -> Row[Any] | None:
    """The lease row called `name`, None when there is none."""
    return connection.execute(select(_LEASES).where(_LEASES.c.name == name)).first()


def state_of(lease: Row[Any], *, acquired: bool) -> LeaseState:
    return LeaseState(
        acquired, lease.holder, lease.host, lease.pid, lease.acquired_at, lease.expires_at
    )


def _rowcount(result: Any) -> int:
    return int(getattr(result, "rowcount", 0) or 0)


def lease_is_stale(lease: Row[Any], now: datetime) -> bool:
    """Whether a row lease may be taken over.

    On this machine (same host name and pid namespace) we can see the holder: it is
    stale exactly when its process is gone or its pid now belongs to another process
    (a restarted container gives hrsync the same pid every time), whatever the TTL
    says, so a slow but live run is never overtaken. Elsewhere only the TTL can tell.
    """
    recorded: str | None = lease.pid_started
    expired = bool(lease.expires_at <= now)
    visible = lease.host == this_host() and (recorded or "").rpartition("@")[0] == _pid_namespace()
    if not visible:
        return expired
    if not _pid_alive(lease.pid):
        return True
    started_now = process_started(lease.pid)
    if started_now is None or recorded is None:
        return expired  # no /proc: fall back to the TTL
    return started_now != recorded


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
