"""Large exports within the shipped memory limit (512 MiB): peak RSS and time of whole
`hrsync` processes on a Workday-RaaS-shaped JSON export of 45 fields a worker.

    PYTHONPATH=. .venv/bin/python benchmarks/bench_large_export.py                # 50,000
    PYTHONPATH=. .venv/bin/python benchmarks/bench_large_export.py --people 2000 --init-rows 2000

Each figure is one fresh child process; its peak RSS is the child's own (os.wait4), CPU
its user + system time. Printed, against an empty DX (the simulator):

- `hrsync plan` on the JSON file (~170 MB at 50,000 people), the same served gzipped over
  HTTP by a local server thread, and the same people as CSV (the CSV's columns only);
  targets: JSON under 400 MiB, CSV under 300 MiB;
- the whole `plan` of the CSV against a child that only runs csv.DictReader over it
  (the floor, in the same run); target within 5x;
- `hrsync init --from` on a CSV of `--init-rows` rows x 16 columns (default 100,000),
  and on the JSON file; target under 300 MiB;
- `hrsync sync` (a first sync: every team created, the import waited for and verified)
  on the JSON file and on the same over HTTP, each against a DX of its own; target
  under 400 MiB.

`--only plan,init,sync` runs only those parts.
"""

from __future__ import annotations

import argparse
import csv
import gzip
import json
import random
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

from hrsync import logs
from hrsync.simulator.scenario import scenario_from_dict

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_cli import FLOOR, base_env, hrsync
from bench_sync import TOKEN, scenario_for
from generator import generate_org, workday_entry, write_csv

JSON_TARGET_MIB = 400
CSV_TARGET_MIB = 300
INIT_TARGET_MIB = 300
PLAN_TARGET = 5.0
FIELDS = 45  # what a Workday custom report of workers carries
# The fields beyond the seven the generator gives: text of a size such reports hold.
EXTRA_FIELDS = tuple(f"Extra_Field_{i:02d}" for i in range(FIELDS - 7))

CONFIG = """\
[dx]
base_url = "{base_url}"

[source]
{where}
{records}

[source.fields]
employee_id = "{employee_id}"
name = "{name}"
email = "{email}"
manager_id = "{manager_id}"
department = "{department}"
status = "{status}"

[mapping]
team_name = "{{department}}"

[state]
database_url = "sqlite:///{db}"
"""
JSON_FIELDS = {
    "employee_id": "Employee_ID",
    "name": "Worker",
    "email": "Email_-_Work",
    "manager_id": "Manager.ID",
    "department": "Supervisory_Organization",
    "status": "Worker_Status",
}
CSV_FIELDS = {
    "employee_id": "Employee ID",
    "name": "Full Name",
    "email": "Work Email",
    "manager_id": "Manager ID",
    "department": "Department",
    "status": "Status",
}


def write_wide_json(rows: list[dict[str, str]], path: Path) -> None:
    """Workday RaaS shape (``{"Report_Entry": [...]}``) with FIELDS fields a worker."""
    rng = random.Random(7)
    words = ("Regional", "Operations", "North", "Finance", "Cost Center", "Site", "Band")
    with path.open("w", encoding="utf-8") as fh:
        fh.write('{"Report_Entry": [')
        for position, row in enumerate(rows):
            entry = workday_entry(row)
            for name in EXTRA_FIELDS:
                entry[name] = " ".join(rng.choice(words) for _ in range(8)) + f" {position}"
            fh.write(("," if position else "") + json.dumps(entry, ensure_ascii=False))
        fh.write("]}")


# Linux keeps a process's peak RSS across fork and exec: a child forked from this process
# (which holds the generated org) would report this one's size. A small launcher forks it.
LAUNCHER = (
    "import os, subprocess, sys\n"
    "proc = subprocess.Popen(sys.argv[2:])\n"
    "_, status, usage = os.wait4(proc.pid, 0)\n"
    "with open(sys.argv[1], 'w') as fh:\n"
    "    fh.write(f'{usage.ru_maxrss} {usage.ru_utime + usage.ru_stime}')\n"
    "sys.exit(os.waitstatus_to_exitcode(status))\n"
)


def run(cmd: Sequence[str], env: dict[str, str]) -> tuple[float, float, float, str]:
    """(peak RSS in MiB, CPU s, wall s, output) of one child running `cmd`."""
    started = time.perf_counter()
    with tempfile.TemporaryDirectory() as tmp:
        figures = Path(tmp) / "usage"
        proc = subprocess.run(
            [sys.executable, "-c", LAUNCHER, str(figures), *cmd],
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
        )
        wall = time.perf_counter() - started
        maxrss, cpu = figures.read_text().split()
    output = proc.stdout.decode(errors="replace")
    if proc.returncode not in (0, 2):
        sys.stderr.write(f"{' '.join(cmd[:6])}... exited {proc.returncode}:\n{output[-2000:]}")
    return int(maxrss) / 1024, float(cpu), wall, output


@contextmanager
def serve_gzipped(path: Path) -> Iterator[str]:
    """A local server thread answering GET with `path`'s bytes, gzipped; yields its URL."""
    body = gzip.compress(path.read_bytes(), compresslevel=6)

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Encoding", "gzip")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *_: object) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/report?format=json"
    finally:
        server.shutdown()
        server.server_close()


def verdict(ok: bool) -> str:
    return "ok" if ok else "MISSED"


def write_init_csv(rows: int, path: Path) -> None:
    """`rows` people x 16 columns, for `hrsync init --from`."""
    people = generate_org(rows, seed=11)
    extra = [f"Column {i}" for i in range(16 - len(people[0]))]
    with path.open("w", newline="", encoding="utf-8") as fh:
        writer = csv.writer(fh, lineterminator="\n")
        writer.writerow([*people[0], *extra])
        for person in people:
            writer.writerow([*person.values(), *(f"value {i}" for i in range(len(extra)))])


# The floor with the libraries a plan cannot do without imported first: SQLAlchemy (the
# state store), httpx (DX) and structlog (the log). What is left of the target after it
# is what hrsync's own imports and work may take.
STACK_FLOOR = "import sqlalchemy, httpx, structlog\n" + FLOOR
# ... and with every module a `plan` imports, hrsync's own included.
IMPORTS_FLOOR = "import hrsync.cli, hrsync.commands.sync\n" + FLOOR


def plan_vs_floor(plan: Sequence[str], csv_path: Path, env: dict[str, str], rounds: int) -> None:
    """Whole-process `plan` against the floor: CPU of each, in turn, `rounds` times; the
    median of the round-by-round ratios (a busy host moves both sides of a round)."""
    ratios: list[float] = []
    stack_ratios: list[float] = []
    import_ratios: list[float] = []
    plans: list[float] = []
    floors: list[float] = []
    for _ in range(rounds):
        _, plan_cpu, _, _ = run(plan, env)
        _, floor_cpu, _, _ = run([sys.executable, "-c", FLOOR, str(csv_path)], env)
        _, stack_cpu, _, _ = run([sys.executable, "-c", STACK_FLOOR, str(csv_path)], env)
        _, imports_cpu, _, _ = run([sys.executable, "-c", IMPORTS_FLOOR, str(csv_path)], env)
        import_ratios.append(imports_cpu / floor_cpu)
        plans.append(plan_cpu)
        floors.append(floor_cpu)
        ratios.append(plan_cpu / floor_cpu)
        stack_ratios.append(stack_cpu / floor_cpu)
    ratio = statistics.median(ratios)
    print(
        f"hrsync plan of the CSV: {statistics.median(plans):.2f} s CPU; csv.DictReader floor "
        f"{statistics.median(floors):.2f} s; median of {rounds} rounds {ratio:.1f}x "
        f"(from {min(ratios):.1f} to {max(ratios):.1f}; target <= {PLAN_TARGET:g}x) "
        f"{verdict(ratio <= PLAN_TARGET)}"
    )
    print(
        f"  the floor after importing SQLAlchemy, httpx and structlog: "
        f"{statistics.median(stack_ratios):.1f}x the floor; after importing every module a "
        f"plan imports: {statistics.median(import_ratios):.1f}x, before any of hrsync's work"
    )


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--people", type=int, default=50_000)
    parser.add_argument("--init-rows", type=int, default=100_000)
    parser.add_argument("--only", default="plan,init,sync", help="parts to run, by comma")
    parser.add_argument(
        "--plan-rounds", type=int, default=9, help="rounds of plan against the floor (9)"
    )
    args = parser.parse_args(argv)
    parts = set(args.only.split(","))
    logs.configure("console", "warning", sys.stderr)  # the simulator's request log is noise
    from hrsync.simulator.server import start_simulator

    with tempfile.TemporaryDirectory(prefix="hrsync-bench-large-") as tmp:
        work = Path(tmp)
        rows = generate_org(args.people, seed=7)
        as_json, as_csv = work / "org.json", work / "org.csv"
        write_wide_json(rows, as_json)
        write_csv(rows, as_csv)
        size_mb = as_json.stat().st_size / 1e6
        env = base_env() | {"HRSYNC_DX_TOKEN": TOKEN, "HRSYNC_SOURCE__MAX_BYTES": str(10**9)}
        scenario = scenario_from_dict(scenario_for(rows), source="<bench>")
        if "sync" in parts:
            sync_env = env | {
                "HRSYNC_SYNC__VERIFY_TIMEOUT_S": "600",
                "HRSYNC_SYNC__MAX_ARCHIVE_FRACTION": "1.0",
            }
            for label, where in (
                ("JSON file", f'path = "{as_json}"'),
                ("JSON over HTTP, gzipped", 'url = "{url}"\nsingle_page = true'),
            ):
                # A DX of its own for each: a first sync creates every team.
                with start_simulator(scenario) as sim, serve_gzipped(as_json) as url:
                    path = work / f"sync-{len(label)}.toml"
                    path.write_text(
                        CONFIG.format(
                            base_url=sim.base_url,
                            where=where.format(url=url),
                            records='records_path = "Report_Entry"',
                            db=work / f"sync-{len(label)}.db",
                            **JSON_FIELDS,
                        )
                    )
                    rss, cpu, wall, output = run(hrsync("--config", str(path), "sync"), sync_env)
                    said = output.strip().splitlines()[-1:] or ["(nothing)"]
                    print(
                        f"hrsync sync, {args.people} people, {label}: peak RSS {rss:.0f} MiB "
                        f"(target < {JSON_TARGET_MIB} MiB) {verdict(rss < JSON_TARGET_MIB)}; "
                        f"{cpu:.2f} s CPU, {wall:.2f} s wall; {said[0][:120]}"
                    )
        cases_wanted = "plan" in parts
        with start_simulator(scenario) as sim, serve_gzipped(as_json) as url:

            def config(name: str, where: str, fields: dict[str, str], records: str) -> Path:
                path = work / f"{name}.toml"
                path.write_text(
                    CONFIG.format(
                        base_url=sim.base_url,
                        where=where,
                        records=records,
                        db=work / f"{name}.db",
                        **fields,
                    )
                )
                return path

            records = 'records_path = "Report_Entry"'
            cases = [
                (
                    f"JSON file, {size_mb:.0f} MB",
                    config("json", f'path = "{as_json}"', JSON_FIELDS, records),
                    JSON_TARGET_MIB,
                ),
                (
                    "JSON over HTTP, gzipped",
                    config("http", f'url = "{url}"\nsingle_page = true', JSON_FIELDS, records),
                    JSON_TARGET_MIB,
                ),
                ("CSV file", config("csv", f'path = "{as_csv}"', CSV_FIELDS, ""), CSV_TARGET_MIB),
            ]
            for label, path, target in cases if cases_wanted else []:
                rss, cpu, wall, _ = run(hrsync("--config", str(path), "plan"), env)
                print(
                    f"hrsync plan, {args.people} people, {label}: peak RSS {rss:.0f} MiB "
                    f"(target < {target} MiB) {verdict(rss < target)}; {cpu:.2f} s CPU, "
                    f"{wall:.2f} s wall"
                )
            if cases_wanted:
                plan_vs_floor(
                    hrsync("--config", str(cases[-1][1]), "plan"), as_csv, env, args.plan_rounds
                )
        if "init" not in parts:
            return 0
        wide = work / "init.csv"
        write_init_csv(args.init_rows, wide)
        init_env = env | {"HRSYNC_CONFIG": ""}
        rss, cpu, wall, _ = run(
            hrsync("init", "--from", str(wide), "--out", str(work / "init.toml")), init_env
        )
        print(
            f"hrsync init --from, {args.init_rows} rows x 16 columns: peak RSS {rss:.0f} MiB "
            f"(target < {INIT_TARGET_MIB} MiB) {verdict(rss < INIT_TARGET_MIB)}; {cpu:.2f} s CPU"
        )
        rss, cpu, wall, _ = run(
            hrsync("init", "--from", str(as_json), "--out", str(work / "init-json.toml")),
            init_env,
        )
        print(
            f"hrsync init --from the JSON file: peak RSS {rss:.0f} MiB "
            f"(target < {INIT_TARGET_MIB} MiB) {verdict(rss < INIT_TARGET_MIB)}; {cpu:.2f} s CPU"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
