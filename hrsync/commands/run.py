"""`hrsync run`: the daemon, wired to one store and one stop event for all its runs.

SIGTERM (handled by the daemon) sets the stop event; the run in progress sees the same
event and ends after its current step.
"""

from __future__ import annotations

import argparse
import threading

from hrsync.clock import utcnow
from hrsync.commands.startup import load_for, open_store
from hrsync.daemon import process as daemon
from hrsync.monitor.reporting import Monitor
from hrsync.sync.results import SyncRequest, SyncResult
from hrsync.sync.story import run_sync


def run(args: argparse.Namespace) -> int:
    settings = load_for(args)
    store = open_store(settings)
    stop = threading.Event()

    monitor = Monitor(settings, store, utcnow)

    def one_run(request: SyncRequest) -> SyncResult:
        return run_sync(settings, request, store=store, stop=stop, observer=monitor.metrics)

    try:
        return daemon.run(
            settings,
            now=args.now,
            store=store,
            run_sync=one_run,
            stop_event=stop,
            monitor=monitor,
        )
    finally:
        store.close()
