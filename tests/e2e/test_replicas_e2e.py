"""Two `hrsync run` replicas on one PostgreSQL state store, as in a Deployment with
replicas: 2: one syncs at a time, every change is sent once, and when the active one
is killed mid-run the other takes over within seconds.
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Callable, Iterator
from typing import IO, Any

import pytest
from sqlalchemy import create_engine, text

from hrsync.monitor.metrics import STATE_GAUGES
from tests.e2e.conftest import TOKEN, Workspace, parse_events, read_rows

pytestmark = pytest.mark.slow

SCHEDULE = "*/2 * * * * *"  # every two seconds
IMPORT_DELAY_S = 1.5  # DX takes this long to apply an import: a kill lands mid-run


class Replica:
    def __init__(
        self,
        name: str,
        workspace: Workspace,
        database_url: str,
        *,
        env: dict[str, str] | None = None,
        args: tuple[str, ...] = (),
    ) -> None:
        self.name = name
        extra = env or {}
        self.log_path = workspace.root / f"{name}.log"
        env = {k: v for k, v in os.environ.items() if not k.startswith("HRSYNC_")}
        env |= {
            "HRSYNC_DX_TOKEN": TOKEN,
            "HRSYNC_STATE__DATABASE_URL": database_url,
            "HRSYNC_SYNC__SCHEDULE": SCHEDULE,
        } | extra
        self._log: IO[str] = self.log_path.open("w")
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "hrsync", "--config", str(workspace.config), "run", *args],
            env=env,
            stdout=self._log,
            stderr=subprocess.STDOUT,
            cwd=workspace.root,
        )

    def events(self) -> list[dict[str, Any]]:
        return parse_events(self.log_path.read_text())

    def named(self, event: str) -> list[dict[str, Any]]:
        return [e for e in self.events() if e["event"] == event]

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self._log.close()


@pytest.fixture
def spawn(workspace: Workspace, postgres_url: str) -> Iterator[Callable[..., Replica]]:
    """Start a replica on the test's database (`env`, `args` as Replica takes them);
    each is stopped, and its log checked for the token, after the test."""
    started: list[Replica] = []

    def start(name: str, **options: Any) -> Replica:
        replica = Replica(name, workspace, postgres_url, **options)
        started.append(replica)
        return replica

    yield start
    for replica in started:
        replica.stop()
        workspace.outputs.append(replica.log_path.read_text())


@pytest.fixture
def replicas(spawn: Callable[..., Replica]) -> Callable[[], tuple[Replica, Replica]]:
    return lambda: (spawn("a"), spawn("b"))


def wait_for(what: str, check: Callable[[], bool], timeout_s: float) -> float:
    """Poll `check` until true; returns the seconds it took."""
    started = time.monotonic()
    while not check():
        if time.monotonic() - started > timeout_s:
            raise AssertionError(f"not within {timeout_s:g}s: {what}")
        time.sleep(0.05)
    return time.monotonic() - started


def lease_pid(database_url: str) -> int | None:
    engine = create_engine(database_url)
    try:
        with engine.connect() as c:
            pid = c.execute(text("SELECT pid FROM leases WHERE name = 'sync'")).scalar()
    finally:
        engine.dispose()
    return None if pid is None else int(pid)


def platform_named(rows: list[dict[str, str]], name: str) -> list[dict[str, str]]:
    # Teams are named after the department: renaming it renames the team (one change).
    return [{**r, "Department": name} if r["Department"] == "Platform" else r for r in rows]


@pytest.mark.parametrize("workspace", [IMPORT_DELAY_S], indirect=True)
def test_two_replicas_send_each_change_once_and_survive_a_kill(
    workspace: Workspace,
    postgres_url: str,
    replicas: Callable[[], tuple[Replica, Replica]],
) -> None:
    started = time.monotonic()
    rows = read_rows("sample-org.csv")
    a, b = replicas()
    timings: dict[str, float] = {}

    def processes() -> int:
        return len(workspace.process_requests())

    def dx_has(team: str) -> Callable[[], bool]:
        return lambda: team in workspace.dx_teams()

    # The first sync builds the org; then two renames, each applied by whichever
    # replica fires first.
    timings["first sync"] = wait_for("the first sync", dx_has("Platform"), 30)
    for i, name in enumerate(["Platform One", "Platform Two"], start=2):
        t = time.monotonic()
        workspace.write_export(platform_named(rows, name))
        wait_for(f"{name} in DX", dx_has(name), 20)
        assert processes() == i, f"{processes()} process calls for {i} changes"
        timings[f"change {i}"] = time.monotonic() - t

    # A third rename; the moment DX has it (and is still importing it), the replica
    # that sent it is killed: its run never finishes.
    workspace.write_export(platform_named(rows, "Platform Three"))
    wait_for("the third change is sent", lambda: processes() == 4, 20)
    holder_pid = lease_pid(postgres_url)
    victim, survivor = (a, b) if holder_pid == a.proc.pid else (b, a)
    assert holder_pid == victim.proc.pid, f"lease held by pid {holder_pid}"
    victim.proc.send_signal(signal.SIGKILL)
    killed_at = time.monotonic()
    victim.proc.wait(10)

    # The survivor takes over: it verifies the orphaned submission (never resends it)
    # and applies the next change, all within 30 s of the kill.
    workspace.write_export(platform_named(rows, "Platform Four"))
    wait_for("the survivor applies the next change", dx_has("Platform Four"), 30)
    timings["takeover to applied"] = time.monotonic() - killed_at
    assert timings["takeover to applied"] < 30
    assert "Platform Three" not in workspace.dx_teams()
    # One more schedule period or two: a duplicate would show up here.
    time.sleep(1.0)
    wait_for("a later in-sync run", lambda: _in_sync_after(survivor, killed_at), 10)

    names = [_platform_team(r.body) for r in workspace.process_requests()]
    assert names == [
        "Platform",
        "Platform One",
        "Platform Two",
        "Platform Three",
        "Platform Four",
    ], names  # one process per change, none resent

    survivor.stop()
    events = victim.events() + survivor.events()
    assert [e for e in events if e["event"] == "daemon.run_crashed"] == []
    assert [e for e in events if e["event"] == "sync.crashed"] == []
    assert [e for e in events if e["event"] == "sync.lease_lost"] == []
    applied = [e for e in events if e["event"] == "sync.finished" and e["outcome"] == "applied"]
    assert len(applied) == 4  # the killed run never finished; the survivor verified it
    assert any(e["event"] == "daemon.standby" for e in events)
    timings["total"] = time.monotonic() - started
    print("replicas e2e timings (s):", {k: round(v, 1) for k, v in timings.items()})


def _platform_team(body: Any) -> str:
    """The name the submission gave the team led by the Platform director."""
    names = {row.get("name") for row in _rows(body)}
    wanted = {"Platform", "Platform One", "Platform Two", "Platform Three", "Platform Four"}
    (name,) = names & wanted
    return str(name)


def _rows(body: Any) -> list[dict[str, Any]]:
    if isinstance(body, dict):
        for value in body.values():
            if isinstance(value, list):
                return [r for r in value if isinstance(r, dict)]
    return []


def _in_sync_after(replica: Replica, moment: float) -> bool:
    finished = replica.named("sync.finished")
    return bool(finished) and finished[-1].get("outcome") == "in_sync"


def state_gauges(address: str) -> dict[str, float]:
    """The state gauges a replica's /metrics serves ({} while it does not answer)."""
    try:
        with urllib.request.urlopen(f"http://{address}/metrics", timeout=5) as response:
            text = response.read().decode()
    except OSError:
        return {}
    found = {}
    for line in text.splitlines():
        if line.startswith("#") or not line.strip():
            continue
        series, value = line.rsplit(" ", 1)
        if series.partition("{")[0] in STATE_GAUGES:
            found[series] = float(value)
    return found


def free_address() -> str:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return f"127.0.0.1:{s.getsockname()[1]}"


def test_the_replica_that_did_not_run_serves_the_same_state_gauges(
    workspace: Workspace, spawn: Callable[..., Replica]
) -> None:
    """Prometheus scrapes both replicas: the one that did not run must not say
    "never succeeded" (or keep an old refusal) while the other has synced."""
    listen = {"a": free_address(), "b": free_address()}
    options = {"HRSYNC_SYNC__SCHEDULE": "0 6 * * *", "HRSYNC_SYNC__HEARTBEAT_S": "1"}
    b = spawn("b", env={**options, "HRSYNC_DAEMON__LISTEN": listen["b"]})
    wait_for("b serves /metrics", lambda: bool(state_gauges(listen["b"])), 20)
    before = state_gauges(listen["b"])
    assert before["hrsync_last_success_timestamp_seconds"] == 0
    # a runs at start (`--now`); b's schedule is a day away.
    a = spawn("a", env={**options, "HRSYNC_DAEMON__LISTEN": listen["a"]}, args=("--now",))
    wait_for("a's run", lambda: bool(a.named("sync.finished")), 30)
    assert a.named("sync.finished")[0]["outcome"] == "applied"
    # (the log's line comes first; the metrics follow it)
    success = "hrsync_last_success_timestamp_seconds"
    wait_for("a's metrics", lambda: state_gauges(listen["a"]).get(success, 0) > 0, 5)
    active = state_gauges(listen["a"])
    # Within a heartbeat (1 s here) and a scrape.
    wait_for("b serves what a does", lambda: state_gauges(listen["b"]) == active, 5)
    assert state_gauges(listen["b"])['hrsync_people{state="synced"}'] > 0
    assert not b.named("sync.finished")  # b never ran
