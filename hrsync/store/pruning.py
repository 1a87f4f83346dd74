"""Retention: history older than `state.keep_days` deleted, in one transaction.

What grows with every run is pruned: runs, submissions (each holds a whole hierarchy),
settled deferrals, approvals no longer pending, refused plans nothing refers to. Never
what a later run, the daemon or a person still reads, however old:

- the newest operational run of each outcome (of those another's lease did not turn
  away too, and of the accepted ones the newest that counted people): the shrink guard's
  baseline, `status`, the metrics and readiness read these;
- the current failure streak, whole (the quarantine counts it);
- unfinished submissions, the last verified one and every one after it that may have
  reached DX (what recovery, planning and verification read), and their runs;
- the runs a pending deferral, the webhook's last notices, the next snapshot's reading
  or a kept approval name;
- pending approvals, and the refused plans any kept approval or run names.

Identities (the teams' reference ids), the people tables, the attribute values (the
attribute guard's baseline), the heartbeat and the lease are not history: never pruned.
tests/store/test_pruning.py holds every answer these queries give to be the same after
a prune.
"""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import ColumnElement, Connection, and_, delete, false, func, or_, select

from hrsync.core.gate.guards import TURNED_AWAY
from hrsync.dx.methods import PROCESS
from hrsync.store import tables
from hrsync.store.runs import ACCEPTED_OUTCOMES, failure_streak
from hrsync.store.sessions import StoreSessions
from hrsync.store.submission_record import (
    NEVER_REACHED_DX,
    UNFINISHED,
    SubmissionStatus,
    status_values,
)


class PruningQueries(StoreSessions):
    def prune(self, before: datetime) -> dict[str, int]:
        """Delete the history older than `before` that nothing needs (above); the rows
        deleted per table. One transaction: never half-pruned."""
        with self._write() as s:
            approvals = _prune_approvals(s, before)
            submissions = _prune_submissions(s, before)
            deferrals = _prune_deferrals(s, before)
            runs = _prune_runs(s, before)
            refused = _prune_refused_plans(s, before)
        return {
            "runs": runs,
            "submissions": submissions,
            "deferrals": deferrals,
            "approvals": approvals,
            "refused_plans": refused,
        }


def _prune_approvals(s: Connection, before: datetime) -> int:
    a = tables.approvals
    settled = or_(
        and_(a.c.applied_at.is_not(None), a.c.applied_at < before),
        and_(a.c.applied_at.is_(None), a.c.expires_at < before),  # expired long ago
    )
    return s.execute(delete(a).where(settled)).rowcount


def _prune_submissions(s: Connection, before: datetime) -> int:
    sub = tables.submissions
    is_verified = and_(sub.c.status == SubmissionStatus.VERIFIED.value, sub.c.method == PROCESS)
    verified = s.execute(select(func.max(sub.c.id)).where(is_verified)).scalar()
    # The shrink guard reads the verified submission of the newest run, planning the
    # newest verified one: the same one, but both are kept whatever the order.
    of_newest_run = s.execute(
        select(sub.c.id)
        .join(tables.runs, tables.runs.c.id == sub.c.run_id)
        .where(is_verified)
        .order_by(tables.runs.c.started_at.desc())
        .limit(1)
    ).scalar()
    # What `store.submissions.after(last verified)` reads: DX may still apply these.
    may_reach = and_(sub.c.method == PROCESS, sub.c.status.not_in(status_values(NEVER_REACHED_DX)))
    needed: list[ColumnElement[bool]] = [sub.c.status.in_(status_values(UNFINISHED))]
    if of_newest_run is not None:
        needed.append(sub.c.id == of_newest_run)
    if verified is None:
        needed.append(may_reach)
    else:
        needed.extend([sub.c.id == verified, and_(sub.c.id > verified, may_reach)])
    return s.execute(delete(sub).where(sub.c.created_at < before, ~or_(*needed))).rowcount


def _prune_deferrals(s: Connection, before: datetime) -> int:
    d = tables.deferrals
    settled = and_(d.c.resolved_at.is_not(None), d.c.created_at < before)
    return s.execute(delete(d).where(settled)).rowcount


def _prune_runs(s: Connection, before: datetime) -> int:
    runs = tables.runs
    kept = _newest_per_outcome(s)
    needed: list[ColumnElement[bool]] = [runs.c.id.in_(sorted(kept)) if kept else false()]
    # Runs other rows name (their run_id would point at nothing; a submission's would
    # cascade away with it). A refused plan's first run is only a note: it keeps no run.
    for column in (
        tables.submissions.c.run_id,
        tables.approvals.c.applied_run_id,
        tables.notify_state.c.run_id,
        tables.next_snapshot.c.run_id,
    ):
        needed.append(runs.c.id.in_(select(column).where(column.is_not(None))))
    d = tables.deferrals.c
    needed.append(
        runs.c.id.in_(select(d.run_id).where(d.run_id.is_not(None), d.resolved_at.is_(None)))
    )
    needed.append(failure_streak(s))
    return s.execute(delete(runs).where(runs.c.started_at < before, ~or_(*needed))).rowcount


def _newest_per_outcome(s: Connection) -> set[str]:
    """The ids of the newest operational run of each outcome; of each outcome's runs no
    lease turned away; and of the accepted ones that counted people."""
    runs = tables.runs
    operational = (runs.c.dry_run == 0, runs.c.outcome.is_not(None))
    not_turned_away = or_(runs.c.defer_kind.is_(None), runs.c.defer_kind != TURNED_AWAY)
    counted = and_(runs.c.outcome.in_(ACCEPTED_OUTCOMES), runs.c.people_count.is_not(None))
    kept: set[str] = set()
    for extra in (None, not_turned_away, counted):
        conditions = [*operational] if extra is None else [*operational, extra]
        newest = (
            select(runs.c.outcome, func.max(runs.c.started_at).label("started_at"))
            .where(*conditions)
            .group_by(runs.c.outcome)
            .subquery()
        )
        kept.update(
            s.execute(
                select(runs.c.id)
                .join(
                    newest,
                    and_(
                        runs.c.outcome == newest.c.outcome,
                        runs.c.started_at == newest.c.started_at,
                    ),
                )
                .where(*conditions)
            ).scalars()
        )
    return kept


def _prune_refused_plans(s: Connection, before: datetime) -> int:
    refused = tables.refused_plans
    a, runs = tables.approvals.c, tables.runs.c
    named = or_(
        refused.c.plan_id.in_(select(a.plan_id)),
        refused.c.plan_id.in_(select(runs.plan_id).where(runs.plan_id.is_not(None))),
    )
    return s.execute(delete(refused).where(refused.c.last_refused_at < before, ~named)).rowcount
