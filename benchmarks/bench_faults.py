"""Many syncs against the simulator with random faults on every method (issue 9).

    PYTHONPATH=. .venv/bin/python benchmarks/bench_faults.py                 # 60 syncs, 30%
    PYTHONPATH=. .venv/bin/python benchmarks/bench_faults.py --syncs 100 --rate 0.3 --seed 1

Every sync makes a real change to the sample org, in turn: a person moves to another
team, a team is renamed, a team gets a new lead, a team is added, a team is removed.
DX (the simulator) answers every method with a fault at `--rate`: 429 with Retry-After,
500, 503, a connection dropped before or after DX acted, or a slow answer.

After each sync the simulator's actual state is checked (read in-process, without
faults): when hrsync says `applied` or `in_sync`, DX must hold exactly the payload of
the last verified submission (names, parents, leads, members, nothing else active);
a team DX archived must be one some request of ours left out. A sync that is not
`applied` is followed by one more sync of the same export, which must converge.

Prints the share converged in the same run and by the next, the wrong `applied`
count and the wrongly archived count; exits 1 when a target is missed
(>= 98% same run, 100% by the next, zero wrong, zero wrongly archived).
"""

from __future__ import annotations

import argparse
import csv
import dataclasses
import json
import random
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path
from typing import Any

from hrsync import logs
from hrsync.commands.demo import CONFIG as DEMO_CONFIG
from hrsync.config.loading import Settings, load_settings
from hrsync.dx.methods import PROCESS
from hrsync.outcome import Outcome
from hrsync.resources import shipped_dir
from hrsync.simulator.faults import Fault
from hrsync.simulator.scenario import load_scenario
from hrsync.simulator.server import RunningSimulator, start_simulator
from hrsync.simulator.variation import STEADY_SEED
from hrsync.store.repo import Store
from hrsync.sync.context import Pacing
from hrsync.sync.results import SyncRequest, SyncResult
from hrsync.sync.story import run_sync

TOKEN = "demo-org-token"
KINDS = ("move", "rename", "lead", "add", "remove")
Row = dict[str, str]


# ---------------------------------------------------------------- the export


class Org:
    """The sample org as export rows, changed one real change at a time."""

    def __init__(self, rows: list[Row], rng: random.Random) -> None:
        self.rows = rows
        self.rng = rng
        self.serial = 0

    def active(self) -> list[Row]:
        return [r for r in self.rows if r["Status"] == "Active"]

    def reports(self, boss: Row) -> list[Row]:
        return [r for r in self.active() if r["Manager ID"] == boss["Employee ID"]]

    def leads(self) -> list[Row]:
        return [r for r in self.active() if self.reports(r)]

    def individuals(self) -> list[Row]:
        return [r for r in self.active() if r["Manager ID"] and not self.reports(r)]

    def change(self, kind: str) -> str:
        self.serial += 1
        if kind == "remove" and len(self.leads()) <= 8:
            kind = "add"
        if kind == "add" and len(self.leads()) >= 18:
            kind = "remove"
        return getattr(self, f"_{kind}")()  # type: ignore[no-any-return]

    def _move(self) -> str:
        person = self.rng.choice(self.individuals())
        boss = self.rng.choice(
            [b for b in self.leads() if b["Employee ID"] != person["Manager ID"]]
        )
        person["Manager ID"], person["Department"] = boss["Employee ID"], boss["Department"]
        return f"move {person['Full Name']} to {boss['Department']}"

    def _rename(self) -> str:
        lead = self.rng.choice(self.leads())
        base = lead["Department"].split(" #")[0]
        lead["Department"] = f"{base} #{self.serial}"
        return f"rename {base} to {lead['Department']}"

    def _lead(self) -> str:
        candidates = [
            (lead, r)
            for lead in self.leads()
            if lead["Manager ID"]
            for r in self.reports(lead)
            if not self.reports(r)
        ]
        old, new = self.rng.choice(candidates)
        for r in self.reports(old):
            if r is not new:
                r["Manager ID"] = new["Employee ID"]
        new["Manager ID"], new["Department"] = old["Manager ID"], old["Department"]
        old["Manager ID"] = new["Employee ID"]
        return f"{new['Full Name']} leads {new['Department']} instead of {old['Full Name']}"

    def _add(self) -> str:
        people = self.individuals()
        lead = self.rng.choice(people)
        member = self.rng.choice([p for p in people if p is not lead])
        lead["Department"] = f"New team #{self.serial}"
        member["Manager ID"], member["Department"] = lead["Employee ID"], lead["Department"]
        return f"new team {lead['Department']} led by {lead['Full Name']}"

    def _remove(self) -> str:
        leaves = [
            lead
            for lead in self.leads()
            if lead["Manager ID"] and all(not self.reports(r) for r in self.reports(lead))
        ]
        lead = self.rng.choice(leaves)
        boss = next(r for r in self.rows if r["Employee ID"] == lead["Manager ID"])
        for r in self.reports(lead):
            r["Manager ID"], r["Department"] = boss["Employee ID"], boss["Department"]
        return f"team {lead['Department']} dissolved into {boss['Department']}"

    def write(self, path: Path) -> None:
        with path.open("w", newline="", encoding="utf-8") as fh:
            writer = csv.DictWriter(fh, fieldnames=list(self.rows[0]))
            writer.writeheader()
            writer.writerows(self.rows)


# ---------------------------------------------------------------- checks


def dx_holds(sim: RunningSimulator, payload: list[dict[str, Any]]) -> list[str]:
    """How DX differs from `payload` (empty: DX holds exactly it)."""
    users = {u["email"].casefold(): u["id"] for u in sim.dx.users_view()}
    teams = {t["reference_id"]: t for t in sim.dx.teams_view()}
    ids = {t["id"]: t["reference_id"] for t in teams.values()}
    problems = []
    for want in payload:
        ref = want["reference_id"]
        have = teams.get(ref)
        if have is None:
            problems.append(f"{want['name']}: missing")
            continue
        if have["name"] != want["name"]:
            problems.append(f"{want['name']}: named {have['name']!r}")
        if ids.get(have["parent_id"]) != want.get("parent_team_reference_id"):
            problems.append(f"{want['name']}: wrong parent")
        if have["manager_id"] != users.get(want["team_lead_email"].casefold()):
            problems.append(f"{want['name']}: wrong lead")
        sent = {e.casefold() for e in want["contributors"] if e.casefold() in users}
        if {e.casefold() for e in have["member_emails"]} != sent:
            problems.append(f"{want['name']}: wrong members")
    extra = set(teams) - {t["reference_id"] for t in payload}
    problems += [f"{teams[ref]['name']}: still active" for ref in sorted(extra, key=str)]
    return problems


@dataclasses.dataclass
class Tally:
    syncs: int = 0
    same_run: int = 0
    by_next: int = 0
    wrong_applied: int = 0
    wrongly_archived: int = 0
    outcomes: Counter[str] = dataclasses.field(default_factory=Counter)
    follow_ups: Counter[str] = dataclasses.field(default_factory=Counter)
    resends: int = 0
    notes: list[str] = dataclasses.field(default_factory=list)


class Bench:
    def __init__(self, sim: RunningSimulator, settings: Settings, store: Store) -> None:
        self.sim, self.settings, self.store = sim, settings, store
        self.active_refs = self._active_refs()
        self.seen_requests = 0

    def _active_refs(self) -> set[str]:
        return {t["reference_id"] for t in self.sim.dx.teams_view()}

    def sync(self) -> SyncResult:
        pacing = Pacing(poll_s=0.1, poll_max_s=1.0)
        return run_sync(self.settings, SyncRequest(), store=self.store, pacing=pacing)

    def check(self, result: SyncResult, tally: Tally, label: str) -> bool:
        """Whether DX holds what hrsync says; records wrong applied and wrong archives."""
        # Let an import DX accepted finish, so the check sees what DX will hold.
        deadline = time.monotonic() + 10
        while self.sim.dx.pending_import is not None and time.monotonic() < deadline:
            time.sleep(0.05)
        requests = self.sim.dx.requests[self.seen_requests :]
        self.seen_requests = len(self.sim.dx.requests)
        sent = [r.body for r in requests if r.method_name == PROCESS and isinstance(r.body, dict)]
        left_out: set[str] = set()
        for body in sent:
            left_out |= self.active_refs - {t["reference_id"] for t in body.get("teams", [])}
        now_active = self._active_refs()
        wrongly = (self.active_refs - now_active) - left_out
        if wrongly:
            tally.wrongly_archived += len(wrongly)
            tally.notes.append(f"{label}: archived without being left out: {sorted(wrongly)}")
        self.active_refs = now_active
        if result.outcome not in (Outcome.APPLIED, Outcome.IN_SYNC):
            return False
        verified = self.store.submissions.last_verified()
        payload = [r.to_payload() for r in verified.plan.rows] if verified else []
        problems = dx_holds(self.sim, payload)
        if problems:
            tally.wrong_applied += 1
            tally.notes.append(f"{label}: said {result.outcome.value} but {problems[:5]}")
            return False
        return True


def run(syncs: int, rate: float, seed: int, workdir: Path) -> Tally:
    samples = shipped_dir("config")
    scenario = dataclasses.replace(
        load_scenario(samples / "demo-scenario.json"), import_delay_s=0.3
    )
    with (samples / "sample-org.csv").open(encoding="utf-8-sig", newline="") as fh:
        org = Org(list(csv.DictReader(fh)), random.Random(seed))
    export, db = workdir / "people.csv", workdir / "state.db"
    org.write(export)
    tally = Tally()
    with start_simulator(scenario, seed=STEADY_SEED) as sim:
        config = workdir / "hrsync.toml"
        config.write_text(DEMO_CONFIG.format(base_url=sim.base_url, export=export, db=db))
        settings = load_settings(
            config,
            {
                "HRSYNC_DX_TOKEN": TOKEN,
                "HRSYNC_SYNC__VERIFY_TIMEOUT_S": "30",
                "HRSYNC_SYNC__MAX_ARCHIVE_FRACTION": "1.0",
            },
        )
        store = Store.open(settings.state.database_url)
        bench = Bench(sim, settings, store)
        first = bench.sync()  # the starting org, without faults
        assert first.outcome is Outcome.APPLIED, first.reason
        bench.check(first, tally, "setup")
        sim.dx.add_fault(
            Fault(method="*", kind="random", rate=rate, seed=seed, retry_after_s=0.5, latency_s=1.0)
        )
        started = time.monotonic()
        for i in range(1, syncs + 1):
            what = org.change(KINDS[(i - 1) % len(KINDS)])
            org.write(export)
            resent_before = sum(1 for r in sim.dx.requests if r.method_name == PROCESS)
            result = bench.sync()
            tally.syncs += 1
            tally.outcomes[result.outcome.value] += 1
            ok = result.outcome is Outcome.APPLIED and bench.check(result, tally, f"sync {i}")
            if result.outcome is not Outcome.APPLIED:
                bench.check(result, tally, f"sync {i}")
            sends = sum(1 for r in sim.dx.requests if r.method_name == PROCESS) - resent_before
            tally.resends += max(0, sends - 1)
            if ok:
                tally.same_run += 1
                tally.by_next += 1
            else:
                follow = bench.sync()
                tally.follow_ups[follow.outcome.value] += 1
                if bench.check(follow, tally, f"sync {i} (next run)"):
                    tally.by_next += 1
                tally.notes.append(
                    f"sync {i} ({what}): {result.outcome.value} ({result.reason}); "
                    f"next run {follow.outcome.value}"
                )
            print(
                f"{i:4d} {what[:60]:60s} {result.outcome.value:10s} "
                f"{time.monotonic() - started:7.1f}s",
                file=sys.stderr,
            )
        store.close()
    return tally


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--syncs", type=int, default=60)
    parser.add_argument("--rate", type=float, default=0.3)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--json", type=Path, help="also write the figures here")
    args = parser.parse_args()
    logs.configure("console", "error", stream=sys.stderr)
    with tempfile.TemporaryDirectory() as tmp:
        tally = run(args.syncs, args.rate, args.seed, Path(tmp))
    same = tally.same_run / tally.syncs
    by_next = tally.by_next / tally.syncs
    figures = {
        "syncs": tally.syncs,
        "fault_rate": args.rate,
        "seed": args.seed,
        "converged_same_run": round(same, 4),
        "converged_by_next_run": round(by_next, 4),
        "wrong_applied": tally.wrong_applied,
        "wrongly_archived": tally.wrongly_archived,
        "outcomes": dict(tally.outcomes),
        "follow_up_outcomes": dict(tally.follow_ups),
        "resends": tally.resends,
    }
    for note in tally.notes:
        print("  " + note)
    print(json.dumps(figures, indent=2))
    if args.json:
        args.json.write_text(json.dumps(figures, indent=2))
    met = (
        same >= 0.98 and by_next == 1.0 and tally.wrong_applied == 0 and tally.wrongly_archived == 0
    )
    print("targets met" if met else "TARGETS MISSED")
    return 0 if met else 1


if __name__ == "__main__":
    sys.exit(main())
