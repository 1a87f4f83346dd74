"""`hrsync run` as a container runs it: scheduled syncs, healthcheck, SIGTERM."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

import pytest

from tests.e2e.conftest import TOKEN, Workspace, parse_events

pytestmark = pytest.mark.slow


def test_daemon_runs_on_schedule_and_stops_on_sigterm(workspace: Workspace) -> None:
    log_path = workspace.root / "daemon.log"
    env = {k: v for k, v in os.environ.items() if not k.startswith("HRSYNC_")}
    env |= {
        "HRSYNC_DX_TOKEN": TOKEN,
        "HRSYNC_SYNC__SCHEDULE": "*/2 * * * * *",  # every two seconds
    }
    with log_path.open("w") as log:
        proc = subprocess.Popen(
            [sys.executable, "-m", "hrsync", "--config", str(workspace.config), "run"],
            env=env,
            stdout=log,
            stderr=subprocess.STDOUT,
        )
    try:
        deadline = time.monotonic() + 40
        finished: list[dict[str, object]] = []
        while time.monotonic() < deadline and len(finished) < 2:
            time.sleep(0.2)
            finished = [
                e for e in parse_events(log_path.read_text()) if e["event"] == "sync.finished"
            ]
        assert [e["outcome"] for e in finished[:2]] == ["applied", "in_sync"], finished

        health = workspace.hrsync("healthcheck")
        assert health.code == 0, health.stderr

        proc.send_signal(signal.SIGTERM)
        started = time.monotonic()
        assert proc.wait(timeout=10) == 0
        assert time.monotonic() - started < 6
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    text = log_path.read_text()
    workspace.outputs.append(text)
    events = [e["event"] for e in parse_events(text)]
    assert "daemon.started" in events and events[-1] == "daemon.stopped"
    assert all(
        e.get("trigger") == "schedule" for e in parse_events(text) if e["event"] == "sync.started"
    )
    assert len(workspace.process_requests()) == 1
