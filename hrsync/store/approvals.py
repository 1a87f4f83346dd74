"""The refused_plans and approvals tables: plans a guard refused, by plan id, and a
person's approvals of them (issue 23).

An approval is written by `hrsync approve` from any machine that reaches the store, and
read by the daemon at least every minute: `pending` is one indexed read.
"""

from __future__ import annotations

import json
from collections.abc import Collection, Mapping
from dataclasses import asdict, dataclass, replace
from datetime import datetime
from typing import Any

from sqlalchemy import Row, insert, select, update

from hrsync.core.gate.plan_ids import Approval, PlanSummary
from hrsync.store import tables
from hrsync.store.sessions import StoreSessions
from hrsync.store.upsert import upsert


@dataclass(frozen=True, slots=True)
class RefusedPlan:
    plan_id: str
    run_id: str | None  # the first run that refused it
    created_at: datetime
    last_refused_at: datetime
    payload_digest: str
    guards: tuple[str, ...]
    summary: PlanSummary
    preview_url: str | None = None


class ApprovalQueries(StoreSessions):
    # ------------------------------------------------------------- refused plans

    def save_refused_plan(
        self,
        plan_id: str,
        *,
        run_id: str,
        now: datetime,
        payload_digest: str,
        summary: PlanSummary,
        payload_json: str,
    ) -> None:
        """Keep a refused plan by its id; a plan refused again only moves
        `last_refused_at` (the first run and what it held stay)."""
        refused = tables.refused_plans
        with self._write() as s:
            known = s.execute(select(refused.c.plan_id).where(refused.c.plan_id == plan_id)).first()
            if known is not None:
                s.execute(
                    update(refused).where(refused.c.plan_id == plan_id).values(last_refused_at=now)
                )
                return
            values = {
                "run_id": run_id,
                "created_at": now,
                "last_refused_at": now,
                "payload_digest": payload_digest,
                "guards_json": json.dumps(list(summary.guards)),
                "summary_json": json.dumps(summary.to_json(), sort_keys=True),
                "payload_json": payload_json,
            }
            # Two replicas refusing the same plan in the same second: one row, no crash.
            s.execute(upsert(self.engine, refused, {"plan_id": plan_id}, values))

    def refused_plan(self, plan_id: str) -> RefusedPlan | None:
        refused = tables.refused_plans
        with self._read() as s:
            row = s.execute(select(refused).where(refused.c.plan_id == plan_id)).first()
        return None if row is None else _refused(row)

    def refused_plan_payload(self, plan_id: str) -> str | None:
        """Exactly what the refused plan would send (JSON): what its preview shows."""
        refused = tables.refused_plans
        with self._read() as s:
            return s.execute(
                select(refused.c.payload_json).where(refused.c.plan_id == plan_id)
            ).scalar()

    def save_preview_url(self, plan_id: str, url: str, now: datetime) -> None:
        """Keep the plan's DX preview; the first one stays (one preview per plan id)."""
        refused = tables.refused_plans
        with self._write() as s:
            s.execute(
                update(refused)
                .where(refused.c.plan_id == plan_id, refused.c.preview_url.is_(None))
                .values(preview_url=url, preview_created_at=now)
            )

    def refused_plans(self, plan_ids: Collection[str]) -> dict[str, RefusedPlan]:
        if not plan_ids:
            return {}
        refused = tables.refused_plans
        with self._read() as s:
            rows = s.execute(select(refused).where(refused.c.plan_id.in_(sorted(plan_ids))))
            return {row.plan_id: _refused(row) for row in rows}

    # ------------------------------------------------------------- approvals

    def add(
        self,
        plan_id: str,
        *,
        approved_by: str,
        note: str | None,
        now: datetime,
        expires_at: datetime,
        via: str = "approve",
        applied_run_id: str | None = None,
    ) -> Approval:
        approval = Approval(
            id=0,  # the store's, once inserted
            plan_id=plan_id,
            approved_by=approved_by,
            approved_at=now,
            expires_at=expires_at,
            note=note,
            applied_run_id=applied_run_id,
            applied_at=now if applied_run_id is not None else None,
            via=via,
        )
        # The table's columns are the approval's fields.
        values = {k: v for k, v in asdict(approval).items() if k != "id"}
        with self._write() as s:
            result = s.execute(insert(tables.approvals).values(**values))
            (approval_id,) = result.inserted_primary_key or (0,)
        return replace(approval, id=int(approval_id))

    def pending(self, now: datetime) -> list[Approval]:
        """Approvals not applied and not expired, newest first: what a run may apply."""
        approvals = tables.approvals
        query = (
            select(approvals)
            .where(approvals.c.applied_at.is_(None), approvals.c.expires_at > now)
            .order_by(approvals.c.approved_at.desc(), approvals.c.id.desc())
        )
        with self._read() as s:
            return [_approval(row) for row in s.execute(query)]

    def recent(self, limit: int = 50) -> list[Approval]:
        """The newest approvals, whatever their state (`hrsync approvals`)."""
        approvals = tables.approvals
        query = (
            select(approvals)
            .order_by(approvals.c.approved_at.desc(), approvals.c.id.desc())
            .limit(limit)
        )
        with self._read() as s:
            return [_approval(row) for row in s.execute(query)]

    def applied(self, plan_id: str) -> Approval | None:
        """The newest approval of `plan_id` a run applied, if any."""
        approvals = tables.approvals
        query = (
            select(approvals)
            .where(approvals.c.plan_id == plan_id, approvals.c.applied_at.is_not(None))
            .order_by(approvals.c.applied_at.desc(), approvals.c.id.desc())
            .limit(1)
        )
        with self._read() as s:
            row = s.execute(query).first()
        return None if row is None else _approval(row)

    def applied_by(self, run_ids: Collection[str]) -> dict[str, Approval]:
        """The approval each of these runs applied, by run id (`history`)."""
        if not run_ids:
            return {}
        approvals = tables.approvals
        query = select(approvals).where(approvals.c.applied_run_id.in_(sorted(run_ids)))
        with self._read() as s:
            return {row.applied_run_id: _approval(row) for row in s.execute(query)}

    def mark_applied(self, approval_id: int, run_id: str, now: datetime) -> bool:
        """The approval is used by `run_id`; False when another run used it first."""
        approvals = tables.approvals
        with self._write() as s:
            done = s.execute(
                update(approvals)
                .where(approvals.c.id == approval_id, approvals.c.applied_at.is_(None))
                .values(applied_run_id=run_id, applied_at=now)
            )
        return bool(done.rowcount)

    def expire(self, approval_id: int, now: datetime) -> None:
        """The approval, not applied, expires now (one dated after the runner's clock: it
        is not honoured now, nor later when the clock catches up with its date)."""
        approvals = tables.approvals
        with self._write() as s:
            s.execute(
                update(approvals)
                .where(approvals.c.id == approval_id, approvals.c.applied_at.is_(None))
                .values(expires_at=now)
            )

    def extend(self, until: datetime, now: datetime) -> list[Approval]:
        """Pending approvals that would expire before `until` now expire then (a snapshot
        window defers their plan); the ones extended."""
        approvals = tables.approvals
        due = (
            approvals.c.via == "approve",
            approvals.c.applied_at.is_(None),
            approvals.c.expires_at > now,
            approvals.c.expires_at < until,
        )
        with self._write() as s:
            rows = list(s.execute(select(approvals).where(*due)))
            if rows:
                s.execute(
                    update(approvals)
                    .where(approvals.c.id.in_([row.id for row in rows]))
                    .values(expires_at=until)
                )
        return [_approval(row) for row in rows]

    def mark_plan_applied(self, run_id: str, now: datetime) -> bool:
        """DX shows the plan `run_id` submitted, though that run never heard DX take it:
        the approval it honoured (the newest pending one of its plan id) is applied by
        it. False when that run honoured none, or its approval is applied already."""
        approvals, runs = tables.approvals, tables.runs
        with self._write() as s:
            plan_id = s.execute(select(runs.c.plan_id).where(runs.c.id == run_id)).scalar()
            if plan_id is None:
                return False
            approval_id = s.execute(
                select(approvals.c.id)
                .where(
                    approvals.c.plan_id == plan_id,
                    approvals.c.via == "approve",
                    approvals.c.applied_at.is_(None),
                    approvals.c.approved_at <= now,
                )
                .order_by(approvals.c.approved_at.desc(), approvals.c.id.desc())
                .limit(1)
            ).scalar()
            if approval_id is None:
                return False
            s.execute(
                update(approvals)
                .where(approvals.c.id == approval_id)
                .values(applied_run_id=run_id, applied_at=now)
            )
        return True


def _refused(row: Row[Any]) -> RefusedPlan:
    summary: Mapping[str, Any] = json.loads(row.summary_json or "{}")
    return RefusedPlan(
        plan_id=row.plan_id,
        run_id=row.run_id,
        created_at=row.created_at,
        last_refused_at=row.last_refused_at,
        payload_digest=row.payload_digest,
        guards=tuple(json.loads(row.guards_json or "[]")),
        summary=PlanSummary.from_json(summary),
        preview_url=row.preview_url,
    )


def _approval(row: Row[Any]) -> Approval:
    # The approval's fields are the table's columns.
    return Approval(**row._mapping)
