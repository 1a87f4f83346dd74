"""`hrsync history`: the recent runs from the state store, one line each, newest first."""

from __future__ import annotations

import argparse
import sys
from datetime import UTC

from hrsync.commands.output import show, unwritable_output, write_output
from hrsync.commands.startup import load_local, open_store
from hrsync.core.gate.plan_ids import Approval
from hrsync.outcome import EXIT_OK, EXIT_USAGE
from hrsync.store.repo import RunRecord


def history(args: argparse.Namespace) -> int:
    if (problem := unwritable_output(args.out)) is not None:
        show(problem, sys.stderr)
        return EXIT_USAGE
    store = open_store(load_local(args), existing=True)
    try:
        # Dry runs and previews (every `plan`) say nothing of what DX holds: asked for.
        runs = store.runs.recent(args.limit, operational_only=not args.all)
        applied = store.approvals.applied_by([r.id for r in runs])
        hidden = 0
        if not args.all:
            full = len(runs) == args.limit
            hidden = store.runs.dry_runs_since(runs[-1].started_at if runs and full else None)
    finally:
        store.close()
    if args.format == "json":
        from hrsync.commands.documents import dumps, history_document

        write_output(dumps(history_document(runs, applied)), args.out)
        return EXIT_OK
    lines = [format_run(run, applied.get(run.id)) for run in runs] or ["no runs yet"]
    if hidden:
        lines.append(f"({hidden} dry runs and previews not shown: hrsync history --all)")
    write_output("\n".join(lines), args.out)
    return EXIT_OK


def format_run(run: RunRecord, approval: Approval | None = None) -> str:
    when = run.started_at.astimezone(UTC).strftime("%Y-%m-%d %H:%M:%SZ")
    took = (
        f"{(run.finished_at - run.started_at).total_seconds():.1f}s"
        if run.finished_at
        else "unfinished"
    )
    counts = " ".join(f"{k}={v}" for k, v in run.counts.items() if v) or "no changes"
    mode = " (dry run)" if run.dry_run else ""
    line = (
        f"{when}  {run.id}  {run.trigger:<8} {run.outcome or 'running':<10} "
        f"{took:>8}  {counts}{mode}"
    )
    if run.plan_id and approval is None:
        line += f"  plan {run.plan_id}"
    if approval is not None:
        # Which run applied which approval, and who gave it: the audit, one line per run.
        how = "approved by" if approval.via == "approve" else "let past by the flags of"
        note = f" ({approval.note})" if approval.note else ""
        line += f"  plan {approval.plan_id} {how} {approval.approved_by}{note}"
    if run.reason:
        line += f"  reason: {run.reason}"
    return line
