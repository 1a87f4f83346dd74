"""End-to-end fixtures: the simulator in this process, `hrsync` as a subprocess."""

from __future__ import annotations

import csv
import dataclasses
import json
import os
import shutil
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from hrsync.commands.demo import CONFIG as DEMO_CONFIG
from hrsync.simulator.scenario import load_scenario
from hrsync.simulator.server import RunningSimulator
from hrsync.simulator.variation import MAX_LAG_S
from tests.simulating import start_simulator

ROOT = Path(__file__).resolve().parents[2]
CONFIG = ROOT / "config"
TOKEN = "demo-org-token"

# The demo's configuration (sample-org columns, `{department}` team names, a notify
# address), logging as JSON so the tests can read the events.
CONFIG_TEMPLATE = DEMO_CONFIG + '\n[log]\nformat = "json"\n'


@dataclass
class Run:
    code: int
    stdout: str
    stderr: str
    events: list[dict[str, Any]] = field(default_factory=list)

    def named(self, event: str) -> list[dict[str, Any]]:
        return [e for e in self.events if e.get("event") == event]

    @property
    def finished(self) -> dict[str, Any]:
        (finished,) = self.named("sync.finished")
        return finished


@dataclass
class Workspace:
    root: Path
    sim: RunningSimulator
    config: Path
    export: Path
    db: Path
    outputs: list[str] = field(default_factory=list)

    def hrsync(self, *args: str, env: dict[str, str] | None = None, timeout: float = 60) -> Run:
        base = {k: v for k, v in os.environ.items() if not k.startswith("HRSYNC_")}
        full_env = {**base, "HRSYNC_DX_TOKEN": TOKEN, **(env or {})}
        proc = subprocess.run(
            [sys.executable, "-m", "hrsync", "--config", str(self.config), *args],
            env=full_env,
            capture_output=True,
            text=True,
            timeout=timeout,
            cwd=self.root,
        )
        self.outputs.append(proc.stdout + proc.stderr)
        return Run(
            proc.returncode,
            proc.stdout,
            proc.stderr,
            parse_events(proc.stdout + "\n" + proc.stderr),
        )

    def write_export(self, rows: list[dict[str, str]]) -> None:
        with self.export.open("w", newline="", encoding="utf-8") as fh:
            writer = csv.DictWriter(fh, fieldnames=list(rows[0]))
            writer.writeheader()
            writer.writerows(rows)

    def use_export(self, name: str) -> None:
        shutil.copy(CONFIG / name, self.export)

    def process_requests(self) -> list[Any]:
        return [
            r for r in self.sim.dx.requests if r.method_name == "orgfiles.teamHierarchy.process"
        ]

    def dx_teams(self) -> dict[str, dict[str, Any]]:
        """DX's teams as they settle: a seed may show an import's counts a moment after
        the import (at most MAX_LAG_S); a test asserting what DX holds reads them then."""
        deadline = time.monotonic() + MAX_LAG_S + 0.5
        while self.sim.dx.counts_pending() and time.monotonic() < deadline:
            time.sleep(0.05)
        return {t["name"]: t for t in self.sim.dx.teams_view()}


def parse_events(text: str) -> list[dict[str, Any]]:
    events = []
    for line in text.splitlines():
        line = line.strip()
        if line.startswith("{"):
            try:
                events.append(json.loads(line))
            except json.JSONDecodeError:
                continue
    return events


def read_rows(name: str) -> list[dict[str, str]]:
    with (CONFIG / name).open(encoding="utf-8-sig", newline="") as fh:
        return list(csv.DictReader(fh))


@pytest.fixture
def workspace(tmp_path: Path, request: pytest.FixtureRequest) -> Iterator[Workspace]:
    delay = getattr(request, "param", 0.2)
    scenario = dataclasses.replace(
        load_scenario(CONFIG / "demo-scenario.json"), import_delay_s=delay
    )
    with start_simulator(scenario) as sim:
        export = tmp_path / "people.csv"
        shutil.copy(CONFIG / "sample-org.csv", export)
        db = tmp_path / "state.db"
        config = tmp_path / "hrsync.toml"
        config.write_text(CONFIG_TEMPLATE.format(base_url=sim.base_url, export=export, db=db))
        ws = Workspace(tmp_path, sim, config, export, db)
        yield ws
        # Whatever a test did, the token never showed: not in output, not in the store.
        for output in ws.outputs:
            assert TOKEN not in output
        if db.exists():
            for path in tmp_path.glob("state.db*"):
                assert TOKEN.encode() not in path.read_bytes()
