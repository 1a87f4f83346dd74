"""Snapshots ahead against the simulator: the next snapshot kept and shown, what waits for
a window, and readiness (issue 23 A)."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta

import pytest

from tests.e2e.conftest import Workspace

pytestmark = pytest.mark.slow


def test_a_run_keeps_the_next_snapshot_and_status_says_what_it_means(
    workspace: Workspace,
) -> None:
    today = datetime.now(UTC).date()
    ahead = today + timedelta(days=11)
    workspace.sim.dx.add_snapshot(snapshot_id="later", scheduled_for=today + timedelta(days=40))
    workspace.sim.dx.add_snapshot(snapshot_id="next", scheduled_for=ahead)
    run = workspace.hrsync("sync")
    assert run.code == 0 and run.finished["outcome"] == "applied"  # not started: no deferral

    status = json.loads(workspace.hrsync("status", "--format", "json").stdout)
    snapshot = status["next_snapshot"]
    assert snapshot["id"] == "next" and snapshot["scheduled_for"] == ahead.isoformat()
    assert snapshot["ready"] is True
    assert snapshot["text"].startswith(f"next snapshot {ahead.isoformat()} (in ")
    assert snapshot["text"].endswith("DX matches HR as of the last run")
    text = workspace.hrsync("status").stdout
    assert f"Snapshot:    next snapshot {ahead.isoformat()}" in text

    # A reorganisation the guard refuses: DX is behind HR, and status says by what.
    workspace.use_export("sample-org-reorg.csv")
    refused = workspace.hrsync("sync", env={"HRSYNC_SYNC__MAX_ARCHIVE": "0"})
    assert refused.code == 4
    status = json.loads(workspace.hrsync("status", "--format", "json").stdout)
    snapshot = status["next_snapshot"]
    assert snapshot["ready"] is False
    assert snapshot["blockers"] == ["1 team to archive awaits approval"]
    assert "--allow-archive 1" in snapshot["command"]


def test_while_a_window_is_open_runs_plan_and_status_shows_what_waits(
    workspace: Workspace,
) -> None:
    assert workspace.hrsync("sync").code == 0
    completed = datetime.now(UTC).replace(microsecond=0) - timedelta(days=2)
    workspace.sim.dx.add_snapshot(snapshot_id="recent", completed_at=completed)
    workspace.use_export("sample-org-reorg.csv")
    run = workspace.hrsync("sync")
    assert run.code == 3 and run.finished["outcome"] == "deferred"
    changes = sum(v for k, v in run.finished["counts"].items() if k in CHANGE_KINDS)
    assert changes > 0
    assert len(workspace.process_requests()) == 1  # the first run's, nothing since

    closes = (completed + timedelta(days=21)).date().isoformat()
    status = json.loads(workspace.hrsync("status", "--format", "json").stdout)
    noun = "change waits" if changes == 1 else "changes wait"
    expected = f"{changes} {noun} for the window to close on {closes}"
    assert status["deferral"]["waiting"] == expected
    assert f"Waiting:     {expected}" in workspace.hrsync("status").stdout


CHANGE_KINDS = ("create", "rename", "move", "lead_change", "membership_change", "archive")
