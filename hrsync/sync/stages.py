"""The stages of a run up to DX's answer: read → map (reading.py), assign → plan, gate
(here), then preview or submit (submit.py; what follows `process` is in confirm.py).

The run's stages (`assign_and_plan`, `gate_plan`) log and end the run through
`context.end`. The other stages' names are importable from here too, so story.py,
`hrsync check` and `explain` find every stage in one place.
"""

from __future__ import annotations

import dataclasses

from hrsync import logs
from hrsync.core.gate.guards import HELD_GUARDS, Defer, Go, Refusal, Refuse, gate
from hrsync.core.gate.snapshot_ahead import next_snapshot
from hrsync.core.report.problems import located_lines
from hrsync.core.report.render import (
    approval_command,
    render_deferral,
    render_held,
    render_leads_left,
    render_plan,
    render_refusal,
    render_source_notes,
    render_unknown_managers,
    render_unplaced,
)
from hrsync.core.teams.identity import assign
from hrsync.logcap import log_each
from hrsync.outcome import Outcome
from hrsync.sync import approval_step
from hrsync.sync.context import Mapped, Run, end
from hrsync.sync.error_outcomes import dx_read
from hrsync.sync.not_in_dx import learn_settled
from hrsync.sync.planning import end_when_in_sync, plan_rows
from hrsync.sync.reading import Export, InputRefused, map_teams, read_and_map, read_export
from hrsync.sync.results import Planned
from hrsync.sync.submit import preview, submit

log = logs.get_logger(__name__)

__all__ = [
    "Export",
    "InputRefused",
    "assign_and_plan",
    "gate_plan",
    "map_teams",
    "preview",
    "read_and_map",
    "read_export",
    "submit",
]


def assign_and_plan(run: Run, mapped: Mapped) -> Planned:
    """assign → plan: reference_ids for the desired teams, and the diff against DX."""
    dx_teams = dx_read(run, run.client.teams)
    if run.request.operational:  # a dry run or preview keeps and learns nothing
        learn_settled(run, dx_teams)
    snapshots = dx_read(run, run.client.snapshots)
    # Kept for `status`, the metrics and the daemon's sync before the next snapshot.
    now = run.clock()
    run.store.snapshot_outlook.save_next_snapshot(next_snapshot(snapshots, now), now, run.run_id)
    # New ids are derived from the HR keys inside `assign`: the one place they are made.
    assignment = assign(mapped.team_map.teams, run.store.identities.load(), dx_teams)
    log_each(
        log,
        "identity.decision",
        (d for d in assignment.decisions if d.how != "known"),
        lambda d: {"how": d.how, "key": d.key, "reference_id": d.reference_id, "detail": d.detail},
    )
    plan = plan_rows(run, assignment.teams, dx_teams, assignment.unreferenced_dx)
    notes = (
        render_source_notes(mapped.source_notes)
        + render_held(mapped.reading.holds)
        + render_unknown_managers(mapped.directory.unknown_managers)
        + render_leads_left(mapped.team_map.leads_left)
        + render_unplaced(mapped.team_map.unplaced)
    )
    return Planned(
        plan,
        assignment=assignment,
        dx_teams=tuple(dx_teams),
        snapshots=tuple(snapshots),
        report=render_plan(plan) + notes,
        notes=notes,
        reading=mapped.reading,
    )


def gate_plan(run: Run, planned: Planned) -> Planned:
    """gate: returns the plan when it may be sent (with the approval or flags that let it
    past a guard, if any); ends the run when there is nothing to send, a deferral or a
    guard stops it, or this is a dry run."""
    plan = planned.plan
    resend = end_when_in_sync(run, planned)
    run.renew_lease()
    approved = approval_step.approvals_now(run)
    decision = gate(
        plan,
        snapshots=planned.snapshots,
        now=run.clock(),
        settings=run.settings.sync,
        people_count=planned.people_count,
        last_accepted_people=run.store.runs.last_accepted_people_count(),
        current_team_count=len(planned.dx_teams),
        payload_bytes=plan.payload_bytes,
        allow_archive=run.request.allow_archive,
        allow_shrink=run.request.allow_shrink,
        approved=approval_step.ids_for(approved, plan.payload_digest),
        joins=tuple(join.count for join in planned.joins),
        last_joins=run.store.runs.last_accepted_join_counts() if planned.joins else None,
        sources=planned.sources,
        last_sources=run.store.runs.last_accepted_source_counts() if planned.sources else None,
        held=[person.key for person in planned.directory.held] if planned.directory else (),
        allow_held=run.request.allow_held,
    )
    if isinstance(decision, Defer):
        text = render_deferral(decision.deferral)
        log.warning("sync.deferred", kind=decision.deferral.kind, detail=text)
        approval_step.outlive_window(run, decision.deferral)
        end(
            run,
            Outcome.DEFERRED,
            planned,
            report=planned.report + "\n" + text,
            reason=decision.deferral.reason,
            resume_at=decision.deferral.resume_at,
            defer_kind=decision.deferral.kind,
        )
    if isinstance(decision, Refuse):
        refusal = decision.refusal
        config_path = run.settings.command_config
        planned = dataclasses.replace(planned, plan_id=refusal.plan_id)
        text = render_refusal(refusal, config_path)
        difference, preview_url = approval_step.refused(run, planned, decision, approved)
        planned = dataclasses.replace(planned, preview_url=preview_url)
        text += difference
        for archive in refusal.archives:
            log.warning(
                "sync.refused.would_archive", team=archive.name, reference_id=archive.reference_id
            )
        _log_held_problems(planned, refusal)
        log.warning(
            "sync.refused",
            plan_id=refusal.plan_id,
            guards=list(refusal.guards),
            reason=refusal.reason,
            override=approval_command(refusal, config_path),
            detail=text,
        )
        end(
            run,
            Outcome.REFUSED,
            planned,
            report=planned.report + "\n" + text,
            reason=refusal.reason,
            action=approval_command(refusal, config_path),
        )
    if isinstance(decision, Go):
        planned = approval_step.let_past(run, planned, decision, approved)
        if not resend:  # only held people took it to the gate: nothing else to send
            end_when_in_sync(run, planned, judged=True)
    if run.request.dry_run:
        end(run, Outcome.PLANNED, planned, report=planned.report + _let_past_note(planned))
    if run.stopping():
        log.warning("sync.stopped", step="before submitting")
        end(
            run,
            Outcome.DEFERRED,
            planned,
            reason="shutting down before submitting; nothing was sent",
            resume_at=run.clock(),
        )
    if not run.renew_lease():
        end(
            run,
            Outcome.FAILED,
            planned,
            reason="lost the lease to another sync before submitting; nothing sent",
        )
    return planned


def _log_held_problems(planned: Planned, refusal: Refusal) -> None:
    """A refusal of the held guard logs what is wrong with the held people's rows, where
    (never the values), one event per kind, as a refused export's problems are: what to
    fix first."""
    directory = planned.directory
    if directory is None or not any(g in HELD_GUARDS for g in refusal.guards):
        return
    problems = dict.fromkeys(p for person in directory.held for p in person.problems)
    for line in located_lines(problems):
        log.error("export.problem", detail=line)


def _let_past_note(planned: Planned) -> str:
    approval = planned.approval
    if approval is None or approval.via != "approve":
        return ""
    return (
        f"\nPlan {approval.plan_id} was approved by {approval.approved_by} "
        f"({approval.approved_at.isoformat()}): a sync applies it.\n"
    )
