"""The runs table: each run's start and end, and the history the guards and the
daemon read back."""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime

from sqlalchemy import select

from hrsync.store import models
from hrsync.store.sessions import StoreSessions
from hrsync.store.submission import SubmissionStatus

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


class RunQueries(StoreSessions):
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
