"""The deferrals table: when a deferred sync resumes; only the newest one counts."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from sqlalchemy import insert, select, update

from hrsync.store import tables
from hrsync.store.sessions import StoreSessions


@dataclass(frozen=True, slots=True)
class DeferralRecord:
    id: int
    run_id: str | None
    reason: str
    resume_at: datetime
    created_at: datetime


class DeferralQueries(StoreSessions):
    def add(self, run_id: str | None, reason: str, resume_at: datetime, now: datetime) -> None:
        deferrals = tables.deferrals
        with self._write() as s:
            # Only the newest deferral matters: a new one supersedes the older ones.
            s.execute(
                update(deferrals).where(deferrals.c.resolved_at.is_(None)).values(resolved_at=now)
            )
            s.execute(
                insert(deferrals).values(
                    run_id=run_id, reason=reason, resume_at=resume_at, created_at=now
                )
            )

    def pending(self) -> DeferralRecord | None:
        deferrals = tables.deferrals
        with self._read() as s:
            row = s.execute(
                select(deferrals)
                .where(deferrals.c.resolved_at.is_(None))
                .order_by(deferrals.c.id.desc())
                .limit(1)
            ).first()
            if row is None:
                return None
            return DeferralRecord(row.id, row.run_id, row.reason, row.resume_at, row.created_at)

    def resolve(self, now: datetime) -> None:
        deferrals = tables.deferrals
        with self._write() as s:
            s.execute(
                update(deferrals).where(deferrals.c.resolved_at.is_(None)).values(resolved_at=now)
            )
