"""The submissions table: each `process` call recorded before it is made, each step
after it, and the queries recovery and planning read (the record's shape is
store/submission_record.py)."""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from sqlalchemy import ColumnElement, Engine, Row, insert, select, update

from hrsync.core.gate.plan import SeenTeam
from hrsync.dx.methods import PROCESS
from hrsync.store import tables
from hrsync.store.sessions import StoreSessions
from hrsync.store.submission_record import (
    NEVER_REACHED_DX,
    UNFINISHED,
    SubmissionStatus,
    SubmittedPlan,
    seen_from_json,
    seen_to_json,
    status_values,
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
    def __init__(self, engine: Engine) -> None:
        super().__init__(engine)
        # A submission's plan, by its id: its columns are written once, at insert, and a
        # run asks for the last verified one at several stages; parsing a large org's
        # plan is a tenth of a second each time.
        self._plans: dict[int, SubmittedPlan] = {}

    def record(
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
            inserted = s.execute(
                insert(tables.submissions).values(
                    run_id=run_id,
                    method=method,
                    payload_digest=plan.digest,
                    payload_json=json.dumps(payload, separators=(",", ":")),
                    plan_json=plan.to_json(),
                    people_count=people_count,
                    status=SubmissionStatus.PENDING.value,
                    created_at=now,
                )
            )
            (submission_id,) = inserted.inserted_primary_key_rows[0] or (None,)
            if not isinstance(submission_id, int):
                raise RuntimeError(f"the database gave no id for the submission: {submission_id!r}")
            return submission_id

    def mark(
        self,
        submission_id: int,
        status: SubmissionStatus,
        now: datetime,
        *,
        import_id: str | None = None,
        detail: str | None = None,
        dx_seen: Mapping[str, SeenTeam] | None = None,
    ) -> None:
        values: dict[str, Any] = {"status": status.value}
        if dx_seen is not None:
            values["dx_seen_json"] = seen_to_json(dx_seen)
        if status is SubmissionStatus.SENT:
            values["sent_at"] = now
        elif status is SubmissionStatus.ACCEPTED:
            values["accepted_at"] = now
        elif status is SubmissionStatus.VERIFIED:
            values["verified_at"] = now
        if import_id is not None:
            values["import_id"] = import_id
        if detail is not None:
            values["detail"] = detail
        sub = tables.submissions
        with self._write() as s:
            marked = s.execute(update(sub).where(sub.c.id == submission_id).values(values))
            if marked.rowcount == 0:
                raise KeyError(f"submission {submission_id} does not exist")

    def unfinished(self) -> SubmissionRecord | None:
        return self._latest_submission(tables.submissions.c.status.in_(status_values(UNFINISHED)))

    def last_verified(self) -> SubmissionRecord | None:
        return self._latest_submission(tables.submissions.c.status == SubmissionStatus.VERIFIED)

    def after(
        self, after_id: int | None, *, since: datetime | None = None
    ) -> list[SubmissionRecord]:
        """`process` submissions with an id above `after_id` (all when None) that may
        have reached DX (not rejected, deferred or failed before sending), oldest first;
        with `since`, only those created at or after it."""
        sub = tables.submissions
        query = (
            select(sub)
            .where(
                sub.c.method == PROCESS,
                sub.c.status.not_in(status_values(NEVER_REACHED_DX)),
            )
            .order_by(sub.c.id)
        )
        if after_id is not None:
            query = query.where(sub.c.id > after_id)
        if since is not None:
            query = query.where(sub.c.created_at >= since)
        with self._read() as s:
            return [self._record(r) for r in s.execute(query)]

    def _latest_submission(self, condition: ColumnElement[bool]) -> SubmissionRecord | None:
        sub = tables.submissions
        with self._read() as s:
            row = s.execute(
                select(sub)
                .where(condition, sub.c.method == PROCESS)
                .order_by(sub.c.id.desc())
                .limit(1)
            ).first()
            return None if row is None else self._record(row)

    def _record(self, r: Row[Any]) -> SubmissionRecord:
        plan = self._plans.get(r.id)
        if plan is None:
            plan = SubmittedPlan.from_json(r.plan_json, lambda: json.loads(r.payload_json))
            if len(self._plans) >= _PLANS_KEPT:
                self._plans.clear()
            self._plans[r.id] = plan
        return _submission_record(r, plan)


# Plans kept parsed: the last verified one and the one a run is sending, a few over.
_PLANS_KEPT = 4


def _submission_record(r: Row[Any], plan: SubmittedPlan) -> SubmissionRecord:
    return SubmissionRecord(
        id=r.id,
        run_id=r.run_id,
        method=r.method,
        payload_digest=r.payload_digest,
        plan=plan,
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
