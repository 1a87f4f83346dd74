"""Snapshots ahead against the simulator: the next snapshot kept and shown, what waits for
a window, and readiness (issue 23 A)."""

from __future__ import annotations

import dataclasses
import json
import shutil
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from hrsync.commands.status import gather
from hrsync.config.loading import Settings, load_settings
from hrsync.core.gate.snapshot_ahead import CHECK_EVERY
from hrsync.daemon.scheduler import PRE_SNAPSHOT_JOB, RESUME_JOB, SCHEDULE_JOB
from hrsync.daemon.service import Daemon
from hrsync.monitor.reporting import Monitor
from hrsync.simulator.scenario import load_scenario
from hrsync.simulator.server import RunningSimulator
from hrsync.store.repo import Store
from hrsync.sync.results import SyncRequest, SyncResult
from hrsync.sync.story import run_sync
from tests.e2e.conftest import CONFIG, CONFIG_TEMPLATE, TOKEN, Workspace
from tests.e2e.test_plan_output_e2e import SCHEMA, validate
from tests.monitor.exposition import sample
from tests.monitor.test_monitoring import receiver
from tests.simulating import start_simulator

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
    plan_id = refused.finished["plan_id"]
    assert snapshot["blockers"] == [f"1 team to archive awaits approval (plan {plan_id})"]
    # What a person without a shell can have run anywhere that reaches the store.
    assert snapshot["command"].endswith(f"approve {plan_id}")


def test_a_run_turned_away_by_the_lease_does_not_make_dx_not_ready(workspace: Workspace) -> None:
    """Two replicas (or a shell's `hrsync sync` during the daemon's run): the run turned
    away by the lease is recorded as an operational 'deferred' run, and readiness (gauge,
    status, the one notice, the pre-snapshot retry) reads it as the last run."""
    ahead = (datetime.now(UTC) + timedelta(days=1)).date()
    workspace.sim.dx.add_snapshot(snapshot_id="next", scheduled_for=ahead)
    assert workspace.hrsync("sync").code == 0
    status = json.loads(workspace.hrsync("status", "--format", "json").stdout)
    assert status["next_snapshot"]["ready"] is True
    store = Store.open(f"sqlite:///{workspace.db}")
    try:
        # The other replica's run holds the lease (and will end in_sync).
        assert store.acquire_lease("other-host:1:run", datetime.now(UTC), 600).acquired
    finally:
        store.close()
    turned_away = workspace.hrsync("sync")
    assert turned_away.code == 3
    status = json.loads(workspace.hrsync("status", "--format", "json").stdout)
    assert status["next_snapshot"]["ready"] is True, status["next_snapshot"]


def test_a_run_turned_away_by_the_lease_leaves_a_window_s_deferral_as_it_was(
    workspace: Workspace,
) -> None:
    # Was: the turned-away run wrote its own 5-minute deferral over the window's, so for
    # those minutes `approve`, readiness and status lost the window's end.
    assert workspace.hrsync("sync").code == 0
    completed = datetime.now(UTC).replace(microsecond=0) - timedelta(days=2)
    workspace.sim.dx.add_snapshot(snapshot_id="recent", completed_at=completed)
    workspace.use_export("sample-org-reorg.csv")
    assert workspace.hrsync("sync").code == 3  # deferred by the window
    before = json.loads(workspace.hrsync("status", "--format", "json").stdout)["deferral"]
    store = Store.open(f"sqlite:///{workspace.db}")
    try:
        assert store.acquire_lease("other-host:1:run", datetime.now(UTC), 600).acquired
    finally:
        store.close()
    assert workspace.hrsync("sync").code == 3  # turned away by the lease
    after = json.loads(workspace.hrsync("status", "--format", "json").stdout)["deferral"]
    assert after["until"] == before["until"] and after["reason"] == before["reason"], after


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


# ------------------------------------------------ the daemon, in process, in frozen time
#
# The daemon with a paused scheduler and an explicit clock, the simulator on the same
# clock, the real engine (`run_sync`), the real monitor and a local webhook receiver:
# days pass in a test that takes seconds, and each job is fired as the scheduler would.

T0 = datetime(2030, 3, 30, 12, 0, tzinfo=UTC)  # far ahead: a paused job never fires by itself
SNAP_DAY = date(2030, 4, 4)  # its day starts 2030-04-04 00:00 UTC
STARTS = datetime(2030, 4, 4, tzinfo=UTC)
H = timedelta(hours=1)


class FrozenClock:
    def __init__(self, now: datetime) -> None:
        self.now = now

    def __call__(self) -> datetime:
        return self.now


class SimulatorClock:
    """The simulator's time: the frozen clock's, plus the real time since it was last set.
    A seed may have DX show an import's counts up to a second after the import; on the
    frozen clock alone they would never show."""

    def __init__(self, frozen: FrozenClock) -> None:
        self.frozen = frozen
        self.last: datetime | None = None
        self.since = time.monotonic()

    def __call__(self) -> datetime:
        if self.frozen.now != self.last:
            self.last, self.since = self.frozen.now, time.monotonic()
        return self.frozen.now + timedelta(seconds=time.monotonic() - self.since)


@dataclass
class Fleet:
    """The simulator, the store, the daemon and its monitor, on one clock."""

    clock: FrozenClock
    sim: RunningSimulator
    store: Store
    daemon: Daemon
    monitor: Monitor
    export: Path
    hooks: list[dict[str, Any]]
    guard: dict[str, int]  # sync.max_archive of the next run: a person's approval
    settings: Callable[[], Settings]

    def fire(self, job_id: str) -> None:
        job = self.daemon.scheduler.get_job(job_id)
        assert job is not None, f"no {job_id} job"
        job.func(*job.args, **job.kwargs)

    def job_time(self, job_id: str) -> datetime | None:
        job = self.daemon.scheduler.get_job(job_id)
        return None if job is None else job.next_run_time

    def metric(self, name: str) -> float | None:
        return sample(self.monitor.metrics.exposition().decode(), name)

    def status(self) -> dict[str, Any]:
        return gather(self.settings(), self.store, self.clock())


@pytest.fixture
def fleet(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Fleet]:
    clock = FrozenClock(T0)
    # A zero import delay: DX applies an import at once, as the frozen clock never moves.
    scenario = dataclasses.replace(load_scenario(CONFIG / "demo-scenario.json"), import_delay_s=0.0)
    guard = {"max_archive": 10}
    with (
        receiver() as (url, hooks),
        start_simulator(scenario, clock=SimulatorClock(clock)) as sim,
    ):
        monkeypatch.setenv("HOOK", url)
        export = tmp_path / "people.csv"
        shutil.copy(CONFIG / "sample-org.csv", export)
        config = tmp_path / "hrsync.toml"
        config.write_text(
            CONFIG_TEMPLATE.format(base_url=sim.base_url, export=export, db=tmp_path / "s.db")
        )

        def settings() -> Settings:
            loaded = load_settings(
                config, {"HRSYNC_DX_TOKEN": TOKEN, "HRSYNC_NOTIFY__WEBHOOK_URL_ENV": "HOOK"}
            )
            sync = dataclasses.replace(loaded.sync, max_archive=guard["max_archive"])
            return dataclasses.replace(loaded, sync=sync)

        store = Store.open(settings().state.database_url)

        def one_run(request: SyncRequest) -> SyncResult:
            return run_sync(settings(), request, store=store, clock=clock)

        monitor = Monitor(settings(), store, clock)
        daemon = Daemon(
            settings(),
            store=store,
            run_sync=one_run,
            clock=clock,
            on_finished=lambda r, s, q: monitor.run_finished(r, s, quarantined=q),
        )
        daemon.start(paused=True)
        monitor.start(daemon)
        try:
            yield Fleet(clock, sim, store, daemon, monitor, export, hooks, guard, settings)
        finally:
            daemon.scheduler.shutdown(wait=False)
            monitor.stop()
            store.close()


def test_the_daemon_syncs_before_the_snapshot_tells_once_and_again_when_ready(
    fleet: Fleet,
) -> None:
    fleet.sim.dx.add_snapshot(snapshot_id="apr", scheduled_for=SNAP_DAY)
    assert fleet.job_time(PRE_SNAPSHOT_JOB) is None  # nothing read yet
    fleet.fire(SCHEDULE_JOB)
    assert fleet.store.runs.recent(1)[0].outcome == "applied"
    # The run read snapshots.list: the next snapshot is kept, shown, and synced before.
    assert fleet.job_time(PRE_SNAPSHOT_JOB) == STARTS - 48 * H
    assert fleet.metric("hrsync_next_snapshot_timestamp_seconds") == STARTS.timestamp()
    assert fleet.metric("hrsync_snapshot_ready") == 1
    assert fleet.status()["next_snapshot"]["text"] == (
        "next snapshot 2030-04-04 (in 4 days): DX matches HR as of the last run"
    )

    # HR reorganises; the guard refuses it. Far from the snapshot: the refusal is told,
    # readiness not yet (the daemon's own sync before the snapshot comes first).
    shutil.copy(CONFIG / "sample-org-reorg.csv", fleet.export)
    fleet.guard["max_archive"] = 0
    fleet.clock.now = STARTS - 60 * H  # within a day of the next: no repeat of the refusal
    fleet.fire(SCHEDULE_JOB)
    assert [h["event"] for h in fleet.hooks] == ["refused"]
    assert fleet.metric("hrsync_snapshot_ready") == 0

    # 48 hours before: the daemon syncs whatever the cron says; still refused, so DX will
    # not be ready: told once, with what blocks it and the command.
    fleet.clock.now = STARTS - 48 * H
    fleet.fire(PRE_SNAPSHOT_JOB)
    run = fleet.store.runs.recent(1)[0]
    assert (run.trigger, run.outcome) == ("pre_snapshot", "refused")
    assert [h["event"] for h in fleet.hooks] == ["refused", "snapshot_not_ready"]
    notice = fleet.hooks[-1]
    plan_id = run.plan_id
    assert notice["snapshot_id"] == "apr" and notice["blockers"] == [
        f"1 team to archive awaits approval (plan {plan_id})"
    ]
    assert notice["action"].endswith(f"approve {plan_id}")
    # Checked again a few hours later, whatever the outcome.
    assert fleet.job_time(PRE_SNAPSHOT_JOB) == STARTS - 48 * H + CHECK_EVERY

    # A scheduled run in between changes nothing: no message per run; it counts as a check.
    fleet.clock.now = STARTS - 46 * H  # (the refusal is repeated only after notify.repeat_s)
    fleet.fire(SCHEDULE_JOB)
    assert [h["event"] for h in fleet.hooks] == ["refused", "snapshot_not_ready"]
    assert fleet.job_time(PRE_SNAPSHOT_JOB) == STARTS - 46 * H + CHECK_EVERY

    # Someone approves (the guard lets it through); the next check applies it.
    fleet.guard["max_archive"] = 10
    fleet.clock.now = STARTS - 46 * H + CHECK_EVERY
    fleet.fire(PRE_SNAPSHOT_JOB)
    run = fleet.store.runs.recent(1)[0]
    assert (run.trigger, run.outcome) == ("pre_snapshot", "applied")
    assert [h["event"] for h in fleet.hooks] == [
        "refused",
        "snapshot_not_ready",
        "recovered",
        "snapshot_ready",
    ]
    assert fleet.metric("hrsync_snapshot_ready") == 1
    # DX matches HR now, and HR may change again: the checks go on until the last one.
    assert fleet.job_time(PRE_SNAPSHOT_JOB) == fleet.clock.now + CHECK_EVERY
    assert "Mobile Android" not in {t["name"] for t in fleet.sim.dx.teams_view()}


def test_runs_in_a_window_plan_and_the_first_run_after_it_applies_them(fleet: Fleet) -> None:
    fleet.fire(SCHEDULE_JOB)
    completed = T0 - timedelta(days=2)
    fleet.sim.dx.add_snapshot(snapshot_id="mar", completed_at=completed)
    shutil.copy(CONFIG / "sample-org-reorg.csv", fleet.export)
    sent = len(process_calls(fleet))
    fleet.fire(SCHEDULE_JOB)
    assert fleet.store.runs.recent(1)[0].outcome == "deferred"
    assert len(process_calls(fleet)) == sent  # nothing sent inside the window
    closes = completed + timedelta(days=21)
    waiting = fleet.status()["deferral"]["waiting"]
    assert waiting.endswith(f"wait for the window to close on {closes.date().isoformat()}")
    # Another scheduled run inside the window plans again and still sends nothing.
    fleet.clock.now = T0 + timedelta(days=1)
    fleet.fire(SCHEDULE_JOB)
    assert fleet.status()["deferral"]["waiting"] == waiting
    assert len(process_calls(fleet)) == sent
    # The window closes: the resume applies what waited.
    assert fleet.job_time(RESUME_JOB) == closes
    fleet.clock.now = closes
    fleet.fire(RESUME_JOB)
    assert fleet.store.runs.recent(1)[0].outcome == "applied"
    assert len(process_calls(fleet)) == sent + 1
    assert fleet.status()["deferral"] is None


def process_calls(fleet: Fleet) -> list[Any]:
    return [r for r in fleet.sim.dx.requests if r.method_name == "orgfiles.teamHierarchy.process"]


def test_a_snapshot_the_scenario_schedules_is_shown_ahead_by_status(tmp_path: Path) -> None:
    # The simulator's own scenario schedules the snapshot (relative to its start), as a
    # rehearsal or demo would: the first sync reads it, status says when and what it means.
    raw = json.loads((CONFIG / "demo-scenario.json").read_text(encoding="utf-8"))
    raw["snapshots"] = [{"id": "q1", "scheduled_for": {"in_days": 11}}]
    raw["import_delay_s"] = 0.0
    path = tmp_path / "scenario.json"
    path.write_text(json.dumps(raw), encoding="utf-8")
    with start_simulator(load_scenario(path)) as sim:
        export = tmp_path / "people.csv"
        shutil.copy(CONFIG / "sample-org.csv", export)
        config = tmp_path / "hrsync.toml"
        db = tmp_path / "state.db"
        config.write_text(CONFIG_TEMPLATE.format(base_url=sim.base_url, export=export, db=db))
        ws = Workspace(tmp_path, sim, config, export, db)
        assert ws.hrsync("sync").finished["outcome"] == "applied"
        status = json.loads(ws.hrsync("status", "--format", "json").stdout)
    ahead = datetime.now(UTC).date() + timedelta(days=11)
    assert status["next_snapshot"]["id"] == "q1"
    text = status["next_snapshot"]["text"]  # "(in 10 days)": the day starts at 00:00 UTC
    assert text.startswith(f"next snapshot {ahead.isoformat()} (in 10 days)"), text
    assert text.endswith("DX matches HR as of the last run")


def test_teams_under_dx_reporting_floor_are_named_ahead_of_a_snapshot(
    workspace: Workspace,
) -> None:
    """The sample org's Mobile Android team has two contributors: DX leaves it out of a
    snapshot's results. With a snapshot ahead, plan, check and status name it."""
    ahead = datetime.now(UTC).date() + timedelta(days=5)
    workspace.sim.dx.add_snapshot(snapshot_id="next", scheduled_for=ahead)
    android = "Mobile Android"

    text = workspace.hrsync("plan").stdout
    assert "fewer than 3 counted contributors" in text
    assert android in text and "zainab.yusuf@example.com" in text
    assert "leaves them out of the snapshot's results" in text
    assert "mapping.min_team_size" in text

    doc = json.loads(workspace.hrsync("plan", "--format", "json").stdout)
    assert validate(doc, SCHEMA) == []
    floor = doc["under_reporting_floor"]
    assert floor["snapshot_id"] == "next" and floor["floor"] == 3
    teams = {t["name"]: t for t in floor["teams"]}
    assert teams[android]["counted"] == 2
    assert sorted(teams[android]["contributors"]) == [
        "oliver.brown@example.com",
        "zainab.yusuf@example.com",
    ]
    assert floor["lower_bound"] is True  # nobody's DX account is known yet

    checked = workspace.hrsync("check").stdout
    assert "reporting floor" in checked and android in checked

    assert workspace.hrsync("sync").code == 0
    status = json.loads(workspace.hrsync("status", "--format", "json").stdout)
    assert android in {t["name"] for t in status["next_snapshot"]["under_floor"]["teams"]}
    assert android in workspace.hrsync("status").stdout
