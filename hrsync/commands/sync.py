"""`hrsync sync` and `hrsync plan`: one run now; the report printed when a person asked."""

from __future__ import annotations

import argparse
import sys

from hrsync.clock import utcnow
from hrsync.commands.output import show, unwritable_output, write_output
from hrsync.commands.small_teams import floor_of, floor_text
from hrsync.commands.startup import load_for, open_store
from hrsync.config.loading import Settings
from hrsync.core.attributes import AttributeOutcome
from hrsync.core.gate.reporting_floor import UnderFloor
from hrsync.gcpause import collector_paused
from hrsync.outcome import EXIT_FAILED, EXIT_USAGE, Outcome
from hrsync.sync.results import SyncRequest, SyncResult
from hrsync.sync.story import run_sync


def sync(args: argparse.Namespace) -> int:
    if (problem := unwritable_output(args.out)) is not None:
        show(problem, sys.stderr)
        return EXIT_USAGE
    if isinstance(args.preview, str):
        return _preview_plan(args, args.preview)
    request = SyncRequest(
        trigger="manual",
        dry_run=args.dry_run,
        preview=bool(args.preview),
        allow_archive=args.allow_archive,
        allow_shrink=args.allow_shrink,
        allow_attribute_changes=args.allow_attribute_changes,
        allow_held=args.allow_held,
    )
    settings = load_for(args)
    if request.dry_run:
        with collector_paused():
            result, daemon_running = _run_once(settings, request)
    else:
        # A real sync can poll DX for minutes: its collector runs, except over the
        # stages that build the org (sync/story.py).
        result, daemon_running = _run_once(settings, request)
    if args.format == "json":
        from hrsync.commands.documents import dumps, plan_document

        write_output(dumps(plan_document(result, settings.command_config)), args.out)
        return result.exit_code
    refused = Outcome.REFUSED.value
    attributes = result.attributes.outcome.value if result.attributes is not None else None
    shows_report = (
        request.dry_run or request.preview or refused in (result.outcome.value, attributes)
    )
    if shows_report and result.report:
        write_output(result.report, args.out)
    if args.summary != "never":
        from hrsync.commands import one_account
        from hrsync.commands.summary import human_summary

        summary = human_summary(
            result,
            settings.command_config,
            request,
            daemon_running,
            log_shown=not one_account.active(),
        )
        show("\n" + summary)
    return result.exit_code


def _preview_plan(args: argparse.Namespace, typed: str) -> int:
    """`sync --preview PLAN_ID`: DX's preview of exactly a stored refused plan."""
    from hrsync.core.gate.plan_ids import normalise_plan_id
    from hrsync.sync.plan_preview import preview_plan

    plan_id = normalise_plan_id(typed)
    if plan_id is None:
        show(f"hrsync: {typed!r} is not a plan id (8 hex digits)", sys.stderr)
        return EXIT_USAGE
    settings = load_for(args, require_source=False)
    store = open_store(settings)
    try:
        shown = preview_plan(settings, store, plan_id)
    finally:
        store.close()
    if shown.exit_code == EXIT_USAGE:
        show(shown.text, sys.stderr)
    else:
        write_output(shown.text, args.out)
    return shown.exit_code


def plan(args: argparse.Namespace) -> int:
    """A dry run whose plan is always printed; `--detailed-exitcode` says if it changes."""
    # The whole run without the cyclic collector: the org's objects live until the process
    # ends, and the one collection after the stages' pause walked them all for nothing
    # (~8% of a 50k plan, issue 12). A dry run is short and sends nothing, so what little
    # cyclic garbage it makes waits for the collector's return at the end.
    with collector_paused():
        return _plan(args)


def _plan(args: argparse.Namespace) -> int:
    if (problem := unwritable_output(args.out)) is not None:
        show(problem, sys.stderr)
        return EXIT_FAILED if args.detailed_exitcode else EXIT_USAGE
    settings = load_for(args)
    result, floor = _plan_once(settings)
    if args.format == "json":
        from hrsync.commands.documents import dumps, plan_document

        write_output(dumps(plan_document(result, settings.command_config, floor)), args.out)
    elif args.format == "tree":
        from hrsync.commands.documents import render_tree

        write_output(render_tree(result), args.out)
    elif report := "\n".join(part for part in (result.report, floor_text(floor)) if part):
        write_output(report, args.out)
    if not args.detailed_exitcode:
        return result.exit_code
    if result.outcome in (Outcome.FAILED, Outcome.REJECTED) or result.plan is None:
        return EXIT_FAILED
    step = result.attributes
    if step is not None and (
        step.outcome in (AttributeOutcome.FAILED, AttributeOutcome.REJECTED)
        or (step.outcome is AttributeOutcome.REFUSED and step.plan is None)
    ):
        # The attributes could not be planned (a column the export lacks): an error, not
        # "no changes", even when the hierarchy is in sync.
        return EXIT_FAILED
    # Attribute changes count too, also those the attribute guard refused.
    attributes = step.plan if step is not None else None
    changes = attributes is not None and bool(attributes.changes)
    return 2 if result.plan.has_changes or changes else 0


def _plan_once(settings: Settings) -> tuple[SyncResult, UnderFloor | None]:
    """A dry run, and the teams of its plan DX would leave out of the next snapshot."""
    store = open_store(settings)
    try:
        result = run_sync(settings, SyncRequest(dry_run=True), store=store)
        return result, floor_of(result, store)
    finally:
        store.close()


def _run_once(settings: Settings, request: SyncRequest) -> tuple[SyncResult, bool]:
    """The run, and whether a daemon runs on this store: the summary says the daemon keeps
    DX in step after it only when one does."""
    store = open_store(settings)
    try:
        result = run_sync(settings, request, store=store)
        beat = store.heartbeat.read()
        return result, beat is not None and beat.running(
            utcnow(), settings.sync.healthcheck_max_age_s
        )
    finally:
        store.close()
