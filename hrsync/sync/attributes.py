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
              more than that (`attributes.failed`)
    rejected  DX refused the token or its scope (users:write)
    failed    DX unreachable after the client's retries, the lease lost, or SIGTERM
              before the last call; everything confirmed so far is kept

SIGTERM (the run's stop event) is honoured between calls.
"""

from __future__ import annotations

import dataclasses
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TextIO

from hrsync import logs
from hrsync.core.attributes import (
    AttributeOutcome,
    AttributePlan,
    Failure,
    Progress,
    column_problems,
    compile_sources,
    desired_values,
    guard,
    plan_attributes,
    read_result,
    shown_value,
)
from hrsync.core.listing import LIMIT, capped
from hrsync.core.people import Person, export_columns
from hrsync.core.text import plural
from hrsync.dx.errors import DxAuthError, DxError, DxRejected
from hrsync.dx.methods import USER_ATTRIBUTES_UPDATE
from hrsync.outcome import Outcome
from hrsync.render import hrsync_command
from hrsync.store.attributes import AttributeStore
from hrsync.sync.context import Mapped, Run, SyncResult

log = logs.get_logger("hrsync.sync")

SCOPE = "users:write"
OVERRIDE_FLAG = "--allow-attribute-changes"
COUNT_KEYS = ("attributes_updated", "attributes_unchanged", "attributes_failed")
# The hierarchy outcomes after which `with_hierarchy_only` lets attributes through.
_HIERARCHY_DONE = frozenset({Outcome.APPLIED, Outcome.IN_SYNC, Outcome.PLANNED})


@dataclass(frozen=True)
class AttributeResult:
    outcome: AttributeOutcome
    updated: int = 0  # people whose call DX confirmed in full
    unchanged: int = 0  # people with nothing to send
    failed: int = 0  # people DX refused this run, or held after an earlier refusal
    reason: str | None = None
    plan: AttributePlan | None = None
    report: str = ""
    failures: Mapping[str, str] = field(default_factory=dict)  # e-mail -> error, this run

    @property
    def counts(self) -> dict[str, int]:
        return dict(zip(COUNT_KEYS, (self.updated, self.unchanged, self.failed), strict=True))


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
            run, people, result.outcome, allow_changes=run.request.allow_attribute_changes
        )
    except Exception as exc:
        # Whatever the attribute step hit, the hierarchy's outcome stands.
        log.error("attributes.crashed", error=str(exc), exc_info=True)
        attributes = AttributeResult(
            AttributeOutcome.FAILED, reason=f"attributes: {type(exc).__name__}: {exc}"
        )
    reason = result.reason
    if attributes.reason and attributes.outcome in _NEEDS_A_PERSON:
        reason = f"{reason}; {attributes.reason}" if reason else attributes.reason
    report = result.report
    if attributes.report:
        report = f"{report.rstrip()}\n\n{attributes.report}" if report else attributes.report
    return dataclasses.replace(
        result,
        attributes=attributes,
        counts={**result.counts, **attributes.counts},
        reason=reason,
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
    progress_to: TextIO | None = None,
) -> AttributeResult:
    """The attribute step of `run`; `people` None when the export was refused."""
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
    plan = plan_attributes(
        desired, store.confirmed(), store.failures(), run.clock(), tuple(settings.entries)
    )
    report = render_attribute_plan(plan)
    _log_plan(plan)
    held = len(plan.held)
    tripped = guard(plan, settings.max_change_fraction)
    if tripped and allow_changes:
        log.warning("attributes.guard_overridden", reasons=tripped, flag=OVERRIDE_FLAG)
    elif tripped:
        command = hrsync_command(run.settings.config_path, "sync", OVERRIDE_FLAG)
        reason = (
            "attributes refused, nothing sent: "
            + "; ".join(tripped)
            + f". If these changes are intended, run once: {command}"
        )
        log.error("attributes.refused", reason=reason, approve=command)
        return AttributeResult(
            AttributeOutcome.REFUSED,
            unchanged=plan.unchanged,
            failed=held,
            reason=reason,
            plan=plan,
            report=report + "\n" + reason,
        )
    if run.request.dry_run or not plan.changes:
        outcome = AttributeOutcome.PLANNED if plan.changes else AttributeOutcome.IN_SYNC
        return AttributeResult(
            outcome, unchanged=plan.unchanged, failed=held, plan=plan, report=report
        )
    return _send(run, store, plan, report, progress_to)


def _send(
    run: Run, store: AttributeStore, plan: AttributePlan, report: str, progress_to: TextIO | None
) -> AttributeResult:
    total = len(plan.changes)
    started = run.clock()
    progress = Progress(total, started)
    bar = _Bar(progress_to if progress_to is not None else sys.stderr, total)
    updated = 0
    failures: dict[str, str] = {}
    log.info("attributes.sending", people=total, values=plan.values_to_send)

    def result(outcome: AttributeOutcome, reason: str | None = None) -> AttributeResult:
        bar.close()
        return AttributeResult(
            outcome,
            updated=updated,
            unchanged=plan.unchanged,
            failed=len(failures) + len(plan.held),
            reason=reason,
            plan=plan,
            report=report,
            failures=failures,
        )

    for done, change in enumerate(plan.changes):
        if run.stopping():
            reason = (
                f"stopped (SIGTERM) after {done} of {plural(total, 'call')}; what DX "
                "confirmed is kept and the next run sends the rest"
            )
            log.warning("attributes.stopped", sent=done, remaining=total - done)
            return result(AttributeOutcome.FAILED, reason)
        try:
            user = run.client.update_user_attributes(change.email, change.values)
        except DxAuthError as exc:
            reason = (
                f"attributes rejected: DX refused {USER_ATTRIBUTES_UPDATE} ({_dx_words(exc)}); "
                f"the token must be valid and carry the {SCOPE} scope: add it to the API key"
            )
            log.error("attributes.rejected", error=exc.error, message=exc.message, scope=SCOPE)
            return result(AttributeOutcome.REJECTED, reason)
        except DxRejected as exc:
            # About this person (an e-mail DX does not know, a value it will not take).
            _failed(run, store, change.email, change.digest, _dx_words(exc), failures)
        except DxError as exc:
            log.error("attributes.failed_step", error=str(exc), sent=done, remaining=total - done)
            return result(
                AttributeOutcome.FAILED,
                f"attributes: DX could not be reached after {done} of {plural(total, 'call')} "
                f"({exc}); what DX confirmed is kept and the next run sends the rest",
            )
        else:
            answer = read_result(change.values, user)
            if answer.ok:
                store.record(change.email, answer.confirmed, run.clock())
                updated += 1
            else:
                store.record(
                    change.email,
                    answer.confirmed,
                    run.clock(),
                    failure=Failure("; ".join(answer.problems), run.clock(), change.digest),
                )
                _log_failed(change.email, "; ".join(answer.problems), failures)
        bar.update(done + 1)
        now = run.clock()
        if progress.due(done + 1, now):
            elapsed = (now - started).total_seconds()
            log.info(
                "attributes.progress",
                sent=done + 1,
                total=total,
                percent=round(100 * (done + 1) / total),
                updated=updated,
                failed=len(failures),
                elapsed_s=round(elapsed, 1),
            )
            # A first run of 10,000 people outlasts the lease's TTL: renew it as we go.
            if not run.renew_lease():
                return result(
                    AttributeOutcome.FAILED,
                    f"attributes: the lease was lost after {done + 1} of "
                    f"{plural(total, 'call')}; the next run sends the rest",
                )
    log.info("attributes.sent", people=total, updated=updated, failed=len(failures))
    return result(AttributeOutcome.APPLIED)


def _failed(
    run: Run, store: AttributeStore, email: str, digest: str, error: str, failures: dict[str, str]
) -> None:
    store.record(email, {}, run.clock(), failure=Failure(error, run.clock(), digest))
    _log_failed(email, error, failures)


def _log_failed(email: str, error: str, failures: dict[str, str]) -> None:
    failures[email] = error
    log.warning(
        "attributes.failed",
        person=email,
        error=error,
        detail="retried when this person's values change, or after a day",
    )


def _dx_words(exc: DxRejected) -> str:
    parts = [exc.error or "error"]
    if exc.message:
        parts.append(exc.message)
    return ": ".join(parts)


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
    if not plan.changes and not plan.held:
        return f"Attributes: in sync ({_people(plan.unchanged)} unchanged)."
    lines = [
        f"Attributes: {_people(len(plan.changes))} to update "
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
    return "\n".join(lines)


def _people(count: int) -> str:
    return f"{count} {'person' if count == 1 else 'people'}"


def _before(value: str | None) -> str:
    return "" if value is None else f"{shown_value(value)} "


class _Bar:
    """A one-line progress bar, on a terminal only (the log has the progress events)."""

    WIDTH = 30

    def __init__(self, out: TextIO, total: int) -> None:
        self._out = out
        self._total = total
        self._on = total > 1 and _isatty(out)
        self._shown = -1

    def update(self, done: int) -> None:
        if not self._on:
            return
        filled = done * self.WIDTH // self._total
        if filled == self._shown and done != self._total:
            return
        self._shown = filled
        bar = "#" * filled + "." * (self.WIDTH - filled)
        self._out.write(f"\rattributes [{bar}] {done}/{self._total}")
        self._out.flush()

    def close(self) -> None:
        if self._on and self._shown >= 0:
            self._out.write("\n")
            self._out.flush()


def _isatty(out: TextIO) -> bool:
    try:
        return out.isatty()
    except (AttributeError, ValueError):
        return False
