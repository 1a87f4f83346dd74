"""Log lines a log platform reads as they come: a real sync and a short daemon run against
the simulator, every JSON line with timestamp, level, severity, logger, event and a
one-line message, and the token in none of them."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from typing import Any

from tests.e2e.conftest import TOKEN, Workspace, parse_events

PLATFORM_FIELDS = ("timestamp", "level", "severity", "logger", "event", "message")
# Google Cloud Logging's LogSeverity names for the levels hrsync and its libraries use.
SEVERITIES = {
    "debug": "DEBUG",
    "info": "INFO",
    "warning": "WARNING",
    "error": "ERROR",
    "critical": "CRITICAL",
}


def check_platform_fields(events: list[dict[str, Any]]) -> None:
    assert events
    for event in events:
        missing = [f for f in PLATFORM_FIELDS if not isinstance(event.get(f), str) or not event[f]]
        assert missing == [], (missing, event)
        assert event["severity"] == SEVERITIES[event["level"]], event
        message = event["message"]
        assert "\n" not in message and message.isprintable() and len(message) <= 240, event
        assert TOKEN not in message
        assert "?" not in message.split(), f"a sentence lacks a field: {event}"


def test_a_sync_s_lines_carry_what_log_platforms_read(workspace: Workspace) -> None:
    run = workspace.hrsync("sync")
    assert run.code == 0, run.stderr
    check_platform_fields(run.events)
    finished = run.finished
    # The logger is the module that logged, as its Python name.
    assert finished["logger"] == "hrsync.sync.story"
    assert finished["message"].startswith("sync applied: ")
    assert finished["message"].endswith(f"(run {finished['run_id']})")
    changes = run.named("plan.change")
    assert changes and all(c["message"] == c["summary"] for c in changes)
    assert {e["logger"] for e in run.events} >= {"hrsync.sync.planning", "hrsync.sync.reading"}


def test_a_refusal_s_sentence_names_its_reason(workspace: Workspace) -> None:
    assert workspace.hrsync("sync").code == 0
    workspace.use_export("sample-org-reorg.csv")
    run = workspace.hrsync("sync", env={"HRSYNC_SYNC__MAX_ARCHIVE": "0"})
    assert run.code == 4, run.stdout + run.stderr
    check_platform_fields(run.events)
    (refused,) = run.named("sync.refused")
    assert refused["message"].startswith(f"sync refused plan {refused['plan_id']}: ")
    assert refused["reason"] in run.finished["reason"]
    assert run.finished["message"].startswith("sync refused: ")


def test_the_daemon_s_lines_carry_them_too(workspace: Workspace) -> None:
    log_path = workspace.root / "daemon.log"
    env = {k: v for k, v in os.environ.items() if not k.startswith("HRSYNC_")}
    env |= {"HRSYNC_DX_TOKEN": TOKEN}
    with log_path.open("w") as log:
        proc = subprocess.Popen(
            [sys.executable, "-m", "hrsync", "--config", str(workspace.config), "run", "--now"],
            env=env,
            stdout=log,
            stderr=subprocess.STDOUT,
        )
    try:
        deadline = time.monotonic() + 40
        while time.monotonic() < deadline:
            time.sleep(0.2)
            if any(e["event"] == "sync.finished" for e in parse_events(log_path.read_text())):
                break
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=10) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    text = log_path.read_text()
    workspace.outputs.append(text)
    events = parse_events(text)
    assert len(events) == len([line for line in text.splitlines() if line.strip()]), text
    check_platform_fields(events)
    by_code = {e["event"]: e for e in events}
    assert by_code["daemon.started"]["logger"] == "hrsync.daemon.service"
    assert by_code["daemon.started"]["message"].startswith("daemon started: schedule ")
    assert by_code["sync.finished"]["trigger"] == "startup"
    assert by_code["daemon.stopped"]["message"] == "daemon stopped"
    # A library's line (APScheduler's warnings, Alembic's): its text is the message, the
    # code names its logger.
    foreign = [e for e in events if not e["logger"].startswith("hrsync.")]
    assert all(e["event"] == f"{e['logger']}.log" for e in foreign), foreign
