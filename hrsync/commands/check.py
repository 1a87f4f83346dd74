"""`hrsync check`: the readiness report (config, export, token, scopes, snapshots)."""

from __future__ import annotations

import argparse

from hrsync.commands.readiness import render, run_checks
from hrsync.commands.startup import load_for, open_store
from hrsync.dx.client import DxClient
from hrsync.outcome import EXIT_FAILED, EXIT_OK


def check(args: argparse.Namespace) -> int:
    settings = load_for(args)
    store = open_store(settings)
    try:
        with DxClient.from_settings(settings) as client:
            checks = run_checks(settings, client=client, store=store)
    finally:
        store.close()
    print(render(checks))
    return EXIT_OK if all(c.ok for c in checks) else EXIT_FAILED
