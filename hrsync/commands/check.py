"""`hrsync check`: the readiness report (config, export, token, scopes, snapshots, and the
plan: its guards, with `--preview` DX's own validation, and with a snapshot ahead its
teams under DX's reporting floor)."""

from __future__ import annotations

import argparse

from hrsync.commands.output import show
from hrsync.commands.readiness import floor_check, plan_check, render, run_checks
from hrsync.commands.small_teams import floor_of
from hrsync.commands.startup import load_for, open_store
from hrsync.dx.client import DxClient
from hrsync.outcome import EXIT_FAILED, EXIT_OK
from hrsync.sync.results import SyncRequest
from hrsync.sync.story import run_sync


def check(args: argparse.Namespace) -> int:
    settings = load_for(args)
    preview = bool(getattr(args, "preview", False))
    store = open_store(settings)
    try:
        with DxClient.from_settings(settings) as client:
            checks = run_checks(settings, client=client, store=store)
        if all(c.ok for c in checks):
            # The plan a sync would make, through the same guards (a dry run: nothing is
            # sent, nothing later runs rely on changes); with --preview, DX validates it.
            request = SyncRequest(trigger="manual", dry_run=not preview, preview=preview)
            result = run_sync(settings, request, store=store)
            checks.append(plan_check(result, preview))
            # With a snapshot ahead: the plan's teams DX would leave out of its results.
            if (small := floor_check(floor_of(result, store))) is not None:
                checks.append(small)
    finally:
        store.close()
    show(render(checks))
    return EXIT_OK if all(c.ok for c in checks) else EXIT_FAILED
