"""Planning against DX, shared by the first plan of a run (stages.py) and a plan made again
in the same run for leads DX does not know yet (lead_substitution.py)."""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence

from hrsync import logs
from hrsync.core.gate.guards import held_trips, table_trips
from hrsync.core.gate.plan import MembershipChange, Plan, make_plan
from hrsync.core.people.second_tables import JOIN, UNION
from hrsync.core.report.render import describe, event_fields
from hrsync.core.teams.identity import TeamRow
from hrsync.dx.models import DxTeam
from hrsync.logcap import capped, debug_enabled
from hrsync.outcome import Outcome
from hrsync.sync import approval_step
from hrsync.sync.context import Run, end
from hrsync.sync.not_in_dx import counted_by_email, learn_people, recheck
from hrsync.sync.results import Planned, Uncounted

log = logs.get_logger(__name__)


def plan_rows(
    run: Run, rows: Sequence[TeamRow], dx_teams: Sequence[DxTeam], unreferenced_dx: Sequence[DxTeam]
) -> Plan:
    """The changes from what DX holds to `rows`, leads and members judged against the last
    submission DX verifiably took; each change logged."""
    last = run.store.submissions.last_verified()
    plan = make_plan(
        rows,
        dx_teams,
        {r.reference_id: r for r in last.plan.rows} if last else {},
        unreferenced_dx=unreferenced_dx,
        last_seen=last.dx_seen if last else {},
    )
    _log_plan(plan)
    return plan


def _log_plan(plan: Plan) -> None:
    # Member e-mails only at debug (plan.members): HR data a log at info need not hold.
    debug = debug_enabled()
    with capped(log, "plan.change") as changes:
        for change in plan.changes:
            if change.kind != "unchanged":
                changes.emit(
                    lambda c: {
                        "summary": describe(c, emails=False),
                        **event_fields(c, emails=False),
                    },
                    change,
                )
                if debug and isinstance(change, MembershipChange):
                    log.debug("plan.members", **event_fields(change))
    for drift in plan.drift:
        log.warning(
            "plan.drift",
            team=drift.name,
            reference_id=drift.reference_id,
            details=list(drift.details),
        )
    log.info("plan.ready", **plan.counts)


def _untrusted(run: Run, planned: Planned) -> Planned:
    """A run in sync sends nothing, so no guard judges it; but a second table that fell
    far below the last accepted run (a join that matched far less, a source of
    `[[source.union]]` that shrank) must not become its guard's baseline."""
    settings, store = run.settings.sync, run.store
    untrusted = set(planned.reading.untrusted)
    joins = [join.count for join in planned.joins]
    for trip in (
        table_trips(joins, store.runs.last_accepted_join_counts(), settings) if joins else ()
    ):
        log.warning("join.baseline_kept", detail=trip.message)
        untrusted.add(JOIN)
    sources = planned.sources
    last_sources = store.runs.last_accepted_source_counts() if sources else {}
    for trip in table_trips(sources, last_sources, settings):
        log.warning("union.baseline_kept", detail=trip.message)
        untrusted.add(UNION)
    reading = dataclasses.replace(planned.reading, untrusted=frozenset(untrusted))
    return dataclasses.replace(planned, reading=reading)


def _held_over(run: Run, planned: Planned) -> bool:
    """Whether the held guard trips: a plan with nothing to change still goes to the gate
    then, which refuses it with an id a person can approve (so many held people may say
    the export is broken, changes or not)."""
    directory = planned.directory
    if directory is None or not directory.held:
        return False
    held = len(directory.held)
    return bool(
        held_trips(held, planned.people_count + held, run.settings.sync, run.request.allow_held)
    )


def end_when_in_sync(run: Run, planned: Planned, *, judged: bool = False) -> bool:
    """Ends the run `in_sync` when there is nothing to send: names and parents match DX,
    leads and members match what DX last verifiably took. A plan the held guard trips
    goes to the gate first (`judged`: the gate let it through, by an approval or the
    run's flags, which are then used: DX already has what they let through). True when
    it returns because the hierarchy is sent again for people DX does not count yet."""
    if planned.plan.has_changes or (not judged and _held_over(run, planned)):
        return False
    if not run.request.operational:  # a dry run or preview keeps and learns nothing
        log.info("sync.in_sync", teams=planned.plan.desired_count)
        end(run, Outcome.IN_SYNC, planned)
    # Read once for the recheck and for what DX's counts teach.
    known = counted_by_email(run.store)
    last = run.store.submissions.last_verified()
    if recheck(run, planned, known, last.created_at if last is not None else None):
        return True
    log.info("sync.in_sync", teams=planned.plan.desired_count)
    planned = _untrusted(run, planned)
    run.store.identities.save(planned.assignment.identities, run.clock())
    # DX holds what it last verifiably took: its counts say whom it counts.
    when = last.created_at if last is not None else run.clock()
    missing, undecided = learn_people(
        run, planned, planned.assignment.teams, planned.dx_teams, when, known, settled=True
    )
    approval_step.applied(run, planned)
    end(run, Outcome.IN_SYNC, planned, uncounted=Uncounted(missing, undecided))
