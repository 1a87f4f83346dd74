"""The few queries hrsync needs, each in its own short write transaction.

Every public method commits or rolls back before it returns, so a SIGKILL
between two calls leaves the store consistent: either a step is recorded
whole or not at all.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from sqlalchemy import Engine, insert, select, update
from sqlalchemy.orm import Session

from hrsync.core.identity import KnownIdentity
from hrsync.core.plan import SeenTeam
from hrsync.dx.methods import PROCESS
from hrsync.store import models
from hrsync.store.engine import make_engine, session_factory
from hrsync.store.lease import LeaseState, make_leases, this_host
from hrsync.store.migrate import upgrade
from hrsync.store.submission import (
    NEVER_REACHED_DX,
    UNFINISHED,
    SubmissionStatus,
    SubmittedPlan,
    seen_from_json,
    seen_to_json,
)
from hrsync.store.upsert import upsert

ACCEPTED_OUTCOMES = ("applied", "in_sync")


@dataclass(frozen=True, slots=True)
class RunRecord:
    id: str
    trigger: str
    started_at: datetime
    finished_at: datetime | None
    outcome: str | None
    exit_code: int | None
    counts: Mapping[str, int]
    reason: str | None
    people_count: int | None
    dry_run: bool
    action: str | None = None  # the command that resolves this outcome, if any


@dataclass(frozen=True, slots=True)
class SubmissionRecord:
    id: int
    run_id: str
    method: str
    payload_digest: str
    plan: SubmittedPlan
    people_count: int
    status: SubmissionStatus
    created_at: datetime
    sent_at: datetime | None
    accepted_at: datetime | None
    verified_at: datetime | None
    import_id: str | None
    detail: str | None
    # What DX showed right after it verified this submission, per reference_id.
    dx_seen: Mapping[str, SeenTeam] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class DeferralRecord:
    id: int
    run_id: str | None
    reason: str
    resume_at: datetime
    created_at: datetime


@dataclass(frozen=True, slots=True)
class HeartbeatRecord:
    name: str
    beat_at: datetime
    pid: int
    host: str
    state: str
    quarantined_since: datetime | None
    consecutive_failures: int
    detail: dict[str, Any]


@dataclass(frozen=True, slots=True)
class NotifyRecord:
    state: str
    digest: str
    notified_at: datetime
    run_id: str | None


def member_digest(members: Sequence[str] | frozenset[str]) -> str:
    return hashlib.sha256("\n".join(sorted(members)).encode()).hexdigest()


class Store:
    def __init__(self, engine: Engine) -> None:
        self.engine = engine
        self._sessions = session_factory(engine)
        self._leases = make_leases(engine, self._sessions)

    @classmethod
    def open(cls, database_url: str, *, migrate: bool = True) -> Store:
        engine = make_engine(database_url)
        if migrate:
            upgrade(engine)
        return cls(engine)

    def close(self) -> None:
        self._leases.close()
        self.engine.dispose()

    @contextmanager
    def _write(self) -> Iterator[Session]:
        with self._sessions() as session, session.begin():
            yield session

    # ------------------------------------------------------------- lease

    def acquire_lease(
        self, holder: str, now: datetime, ttl_s: float, *, name: str = "sync"
    ) -> LeaseState:
        """Take the lease unless a live holder has it; returns who holds it now.

        Never raises because a rival got there first: that is `acquired=False`. On
        PostgreSQL the lease is a lock the server drops when this process dies; `ttl_s`
        only dates the information row (see hrsync/store/lease.py)."""
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

    # -------------------------------------------------------------- runs

    def start_run(self, run_id: str, trigger: str, now: datetime, *, dry_run: bool) -> None:
        with self._write() as s:
            s.add(models.Run(id=run_id, trigger=trigger, started_at=now, dry_run=int(dry_run)))

    def finish_run(
        self,
        run_id: str,
        now: datetime,
        *,
        outcome: str,
        exit_code: int,
        counts: Mapping[str, int],
        reason: str | None,
        plan_digest: str | None = None,
        people_count: int | None = None,
        action: str | None = None,
    ) -> None:
        with self._write() as s:
            run = s.get(models.Run, run_id)
            if run is None:
                raise KeyError(f"run {run_id} was never started")
            run.finished_at, run.outcome, run.exit_code = now, outcome, exit_code
            run.counts_json = json.dumps(dict(counts), sort_keys=True)
            run.reason, run.plan_digest, run.people_count = reason, plan_digest, people_count
            run.action = action

    def recent_runs(self, limit: int = 20, *, operational_only: bool = False) -> list[RunRecord]:
        """Newest first. `operational_only` leaves out dry runs and previews, which say
        nothing about whether syncing works."""
        query = select(models.Run).order_by(models.Run.started_at.desc()).limit(limit)
        if operational_only:
            query = query.where(models.Run.dry_run == 0)
        with self._sessions() as s:
            return [_run_record(r) for r in s.scalars(query).all()]

    def last_accepted_people_count(self) -> int | None:
        """People in the last export DX accepted (for the shrink guard): the newer of the
        last in-sync or applied run and the last verified submission (which may have
        been verified by a later run, after its own run gave up waiting)."""
        with self._sessions() as s:
            run = s.execute(
                select(models.Run.people_count, models.Run.started_at)
                .where(
                    models.Run.outcome.in_(ACCEPTED_OUTCOMES),
                    models.Run.dry_run == 0,
                    models.Run.people_count.is_not(None),
                )
                .order_by(models.Run.started_at.desc())
                .limit(1)
            ).first()
            sub = s.execute(
                select(models.Submission.people_count, models.Run.started_at)
                .join(models.Run, models.Run.id == models.Submission.run_id)
                .where(models.Submission.status == SubmissionStatus.VERIFIED)
                .order_by(models.Run.started_at.desc())
                .limit(1)
            ).first()
        candidates = [c for c in (run, sub) if c is not None]
        if not candidates:
            return None
        newest = max(candidates, key=lambda c: c[1])[0]
        return None if newest is None else int(newest)

    def consecutive_failures(self, limit: int = 50) -> list[RunRecord]:
        """The unbroken streak of most recent failed runs (newest first)."""
        streak: list[RunRecord] = []
        for run in self.recent_runs(limit, operational_only=True):
            if run.outcome is None:
                continue
            if run.outcome != "failed":
                break
            streak.append(run)
        return streak

    # ------------------------------------------------------- submissions

    def record_submission(
        self,
        run_id: str,
        plan: SubmittedPlan,
        *,
        people_count: int,
        now: datetime,
        method: str = PROCESS,
    ) -> int:
        """Record a submission as pending, before the call; returns its id."""
        payload = [r.to_payload() for r in plan.rows]
        with self._write() as s:
            row = models.Submission(
                run_id=run_id,
                method=method,
                payload_digest=plan.digest,
                payload_json=json.dumps(payload, separators=(",", ":")),
                plan_json=plan.to_json(),
                people_count=people_count,
                status=SubmissionStatus.PENDING.value,
                created_at=now,
            )
            s.add(row)
            s.flush()
            return row.id

    def mark_submission(
        self,
        submission_id: int,
        status: SubmissionStatus,
        now: datetime,
        *,
        import_id: str | None = None,
        detail: str | None = None,
        dx_seen: Mapping[str, SeenTeam] | None = None,
    ) -> None:
        with self._write() as s:
            row = s.get(models.Submission, submission_id)
            if row is None:
                raise KeyError(f"submission {submission_id} does not exist")
            row.status = status.value
            if dx_seen is not None:
                row.dx_seen_json = seen_to_json(dx_seen)
            if status is SubmissionStatus.SENT:
                row.sent_at = now
            elif status is SubmissionStatus.ACCEPTED:
                row.accepted_at = now
            elif status is SubmissionStatus.VERIFIED:
                row.verified_at = now
            if import_id is not None:
                row.import_id = import_id
            if detail is not None:
                row.detail = detail

    def unfinished_submission(self) -> SubmissionRecord | None:
        return self._latest_submission(models.Submission.status.in_(_values(UNFINISHED)))

    def last_verified_submission(self) -> SubmissionRecord | None:
        return self._latest_submission(models.Submission.status == SubmissionStatus.VERIFIED)

    def submissions_after(
        self, after_id: int | None, *, since: datetime | None = None
    ) -> list[SubmissionRecord]:
        """`process` submissions with an id above `after_id` (all when None) that may
        have reached DX (not rejected, deferred or failed before sending), oldest first;
        with `since`, only those created at or after it."""
        sub = models.Submission
        query = (
            select(sub)
            .where(
                sub.method == PROCESS,
                sub.status.not_in(_values(NEVER_REACHED_DX)),
            )
            .order_by(sub.id)
        )
        if after_id is not None:
            query = query.where(sub.id > after_id)
        if since is not None:
            query = query.where(sub.created_at >= since)
        with self._sessions() as s:
            return [_submission_record(r) for r in s.scalars(query).all()]

    def _latest_submission(self, condition: Any) -> SubmissionRecord | None:
        with self._sessions() as s:
            row = s.scalars(
                select(models.Submission)
                .where(condition, models.Submission.method == PROCESS)
                .order_by(models.Submission.id.desc())
                .limit(1)
            ).first()
            return None if row is None else _submission_record(row)

    # -------------------------------------------------------- identities

    def load_identities(self) -> list[KnownIdentity]:
        with self._sessions() as s:
            rows = s.scalars(select(models.TeamIdentity).order_by(models.TeamIdentity.id)).all()
            return [
                KnownIdentity(
                    key=r.hr_key,
                    reference_id=r.reference_id,
                    name=r.name,
                    parent_key=r.parent_key,
                    lead_email=r.lead_email,
                    members=frozenset(json.loads(r.members_json)),
                    retired=r.retired_at is not None,
                )
                for r in rows
            ]

    def save_identities(self, identities: Sequence[KnownIdentity], now: datetime) -> None:
        """Upsert by reference_id in one transaction; rows are never deleted.

        Only rows whose content changed are written (a steady-state run of a large org
        would otherwise rewrite thousands of rows); `last_seen` of every active identity
        moves to `now` in one statement.
        """
        ti = models.TeamIdentity
        with self._write() as s:
            existing = {
                row.reference_id: row
                for row in s.execute(
                    select(
                        ti.id,
                        ti.reference_id,
                        ti.hr_key,
                        ti.name,
                        ti.parent_key,
                        ti.lead_email,
                        ti.member_digest,
                        ti.retired_at,
                    )
                )
            }
            changes: list[dict[str, Any]] = []
            inserts: list[dict[str, Any]] = []
            parked: list[dict[str, Any]] = []
            for ident in {i.reference_id: i for i in identities}.values():
                values = {
                    "hr_key": ident.key,
                    "name": ident.name,
                    "parent_key": ident.parent_key,
                    "lead_email": ident.lead_email,
                    "member_digest": member_digest(ident.members),
                }
                old = existing.get(ident.reference_id)
                if old is None:
                    inserts.append(
                        {
                            **values,
                            "reference_id": ident.reference_id,
                            "members_json": json.dumps(sorted(ident.members)),
                            "first_seen": now,
                            "last_seen": now,
                            "retired_at": now if ident.retired else None,
                        }
                    )
                    continue
                retired_at = (old.retired_at or now) if ident.retired else None
                unchanged = all(getattr(old, k) == v for k, v in values.items())
                if unchanged and (old.retired_at is None) == (retired_at is None):
                    continue
                if old.hr_key != ident.key:
                    # Keys move between rows (continuity re-keys a team): park them
                    # first so the unique constraint on hr_key holds at every statement.
                    parked.append({"id": old.id, "hr_key": f"~moving~{old.id}"})
                changes.append(
                    {
                        **values,
                        "id": old.id,
                        "members_json": json.dumps(sorted(ident.members)),
                        "retired_at": retired_at,
                    }
                )
            # ORM bulk statements: UPDATE by primary key and INSERT, one executemany each.
            if parked:
                s.execute(update(ti), parked)
            if changes:
                s.execute(update(ti), changes)
            if inserts:
                s.execute(insert(ti), inserts)
            s.execute(update(ti).where(ti.retired_at.is_(None)).values(last_seen=now))

    # --------------------------------------------------------- deferrals

    def add_deferral(
        self, run_id: str | None, reason: str, resume_at: datetime, now: datetime
    ) -> None:
        with self._write() as s:
            # Only the newest deferral matters: a new one supersedes the older ones.
            s.execute(
                update(models.Deferral)
                .where(models.Deferral.resolved_at.is_(None))
                .values(resolved_at=now)
            )
            s.add(
                models.Deferral(run_id=run_id, reason=reason, resume_at=resume_at, created_at=now)
            )

    def pending_deferral(self) -> DeferralRecord | None:
        with self._sessions() as s:
            row = s.scalars(
                select(models.Deferral)
                .where(models.Deferral.resolved_at.is_(None))
                .order_by(models.Deferral.id.desc())
                .limit(1)
            ).first()
            if row is None:
                return None
            return DeferralRecord(row.id, row.run_id, row.reason, row.resume_at, row.created_at)

    def resolve_deferrals(self, now: datetime) -> None:
        with self._write() as s:
            s.execute(
                update(models.Deferral)
                .where(models.Deferral.resolved_at.is_(None))
                .values(resolved_at=now)
            )

    # --------------------------------------------------------- heartbeat

    def beat(
        self,
        now: datetime,
        *,
        state: str,
        name: str = "daemon",
        quarantined_since: datetime | None = None,
        consecutive_failures: int = 0,
        detail: Mapping[str, Any] | None = None,
    ) -> None:
        values = {
            "beat_at": now,
            "pid": os.getpid(),
            "host": this_host(),
            "state": state,
            "quarantined_since": quarantined_since,
            "consecutive_failures": consecutive_failures,
            "detail": json.dumps(dict(detail or {}), default=str),
        }
        with self._write() as s:
            # An upsert: two replicas starting together both find no row to update.
            s.execute(upsert(self.engine, models.Heartbeat, {"name": name}, values))

    def heartbeat(self, name: str = "daemon") -> HeartbeatRecord | None:
        with self._sessions() as s:
            row = s.get(models.Heartbeat, name)
            if row is None:
                return None
            return HeartbeatRecord(
                row.name,
                row.beat_at,
                row.pid,
                row.host,
                row.state,
                row.quarantined_since,
                row.consecutive_failures,
                json.loads(row.detail or "{}"),
            )

    # ------------------------------------------------------ notifications

    def notify_state(self, name: str = "webhook") -> NotifyRecord | None:
        with self._sessions() as s:
            row = s.get(models.NotifyState, name)
            if row is None:
                return None
            return NotifyRecord(row.state, row.digest, row.notified_at, row.run_id)

    def save_notify_state(self, record: NotifyRecord, name: str = "webhook") -> None:
        values = {
            "state": record.state,
            "digest": record.digest,
            "notified_at": record.notified_at,
            "run_id": record.run_id,
        }
        with self._write() as s:
            s.execute(upsert(self.engine, models.NotifyState, {"name": name}, values))

    def last_run_by_outcome(self) -> dict[str, RunRecord]:
        """The newest finished operational run of each outcome (for the metrics at start)."""
        latest: dict[str, RunRecord] = {}
        with self._sessions() as s:
            query = (
                select(models.Run)
                .where(models.Run.dry_run == 0, models.Run.outcome.is_not(None))
                .order_by(models.Run.started_at.desc())
                .limit(500)
            )
            for row in s.scalars(query).all():
                record = _run_record(row)
                if record.outcome is not None:
                    latest.setdefault(record.outcome, record)
        return latest

    def active_team_count(self) -> int:
        """Teams hrsync keeps in DX now (identities not retired)."""
        with self._sessions() as s:
            return len(
                s.scalars(
                    select(models.TeamIdentity.id).where(models.TeamIdentity.retired_at.is_(None))
                ).all()
            )


def _run_record(r: models.Run) -> RunRecord:
    return RunRecord(
        id=r.id,
        trigger=r.trigger,
        started_at=r.started_at,
        finished_at=r.finished_at,
        outcome=r.outcome,
        exit_code=r.exit_code,
        counts=json.loads(r.counts_json) if r.counts_json else {},
        reason=r.reason,
        people_count=r.people_count,
        dry_run=bool(r.dry_run),
        action=r.action,
    )


def _values(statuses: frozenset[SubmissionStatus]) -> list[str]:
    return sorted(s.value for s in statuses)


def _submission_record(r: models.Submission) -> SubmissionRecord:
    return SubmissionRecord(
        id=r.id,
        run_id=r.run_id,
        method=r.method,
        payload_digest=r.payload_digest,
        plan=SubmittedPlan.from_json(r.plan_json, json.loads(r.payload_json)),
        people_count=r.people_count,
        status=SubmissionStatus(r.status),
        created_at=r.created_at,
        sent_at=r.sent_at,
        accepted_at=r.accepted_at,
        verified_at=r.verified_at,
        import_id=r.import_id,
        detail=r.detail,
        dx_seen=seen_from_json(r.dx_seen_json),
    )
