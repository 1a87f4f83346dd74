"""Time people -> teams -> reference ids on generated orgs of 1k, 10k and 100k people.

    PYTHONPATH=. .venv/bin/python benchmarks/bench_mapping.py            # all sizes
    PYTHONPATH=. .venv/bin/python benchmarks/bench_mapping.py 1000 10000 # some sizes

Each size runs in a fresh child process, so its peak RSS (getrusage ru_maxrss) is its
own. Stages, in the order the engine runs them:

- validate: `hrsync.core.people.read_people` over the generated rows, already in memory
  (normalise, filter terminated/other statuses, validate, resolve managers); reading
  the file itself is benchmarked separately by the sources' benchmark;
- map: `build_teams`, manager strategy, default template;
- assign (empty store): the first run: every team new, DX empty;
- assign (full store): a steady-state run: every team known, DX lists them all;
- map dept: `build_teams` with the department strategy (generated paths, 3 levels).

"map+assign" is map + assign (empty store), the target at 100k is under 10 s.
"""

from __future__ import annotations

import json
import resource
import subprocess
import sys
import time
from pathlib import Path

from hrsync.config.loading import FieldSettings, FilterSettings, MappingSettings
from hrsync.core.export.rows import SourceRow
from hrsync.core.people import read_people
from hrsync.core.teams.identity import assign
from hrsync.core.teams.mapping import build_teams
from hrsync.dx.models import DxTeam

sys.path.insert(0, str(Path(__file__).resolve().parent))
from generator import COLUMNS, generate_org

SIZES = (1_000, 10_000, 100_000)
FIELDS = FieldSettings(
    employee_id="Employee ID",
    email="Work Email",
    name="Full Name",
    manager_id="Manager ID",
    department="Department",
    status="Status",
)


def _rss_mb() -> float:
    # Linux reports kilobytes.
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def measure(n: int, seed: int) -> dict[str, float]:
    baseline = _rss_mb()
    rows = generate_org(n, seed)
    source = [SourceRow(f"generated.csv line {i + 2}", row) for i, row in enumerate(rows)]
    del rows

    started = time.perf_counter()
    directory = read_people("generated.csv", COLUMNS, source, FIELDS, FilterSettings())
    validated = time.perf_counter()
    if not directory.ok:
        raise SystemExit(f"generated export has problems: {directory.problems[:3]}")
    team_map = build_teams(directory.people, MappingSettings(), FIELDS)
    mapped = time.perf_counter()
    first = assign(team_map.teams, [], [])
    assigned = time.perf_counter()

    dx_ids = {row.reference_id: f"dx{i}" for i, row in enumerate(first.teams)}
    dx_teams = [
        DxTeam(
            id=dx_ids[row.reference_id],
            name=row.name,
            parent_id=None if row.parent_reference_id is None else dx_ids[row.parent_reference_id],
            reference_id=row.reference_id,
            contributors=len(row.contributors),
        )
        for row in first.teams
    ]
    dept_started = time.perf_counter()
    departments = build_teams(
        directory.people, MappingSettings(strategy="department", team_name="{department}"), FIELDS
    )
    dept_done = time.perf_counter()
    again_started = time.perf_counter()
    again = assign(team_map.teams, first.identities, dx_teams)
    again_done = time.perf_counter()
    assert again.teams == first.teams
    return {
        "n": n,
        "people": len(directory.people),
        "teams": len(team_map.teams),
        "validate_s": validated - started,
        "map_s": mapped - validated,
        "assign_empty_s": assigned - mapped,
        "assign_full_s": again_done - again_started,
        "map_assign_s": assigned - validated,
        "map_department_s": dept_done - dept_started,
        "department_teams": len(departments.teams),
        "baseline_mb": baseline,
        "peak_mb": _rss_mb(),
    }


def main(argv: list[str]) -> int:
    if argv[:1] == ["--one"]:
        print(json.dumps(measure(int(argv[1]), int(argv[2]))))
        return 0
    sizes = [int(a.replace("_", "")) for a in argv] or list(SIZES)
    header = (
        f"{'N':>8} {'people':>8} {'teams':>7} {'validate':>9} {'map':>7} "
        f"{'assign0':>8} {'assignN':>8} {'map+asg':>8} {'map dept':>9} {'peak RSS':>9}"
    )
    print(header)
    print("-" * len(header))
    for n in sizes:
        done = subprocess.run(
            [sys.executable, __file__, "--one", str(n), "7"],
            check=True,
            capture_output=True,
            text=True,
        )
        r = json.loads(done.stdout)
        print(
            f"{r['n']:>8} {r['people']:>8} {r['teams']:>7} {r['validate_s']:>8.2f}s "
            f"{r['map_s']:>6.2f}s {r['assign_empty_s']:>7.2f}s {r['assign_full_s']:>7.2f}s "
            f"{r['map_assign_s']:>7.2f}s {r['map_department_s']:>8.2f}s {r['peak_mb']:>6.0f} MB",
            flush=True,
        )
    print(
        "\nvalidate: read_people on in-memory rows; map: build_teams (manager strategy);\n"
        "assign0: empty store, DX empty; assignN: full store, DX lists every team;\n"
        "map+asg: map + assign0; map dept: build_teams, department strategy (paths);\n"
        "peak RSS: whole child process (generated rows included)."
    )
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
