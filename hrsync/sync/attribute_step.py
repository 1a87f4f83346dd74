"""The attribute step: after the hierarchy, HR attributes to DX (`users.attributes.update`).

The thinking is in hrsync.core.attributes; this module reads the confirmed values from
the store, sends one call per changed person through the client (and its limiter),
writes each answer to the store as it comes, and decides the step's outcome:

    skipped   not configured; a preview; the run ended before the export was read and
              mapped (a refused export, a mapping problem); with_hierarchy_only
              after a hierarchy step that did not apply (or find in sync)
    refused   a column the export lacks, or the guard; nothing sent
    planned   a dry run with changes (nothing sent)
    in_sync   nothing to send
    applied   the calls were made; people DX refused are counted and logged, never
              more than that (`attributes.failed`); people DX does not count yet
              wait, named (`attributes.waiting`)
    rejected  DX refused the token or its scope (users:write)
    failed    DX unreachable after the client's retries, the lease lost, or SIGTERM
              before the last call (everything confirmed so far is kept); or DX
              refused every one of 5 or more people sent (`refused_every`)

SIGTERM (the run's stop event) is honoured between calls (attribute_calls.py).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from typing import NamedTuple, TextIO

from hrsync import logs
from hrsync.core.attributes import (
    AttributeOutcome,
    AttributePlan,
    calls_digest,
    calls_json,
    column_problems,
    compile_sources,
    desired_values,
    guard_trips,
    plan_attributes,
    shown_value,
)
from hrsync.core.command_lines import approve_command, hrsync_command
from hrsync.core.gate.guards import Refusal, Verdict, judge, waits_for_snapshot
from hrsync.core.gate.plan_ids import Approval, PlanSummary
from hrsync.core.listing import LIMIT, capped
from hrsync.core.people import Person, export_columns
from hrsync.core.text import plural
from hrsync.outcome import Outcome
from hrsync.store.attribute_values import AttributeStore
from hrsync.sync import approval_step
from hrsync.sync.attribute_calls import send
from hrsync.sync.context import Mapped, Run
from hrsync.sync.results import AttributeResult, SyncResult

log = logs.get_logger(__name__)

OVERRIDE_FLAG = "--allow-attribute-changes"
# The hierarchy outcomes after which `with_hierarchy_only` lets attributes through.
_HIERARCHY_DONE = frozenset({Outcome.APPLIED, Outcome.IN_SYNC, Outcome.PLANNED})


def skipped(reason: str | None = None) -> AttributeResult:
    return AttributeResult(AttributeOutcome.SKIPPED, reason=reason)


# The attribute outcomes whose reason the run's reason carries.
_NEEDS_A_PERSON = frozenset(
    {AttributeOutcome.REFUSED, AttributeOutcome.REJECTED, AttributeOutcome.FAILED}
)


def with_attributes(run: Run, result: SyncResult, mapped: Mapped | None) -> SyncResult:
    """`result` (the hierarchy's) with the attribute step run after it and added to it.

    `mapped` is None when the run ended before the export was read and mapped.
    """
    people = mapped.directory.people if mapped is not None else None
    try:
        attributes = sync_attributes(
            run,
            people,
            result.outcome,
            allow_changes=run.request.allow_attribute_changes,
            waits_for_snapshot=waits_for_snapshot(result.defer_kind),
        )
    except Exception as exc:
        # Whatever the attribute step hit, the hierarchy's outcome stands.
        log.error("attributes.crashed", error=str(exc), exc_info=True)
        attributes = AttributeResult(
            AttributeOutcome.FAILED, reason=f"attributes: {type(exc).__name__}: {exc}"
        )
    reason, action = result.reason, result.action
    if attributes.reason and attributes.outcome in _NEEDS_A_PERSON:
        reason = f"{reason}; {attributes.reason}" if reason else attributes.reason
        # The hierarchy's own approval comes first: it is the one sent before the attributes.
        action = action or attributes.action
    report = result.report
    if attributes.report:
        report = f"{report.rstrip()}\n\n{attributes.report}" if report else attributes.report
    return dataclasses.replace(
        result,
        attributes=attributes,
        counts={**result.counts, **attributes.counts},
        reason=reason,
        action=action,
        report=report,
    )


def attributes_outcome(result: SyncResult) -> str:
    """`attributes_outcome` of `sync.finished`: skipped when the step never ran."""
    attributes = result.attributes
    return (attributes.outcome if attributes is not None else AttributeOutcome.SKIPPED).value


def sync_attributes(
    run: Run,
    people: Sequence[Person] | None,
    hierarchy: Outcome,
    *,
    allow_changes: bool = False,
    waits_for_snapshot: bool = False,
    progress_to: TextIO | None = None,
) -> AttributeResult:
    """The attribute step of `run`; `people` None when the export was refused;
    `waits_for_snapshot`: the hierarchy was deferred by a snapshot (no approval counts)."""
    settings = run.settings.attributes
    if not settings.active:
        return skipped()
    if run.request.preview:
        return skipped("a preview sends no attributes")
    if people is None:
        return skipped("the run ended before the export was read and mapped: nothing is sent")
    if settings.with_hierarchy_only and hierarchy not in _HIERARCHY_DONE:
        reason = (
            f"attributes.with_hierarchy_only is set and the hierarchy step ended {hierarchy.value}"
        )
        log.info("attributes.skipped", reason=reason)
        return skipped(reason)

    sources = compile_sources(settings.entries)
    problems = column_problems(sources, export_columns(people))
    if problems:
        reason = "attributes refused, nothing sent: " + capped(problems, sep="; ")
        log.error("attributes.refused", reason=reason)
        return AttributeResult(AttributeOutcome.REFUSED, reason=reason, report=reason)

    store = AttributeStore(run.store)
    desired = desired_values(people, sources, clear_empty=settings.clear_empty)
    # Who DX counts, as the hierarchy and earlier answers taught: those it does not, wait.
    dx_people = run.store.people.dx_people()
    plan = plan_attributes(
        desired,
        store.confirmed(),
        store.failures(),
        run.clock(),
        tuple(settings.entries),
        not_users={e: p.since for e, p in dx_people.items() if p.counted is False},
        users={e for e, p in dx_people.items() if p.counted},
    )
    report = render_attribute_plan(plan)
    _log_plan(plan)
    held = len(plan.held)
    judged = _judged(
        run, plan, in_window=waits_for_snapshot, allow_changes=allow_changes, people=len(people)
    )
    verdict = judged.verdict
    if verdict.refusal is not None:
        refusal = verdict.refusal
        command = hrsync_command(run.settings.command_config, "sync", OVERRIDE_FLAG)
        reason = (
            "attributes refused, nothing sent: "
            + refusal.reason
            + f". If these changes are intended, run once: {command}"
        )
        log.error("attributes.refused", reason=reason, approve=command, plan_id=refusal.plan_id)
        return AttributeResult(
            AttributeOutcome.REFUSED,
            unchanged=plan.unchanged,
            failed=held,
            reason=reason,
            action=command,
            plan=plan,
            report="\n".join((report, reason, judged.difference + _approve_lines(run, refusal))),
            plan_id=refusal.plan_id,
        )
    if run.request.dry_run or not plan.changes:
        outcome = AttributeOutcome.PLANNED if plan.changes else AttributeOutcome.IN_SYNC
        return AttributeResult(
            outcome,
            unchanged=plan.unchanged,
            failed=held,
            plan=plan,
            report=report,
            waiting=_log_waiting([w.email for w in plan.waiting]),
        )
    sent = send(run, store, plan, progress_to)
    if verdict.plan_id is not None and sent.updated:
        approval_step.attributes_applied(run, verdict.plan_id, judged.approval)
    if sent.waiting:
        report += "\n" + render_waiting(sent.waiting, "DX answered: no such user")
    return AttributeResult(
        sent.outcome,
        updated=sent.updated,
        unchanged=plan.unchanged,
        failed=len(sent.failures) + len(plan.held),
        reason=sent.reason,
        plan=plan,
        report=report,
        failures=sent.failures,
        waiting=_log_waiting([*(w.email for w in plan.waiting), *sent.waiting]),
    )


class Judged(NamedTuple):
    verdict: Verdict
    approval: Approval | None = None  # the person's approval that let it through
    difference: str = ""  # how a refused plan differs from another approved one


def _judged(
    run: Run, plan: AttributePlan, *, in_window: bool, allow_changes: bool, people: int
) -> Judged:
    """The attribute guard through the one gate: a refused plan has an id, kept with its
    calls; an approval of exactly that id lets it through, never while the hierarchy
    waits for a snapshot window; `--allow-attribute-changes` lets it through once. With
    the verdict, how a refused plan differs from another one a person approved."""
    trips = guard_trips(plan, run.settings.attributes.max_change_fraction, OVERRIDE_FLAG)
    if not trips:
        return Judged(Verdict())
    strict = Refusal(tuple(trips), ())
    digest = calls_digest(plan)
    approved = approval_step.approvals_now(run)
    verdict = judge(
        strict,
        lambda: None if allow_changes else strict,
        payload_digest=digest,
        approved=() if in_window else approval_step.ids_for(approved, digest),
    )
    approval = next((a for a in approved.pending if a.plan_id == verdict.plan_id), None)
    if verdict.approved and approval is not None:
        approval_step.honoured(approval)
    elif verdict.refusal is None:
        log.warning(
            "attributes.guard_overridden", reasons=[t.message for t in trips], flag=OVERRIDE_FLAG
        )
    if verdict.refusal is None or not run.request.operational:
        return Judged(verdict, approval if verdict.approved else None)
    plan_id = verdict.plan_id
    assert plan_id is not None, "the gate gives every refusal its plan id"
    summary = PlanSummary(
        guards=verdict.tripped,
        archives=(),
        people=people,
        last_accepted_people=None,
        current_teams=0,
        counts={"attribute_calls": len(plan.changes)},
    )
    run.store.approvals.save_refused_plan(
        plan_id,
        run_id=run.run_id,
        now=run.clock(),
        payload_digest=digest,
        summary=summary,
        payload_json=calls_json(plan),
    )
    return Judged(
        verdict, difference=approval_step.difference_from_approved(run, plan_id, summary, approved)
    )


def _approve_lines(run: Run, refusal: Refusal) -> str:
    """The refusal's approval, as the hierarchy's says it: DX has no preview of attribute
    changes, so the report above is what a person reviews."""
    plan_id = refusal.plan_id
    if plan_id is None:
        return ""
    return (
        f"Plan {plan_id}: to approve exactly these attribute changes (the daemon applies "
        "them while the changes it computes are unchanged), run: "
        f"{approve_command(plan_id, run.settings.config_path)}\n"
        "DX has no preview of attribute changes: the changes listed above are the plan."
    )


def _log_waiting(emails: Sequence[str]) -> tuple[str, ...]:
    """`emails` (people DX does not count yet) told at info, sorted: what fixes itself
    (their DX account comes) never pages."""
    waiting = tuple(sorted(set(emails)))
    if waiting:
        log.info(
            "attributes.waiting",
            people=len(waiting),
            first=list(waiting[:LIMIT]),
            detail="not DX users yet: not sent until DX counts them (asked again daily)",
        )
    return waiting


def _log_plan(plan: AttributePlan) -> None:
    for count in plan.counts:
        if count.new or count.changed:
            log.info(
                "attributes.planned",
                attribute=count.name,
                new=count.new,
                changed=count.changed,
                cleared=count.cleared,
                confirmed=count.confirmed,
            )
    if plan.held:
        log.warning(
            "attributes.held",
            people=len(plan.held),
            first=[
                f"{h.email} ({h.error}; retry after {h.retry_at.isoformat()})"
                for h in plan.held[:LIMIT]
            ],
            detail="DX refused these people's values before; they are retried when the values "
            "change, or after a day",
        )


# ---------------------------------------------------------------- presentation


def render_attribute_plan(plan: AttributePlan) -> str:
    """Attribute changes for a person: counts per attribute, then the first people."""
    waiting = [
        f"  - {w.email}: waiting (not a DX user yet); asked again after "
        f"{w.retry_at.isoformat()}, sent once DX counts them"
        for w in plan.waiting[:LIMIT]
    ]
    if len(plan.waiting) > LIMIT:
        waiting.append(f"  ... and {len(plan.waiting) - LIMIT} more waiting")
    if not plan.changes and not plan.held:
        head = f"Attributes: in sync ({plural(plan.unchanged, 'person')} unchanged"
        if plan.waiting:
            head += f", {len(plan.waiting)} waiting for DX"
        return "\n".join([head + ").", *waiting])
    lines = [
        f"Attributes: {plural(len(plan.changes), 'person')} to update "
        f"({plural(plan.values_to_send, 'value')}), {plan.unchanged} unchanged"
        + (f", {len(plan.held)} held after an earlier failure" if plan.held else "")
        + "."
    ]
    for count in plan.counts:
        if count.new or count.changed:
            cleared = f" ({count.cleared} cleared)" if count.cleared else ""
            lines.append(
                f"  {count.name}: {count.new} new, {count.changed} changed{cleared} "
                f"of {count.confirmed} confirmed"
            )
    for change in plan.changes[:LIMIT]:
        shown = ", ".join(
            f"{name} {_before(change.previous.get(name))}-> {shown_value(value)}"
            for name, value in change.values.items()
        )
        lines.append(f"  - {change.email}: {shown}")
    if len(plan.changes) > LIMIT:
        lines.append(f"  ... and {len(plan.changes) - LIMIT} more")
    for held in plan.held[:LIMIT]:
        lines.append(
            f"  - {held.email}: held ({held.error}); retried after {held.retry_at.isoformat()} "
            "or when the values change"
        )
    if len(plan.held) > LIMIT:
        lines.append(f"  ... and {len(plan.held) - LIMIT} more held")
    if waiting:
        lines.append(f"  {len(plan.waiting)} waiting for DX:")
        lines.extend(waiting)
    return "\n".join(lines)


def render_waiting(emails: Sequence[str], why: str) -> str:
    """People found not to be DX users this run, for the report."""
    lines = [f"Attributes waiting for DX ({why}):"]
    lines.extend(
        f"  - {email}: waiting (not a DX user yet); sent once DX counts them"
        for email in emails[:LIMIT]
    )
    if len(emails) > LIMIT:
        lines.append(f"  ... and {len(emails) - LIMIT} more waiting")
    return "\n".join(lines)


def _before(value: str | None) -> str:
    return "" if value is None else f"{shown_value(value)} "
