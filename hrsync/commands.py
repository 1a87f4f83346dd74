"""What `sync`, `plan`, `history` and `check` do: load, call the engine, print."""

from __future__ import annotations

import sys
from collections.abc import Callable
from datetime import UTC
from typing import TextIO

from sqlalchemy.exc import SQLAlchemyError

from hrsync.config import ConfigError, Settings
from hrsync.outcome import EXIT_FAILED, Outcome
from hrsync.store.repo import RunRecord, Store
from hrsync.store.url import open_failure
from hrsync.sync import SyncRequest, SyncResult, run_sync


def open_store(settings: Settings) -> Store:
    # Migrations run on every start: a new version's schema is in place before use.
    url = settings.state.database_url
    try:
        return Store.open(url)
    except (SQLAlchemyError, OSError) as exc:
        # At start, a store that cannot be opened is a setting to fix (exit 2), said in
        # one line: not a traceback ending in a link to SQLAlchemy's docs.
        raise ConfigError([open_failure(url, exc)]) from None


def sync(
    settings: Settings,
    request: SyncRequest,
    *,
    out: TextIO = sys.stdout,
    runner: Callable[..., SyncResult] = run_sync,
) -> int:
    store = open_store(settings)
    try:
        result = runner(settings, request, store=store)
    finally:
        store.close()
    shows_report = request.dry_run or request.preview or result.outcome is Outcome.REFUSED
    if shows_report and result.report:
        print(result.report, file=out)
    return result.exit_code


def plan(settings: Settings, *, detailed_exitcode: bool, out: TextIO = sys.stdout) -> int:
    store = open_store(settings)
    try:
        result = run_sync(settings, SyncRequest(dry_run=True), store=store)
    finally:
        store.close()
    if result.report:
        print(result.report, file=out)
    if not detailed_exitcode:
        return result.exit_code
    if result.outcome in (Outcome.FAILED, Outcome.REJECTED) or result.plan is None:
        return EXIT_FAILED
    return 2 if result.plan.has_changes else 0


def history(settings: Settings, *, limit: int, out: TextIO = sys.stdout) -> int:
    store = open_store(settings)
    try:
        runs = store.recent_runs(limit)
    finally:
        store.close()
    if not runs:
        print("no runs yet", file=out)
    for run in runs:
        print(format_run(run), file=out)
    return 0


def format_run(run: RunRecord) -> str:
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
    if run.reason:
        line += f"  reason: {run.reason}"
    return line


def check(settings: Settings, *, out: TextIO = sys.stdout) -> int:
    from hrsync.readiness import render, run_checks
    from hrsync.sync import Engine

    store = open_store(settings)
    try:
        with Engine(settings=settings, store=store).client() as client:
            checks = run_checks(settings, client=client, store=store)
    finally:
        store.close()
    print(render(checks), file=out)
    return 0 if all(c.ok for c in checks) else EXIT_FAILED
