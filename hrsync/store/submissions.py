"""The submissions table: each `process` call recorded before it is made, each step
after it, and the queries recovery and planning read (the record's shape is
store/submission.py)."""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from sqlalchemy import select

from hrsync.core.plan import SeenTeam
from hrsync.dx.methods import PROCESS
from hrsync.store import models
from hrsync.store.sessions import StoreSessions
from hrsync.store.submission import (
    NEVER_REACHED_DX,
    UNFINISHED,
    SubmissionStatus,
    SubmittedPlan,
    seen_from_json,
    seen_to_json,
)


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


class SubmissionQueries(StoreSessions):
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
