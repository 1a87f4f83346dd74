"""The stages of a run up to DX's answer: read → map, assign → plan, gate, then preview
or submit (what follows `process` is in confirm.py).

`read_export` and `map_teams` are also `hrsync check`'s: they raise `InputRefused` or
`SourceUnavailable` and log nothing, so each caller reports in its own words. The run's
wrappers (`read_and_map`, `assign_and_plan`, `gate_plan`, `preview`) log and end the run
through `context.end`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from hrsync import logs
from hrsync.config import Settings
from hrsync.core.attributes import used_columns
from hrsync.core.guards import Defer, Refuse, gate
from hrsync.core.identity import assign
from hrsync.core.mapping import MappingError, TeamMap, build_teams
from hrsync.core.people import Directory, read_people, template_columns
from hrsync.core.plan import LeadChange, MembershipChange, Rename, awaited_refs, make_plan
from hrsync.core.problems import group_problems, grouped_lines
from hrsync.core.verify import awaiting_since
from hrsync.dx.errors import DxDeferred, DxError, DxOutcomeUnknown, DxRejected
from hrsync.logcap import capped, debug_enabled
from hrsync.outcome import Outcome
from hrsync.render import (
    approval_command,
    describe,
    event_fields,
    render_deferral,
    render_plan,
    render_refusal,
    render_unknown_managers,
    render_unplaced,
)
from hrsync.sources.base import SourceError, SourceUnavailable
from hrsync.sources.open import open_export
from hrsync.store.submission import SubmissionStatus, SubmittedPlan
from hrsync.sync.context import Mapped, Planned, Run, Submitted, end
from hrsync.sync.outcomes import dx_read, end_deferred_by_dx, end_rejected

log = logs.get_logger("hrsync.sync")


class InputRefused(Exception):
    """The export, or the teams made from it, cannot be synced; nothing is sent.

    `stage`: "source" (the export cannot be read), "export" (rows with problems),
    "template" (the mapping settings do not fit the export), "mapping" (the teams).
    """

    def __init__(
        self,
        stage: Literal["source", "export", "template", "mapping"],
        problems: Sequence[str],
        *,
        source: str = "",
        directory: Directory | None = None,
    ) -> None:
        super().__init__(problems[0] if problems else "unknown problem")
        self.stage = stage
        self.problems = tuple(problems)
        self.source = source
        self.directory = directory  # the people read, when the export itself was fine


@dataclass(frozen=True, slots=True)
class Export:
    source: str
    directory: Directory
    pages: int = 1  # HTTP pages read (1 for a file)


def read_export(settings: Settings) -> Export:
    """read: the export as people, or InputRefused / SourceUnavailable (retry later)."""
    src = settings.source
    try:
        export = open_export(src)
        directory = read_people(
            export.name,
            export.columns,
            export.rows(),
            src.fields,
            settings.filter,
            also_used=(
                *template_columns(settings.mapping.team_name),
                *used_columns(settings.attributes),
            ),
            null_values=src.null_values,
            unknown_manager=src.unknown_manager,
        )
    except SourceUnavailable:
        raise
    except SourceError as exc:
        raise InputRefused("source", [str(exc)]) from None
    if not directory.ok:
        raise InputRefused(
            "export",
            # One line per kind: a wrong column is one problem with a count, not 404.
            grouped_lines(directory.problems),
            source=export.name,
            directory=directory,
        )
    return Export(export.name, directory, export.pages)


def map_teams(settings: Settings, export: Export) -> TeamMap:
    """map: the desired teams of the people read, or InputRefused."""
    people = export.directory.people
    try:
        team_map = build_teams(people, settings.mapping, settings.source.fields)
    except MappingError as exc:
        raise InputRefused("template", exc.problems, source=export.source) from None
    if team_map.problems:
        raise InputRefused("mapping", grouped_lines(team_map.problems), source=export.source)
    return team_map


def read_and_map(run: Run) -> Mapped:
    """read → map, logged; a refused or unavailable export ends the run."""
    try:
        export = read_export(run.settings)
    except SourceUnavailable as exc:
        # Not the export's fault: a failed run, retried on the next schedule.
        log.error("export.unavailable", detail=str(exc))
        end(run, Outcome.FAILED, reason=str(exc))
    except InputRefused as exc:
        if exc.directory is not None:
            _log_warnings(exc.directory)
        _refuse_input(run, exc.problems)
    directory = export.directory
    _log_warnings(directory)
    log.info(
        "export.read",
        source=export.source,
        pages=export.pages,
        people=len(directory.people),
        excluded=directory.excluded,
    )
    try:
        team_map = map_teams(run.settings, export)
    except InputRefused as exc:
        _refuse_input(run, exc.problems)
    with capped(log, "mapping.note") as notes:
        for note in team_map.notes:
            notes.emit(lambda note: {"detail": note}, note)
    _log_unplaced(team_map)
    return Mapped(export.source, directory, team_map)


def _log_warnings(directory: Directory) -> None:
    # Warnings of one kind are one event with a count, as problems are.
    with capped(log, "export.warning", see="hrsync check") as warnings:
        for group in group_problems(directory.warnings):
            warnings.emit(lambda g: {"detail": str(g)}, group, "warning")


def _log_unplaced(team_map: TeamMap) -> None:
    # The total always, at warning, then one event per person through the log's cap (a
    # 50,000-person export without managers is not 50,000 lines): nobody leaves unseen.
    unplaced = team_map.unplaced
    if unplaced:
        log.warning("mapping.people_in_no_team", total=len(unplaced), see="hrsync plan")
    with capped(log, "mapping.person_in_no_team", see="hrsync plan") as people:
        for person in unplaced:
            people.emit(
                lambda p: {
                    "person": p.employee_id,
                    "name": p.name,
                    "location": p.location,
                    "reason": p.reason,
                },
                person,
                "warning",
            )
    with capped(log, "mapping.lead_without_reports", see="hrsync check") as leads:
        for lead in team_map.leads_without_reports:
            leads.emit(
                lambda w: {
                    "unit": w.unit,
                    "person": w.employee_id,
                    "location": w.location,
                    "detail": str(w),
                },
                lead,
                "warning",
            )


def _refuse_input(run: Run, problems: Sequence[str]) -> None:
    for problem in problems:
        log.error("export.problem", detail=problem)
    first = problems[0] if problems else "unknown problem"
    more = f" (and {len(problems) - 1} more)" if len(problems) > 1 else ""
    report = "The export has problems; nothing was sent:\n" + "\n".join(
        f"  - {p}" for p in problems
    )
    end(run, Outcome.REFUSED, reason=f"export invalid: {first}{more}", report=report)


def assign_and_plan(run: Run, mapped: Mapped) -> Planned:
    """assign → plan: reference_ids for the desired teams, and the diff against DX."""
    dx_teams = dx_read(run, run.client.teams)
    snapshots = dx_read(run, run.client.snapshots)
    # New ids are derived from the HR keys inside `assign`: the one place they are made.
    assignment = assign(mapped.team_map.teams, run.store.load_identities(), dx_teams)
    with capped(log, "identity.decision") as decisions:
        for decision in assignment.decisions:
            if decision.how != "known":
                decisions.emit(
                    lambda d: {
                        "how": d.how,
                        "key": d.key,
                        "reference_id": d.reference_id,
                        "detail": d.detail,
                    },
                    decision,
                )
    last = run.store.last_verified_submission()
    plan = make_plan(
        assignment.teams,
        dx_teams,
        {r.reference_id: r for r in last.plan.rows} if last else {},
        unreferenced_dx=assignment.unreferenced_dx,
        last_seen=last.dx_seen if last else {},
    )
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
    return Planned(
        people_count=mapped.people_count,
        assignment=assignment,
        dx_teams=tuple(dx_teams),
        snapshots=tuple(snapshots),
        plan=plan,
        report=(
            render_plan(plan)
            + render_unknown_managers(mapped.directory.unknown_managers)
            + render_unplaced(mapped.team_map.unplaced)
        ),
        unplaced=mapped.team_map.unplaced,
    )


def gate_plan(run: Run, planned: Planned) -> None:
    """gate: returns when the plan may be sent; ends the run when there is nothing to
    send, a deferral or a guard stops it, or this is a dry run."""
    plan = planned.plan
    if not plan.has_changes:
        # Names and parents match DX; leads and members match what DX last verifiably
        # took: nothing to send.
        log.info("sync.in_sync", teams=plan.desired_count)
        if run.request.operational:
            run.store.save_identities(planned.assignment.identities, run.clock())
        end(run, Outcome.IN_SYNC, planned)
    run.renew_lease()
    decision = gate(
        plan,
        snapshots=planned.snapshots,
        now=run.clock(),
        settings=run.settings.sync,
        people_count=planned.people_count,
        last_accepted_people=run.store.last_accepted_people_count(),
        current_team_count=len(planned.dx_teams),
        payload_bytes=plan.payload_bytes,
        allow_archive=run.request.allow_archive,
        allow_shrink=run.request.allow_shrink,
    )
    if isinstance(decision, Defer):
        text = render_deferral(decision.deferral)
        log.warning("sync.deferred", kind=decision.deferral.kind, detail=text)
        end(
            run,
            Outcome.DEFERRED,
            planned,
            report=planned.report + "\n" + text,
            reason=decision.deferral.reason,
            resume_at=decision.deferral.resume_at,
        )
    if isinstance(decision, Refuse):
        refusal = decision.refusal
        config_path = run.settings.config_path
        text = render_refusal(refusal, config_path)
        for archive in refusal.archives:
            log.warning(
                "sync.refused.would_archive", team=archive.name, reference_id=archive.reference_id
            )
        log.warning(
            "sync.refused",
            guards=list(refusal.guards),
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
    if run.request.dry_run:
        end(run, Outcome.PLANNED, planned)
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


def preview(run: Run, planned: Planned) -> None:
    """`sync --preview`: DX's preview call instead of `process`; always ends the run."""
    try:
        accepted = run.client.preview(planned.payload())
    except DxDeferred as exc:
        end_deferred_by_dx(run, exc, planned)
    except DxRejected as exc:
        end_rejected(run, exc, planned)
    except DxError as exc:
        end(run, Outcome.FAILED, planned, reason=str(exc))
    url = accepted.preview_url
    log.info("sync.preview", preview_url=url, import_id=accepted.import_id)
    end(
        run,
        Outcome.PLANNED,
        planned,
        report=planned.report + f"\nPreview: {url}\n",
        preview_url=url,
    )


def submit(run: Run, planned: Planned) -> Submitted:
    """submit: record the submission, then `process`; DX's answer decides what follows."""
    store, now = run.store, run.clock()
    record = _submitted_plan(run, planned)
    # Before the call: evidence of what is about to be sent, with the identities to keep
    # once DX may have it (not before: a rejected or deferred request must not retire
    # teams DX still has).
    sid = store.record_submission(run.run_id, record, people_count=planned.people_count, now=now)
    email = run.settings.sync.notify_email
    payload = planned.payload()
    log.info("sync.submitting", teams=len(payload), notify_email=email)
    # "sent": from here on DX may have it, so a restart waits for it, not resends.
    store.mark_submission(sid, SubmissionStatus.SENT, run.clock())
    try:
        accepted = run.client.process(payload, email=email)
    except DxOutcomeUnknown as exc:
        store.mark_submission(sid, SubmissionStatus.OUTCOME_UNKNOWN, run.clock(), detail=str(exc))
        store.save_identities(planned.assignment.identities, run.clock())
        log.warning("sync.outcome_unknown", detail=str(exc))
        return Submitted(planned, sid, record, now, ambiguous=True)
    except DxDeferred as exc:
        store.mark_submission(sid, SubmissionStatus.DEFERRED, run.clock(), detail=str(exc))
        end_deferred_by_dx(run, exc, planned)
    except DxRejected as exc:
        store.mark_submission(sid, SubmissionStatus.REJECTED, run.clock(), detail=str(exc))
        end_rejected(run, exc, planned)
    except DxError as exc:
        store.mark_submission(sid, SubmissionStatus.FAILED, run.clock(), detail=str(exc))
        end(run, Outcome.FAILED, planned, reason=str(exc))
    store.mark_submission(sid, SubmissionStatus.ACCEPTED, run.clock(), import_id=accepted.import_id)
    store.save_identities(planned.assignment.identities, run.clock())
    log.info("sync.accepted", import_id=accepted.import_id)
    return Submitted(planned, sid, record, now, ambiguous=False)


def _submitted_plan(run: Run, planned: Planned) -> SubmittedPlan:
    plan, rows = planned.plan, planned.assignment.teams
    last = run.store.last_verified_submission()
    # Submissions since the last verified one may still be applied by DX any moment.
    earlier = [
        (sub.plan.payload_rows(), sub.plan.awaiting_change)
        for sub in run.store.submissions_after(last.id if last else None)
    ]
    awaiting = awaiting_since(
        awaited_refs(plan),
        {r.reference_id: r.to_payload() for r in rows},
        planned.dx_teams,
        earlier,
    )
    return SubmittedPlan(
        rows=tuple(rows),
        archived_refs=tuple(a.reference_id for a in plan.archives if a.reference_id),
        archived_dx_ids=tuple(a.dx_id for a in plan.archives),
        awaiting_change=awaiting,
        identities=tuple(planned.assignment.identities),
        renames=tuple(c for c in plan.changes if isinstance(c, Rename)),
        lead_changes=tuple(c for c in plan.changes if isinstance(c, LeadChange)),
        counts=plan.counts,
        digest=plan.payload_digest,
    )
