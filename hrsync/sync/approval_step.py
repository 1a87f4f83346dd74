"""Approvals bound to a plan, as a run meets them (issue 23): which approved plan ids the
gate may honour, a refused plan kept by its id, and the approval a run applied.

An approval is used only when DX takes the plan (accepts it, or shows it after a lost
answer): a dry run, a preview, a deferral, a refusal or a submission DX never took
leaves it pending. A manual run let past a guard by its own flags
(`sync --allow-archive N`, `--allow-shrink`) is kept in the same table, applied by that
run, with the OS user: the audit has one place.
"""

from __future__ import annotations

import dataclasses
import getpass
import os
import shlex
from collections.abc import Mapping
from datetime import datetime

from hrsync import logs
from hrsync.core import defaults
from hrsync.core.command_lines import approve_command
from hrsync.core.gate.guards import ATTRIBUTE_GUARDS, Deferral, Go, Refuse
from hrsync.core.gate.plan import canonical_payload
from hrsync.core.gate.plan_ids import (
    Approval,
    PlanSummary,
    difference_line,
    expires_at,
    from_the_future,
    summarize,
)
from hrsync.core.report.notify import SUCCESS
from hrsync.store.approvals import RefusedPlan
from hrsync.sync.context import Run
from hrsync.sync.plan_preview import preview_for_notice
from hrsync.sync.results import Planned

log = logs.get_logger(__name__)


@dataclasses.dataclass(frozen=True, slots=True)
class Approved:
    """The approvals pending when the run reached the gate, and their refused plans."""

    pending: tuple[Approval, ...]
    refused: Mapping[str, RefusedPlan]
    # The approval the last accepted run went by, while that run's plan is the one this
    # run meets again: DX has what the person let through, HR has not changed since (the
    # same people held, say, until their rows are fixed), and the same plan is no new
    # decision to refuse, and page for, every run. Any change makes a new plan id.
    standing: Approval | None = None

    @property
    def usable(self) -> tuple[Approval, ...]:
        return self.pending if self.standing is None else (*self.pending, self.standing)


def ids_for(approved: Approved, payload_digest: str) -> set[str]:
    """The approved plan ids the gate may honour. A plan id is short: it counts only when
    the stored plan it names sends exactly this payload (the full digest)."""
    return {
        a.plan_id
        for a in approved.usable
        if (stored := approved.refused.get(a.plan_id)) is not None
        and stored.payload_digest == payload_digest
    }


def approvals_now(run: Run) -> Approved:
    now = run.clock()
    pending = tuple(a for a in run.store.approvals.pending(now) if _within_ttl(run, a, now))
    standing = _standing(run)
    ids = {a.plan_id for a in pending} | ({standing.plan_id} if standing else set())
    return Approved(pending, run.store.approvals.refused_plans(ids), standing)


def _standing(run: Run) -> Approval | None:
    """The approval the last accepted run was let through by (`Approved.standing`)."""
    last = run.store.runs.newest(SUCCESS)
    if last is None or not last.plan_id:
        return None
    return run.store.approvals.applied(last.plan_id)


def _within_ttl(run: Run, approval: Approval, now: datetime) -> bool:
    """Whether this daemon honours the approval by the time to live
    (`defaults.APPROVAL_TTL_HOURS`), not only by the expiry the approver's hrsync gave it:
    counted from the approval, or from the end of the snapshot window that defers the
    runs, whichever is later."""
    ttl = defaults.APPROVAL_TTL_HOURS
    if from_the_future(approval, now):
        log.warning(
            "sync.approval_from_the_future",
            plan_id=approval.plan_id,
            approved_by=approval.approved_by,
            approved_at=approval.approved_at.isoformat(),
            detail=f"dated after this runner's clock ({now.isoformat()}): a wrong clock where "
            "it was given, or a row written into the store; approve the plan again",
        )
        # Expired now: else it would be honoured once the clock reaches its date, and
        # then for a whole time to live counted from that date.
        run.store.approvals.expire(approval.id, now)
        return False
    window_end = run.store.snapshot_outlook.window_deferral_end()
    start = max(approval.approved_at, window_end or approval.approved_at)
    if now < expires_at(start, ttl):
        return True
    log.warning(
        "sync.approval_too_old",
        plan_id=approval.plan_id,
        approved_by=approval.approved_by,
        approved_at=approval.approved_at.isoformat(),
        detail=f"older than an approval's time to live, {ttl:g} hours",
    )
    return False


def os_user() -> str:
    """Who runs this process, for the audit; never fails (a container's user may have no
    passwd entry)."""
    try:
        return getpass.getuser()
    except (KeyError, OSError):
        return os.environ.get("USER") or os.environ.get("USERNAME") or f"uid {os.getuid()}"


def honoured(approval: Approval) -> None:
    log.info(
        "sync.approval_honoured",
        plan_id=approval.plan_id,
        approved_by=approval.approved_by,
        approved_at=approval.approved_at.isoformat(),
        note=approval.note,
    )


def let_past(run: Run, planned: Planned, decision: Go, approved: Approved) -> Planned:
    """The plan with what let it past the guards, if anything did: the approval a person
    gave, or this run's own flags (audited as an approval by the OS user)."""
    if decision.plan_id is None:
        return planned
    now = run.clock()
    if decision.approved:
        approval = next(a for a in approved.usable if a.plan_id == decision.plan_id)
        honoured(approval)
    else:
        request = run.request
        flags = [f"--allow-archive={request.allow_archive}"] if request.allow_archive else []
        flags += ["--allow-shrink"] if request.allow_shrink else []
        flags += [f"--allow-held={request.allow_held}"] if request.allow_held is not None else []
        approval = Approval(
            id=0,  # recorded only when the run submits
            plan_id=decision.plan_id,
            approved_by=os_user(),
            approved_at=now,
            expires_at=now,
            note=shlex.join(["sync", *flags]),
            via="sync",
        )
        log.info(
            "sync.guards_overridden",
            plan_id=approval.plan_id,
            by=approval.approved_by,
            flags=flags,
        )
    return dataclasses.replace(planned, plan_id=decision.plan_id, approval=approval)


def refused(
    run: Run, planned: Planned, decision: Refuse, approved: Approved
) -> tuple[str, str | None]:
    """Keep the refused plan by its id; the lines the refusal adds when a person approved
    another plan (how this one differs from it, and its new id); and, for the daemon's
    notification, the URL of DX's preview of exactly this plan."""
    plan, now = planned.plan, run.clock()
    plan_id = decision.refusal.plan_id
    assert plan_id is not None, "the gate gives every refusal its plan id"
    summary = summarize(
        plan,
        decision.tripped,
        people=planned.people_count,
        last_accepted_people=run.store.runs.last_accepted_people_count(),
        current_teams=len(planned.dx_teams),
        held=len(planned.directory.held) if planned.directory is not None else 0,
    )
    run.store.approvals.save_refused_plan(
        plan_id,
        run_id=run.run_id,
        now=now,
        payload_digest=plan.payload_digest,
        summary=summary,
        payload_json=canonical_payload(planned.assignment.teams).decode(),
    )
    preview_url = None
    request = run.request
    # The daemon's runs only: a person at a shell has `sync --preview PLAN_ID`. The gate
    # refused after it found no snapshot window open, so this preview is outside one.
    if request.operational and request.trigger != "manual":
        preview_url = preview_for_notice(
            run.client, run.store, plan_id, planned.payload(), run.clock
        )
    return difference_from_approved(run, plan_id, summary, approved), preview_url


def difference_from_approved(
    run: Run, plan_id: str, summary: PlanSummary, approved: Approved
) -> str:
    """The lines a refusal adds while a person approved another plan: how this one
    differs from the newest such approval, and its own id to approve ("" when none)."""
    kind = _changes_attributes(summary)
    others = [
        a
        for a in approved.pending
        if a.plan_id != plan_id
        and (
            (stored := approved.refused.get(a.plan_id)) is None
            or _changes_attributes(stored.summary) == kind
        )
    ]
    if not others:
        return ""
    newest = others[0]
    stored = approved.refused.get(newest.plan_id)
    line = difference_line(
        plan_id,
        summary,
        newest,
        _summary_of(stored),
        approve_command(plan_id, run.settings.command_config),
    )
    log.warning(
        "sync.approval_not_matching",
        plan_id=plan_id,
        approved_plan_id=newest.plan_id,
        approved_by=newest.approved_by,
        detail=line,
    )
    return line + "\n"


def _changes_attributes(summary: PlanSummary) -> bool:
    """Whether a plan is the attribute step's: a difference compares like with like."""
    return any(guard in ATTRIBUTE_GUARDS for guard in summary.guards)


def _summary_of(stored: RefusedPlan | None) -> PlanSummary | None:
    return None if stored is None else stored.summary


def outlive_window(run: Run, deferral: Deferral) -> None:
    """A snapshot window defers the plan: an approval's lifetime does not run meanwhile,
    so pending approvals expire no sooner than `defaults.APPROVAL_TTL_HOURS` after the
    window's end (the resume that applies them)."""
    if not run.request.operational or not deferral.kind.startswith("snapshot"):
        return
    until = expires_at(deferral.resume_at, defaults.APPROVAL_TTL_HOURS)
    for approval in run.store.approvals.extend(until, run.clock()):
        log.info(
            "sync.approval_extended",
            plan_id=approval.plan_id,
            approved_by=approval.approved_by,
            resume_at=deferral.resume_at.isoformat(),
            expires_at=until.isoformat(),
        )


def applied(run: Run, planned: Planned) -> None:
    """DX took the run's plan: its approval is used (a person's is marked applied by this run;
    a run's own flags are recorded as applied)."""
    approval = planned.approval
    if approval is not None:
        _used(run, approval)


def attributes_applied(run: Run, plan_id: str, found: Approval | None) -> None:
    """DX took the attribute calls of a plan a guard would refuse: the approval that let
    them through (`found`) is used, or the run's `--allow-attribute-changes` recorded as
    applied (`found` None), as the hierarchy's are."""
    if found is None:
        now = run.clock()
        found = Approval(
            id=0,
            plan_id=plan_id,
            approved_by=os_user(),
            approved_at=now,
            expires_at=now,
            note="sync --allow-attribute-changes",
            via="sync",
        )
    _used(run, found)


def _used(run: Run, approval: Approval) -> None:
    now = run.clock()
    if approval.applied_at is not None:
        return  # a standing approval: recorded when it was first applied
    if approval.via == "sync":
        run.store.approvals.add(
            approval.plan_id,
            approved_by=approval.approved_by,
            note=approval.note,
            now=now,
            expires_at=now,
            via="sync",
            applied_run_id=run.run_id,
        )
        return
    if not run.store.approvals.mark_applied(approval.id, run.run_id, now):
        log.warning(
            "sync.approval_already_applied",
            plan_id=approval.plan_id,
            detail="another run applied this approval first",
        )
