"""Time the whole pure pipeline on generated CSV exports, beside a bare csv.DictReader pass.

    PYTHONPATH=. .venv/bin/python benchmarks/bench_pipeline.py                  # 10k 50k 100k
    PYTHONPATH=. .venv/bin/python benchmarks/bench_pipeline.py --sizes 100000 --repeat 3

For each size a seeded export (benchmarks/generator.py) is written to a temporary
directory, then every measurement runs in a fresh child process, so that its peak RSS
(getrusage ru_maxrss, a high-water mark) is its own:

- floor: `csv.DictReader` over the file, nothing else: the cost of merely parsing it;
- pipeline, empty store (a first run): `open_export` → `Export.table()` → `read_people`
  (normalise, filter, validate, resolve managers, find cycles) → `build_teams`
  (manager strategy, default template) → `assign` with no known identities and DX empty;
- pipeline with templates: the first run again, with `name` and `email` in
  `[source.fields]` built by templates (issue 11's case; target 5x the floor);
- pipeline with joins (issue 26): the first run again, the export read as a run reads it
  (`read_export`) with a 2,000-row lookup table joined on the department
  (`[[source.join]]`, its column the team's department), and then also a 100,000-row
  identity export joined by e-mail (the name ranked: its display name, else the
  export's, a `[source.fields]` precedence list); each printed as
  a ratio to the single-export pipeline of the same run (target 2x);
- pipeline with a union (issue 26): the first run again, read as a run reads it
  (`read_export`), from two exports of 90% and 10% of the people (the second in another
  company's column names, its ids in their own namespace, its CEO attached to the
  first's: `[[source.union]]`); printed as a ratio to the single-export pipeline of the
  whole size, in the same run;
- steps (`--child steps FILE` only, not in the table): the first run once, with the time
  of each step of read_people, build_teams and assign (`STEPS`) beside the stages';
- pipeline, full store (steady state): the same, but `assign` gets the identities of a
  first pass and DX lists every team. A separate child prepares those (written to a JSON
  file); the measured child loads them before the clock starts, so its RSS holds them as
  a real run holds the store's identities and DX's team list.

Reading and validation are one stage ("read+val"): the whole file as a sync reads it
(`Export.table()`, one run of the csv module), then `read_people`.
Times are the best of `--repeat` runs; RSS is the largest of those runs. The pipeline's
RSS includes importing hrsync (structlog, httpx, ...), which the floor does not pay.
Target at 100k: pipeline at most 3x the floor, peak RSS at most 300 MB.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

TARGET_RATIO = 3.0
# Issue 11: read → validate → map → assign with [source.fields] templates for the name
# and the e-mail, at 100k people.
TARGET_TEMPLATES_RATIO = 5.0
TARGET_RSS_MB = 300.0
# Issue 26: joins cost at most this many times the single-export pipeline.
TARGET_JOINS_RATIO = 2.0
LOOKUP_ROWS = 2_000
# Issue 26: the share of the people in the second export of the union case.
UNION_SHARE = 0.1
SIZES = (10_000, 50_000, 100_000)
SEED = 7


# ---------------------------------------------------------------- child side


def _rss_mb() -> float:
    """Peak RSS of this process in MB.

    On Linux, getrusage's ru_maxrss survives exec: a child reports at least the RSS its
    parent had when it forked. VmHWM belongs to the process's own memory map, so it is
    the honest figure; ru_maxrss is the fallback elsewhere (the parent is kept small for it).
    """
    try:
        with open("/proc/self/status", encoding="ascii") as fh:
            for line in fh:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) / 1024  # kB
    except OSError:
        pass
    import resource

    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # Linux: kilobytes


def measure_floor(path: Path) -> dict[str, Any]:
    import csv
    import time

    started = time.perf_counter()
    cpu = time.process_time()
    count = 0
    with path.open(newline="", encoding="utf-8-sig") as fh:
        for _ in csv.DictReader(fh):
            count += 1
    elapsed = time.perf_counter() - started
    return {
        "rows": count,
        "seconds": elapsed,
        "cpu_s": time.process_time() - cpu,
        "rss_mb": _rss_mb(),
    }


def _settings(templates: bool = False) -> Any:
    from hrsync.config.loading import FieldSettings

    if templates:
        # Issue 11's case: the name and the e-mail built from columns by templates (the
        # e-mail keeps the employee id so that it stays unique in a generated org).
        return FieldSettings(
            employee_id="Employee ID",
            email="{Employee ID|lower}.{Full Name|last|ascii|nospace|lower}@example.com",
            name="{Full Name|first} {Full Name|last}",
            manager_id="Manager ID",
            department="Department",
            status="Status",
        )
    return FieldSettings(
        employee_id="Employee ID",
        email="Work Email",
        name="Full Name",
        manager_id="Manager ID",
        department="Department",
        status="Status",
    )


def measure_pipeline(path: Path, store: Path | None, templates: bool = False) -> dict[str, Any]:
    import time

    from hrsync.config.loading import FilterSettings, MappingSettings, SourceSettings
    from hrsync.core.people import read_people
    from hrsync.core.teams.identity import KnownIdentity, assign
    from hrsync.core.teams.mapping import build_teams
    from hrsync.dx.models import DxTeam
    from hrsync.gcpause import collector_paused
    from hrsync.sources.open import open_export

    _quiet_logs()
    fields = _settings(templates)
    known: list[KnownIdentity] = []
    dx_teams: list[DxTeam] = []
    if store is not None:
        saved = json.loads(store.read_text())
        known = [KnownIdentity(**{**i, "members": tuple(i["members"])}) for i in saved["known"]]
        dx_teams = [DxTeam(**t) for t in saved["dx"]]
        del saved
    baseline = _rss_mb()

    started = time.perf_counter()
    cpu = time.process_time()
    # The collector paused around read → map → assign, once, exactly as a run does.
    with collector_paused():
        export = open_export(SourceSettings(path=path, fields=fields))
        directory = read_people(
            export.name, export.columns, export.table(), fields, FilterSettings()
        )
        validated = time.perf_counter()
        team_map = build_teams(directory.people, MappingSettings(), fields)
        mapped = time.perf_counter()
        assignment = assign(team_map.teams, known, dx_teams)
        assigned = time.perf_counter()
        cpu_s = time.process_time() - cpu

    if not directory.ok or team_map.problems:
        raise SystemExit(f"generated export has problems: {directory.problems[:3]}")
    if store is not None:
        how = {d.how for d in assignment.decisions}
        if how != {"known"}:
            raise SystemExit(f"steady state should keep every id, got {sorted(how)}")
    return {
        "rows": directory.rows_read,
        "people": len(directory.people),
        "teams": len(team_map.teams),
        "read_validate_s": validated - started,
        "map_s": mapped - validated,
        "assign_s": assigned - mapped,
        "seconds": assigned - started,
        "cpu_s": cpu_s,
        "baseline_mb": baseline,
        "rss_mb": _rss_mb(),
    }


# What `--child steps` times, by the module whose name for it a stage calls (a class's
# method by "Class.method"): reading the whole file, the steps of read_people, of
# build_teams and of assign.
STEPS = {
    "hrsync.sources.base": ("Export.table",),
    "hrsync.core.people": ("read_people",),
    "hrsync.core.people.pipeline": (
        "read_fields",
        "filter_rows",
        "validate_rows",
        "index_rows",
        "resolve_managers",
        "find_cycles",
        "build_people",
    ),
    "hrsync.core.teams.mapping": ("manager_drafts", "team_depths", "name_teams"),
    "hrsync.core.teams.identity": ("_ordered", "_adopt_and_create", "_rows", "_identities"),
}


def measure_steps(path: Path) -> dict[str, Any]:
    """The first run (`measure_pipeline`, empty store) once, with the time of each of
    `STEPS` beside it, and the page faults it took (each new page of memory a fresh
    process maps in): where the stages' time goes, in a fresh process as a run has it."""
    import importlib
    import resource
    import time

    spent: dict[str, float] = {}
    faults: dict[str, int] = {}

    def faulted() -> int:
        return resource.getrusage(resource.RUSAGE_SELF).ru_minflt

    def timed(name: str, step: Any) -> Any:
        def run(*args: Any, **kwargs: Any) -> Any:
            started, before = time.perf_counter(), faulted()
            try:
                return step(*args, **kwargs)
            finally:
                spent[name] = spent.get(name, 0.0) + time.perf_counter() - started
                faults[name] = faults.get(name, 0) + faulted() - before

        return run

    for module_name, names in STEPS.items():
        module = importlib.import_module(module_name)
        for name in names:
            owner: Any = module
            *classes, attribute = name.split(".")
            for part in classes:
                owner = getattr(owner, part)
            setattr(owner, attribute, timed(name, getattr(owner, attribute)))
    result = measure_pipeline(path, None)
    result["steps"] = spent
    result["faults"] = faults
    result["wrapped"] = [name for names in STEPS.values() for name in names]
    return result


def prepare_tables(path: Path, lookup: Path, identity: Path) -> dict[str, Any]:
    """The joined tables of the export at `path`: a lookup table of LOOKUP_ROWS rows by
    department (every department of the export, then keys nobody has), and an identity
    export of every person by e-mail (in another case and order, as an IdP lists them)."""
    import csv
    import random

    with path.open(newline="", encoding="utf-8-sig") as fh:
        rows = list(csv.DictReader(fh))
    departments = sorted({r["Department"] for r in rows})[:LOOKUP_ROWS]
    departments += [f"Unused/{i}" for i in range(LOOKUP_ROWS - len(departments))]
    with lookup.open("w", newline="", encoding="utf-8") as fh:
        writer = csv.writer(fh, lineterminator="\n")
        writer.writerow(["Department", "Unit", "Cost Centre"])
        writer.writerows([d, d, f"CC-{i:05}"] for i, d in enumerate(departments))
    people = [(r["Work Email"].strip().upper(), r["Full Name"], r["Employee ID"]) for r in rows]
    random.Random(SEED).shuffle(people)
    with identity.open("w", newline="", encoding="utf-8") as fh:
        writer = csv.writer(fh, lineterminator="\n")
        writer.writerow(["mail", "displayName", "employeeId"])
        writer.writerows(people)
    return {"lookup": len(departments), "identity": len(people)}


def measure_joined(path: Path, lookup: Path, identity: Path | None) -> dict[str, Any]:
    """The first run with `[[source.join]]`: read as a run reads (`read_export`: the
    export, each joined table, the joins, `read_people`), then map and assign."""
    import time

    from hrsync.config.loading import (
        FieldSettings,
        JoinSettings,
        MappingSettings,
        Settings,
        SourceSettings,
    )
    from hrsync.core.people.precedence import first_of_column
    from hrsync.core.teams.identity import assign
    from hrsync.core.teams.mapping import build_teams
    from hrsync.gcpause import collector_paused
    from hrsync.sync.reading import read_export

    _quiet_logs()
    base = _settings()
    # With the identity export, the name is ranked as issue 26's users write it: the
    # identity provider's display name, else the export's.
    first_of = {"name": ("identity.displayName", base.name)} if identity is not None else {}
    fields = FieldSettings(
        **{
            **vars(base),
            "department": "units.Unit",
            "name": first_of_column(first_of["name"]) if first_of else base.name,
        }
    )
    joins = [
        JoinSettings(
            name="units",
            on={"Department": "Department"},
            match="optional",
            table=SourceSettings(path=lookup),
        )
    ]
    if identity is not None:
        joins.append(
            JoinSettings(
                name="identity",
                on={"email": "mail"},
                match="optional",
                table=SourceSettings(path=identity),
            )
        )
    settings = Settings(
        source=SourceSettings(path=path, fields=fields, join=tuple(joins), first_of=first_of)
    )
    started = time.perf_counter()
    cpu = time.process_time()
    with collector_paused():
        export = read_export(settings)
        directory = export.directory
        validated = time.perf_counter()
        team_map = build_teams(directory.people, MappingSettings(), fields)
        mapped = time.perf_counter()
        assign(team_map.teams, [], [])
        assigned = time.perf_counter()
        cpu_s = time.process_time() - cpu
    if not directory.ok or team_map.problems or directory.held:
        raise SystemExit(f"generated export has problems: {directory.problems[:3]}")
    return {
        "rows": directory.rows_read,
        "people": len(directory.people),
        "teams": len(team_map.teams),
        "matched": {j.name: j.matched for j in export.joins},
        "read_validate_s": validated - started,
        "map_s": mapped - validated,
        "assign_s": assigned - mapped,
        "seconds": assigned - started,
        "cpu_s": cpu_s,
        "rss_mb": _rss_mb(),
    }


UNION_COLUMNS = ("id", "displayName", "workEmail", "supervisorEId", "department", "status")


def prepare_union(primary: Path, acquired: Path) -> dict[str, Any]:
    """The union's second export, from a generated org (`acquired` as generated): its
    columns renamed as another HR system names them, its e-mails in another domain, and
    the id of the first export's root, which its own root is attached to."""
    import csv

    with acquired.open(newline="", encoding="utf-8-sig") as fh:
        rows = list(csv.DictReader(fh))
    with acquired.open("w", newline="", encoding="utf-8") as fh:
        writer = csv.writer(fh, lineterminator="\n")
        writer.writerow(UNION_COLUMNS)
        for r in rows:
            email = r["Work Email"].strip().split("@")[0] + "@acquired.example"
            writer.writerow(
                (
                    r["Employee ID"],
                    r["Full Name"],
                    email,
                    r["Manager ID"],
                    r["Department"],
                    r["Status"],
                )
            )
    with primary.open(newline="", encoding="utf-8-sig") as fh:
        root = next(r["Employee ID"] for r in csv.DictReader(fh) if not r["Manager ID"].strip())
    return {"rows": len(rows), "root": root.strip()}


def measure_union(primary: Path, acquired: Path, root: str) -> dict[str, Any]:
    """The first run with `[[source.union]]`: read as a run reads (`read_export`: both
    exports, the merge, `read_people`), then map and assign."""
    import time

    from hrsync.config.loading import (
        FieldSettings,
        MappingSettings,
        Settings,
        SourceSettings,
        UnionSettings,
    )
    from hrsync.core.teams.identity import assign
    from hrsync.core.teams.mapping import build_teams
    from hrsync.gcpause import collector_paused
    from hrsync.sync.reading import read_export

    _quiet_logs()
    union = UnionSettings(
        name="acq",
        attach_root_to=root,
        table=SourceSettings(
            path=acquired,
            fields=FieldSettings(
                employee_id="id",
                email="workEmail",
                name="displayName",
                manager_id="supervisorEId",
                department="department",
                status="status",
            ),
        ),
    )
    settings = Settings(source=SourceSettings(path=primary, fields=_settings(), union=(union,)))
    started = time.perf_counter()
    cpu = time.process_time()
    with collector_paused():
        export = read_export(settings)
        directory = export.directory
        validated = time.perf_counter()
        team_map = build_teams(directory.people, MappingSettings(), export.fields)
        mapped = time.perf_counter()
        assign(team_map.teams, [], [])
        assigned = time.perf_counter()
        cpu_s = time.process_time() - cpu
    if not directory.ok or team_map.problems or directory.held:
        raise SystemExit(f"generated exports have problems: {directory.problems[:3]}")
    return {
        "rows": directory.rows_read,
        "people": len(directory.people),
        "teams": len(team_map.teams),
        "sources": {s.name: s.people for s in export.sources},
        "read_validate_s": validated - started,
        "map_s": mapped - validated,
        "assign_s": assigned - mapped,
        "seconds": assigned - started,
        "cpu_s": cpu_s,
        "rss_mb": _rss_mb(),
    }


def prepare_store(path: Path, out: Path) -> dict[str, Any]:
    """Run a first pass and save what a steady-state run would find: store and DX."""
    from hrsync.config.loading import FilterSettings, MappingSettings, SourceSettings
    from hrsync.core.people import read_people
    from hrsync.core.teams.identity import assign
    from hrsync.core.teams.mapping import build_teams
    from hrsync.sources.open import open_export

    _quiet_logs()
    fields = _settings()
    export = open_export(SourceSettings(path=path, fields=fields))
    directory = read_people(export.name, export.columns, export.table(), fields, FilterSettings())
    first = assign(build_teams(directory.people, MappingSettings(), fields).teams, [], [])
    dx_id = {row.reference_id: f"dx{i}" for i, row in enumerate(first.teams)}
    saved: dict[str, list[dict[str, Any]]] = {
        "known": [
            {
                "key": i.key,
                "reference_id": i.reference_id,
                "name": i.name,
                "parent_key": i.parent_key,
                "lead_email": i.lead_email,
                "members": sorted(i.members),
            }
            for i in first.identities
        ],
        "dx": [
            {
                "id": dx_id[row.reference_id],
                "name": row.name,
                "parent_id": None
                if row.parent_reference_id is None
                else dx_id[row.parent_reference_id],
                "reference_id": row.reference_id,
                "contributors": len(row.contributors),
            }
            for row in first.teams
        ],
    }
    out.write_text(json.dumps(saved))
    return {"identities": len(saved["known"])}


def _quiet_logs() -> None:
    # open_export logs `source.opened`; the benchmark's output is its table.
    import logging

    import structlog

    structlog.configure(wrapper_class=structlog.make_filtering_bound_logger(logging.WARNING))


# ---------------------------------------------------------------- parent side


def _child(*args: str) -> dict[str, Any]:
    done = subprocess.run(
        [sys.executable, __file__, "--child", *args],
        check=True,
        capture_output=True,
        text=True,
    )
    result: dict[str, Any] = json.loads(done.stdout)
    return result


def _best(runs: list[dict[str, Any]]) -> dict[str, Any]:
    """The fastest run's times, with the largest RSS of all runs (the honest one)."""
    best = dict(min(runs, key=lambda r: r["seconds"]))
    best["rss_mb"] = max(r["rss_mb"] for r in runs)
    # On a shared machine CPU time is the steadier figure: its own best, beside.
    best["cpu_s"] = min(r["cpu_s"] for r in runs)
    return best


def run(sizes: list[int], repeat: int, workdir: Path) -> list[dict[str, Any]]:
    results: list[dict[str, Any]] = []
    for n in sizes:
        export = workdir / f"org-{n}.csv"
        # In a child too, so this process stays small (see _rss_mb).
        generator = Path(__file__).resolve().parent / "generator.py"
        subprocess.run(
            [sys.executable, str(generator), str(n), "--seed", str(SEED), "--out", str(export)],
            check=True,
            capture_output=True,
        )
        store = workdir / f"store-{n}.json"
        _child("prepare", str(export), str(store))
        floor = _best([_child("floor", str(export)) for _ in range(repeat)])
        empty = _best([_child("pipeline", str(export)) for _ in range(repeat)])
        full = _best([_child("pipeline", str(export), str(store)) for _ in range(repeat)])
        templated = _best([_child("templates", str(export)) for _ in range(repeat)])
        lookup, identity = workdir / f"lookup-{n}.csv", workdir / f"identity-{n}.csv"
        _child("tables", str(export), str(lookup), str(identity))
        lookup_only = _best([_child("joined", str(export), str(lookup)) for _ in range(repeat)])
        both = _best(
            [_child("joined", str(export), str(lookup), str(identity)) for _ in range(repeat)]
        )
        second = max(1, round(n * UNION_SHARE))
        primary, acquired = workdir / f"primary-{n}.csv", workdir / f"acquired-{n}.csv"
        for size, seed, out in ((n - second, SEED, primary), (second, SEED + 1, acquired)):
            subprocess.run(
                [sys.executable, str(generator), str(size), "--seed", str(seed), "--out", str(out)],
                check=True,
                capture_output=True,
            )
        root = _child("union-tables", str(primary), str(acquired))["root"]
        unioned = _best([_child("union", str(primary), str(acquired), root) for _ in range(repeat)])
        result = {
            "n": n,
            "union": unioned,
            "floor": floor,
            "empty": empty,
            "full": full,
            "templates": templated,
            "joins_lookup": lookup_only,
            "joins_identity": both,
        }
        results.append(result)
        _print_row(result)
    return results


_HEADER = (
    f"{'N':>7} {'people':>7} {'teams':>6} │ {'floor':>6} {'RSS':>5} │ {'read+val':>8} "
    f"{'map':>5} {'assign':>6} {'total':>6} {'ratio':>6} {'RSS':>5} │ {'assign':>6} "
    f"{'total':>6} {'ratio':>6} {'RSS':>5} │ target"
)


def _print_header() -> None:
    print(
        f"{'':>22} │ {'DictReader':>12} │ {'pipeline, empty store (first run)':^42} │ "
        f"{'full store (steady)':^27} │"
    )
    print(_HEADER)
    print("─" * len(_HEADER))


def _print_row(r: dict[str, Any]) -> None:
    floor, empty, full = r["floor"], r["empty"], r["full"]
    ratio = empty["seconds"] / floor["seconds"]
    ratio_full = full["seconds"] / floor["seconds"]
    worst_rss = max(empty["rss_mb"], full["rss_mb"])
    met = max(ratio, ratio_full) <= TARGET_RATIO and worst_rss <= TARGET_RSS_MB
    verdict = "met" if met else _missed(max(ratio, ratio_full), worst_rss)
    print(
        f"{r['n']:>7} {empty['people']:>7} {empty['teams']:>6} │ "
        f"{floor['seconds']:>5.2f}s {floor['rss_mb']:>4.0f}M │ "
        f"{empty['read_validate_s']:>7.2f}s {empty['map_s']:>4.2f}s {empty['assign_s']:>5.2f}s "
        f"{empty['seconds']:>5.2f}s {ratio:>5.1f}x {empty['rss_mb']:>4.0f}M │ "
        f"{full['assign_s']:>5.2f}s {full['seconds']:>5.2f}s {ratio_full:>5.1f}x "
        f"{full['rss_mb']:>4.0f}M │ {verdict}",
        flush=True,
    )
    templated = r["templates"]
    ratio_t = templated["seconds"] / floor["seconds"]
    verdict_t = "met" if ratio_t <= TARGET_TEMPLATES_RATIO else f"missed: {ratio_t:.1f}x"
    print(
        f"{'':>22} │ {'':>12} │ with a name and an e-mail template (first run): "
        f"read+val {templated['read_validate_s']:.2f}s, total {templated['seconds']:.2f}s, "
        f"ratio {ratio_t:.1f}x (target {TARGET_TEMPLATES_RATIO:g}x): {verdict_t}; CPU "
        f"{templated['cpu_s']:.2f}s vs floor {floor['cpu_s']:.2f}s, "
        f"{templated['cpu_s'] / floor['cpu_s']:.1f}x",
        flush=True,
    )

    for key, what in (
        ("joins_lookup", f"a {LOOKUP_ROWS:,}-row lookup table joined"),
        ("joins_identity", f"that and a {r['n']:,}-row identity export joined by e-mail"),
    ):
        joined = r[key]
        ratio_j = joined["seconds"] / empty["seconds"]
        verdict_j = "met" if ratio_j <= TARGET_JOINS_RATIO else f"missed: {ratio_j:.1f}x"
        matched = ", ".join(f"{k} {v:,}" for k, v in joined["matched"].items())
        print(
            f"{'':>22} │ {'':>12} │ with {what} (first run): read+val "
            f"{joined['read_validate_s']:.2f}s, total {joined['seconds']:.2f}s, "
            f"{ratio_j:.2f}x the single-export pipeline (target {TARGET_JOINS_RATIO:g}x): "
            f"{verdict_j}; matched {matched}; CPU {joined['cpu_s']:.2f}s vs "
            f"{empty['cpu_s']:.2f}s, {joined['cpu_s'] / empty['cpu_s']:.2f}x; RSS "
            f"{joined['rss_mb']:.0f}M",
            flush=True,
        )
    unioned = r["union"]
    ratio_u = unioned["seconds"] / empty["seconds"]
    sizes = " + ".join(f"{people:,}" for people in unioned["sources"].values())
    print(
        f"{'':>22} │ {'':>12} │ with two exports as one org ([[source.union]], people kept "
        f"{sizes}) (first run): read+val {unioned['read_validate_s']:.2f}s, total "
        f"{unioned['seconds']:.2f}s, {ratio_u:.2f}x the single-export pipeline of "
        f"{r['n']:,}; CPU {unioned['cpu_s']:.2f}s vs {empty['cpu_s']:.2f}s, "
        f"{unioned['cpu_s'] / empty['cpu_s']:.2f}x; RSS {unioned['rss_mb']:.0f}M",
        flush=True,
    )


def _missed(ratio: float, rss: float) -> str:
    parts = []
    if ratio > TARGET_RATIO:
        parts.append(f"time {ratio:.1f}x > {TARGET_RATIO:g}x")
    if rss > TARGET_RSS_MB:
        parts.append(f"RSS {rss:.0f} > {TARGET_RSS_MB:g} MB")
    return "missed: " + ", ".join(parts)


def main(argv: list[str]) -> int:
    if argv[:1] == ["--child"]:
        kind, path = argv[1], Path(argv[2])
        if kind == "floor":
            result = measure_floor(path)
        elif kind == "prepare":
            result = prepare_store(path, Path(argv[3]))
        elif kind == "templates":
            result = measure_pipeline(path, None, templates=True)
        elif kind == "steps":
            result = measure_steps(path)
        elif kind == "tables":
            result = prepare_tables(path, Path(argv[3]), Path(argv[4]))
        elif kind == "union-tables":
            result = prepare_union(path, Path(argv[3]))
        elif kind == "union":
            result = measure_union(path, Path(argv[3]), argv[4])
        elif kind == "joined":
            identity = Path(argv[4]) if len(argv) > 4 else None
            result = measure_joined(path, Path(argv[3]), identity)
        else:
            result = measure_pipeline(path, Path(argv[3]) if len(argv) > 3 else None)
        print(json.dumps(result))
        return 0
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--sizes",
        default=",".join(str(n) for n in SIZES),
        help="comma-separated numbers of people (default: %(default)s)",
    )
    parser.add_argument("--repeat", type=int, default=1, help="best of N runs (default: 1)")
    parser.add_argument("--json", type=Path, help="also write the raw figures here")
    args = parser.parse_args(argv)
    sizes = [int(s.replace("_", "")) for s in args.sizes.split(",") if s.strip()]
    _print_header()
    with tempfile.TemporaryDirectory(prefix="hrsync-bench-") as tmp:
        results = run(sizes, max(1, args.repeat), Path(tmp))
    print(
        f"\nfloor: csv.DictReader pass; read+val: open_export + Export.table() + read_people; "
        f"map: build_teams;\nassign: identity.assign; ratio: total / floor; RSS: peak of the "
        f"child process.\ntarget: ratio <= {TARGET_RATIO:g}x and RSS <= {TARGET_RSS_MB:g} MB "
        "(stated for 100k)."
    )
    if args.json:
        args.json.write_text(json.dumps(results, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
