"""`hrsync approve PLAN_ID` and `hrsync approvals`: a person's approval of exactly one
refused plan, kept in the state store, and the list of them.

Approving sends nothing to DX and needs neither the token nor the export: only the
store, so it works from any machine that reaches it (`kubectl exec`, a Kubernetes Job,
an operator's laptop on PostgreSQL). The daemon applies the plan at its next run, and
looks for new approvals at least every minute.
"""

from __future__ import annotations

import argparse
import sys
from datetime import UTC, datetime
from typing import Any

from hrsync import logs
from hrsync.clock import utcnow
from hrsync.commands.output import show, unwritable_output, write_output
from hrsync.commands.startup import load_local, open_store
from hrsync.core import defaults
from hrsync.core.command_lines import hrsync_command
from hrsync.core.gate.guards import NEVER_OVERRIDDEN
from hrsync.core.gate.plan_ids import (
    Approval,
    expires_at,
    guard_setting,
    normalise_plan_id,
    when,
)
from hrsync.core.text import plural
from hrsync.outcome import EXIT_OK, EXIT_USAGE
from hrsync.store.repo import Store
from hrsync.sync.approval_step import os_user

log = logs.get_logger(__name__)

APPROVALS_SCHEMA = "hrsync.approvals/1"
MAX_NOTE_CHARS = 2000
MAX_BY_CHARS = 200


def approve(args: argparse.Namespace) -> int:
    settings = load_local(args)
    plan_id = normalise_plan_id(args.plan_id)
    if plan_id is None:
        show(
            f"hrsync: {args.plan_id!r} is not a plan id: a plan id is 8 hex digits, as a "
            "refusal, `hrsync plan` and `hrsync status` print it",
            file=sys.stderr,
        )
        return EXIT_USAGE
    by = (args.by or os_user()).strip()
    note = args.note.strip() if args.note else None
    if not by or len(by) > MAX_BY_CHARS:
        show(f"hrsync: --by must be 1 to {MAX_BY_CHARS} characters", file=sys.stderr)
        return EXIT_USAGE
    if note is not None and len(note) > MAX_NOTE_CHARS:
        show(f"hrsync: --note must be at most {MAX_NOTE_CHARS} characters", file=sys.stderr)
        return EXIT_USAGE
    store = open_store(settings, existing=True)
    try:
        refused = store.approvals.refused_plan(plan_id)
        if refused is None:
            show(
                f"hrsync: no refused plan {plan_id} in the state store "
                f"({settings.state.database_url.split('://', 1)[0]}): check the id the refusal "
                "printed, and that this command uses the daemon's state store "
                f"(`{hrsync_command(settings.command_config, 'status')}` shows the refused plan)",
                file=sys.stderr,
            )
            return EXIT_USAGE
        blocking = [g for g in refused.guards if g in NEVER_OVERRIDDEN]
        if blocking:
            show(
                f"hrsync: plan {plan_id} cannot be approved: {', '.join(blocking)} is never "
                "overridden; fix the export or the configuration and run again",
                file=sys.stderr,
            )
            return EXIT_USAGE
        applied = store.approvals.applied(plan_id)
        # A plan refused again since it was applied (DX changed back by hand) is news.
        done_at = applied.applied_at if applied is not None else None
        if applied is not None and done_at is not None and refused.last_refused_at <= done_at:
            show(
                f"hrsync: plan {plan_id} is already applied (by run "
                f"{applied.applied_run_id} at {when(done_at)}); nothing recorded"
            )
            return EXIT_OK
        now = utcnow()
        window_ends = _window_ends(store, now)
        # The approval's lifetime runs from when the daemon may apply it: the window's end.
        approval = store.approvals.add(
            plan_id,
            approved_by=by,
            note=note,
            now=now,
            expires_at=expires_at(max(now, window_ends or now), defaults.APPROVAL_TTL_HOURS),
        )
    finally:
        store.close()
    log.info(
        "approval.recorded",
        plan_id=plan_id,
        approved_by=by,
        note=note,
        expires_at=approval.expires_at.isoformat(),
    )
    summary = refused.summary
    trips = ", ".join(map(guard_setting, summary.guards)) or "no guard"
    archives = f"; archives {plural(len(summary.archives), 'team')}" if summary.archives else ""
    ttl = f"{defaults.APPROVAL_TTL_HOURS:g} hours"
    if window_ends is not None:
        when_applied = (
            f"DX is in a snapshot window until {when(window_ends)}: the daemon applies it "
            f"then; it expires at {when(approval.expires_at)} ({ttl} from the window's end)."
        )
    else:
        when_applied = (
            f"The daemon applies it at its next run (it looks for approvals every minute), "
            f"outside DX's snapshot windows; it expires at {when(approval.expires_at)} ({ttl})."
        )
    show(
        f"Approved plan {plan_id} ({trips}{archives}) as {by}.\n"
        f"Nothing was sent to DX. {when_applied} The daemon applies it only while the plan "
        "it computes is this one; if HR changed meanwhile, it refuses again with a new plan "
        "id and says how it differs.\n"
        "To apply it now from this shell instead: "
        f"{hrsync_command(settings.command_config, 'sync')}"
    )
    return EXIT_OK


def _window_ends(store: Store, now: datetime) -> datetime | None:
    """When the snapshot window that defers the daemon's runs ends, if one does now."""
    ends = store.snapshot_outlook.window_deferral_end()
    return ends if ends is not None and ends > now else None


def approvals(args: argparse.Namespace) -> int:
    if (problem := unwritable_output(args.out)) is not None:
        show(problem, file=sys.stderr)
        return EXIT_USAGE
    store = open_store(load_local(args), existing=True)
    try:
        found = store.approvals.recent(args.limit)
    finally:
        store.close()
    now = utcnow()
    if args.format == "json":
        from hrsync.commands.documents import dumps

        document = {
            "schema": APPROVALS_SCHEMA,
            "approvals": [approval_document(a, now) for a in found],
        }
        write_output(dumps(document), args.out)
        return EXIT_OK
    lines = [format_approval(a, now) for a in found] or ["no approvals yet"]
    write_output("\n".join(lines), args.out)
    return EXIT_OK


def format_approval(approval: Approval, now: datetime) -> str:
    state = approval.state(now)
    at = when(approval.approved_at)
    line = f"{at}  plan {approval.plan_id}  {state:<8} by {approval.approved_by}"
    if approval.via == "sync":
        line += " (a manual run's override flags)"
    if state == "applied":
        line += f"; applied by run {approval.applied_run_id}"
        if approval.applied_at is not None and approval.via != "sync":
            line += f" at {when(approval.applied_at)}"
    elif state == "pending":
        line += f"; expires {when(approval.expires_at)}"
    else:
        line += f"; expired {when(approval.expires_at)}, never applied"
    if approval.note:
        line += f"  note: {approval.note}"
    return line


def approval_document(approval: Approval, now: datetime | None = None) -> dict[str, Any]:
    """One approval for `approvals --format json`, `history --format json`."""
    return {
        "plan_id": approval.plan_id,
        "state": approval.state(now) if now is not None else None,
        "by": approval.approved_by,
        "note": approval.note,
        "via": approval.via,
        "approved_at": _iso(approval.approved_at),
        "expires_at": _iso(approval.expires_at) if approval.via == "approve" else None,
        "applied_run_id": approval.applied_run_id,
        "applied_at": _iso(approval.applied_at),
    }


def _iso(value: datetime | None) -> str | None:
    return None if value is None else value.astimezone(UTC).isoformat()
