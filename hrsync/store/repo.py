"""The Store: the one object the rest of hrsync asks for state, holding the parts.

Each concern's queries live in a part of their own (runs, submissions, identities,
deferrals, heartbeat, notifications, people, leads left, approvals, the snapshot
outlook, pruning; the lease in lease*.py). The Store holds each part as an attribute
(`store.runs`, `store.approvals`, ...) rather than inheriting them, so a caller's line
says which part it asks; it picks the lease for the database, and opens and closes the
engine. Every public method of a part is its own short transaction (store/sessions.py).
"""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import Engine

from hrsync.store.approvals import ApprovalQueries, RefusedPlan
from hrsync.store.deferrals import DeferralQueries, DeferralRecord
from hrsync.store.engine import make_engine
from hrsync.store.heartbeat_record import HeartbeatRecord
from hrsync.store.heartbeat_table import HeartbeatQueries
from hrsync.store.identities import IdentityQueries, member_digest
from hrsync.store.leads_left import LeadLeftQueries, LeadLeftRecord
from hrsync.store.lease import Leases, LeaseState
from hrsync.store.lease_postgres import AdvisoryLease
from hrsync.store.lease_row import RowLease
from hrsync.store.migrate import ensure_current
from hrsync.store.notifications import NotificationQueries
from hrsync.store.people import DxPerson, HeldChanges, HeldRecord, PeopleQueries
from hrsync.store.pruning import PruningQueries
from hrsync.store.runs import ACCEPTED_OUTCOMES, RunQueries, RunRecord
from hrsync.store.snapshot_outlook import SnapshotOutlook, SnapshotOutlookQueries
from hrsync.store.submissions import SubmissionQueries, SubmissionRecord

# Callers import the records from here, with the Store.
__all__ = [
    "ACCEPTED_OUTCOMES",
    "DeferralRecord",
    "DxPerson",
    "HeartbeatRecord",
    "HeldChanges",
    "HeldRecord",
    "LeadLeftRecord",
    "RefusedPlan",
    "RunRecord",
    "SnapshotOutlook",
    "Store",
    "SubmissionRecord",
    "member_digest",
]


class Store:
    """The state store: one attribute per part (`store.runs.start(...)`,
    `store.approvals.pending(...)`), all sharing one engine; the lease is the Store's own."""

    def __init__(self, engine: Engine) -> None:
        self.engine = engine
        self.runs = RunQueries(engine)
        self.submissions = SubmissionQueries(engine)
        self.identities = IdentityQueries(engine)
        self.deferrals = DeferralQueries(engine)
        self.heartbeat = HeartbeatQueries(engine)
        self.notifications = NotificationQueries(engine)
        self.people = PeopleQueries(engine)
        self.leads_left = LeadLeftQueries(engine)
        self.approvals = ApprovalQueries(engine)
        self.snapshot_outlook = SnapshotOutlookQueries(
            engine,
            runs=self.runs,
            deferrals=self.deferrals,
            identities=self.identities,
            people=self.people,
        )
        self.pruning = PruningQueries(engine)
        lease = AdvisoryLease if engine.dialect.name == "postgresql" else RowLease
        self._leases: Leases = lease(engine)

    @classmethod
    def open(cls, database_url: str, *, migrate: bool = True) -> Store:
        engine = make_engine(database_url)
        if migrate:
            ensure_current(engine)
        return cls(engine)

    def close(self) -> None:
        self._leases.close()
        self.engine.dispose()

    # ------------------------------------------------------------- lease

    def acquire_lease(
        self, holder: str, now: datetime, ttl_s: float, *, name: str = "sync"
    ) -> LeaseState:
        """Take the lease unless a live holder has it; returns who holds it now.

        Never raises because a rival got there first: that is `acquired=False`. On
        PostgreSQL the lease is a lock the server drops when this process dies; `ttl_s`
        only dates the information row (see hrsync/store/lease_postgres.py)."""
        return self._leases.acquire(holder, now, ttl_s, name)

    def renew_lease(self, holder: str, now: datetime, ttl_s: float, *, name: str = "sync") -> bool:
        """Extend the lease; False when `holder` no longer has it (it expired and was
        taken, or on PostgreSQL its session died)."""
        return self._leases.renew(holder, now, ttl_s, name)

    def release_lease(self, holder: str, *, name: str = "sync") -> None:
        self._leases.release(holder, name)

    def current_lease(self, now: datetime, *, name: str = "sync") -> LeaseState | None:
        """Who holds the lease now, None when nobody does; takes nothing. `acquired` in
        the answer says whether this Store is the holder."""
        return self._leases.current(now, name)
