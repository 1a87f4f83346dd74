"""The runs table: each run's start and end, and the history the guards and the
daemon read back."""

from __future__ import annotations

import json
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import ColumnElement, Connection, Row, and_, func, insert, or_, select, update

from hrsync.core.gate.guards import TURNED_AWAY
from hrsync.core.people.second_tables import TableCount
from hrsync.core.report.notify import ATTENTION, SUCCESS
from hrsync.core.teams.substitutes import LeadSubstitute
from hrsync.outcome import Outcome
from hrsync.store import tables
from hrsync.store.sessions import StoreSessions
from hrsync.store.submission_record import SubmissionStatus

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
    defer_kind: str | None = None  # what deferred it (core.guards' DeferralKind), if it was
    substitutes: tuple[LeadSubstitute, ...] = ()  # stand-in leads in what it sent
    plan_id: str | None = None  # its plan's id when a guard refused it, or was let past

    @property
    def waiting_on(self) -> str | None:
        """What a person must act on after this run: its hierarchy's outcome, or else its
        attribute step's (an applied hierarchy whose attributes were refused ends with the
        refusal's exit code); None when nothing."""
        if self.outcome in ATTENTION:
            return self.outcome
        return _ATTENTION_BY_EXIT.get(self.exit_code) if self.exit_code else None


# The exit codes of the outcomes a person must act on. A run stores its hierarchy's
# outcome and the exit code of the more serious of it and the attribute step's.
_ATTENTION_BY_EXIT = {o.exit_code: o.value for o in Outcome if o.value in ATTENTION}


class RunQueries(StoreSessions):
    def start(self, run_id: str, trigger: str, now: datetime, *, dry_run: bool) -> None:
        with self._write() as s:
            s.execute(
                insert(tables.runs).values(
                    id=run_id, trigger=trigger, started_at=now, dry_run=int(dry_run)
                )
            )

    def finish(
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
        defer_kind: str | None = None,
        substitutes: Sequence[LeadSubstitute] = (),
        plan_id: str | None = None,
        join_counts: Sequence[TableCount] | None = None,
        source_counts: Sequence[TableCount] | None = None,
    ) -> None:
        """`join_counts`: each join's counts, when they may be the join guard's baseline
        (None when the run read no export, or its joins are not to be trusted).
        `source_counts`: likewise each source's rows and people, with `[[source.union]]`."""
        with self._write() as s:
            finished = s.execute(
                update(tables.runs)
                .where(tables.runs.c.id == run_id)
                .values(
                    finished_at=now,
                    outcome=outcome,
                    exit_code=exit_code,
                    counts_json=json.dumps(dict(counts), sort_keys=True),
                    reason=reason,
                    plan_digest=plan_digest,
                    people_count=people_count,
                    action=action,
                    defer_kind=defer_kind,
                    substitutes_json=json.dumps([s._asdict() for s in substitutes])
                    if substitutes
                    else None,
                    plan_id=plan_id,
                    join_counts_json=None
                    if join_counts is None
                    else json.dumps({c.name: [c.rows, c.kept] for c in join_counts}),
                    source_counts_json=None
                    if source_counts is None
                    else json.dumps({c.name: [c.rows, c.kept] for c in source_counts}),
                )
            )
            if finished.rowcount == 0:
                raise KeyError(f"run {run_id} was never started")

    def recent(self, limit: int = 20, *, operational_only: bool = False) -> list[RunRecord]:
        """Newest first. `operational_only` leaves out dry runs and previews, which say
        nothing about whether syncing works."""
        runs = tables.runs
        query = select(runs).order_by(runs.c.started_at.desc()).limit(limit)
        if operational_only:
            query = query.where(runs.c.dry_run == 0)
        with self._read() as s:
            return [_run_record(r) for r in s.execute(query)]

    def dry_runs_since(self, since: datetime | None) -> int:
        """How many dry runs and previews started at or after `since` (all, for None)."""
        runs = tables.runs
        query = select(func.count()).select_from(runs).where(runs.c.dry_run != 0)
        if since is not None:
            query = query.where(runs.c.started_at >= since)
        with self._read() as s:
            return int(s.execute(query).scalar_one())

    def last_accepted_people_count(self) -> int | None:
        """People in the last export DX accepted (for the shrink guard): the newer of the
        last in-sync or applied run and the last verified submission (which may have
        been verified by a later run, after its own run gave up waiting)."""
        people = self._last_accepted(tables.submissions.c.people_count, tables.runs.c.people_count)
        return None if people is None else int(people)

    def last_accepted_join_counts(self) -> dict[str, TableCount]:
        """Each join's counts in the last accepted run that kept them (the join guard's
        baseline), found as `last_accepted_people_count` finds its run."""
        kept = self._last_accepted(tables.runs.c.join_counts_json)
        counts: dict[str, list[int]] = json.loads(kept) if kept is not None else {}
        return {
            name: TableCount.join(name, rows, matched) for name, (rows, matched) in counts.items()
        }

    def last_accepted_source_counts(self) -> dict[str, TableCount]:
        """Each source's counts (`[[source.union]]`) in the last accepted run that kept
        them (the per-source shrink guard's baseline), found as the join counts are."""
        kept = self._last_accepted(tables.runs.c.source_counts_json)
        counts: dict[str, list[int]] = json.loads(kept) if kept is not None else {}
        return {
            name: TableCount.source(name, rows, people) for name, (rows, people) in counts.items()
        }

    def _last_accepted(self, column: Any, of_run: Any = None) -> Any:
        """`column`'s value in the last accepted run that holds one: the newer of the last
        in-sync or applied run (not a dry run) and the run of the last verified submission
        (verified, maybe, by a later run after its own run gave up waiting). `of_run`:
        the runs' own column, when `column` is the submissions'. None when neither."""
        runs, submissions = tables.runs, tables.submissions
        own = column if of_run is None else of_run
        with self._read() as s:
            run = s.execute(
                select(own, runs.c.started_at)
                .where(runs.c.outcome.in_(ACCEPTED_OUTCOMES), runs.c.dry_run == 0, own.is_not(None))
                .order_by(runs.c.started_at.desc())
                .limit(1)
            ).first()
            # A submission's run holding no value leaves the run above standing (a people
            # count is the submission's own, and always there).
            sub = s.execute(
                select(column, runs.c.started_at)
                .join(runs, runs.c.id == submissions.c.run_id)
                .where(submissions.c.status == SubmissionStatus.VERIFIED, column.is_not(None))
                .order_by(runs.c.started_at.desc())
                .limit(1)
            ).first()
        candidates = [c for c in (run, sub) if c is not None]
        if not candidates:
            return None
        return max(candidates, key=lambda c: c[1])[0]

    def consecutive_failures(self) -> list[RunRecord]:
        """The unbroken streak of most recent failed runs (newest first), however long: a
        window of recent runs hid a quarantine threshold above its size."""
        runs = tables.runs
        with self._read() as s:
            query = select(runs).where(failure_streak(s)).order_by(runs.c.started_at.desc())
            return [_run_record(r) for r in s.execute(query)]

    def get(self, run_id: str) -> RunRecord | None:
        runs = tables.runs
        with self._read() as s:
            row = s.execute(select(runs).where(runs.c.id == run_id)).first()
        return None if row is None else _run_record(row)

    def newest(
        self, outcomes: Collection[str], *, skip_turned_away: bool = False
    ) -> RunRecord | None:
        """The newest finished operational run whose outcome is one of `outcomes`, however
        far back (a window of recent runs lost a refusal or the last success behind a
        long series of deferrals). `skip_turned_away` leaves out runs another run's lease
        turned away: they read and decided nothing."""
        runs = tables.runs
        query = select(runs).where(runs.c.dry_run == 0, runs.c.outcome.in_(sorted(outcomes)))
        if skip_turned_away:
            query = query.where(or_(runs.c.defer_kind.is_(None), runs.c.defer_kind != TURNED_AWAY))
        with self._read() as s:
            row = s.execute(query.order_by(runs.c.started_at.desc()).limit(1)).first()
        return None if row is None else _run_record(row)

    def decisive(self) -> RunRecord | None:
        """The newest run that decided whether a person is needed: one that ended in a
        state needing a person, or a success (its `waiting_on` says which). Deferrals and
        failures decide nothing of the kind. `hrsync status` and the daemon's attention
        gauge and `recovered` notice all read it here."""
        return self.newest((*ATTENTION, *SUCCESS))

    def last_ends(self) -> dict[str, datetime]:
        """When the newest operational run of each outcome ended, by outcome."""
        runs = tables.runs
        ended = func.max(func.coalesce(runs.c.finished_at, runs.c.started_at))
        query = (
            select(runs.c.outcome, ended)
            .where(runs.c.dry_run == 0, runs.c.outcome.is_not(None))
            .group_by(runs.c.outcome)
        )
        with self._read() as s:
            return {outcome: at for outcome, at in s.execute(query)}


def _run_record(r: Row[Any]) -> RunRecord:
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
        defer_kind=r.defer_kind,
        substitutes=tuple(
            LeadSubstitute(**item) for item in json.loads(r.substitutes_json or "[]")
        ),
        plan_id=r.plan_id,
    )


def failure_streak(s: Connection) -> ColumnElement[bool]:
    """The runs of the current failure streak: the failed runs (not dry runs) after the
    newest run that ended otherwise. The quarantine counts them
    (`consecutive_failures`); pruning keeps them."""
    runs = tables.runs
    finished = and_(runs.c.dry_run == 0, runs.c.outcome.is_not(None))
    ended = s.execute(
        select(func.max(runs.c.started_at)).where(finished, runs.c.outcome != "failed")
    ).scalar()
    streak = and_(finished, runs.c.outcome == "failed")
    return streak if ended is None else and_(streak, runs.c.started_at > ended)
