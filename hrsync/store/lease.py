"""One sync at a time across the processes that share a state store: the lease.

Two implementations behind one interface (`Leases`), chosen by the Store from the
database:

- SQLite (one machine), `lease_row.RowLease`: a row with a TTL. A holder on this
  machine is judged by its process (gone, or its pid reused, means the lease is free);
  a holder elsewhere only by the TTL, which every live run keeps renewing.
- PostgreSQL (replicas on several machines), `lease_postgres.AdvisoryLease`: a
  session-level advisory lock, held on a connection of its own for the whole run. The
  server drops it the moment that session ends, so a standby replica takes over within
  seconds, never after a TTL. The row is still written, so that messages and `status`
  can name the holder, but on PostgreSQL it is information, not the lock.

On both databases two acquirers that race to insert the row settle it as "one got it,
the other did not": an insert conflict is never an error.
"""

from __future__ import annotations

import hashlib
import socket
from dataclasses import dataclass
from datetime import datetime
from typing import Protocol


@dataclass(frozen=True, slots=True)
class LeaseState:
    """Who holds the lease; `acquired` says whether the caller (this Store) does."""

    acquired: bool
    holder: str
    host: str
    pid: int
    acquired_at: datetime
    expires_at: datetime


class Leases(Protocol):
    """What the Store asks of a lease, whichever database keeps it."""

    def acquire(self, holder: str, now: datetime, ttl_s: float, name: str) -> LeaseState: ...

    def renew(self, holder: str, now: datetime, ttl_s: float, name: str) -> bool: ...

    def release(self, holder: str, name: str) -> None: ...

    def current(self, now: datetime, name: str) -> LeaseState | None: ...

    def close(self) -> None: ...


def this_host() -> str:
    return socket.gethostname()


def advisory_key(name: str) -> int:
    """A stable signed 64-bit key for `pg_advisory_lock`, the same in every process
    (the lease's lock, and the migrations' lock in store/migrate.py)."""
    digest = hashlib.sha256(f"hrsync.lease.{name}".encode()).digest()
    return int.from_bytes(digest[:8], "big", signed=True)
