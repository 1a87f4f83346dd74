"""`hrsync run` watched from outside: /healthz, /readyz, /metrics, the webhook, `status`."""

from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.conftest import CONFIG, TOKEN, Workspace, parse_events, read_rows

pytestmark = pytest.mark.slow

HOOK_SECRET = "T000-hook-secret-B000"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


@contextmanager
def receiver() -> Iterator[tuple[str, list[dict[str, Any]]]]:
    """A webhook receiver: every POSTed JSON body, in order."""
    got: list[dict[str, Any]] = []

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            body = self.rfile.read(int(self.headers["Content-Length"]))
            got.append(json.loads(body))
            self.send_response(200)
            self.send_header("Content-Length", "0")
            self.end_headers()

        def log_message(self, format: str, *args: object) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/services/{HOOK_SECRET}", got
    finally:
        server.shutdown()
        server.server_close()


def get(url: str) -> tuple[int, str]:
    try:
        with urllib.request.urlopen(url, timeout=5) as response:
            return response.status, response.read().decode()
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read().decode()
    except urllib.error.URLError:
        return 0, ""  # not listening yet


def sample(text: str, name: str) -> float | None:
    """The value of one sample, `name` with its labels as exposed."""
    for line in text.splitlines():
        if line.startswith(name + " "):
            return float(line.split()[-1])
    return None


def wait_for(check: Callable[[], bool], what: str, timeout: float = 40) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if check():
            return
        time.sleep(0.2)
    raise AssertionError(f"timed out waiting for {what}")


def test_endpoints_metrics_webhook_and_status_follow_the_daemon(workspace: Workspace) -> None:
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    log_path = workspace.root / "daemon.log"
    with receiver() as (hook_url, notes):
        env = {k: v for k, v in os.environ.items() if not k.startswith("HRSYNC_")}
        env |= {
            "HRSYNC_DX_TOKEN": TOKEN,
            "HRSYNC_SYNC__SCHEDULE": "*/2 * * * * *",
            "HRSYNC_SYNC__MAX_ARCHIVE": "0",
            "HRSYNC_DAEMON__LISTEN": f"127.0.0.1:{port}",
            "HRSYNC_NOTIFY__WEBHOOK_URL_ENV": "TEST_HOOK_URL",
            "TEST_HOOK_URL": hook_url,
        }

        def finished() -> list[dict[str, Any]]:
            return [e for e in parse_events(log_path.read_text()) if e["event"] == "sync.finished"]

        def metrics() -> str:
            return get(base + "/metrics")[1]

        with log_path.open("w") as log:
            proc = subprocess.Popen(
                [sys.executable, "-m", "hrsync", "--config", str(workspace.config), "run"],
                env=env,
                stdout=log,
                stderr=subprocess.STDOUT,
            )
        try:
            # 1. applied
            wait_for(
                lambda: sample(metrics(), 'hrsync_runs_total{outcome="applied"}') == 1, "applied"
            )
            wait_for(lambda: get(base + "/healthz")[0] == 200, "/healthz")
            # Runs come every 2 s here: one may be in progress ("ready: sync in progress…").
            status, said = get(base + "/readyz")
            assert status == 200 and said.startswith("ready"), said
            text = metrics()
            assert sample(text, 'hrsync_runs_total{outcome="applied"}') == 1
            assert (sample(text, "hrsync_last_success_timestamp_seconds") or 0) > 0
            assert (sample(text, 'hrsync_people{state="synced"}') or 0) > 0
            assert (sample(text, "hrsync_teams") or 0) > 0
            assert (
                sample(text, 'hrsync_dx_requests_total{method="teams.list",outcome="ok"}') or 0
            ) >= 1
            assert sample(text, 'hrsync_attention_required{reason="refused"}') == 0
            assert "hrsync_run_duration_seconds_count" in text
            status = workspace.hrsync("status", "--format", "json")
            doc = json.loads(status.stdout)
            assert doc["last_success"]["outcome"] in ("applied", "in_sync")
            assert doc["attention"] == [] and doc["next_scheduled_run"]
            assert doc["heartbeat"]["state"] in ("idle", "running")

            # 2. a reorg archiving a team past max_archive = 0: refused run after run
            workspace.use_export("sample-org-reorg.csv")
            # (the metrics follow the sync.finished line: wait for them, not the log)
            wait_for(
                lambda: (sample(metrics(), 'hrsync_runs_total{outcome="refused"}') or 0) >= 3,
                "3 refusals",
            )
            text = metrics()
            assert sample(text, 'hrsync_attention_required{reason="refused"}') == 1
            assert len(notes) == 1, notes
            (note,) = notes
            assert note["event"] == "refused"
            assert note["would_archive"] == ["Mobile Android"]
            assert f"--config {workspace.config}" in note["action"]
            assert "--allow-archive 1" in note["action"]
            assert "sync.max_archive" in note["reason"]
            status = workspace.hrsync("status")
            assert "ATTENTION:   refused" in status.stdout
            assert "--allow-archive 1" in status.stdout
            assert not parse_events(status.stdout)  # the log is never on stdout

            # 3. the export fixed: applied again, one `recovered`
            shutil.copy(CONFIG / "sample-org.csv", workspace.export)
            wait_for(lambda: len(notes) == 2, "the recovered notification")
            assert notes[1]["event"] == "recovered"
            wait_for(
                lambda: sample(metrics(), 'hrsync_attention_required{reason="refused"}') == 0,
                "attention cleared",
            )
            doc = json.loads(workspace.hrsync("status", "--format", "json").stdout)
            assert doc["attention"] == []

            # 4. a live snapshot while a member leaves: deferred
            workspace.sim.dx.add_snapshot(snapshot_id="live")
            rows = read_rows("sample-org.csv")
            managers = {r["Manager ID"] for r in rows}
            leaver = next(r for r in rows if r["Employee ID"] not in managers)
            workspace.write_export([r for r in rows if r is not leaver])
            wait_for(
                lambda: (sample(metrics(), "hrsync_deferred_until_timestamp_seconds") or 0) > 0,
                "deferred_until",
            )
            assert (sample(metrics(), 'hrsync_runs_total{outcome="deferred"}') or 0) >= 1
            status = workspace.hrsync("status")
            assert "Deferred:    until" in status.stdout
            assert len(notes) == 2  # a deferral needs nobody

            proc.send_signal(signal.SIGTERM)
            assert proc.wait(timeout=10) == 0
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
    text = log_path.read_text()
    workspace.outputs.append(text)
    assert HOOK_SECRET not in text
    for output in workspace.outputs:
        assert HOOK_SECRET not in output
    for path in Path(workspace.root).glob("state.db*"):
        assert HOOK_SECRET.encode() not in path.read_bytes()


def test_a_fix_by_hand_shows_within_a_heartbeat_and_is_told_recovered_once(
    workspace: Workspace,
) -> None:
    """A refusal, then a person runs the approving command by hand: within a heartbeat the
    daemon's /metrics say nobody is needed and when the last success was, and one
    `recovered` is sent. The daemon's own next run is a day away: it cannot be what
    tells."""
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    log_path = workspace.root / "daemon.log"
    workspace.use_export("sample-org-reorg.csv")
    with receiver() as (hook_url, notes):
        env = {k: v for k, v in os.environ.items() if not k.startswith("HRSYNC_")}
        env |= {
            "HRSYNC_DX_TOKEN": TOKEN,
            "HRSYNC_SYNC__SCHEDULE": "0 6 * * *",  # once a day: only `--now` runs here
            "HRSYNC_SYNC__HEARTBEAT_S": "1",
            "HRSYNC_SYNC__MAX_ARCHIVE": "0",
            "HRSYNC_DAEMON__LISTEN": f"127.0.0.1:{port}",
            "HRSYNC_NOTIFY__WEBHOOK_URL_ENV": "TEST_HOOK_URL",
            "TEST_HOOK_URL": hook_url,
        }

        def metrics() -> str:
            return get(base + "/metrics")[1]

        # The first sync builds the org by hand; the daemon's run at start then meets the
        # reorg, which would archive a team past max_archive = 0.
        shutil.copy(CONFIG / "sample-org.csv", workspace.export)
        first = workspace.hrsync("sync", env={"HRSYNC_SYNC__MAX_ARCHIVE": "0"})
        assert first.code == 0, first.stdout + first.stderr
        workspace.use_export("sample-org-reorg.csv")
        with log_path.open("w") as log:
            proc = subprocess.Popen(
                [sys.executable, "-m", "hrsync", "--config", str(workspace.config), "run", "--now"],
                env=env,
                stdout=log,
                stderr=subprocess.STDOUT,
            )
        try:
            wait_for(
                lambda: sample(metrics(), 'hrsync_attention_required{reason="refused"}') == 1,
                "the daemon's refusal",
                timeout=30,
            )
            wait_for(lambda: [n["event"] for n in notes] == ["refused"], "the refusal told")
            before = sample(metrics(), "hrsync_last_success_timestamp_seconds") or 0

            fixed = workspace.hrsync("sync", "--allow-archive", "1")
            assert fixed.code == 0, fixed.stdout + fixed.stderr
            assert fixed.finished["outcome"] == "applied"
            done = time.monotonic()
            # Within a heartbeat (1 s here; a few for the scrape and the beat's own work).
            wait_for(
                lambda: sample(metrics(), 'hrsync_attention_required{reason="refused"}') == 0,
                "attention cleared by the fix by hand",
                timeout=5,
            )
            assert (sample(metrics(), "hrsync_last_success_timestamp_seconds") or 0) > before
            wait_for(lambda: len(notes) == 2, "the recovered notification", timeout=5)
            assert time.monotonic() - done < 5
            assert notes[1]["event"] == "recovered"
            assert notes[1]["run_id"] == fixed.finished["run_id"]
            # Once: the beats that follow find nothing new to tell.
            time.sleep(1.0)
            assert [n["event"] for n in notes] == ["refused", "recovered"]
            assert sample(metrics(), 'hrsync_runs_total{outcome="applied"}') == 0  # by hand
            doc = json.loads(workspace.hrsync("status", "--format", "json").stdout)
            assert doc["attention"] == []

            proc.send_signal(signal.SIGTERM)
            assert proc.wait(timeout=10) == 0
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
    workspace.outputs.append(log_path.read_text())
