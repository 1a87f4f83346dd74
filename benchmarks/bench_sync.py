"""Whole `hrsync sync` runs against the simulator, at org sizes a real customer has.

    PYTHONPATH=. .venv/bin/python benchmarks/bench_sync.py              # 1k 10k 50k
    PYTHONPATH=. .venv/bin/python benchmarks/bench_sync.py --sizes 100000

For each size: a generated export (benchmarks/generator.py, seed 7), a simulated DX
account whose users are the export's people (so every lead exists), then three
`hrsync sync` processes, timed from the outside: the first sync (creates every team,
waits for the import and verifies it), a second one with the same export (nothing to
send), and a dry run. The simulator applies imports after 0.5 s. Prints wall seconds,
the payload size and the peak RSS of the hrsync process.
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
import time
from pathlib import Path

from hrsync import logs
from hrsync.commands.demo import CONFIG as DEMO_CONFIG
from hrsync.simulator.scenario import scenario_from_dict
from hrsync.simulator.server import start_simulator
from hrsync.simulator.variation import STEADY_SEED

sys.path.insert(0, str(Path(__file__).resolve().parent))
from generator import generate_org, write_csv

TOKEN = "bench-token"
# The demo's configuration (sample-org columns), with bench-specific overrides below.
CONFIG = DEMO_CONFIG
OVERRIDES = {
    "HRSYNC_SYNC__VERIFY_TIMEOUT_S": "600",
    "HRSYNC_SYNC__MAX_ARCHIVE_FRACTION": "1.0",
    "HRSYNC_LOG__FORMAT": "json",
}


def scenario_for(
    rows: list[dict[str, str]], scopes: tuple[str, ...] = ("snapshots:read", "snapshots:admin")
) -> dict[str, object]:
    users = {
        r["Work Email"].strip().lower(): " ".join(r["Full Name"].split())
        for r in rows
        if r["Status"].strip() != "Terminated"
    }
    return {
        "account_name": "Bench Corp",
        "app_url": "https://app.dx.example",
        "users": [{"name": n, "email": e} for e, n in users.items()],
        "tokens": [
            {
                "value": TOKEN,
                "kind": "account_web_api_token",
                "scopes": list(scopes),
            }
        ],
        "teams": [],
        "snapshots": [],
        "import_delay_s": 0.5,
        "rate_limit_per_minute": None,
    }


def timed_sync(config: Path, *args: str) -> tuple[float, int, float, dict[str, object]]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("HRSYNC_")}
    env.update(OVERRIDES, HRSYNC_DX_TOKEN=TOKEN)
    before = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    started = time.perf_counter()
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "hrsync",
            "--config",
            str(config),
            "--log-level",
            "info",
            "sync",
            *args,
        ],
        env=env,
        capture_output=True,
        text=True,
    )
    took = time.perf_counter() - started
    if proc.returncode not in (0, 3, 4, 5):
        sys.stderr.write(proc.stdout[-3000:] + proc.stderr[-3000:])
    # ru_maxrss of children is the largest so far: only meaningful when it grows.
    peak_mb = max(before, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss) / 1024
    finished: dict[str, object] = {}
    # The JSON log is on stderr when a summary is on stdout (`--summary`): read both.
    for line in (proc.stdout + proc.stderr).splitlines():
        if '"sync.finished"' in line:
            finished = json.loads(line)
    return took, proc.returncode, peak_mb, finished


def bench(n: int, workdir: Path) -> dict[str, object]:
    rows = generate_org(n, seed=7)
    export = workdir / f"org-{n}.csv"
    write_csv(rows, export)
    with export.open(encoding="utf-8") as fh:
        people = sum(1 for r in csv.DictReader(fh) if r["Status"].strip() == "Active")
    scenario = scenario_from_dict(scenario_for(rows), source="<bench>")
    with start_simulator(scenario, seed=STEADY_SEED) as sim:
        config = workdir / f"hrsync-{n}.toml"
        db = workdir / f"state-{n}.db"
        config.write_text(CONFIG.format(base_url=sim.base_url, export=export, db=db))
        first = timed_sync(config)
        second = timed_sync(config)
        dry = timed_sync(config, "--dry-run")
        process = [r for r in sim.dx.requests if r.method_name.endswith(".process")]
        if not process:
            raise SystemExit(f"N={n}: the first sync sent nothing: {first}")
        payload = len(json.dumps(process[0].body["teams"], separators=(",", ":")))
        teams = len(sim.dx.teams_view())
    return {
        "n": n,
        "people": people,
        "teams": teams,
        "payload_mb": payload / 1e6,
        "first": first,
        "second": second,
        "dry": dry,
    }


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[1_000, 10_000, 50_000])
    args = parser.parse_args(argv)
    logs.configure("console", "warning", sys.stderr)  # the simulator's request log is noise
    print(
        f"{'N':>7} {'people':>7} {'teams':>6} {'payload':>8} │ {'first sync':>11} "
        f"{'outcome':>8} │ {'2nd sync':>9} {'outcome':>8} │ {'dry run':>8} │ {'peak RSS':>8}"
    )
    with tempfile.TemporaryDirectory(prefix="hrsync-bench-") as tmp:
        for n in args.sizes:
            r = bench(n, Path(tmp))
            first, second, dry = r["first"], r["second"], r["dry"]
            assert isinstance(first, tuple) and isinstance(second, tuple)
            assert isinstance(dry, tuple)
            peak = max(first[2], second[2], dry[2])
            print(
                f"{r['n']:>7} {r['people']:>7} {r['teams']:>6} {r['payload_mb']:>6.2f}MB │ "
                f"{first[0]:>10.2f}s {first[3].get('outcome', first[1])!s:>8} │ "
                f"{second[0]:>8.2f}s {second[3].get('outcome', second[1])!s:>8} │ "
                f"{dry[0]:>7.2f}s │ {peak:>6.0f}MB",
                flush=True,
            )
    print(
        "first sync: plan, process, wait for the simulated import (0.5 s), verify "
        "(teams.list + audit trail); 2nd sync: same export, nothing sent; wall seconds "
        "of the whole `hrsync sync` process, including Python start-up."
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
