"""The real commands keep the store private and say which files are not (issue 27,
finding 5): `sync` creates the store 0600, `check` lists a token file others can read with
the chmod that fixes it, and the daemon warns of it once, at start, not at every run."""

from __future__ import annotations

import os
import signal
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from tests.e2e.conftest import Workspace, parse_events
from tests.e2e.test_monitoring_e2e import wait_for

pytestmark = pytest.mark.slow


def mode(path: Path) -> str:
    return f"{stat.S_IMODE(path.stat().st_mode):04o}"


def with_token_file(ws: Workspace, file_mode: int) -> Path:
    token = ws.root / "dx-token"
    token.write_text("demo-org-token\n")
    token.chmod(file_mode)
    text = ws.config.read_text().replace("[dx]\n", f'[dx]\ntoken_file = "{token}"\n')
    ws.config.write_text(text)
    return token


def test_sync_creates_a_private_store_and_check_names_an_open_token_file(
    workspace: Workspace,
) -> None:
    token = with_token_file(workspace, 0o644)
    no_token_env = {"HRSYNC_DX_TOKEN": ""}
    sync = workspace.hrsync("sync", env=no_token_env)
    assert sync.code == 0, sync.stdout + sync.stderr
    files = list(workspace.root.glob("state.db*"))
    assert files and {mode(p) for p in files} == {"0600"}
    (warned,) = sync.named("files.not_private")
    assert warned["path"] == str(token) and warned["mode"] == "0644"

    check = workspace.hrsync("check", env=no_token_env)
    lines = check.stdout.splitlines()
    at = next(i for i, line in enumerate(lines) if line.startswith("[WARN] file modes:"))
    assert (
        f"the DX token file (dx.token_file) {token} is readable by group and others" in (lines[at])
    )
    assert lines[at + 1].strip() == f"-> chmod 600 {token}"

    token.chmod(0o600)
    check = workspace.hrsync("check", env=no_token_env)
    assert "file modes" not in check.stdout
    assert not check.named("files.not_private")


def test_the_daemon_warns_once_at_start_not_at_every_run(workspace: Workspace) -> None:
    token = with_token_file(workspace, 0o640)
    log = workspace.root / "daemon.log"
    base = {k: v for k, v in os.environ.items() if not k.startswith("HRSYNC_")}
    env = {**base, "HRSYNC_SYNC__SCHEDULE": "* * * * * *"}

    def finished() -> int:
        return sum(1 for e in parse_events(log.read_text()) if e["event"] == "sync.finished")

    with log.open("w") as out:
        proc = subprocess.Popen(
            [sys.executable, "-m", "hrsync", "--config", str(workspace.config), "run"],
            env=env,
            stdout=out,
            stderr=subprocess.STDOUT,
        )
    try:
        wait_for(lambda: finished() >= 2, "two runs")
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=15) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    events = parse_events(log.read_text())
    warned = [e for e in events if e["event"] == "files.not_private"]
    assert [(e["path"], e["mode"]) for e in warned] == [(str(token), "0640")]
    assert events.index(warned[0]) < min(
        i for i, e in enumerate(events) if e["event"] == "sync.started"
    )
