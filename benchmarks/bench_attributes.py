"""A first attribute sync of a large org against the simulator, the limiter lifted.

    PYTHONPATH=. .venv/bin/python benchmarks/bench_attributes.py            # 10,000 people
    PYTHONPATH=. .venv/bin/python benchmarks/bench_attributes.py --size 2000

A generated export (benchmarks/generator.py, seed 7) with two attributes, a column and a
template (`"Location" = "{Office}"`, `"Level" = "{Title|first}"`), and a simulated DX
account whose users are the export's people, its rate limit off. Three `hrsync sync`
processes, each timed from the outside:

1. the hierarchy alone (no `[attributes]` entries): every team created and verified;
2. the first attribute sync: the hierarchy in sync, one `users.attributes.update` per
   person (`dx.max_requests_per_minute` lifted, so the client's limiter never waits);
3. the same export again: nothing to send (the baseline: start-up, read, map, plan).

hrsync's own time per person is the CPU time (user + system) of the hrsync process in
(2) minus that of (3), divided by the calls: the simulator runs in this process, so its
work is not in it. The wall time per call is shown beside it, with the simulator's own
time (its request handler, measured in here) left out and shown separately.
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import resource
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

from hrsync import logs
from hrsync.commands.demo import CONFIG as DEMO_CONFIG
from hrsync.dx.methods import USER_ATTRIBUTES_UPDATE
from hrsync.simulator.core import SimulatedDx
from hrsync.simulator.scenario import scenario_from_dict
from hrsync.simulator.server import start_simulator
from hrsync.simulator.variation import STEADY_SEED

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_sync import (
    TOKEN,
    scenario_for,
)
from generator import generate_org

OFFICES = ("Berlin", "Lisbon", "Toronto", "Nairobi", "Singapore", "Austin", "Sao Paulo")
ATTRIBUTES = '\n[attributes]\n"Location" = "{Office}"\n"Level" = "{Title|first}"\n'
OVERRIDES = {
    "HRSYNC_SYNC__VERIFY_TIMEOUT_S": "600",
    "HRSYNC_SYNC__MAX_ARCHIVE_FRACTION": "1.0",
    "HRSYNC_DX__MAX_REQUESTS_PER_MINUTE": "100000000",  # the limiter lifted
    "HRSYNC_LOG__FORMAT": "json",
}


class HandlerClock:
    """Wall seconds the simulator spent in its request handler, per method."""

    def __init__(self, dx: SimulatedDx) -> None:
        self.seconds: dict[str, float] = {}
        self._lock = threading.Lock()
        original = dx.handle

        def timed(http_method: str, path_method: str, *args: Any, **kwargs: Any) -> Any:
            started = time.perf_counter()
            try:
                return original(http_method, path_method, *args, **kwargs)
            finally:
                took = time.perf_counter() - started
                with self._lock:
                    key = path_method.strip("/")
                    self.seconds[key] = self.seconds.get(key, 0.0) + took

        dx.handle = timed  # type: ignore[method-assign]


def timed_sync(config: Path, **env_extra: str) -> tuple[float, float, dict[str, Any]]:
    """(wall s, CPU s of the hrsync process, its sync.finished event)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("HRSYNC_")}
    env.update(OVERRIDES, HRSYNC_DX_TOKEN=TOKEN, **env_extra)
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    proc = subprocess.run(
        [sys.executable, "-m", "hrsync", "--config", str(config), "sync"],
        env=env,
        capture_output=True,
        text=True,
    )
    wall = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    finished: dict[str, Any] = {}
    # The JSON log is on stderr when a summary is on stdout (`--summary`): read both.
    for line in (proc.stdout + proc.stderr).splitlines():
        if '"sync.finished"' in line:
            finished = json.loads(line)
    if proc.returncode != 0:
        sys.stderr.write(proc.stdout[-3000:] + proc.stderr[-3000:])
        raise SystemExit(f"hrsync sync exited {proc.returncode}: {finished}")
    return wall, cpu, finished


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", type=int, default=10_000)
    args = parser.parse_args(argv)
    logs.configure("console", "warning", sys.stderr)  # the simulator's request log is noise
    rows = generate_org(args.size, seed=7)
    for index, row in enumerate(rows):
        row["Office"] = OFFICES[index % len(OFFICES)]
    with tempfile.TemporaryDirectory(prefix="hrsync-bench-attributes-") as tmp:
        workdir = Path(tmp)
        export = workdir / "org.csv"
        with export.open("w", encoding="utf-8", newline="") as fh:
            writer = csv.DictWriter(fh, fieldnames=list(rows[0]))
            writer.writeheader()
            writer.writerows(rows)
        scenario = scenario_from_dict(
            scenario_for(rows, ("snapshots:read", "snapshots:admin", "users:write")),
            source="<bench>",
        )
        with start_simulator(scenario, seed=STEADY_SEED) as sim:
            handler = HandlerClock(sim.dx)
            config = workdir / "hrsync.toml"
            db = workdir / "state.db"
            text = DEMO_CONFIG.format(base_url=sim.base_url, export=export, db=db)
            config.write_text(text + ATTRIBUTES)
            hierarchy = timed_sync(config, HRSYNC_ATTRIBUTES__ENABLED="false")
            sim_before = handler.seconds.get(USER_ATTRIBUTES_UPDATE, 0.0)
            first = timed_sync(config)
            sim_update = handler.seconds.get(USER_ATTRIBUTES_UPDATE, 0.0) - sim_before
            again = timed_sync(config)
            calls = sum(1 for r in sim.dx.requests if r.method_name == USER_ATTRIBUTES_UPDATE)
    counts = first[2].get("counts", {})
    people = counts.get("attributes_updated", 0)
    if calls != people or again[2].get("counts", {}).get("attributes_unchanged") != people:
        raise SystemExit(f"unexpected: {calls} calls, first {first[2]}, again {again[2]}")
    own_cpu = first[1] - again[1]
    own_wall = first[0] - again[0] - sim_update
    print(f"people: {people}, attribute calls: {calls} (2 values each)")
    print(f"hierarchy sync (attributes off): {hierarchy[0]:.1f} s wall")
    print(
        f"first attribute sync: {first[0]:.1f} s wall, {first[1]:.1f} s CPU of hrsync; "
        f"unchanged run: {again[0]:.1f} s wall, {again[1]:.1f} s CPU"
    )
    print(
        f"hrsync's own time per person: {1000 * own_cpu / people:.2f} ms CPU; "
        f"{1000 * own_wall / people:.2f} ms wall without the simulator's handler "
        f"({1000 * sim_update / people:.2f} ms per call in the simulator, left out)"
    )
    print(
        "At DX's limit (hrsync's limiter: 900 calls a minute) the same run takes "
        f"{people / 900:.1f} minutes: the limiter, not hrsync, sets the pace."
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
