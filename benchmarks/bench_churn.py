"""A month of everyday HR churn, one `hrsync sync` a day against the simulator, measured.

    PYTHONPATH=. .venv/bin/python benchmarks/bench_churn.py                 # 30 days, 300 people
    PYTHONPATH=. .venv/bin/python benchmarks/bench_churn.py --days 10 --people 120 --seed 3
    PYTHONPATH=. .venv/bin/python benchmarks/bench_churn.py --json /tmp/churn.json
    PYTHONPATH=. .venv/bin/python benchmarks/bench_churn.py --dx-seed 4   # another DX shape

Setup: a generated export (benchmarks/generator.py, `--people` rows, `--seed`); a simulated
DX account whose users are the export's non-terminated people (bench_sync's `scenario_for`,
imports applied after 0.2 s); a day-0 sync of that export (not counted). Then, each
simulated day, the export changes by a seeded mix (its own random stream, from `--seed`):

- 1-3 new hires under an existing manager; half are DX users from their first day, half
  join DX 1-5 days later (`POST /simulator.users.add` on that day, before the day's sync);
- 0-2 leavers (the row removed, or its Status set to Terminated). A leaver's reports, if
  any, move to the leaver's manager: half the time the same day, otherwise 1-3 days later
  (`--lag-share`), as HR often re-points them only after the manager has gone. Meanwhile
  the reports still name the departed manager; they belong in that manager's team, which
  stays with its reference_id and a stand-in lead until HR re-points them;
- 1-2 moves (a new Manager ID, and the new manager's Department for an individual);
- about weekly, a promotion (an individual contributor, a DX user, gets two reports and a
  new sub-department) and a renamed department (every row of one department path, and of
  the paths below it, takes the new name: with `team_name = "{department}"` every team
  of it is renamed);
- every 4-6 days, each on its own schedule, three kinds of bad row: an empty Work Email
  (on an existing person or on a new hire who is a DX user), fixed 1-3 days later; a
  duplicate e-mail (a new hire typed with an existing person's e-mail), fixed the next
  day; a new manager (a new hire given 2-3 reports) who is not a DX user yet and joins
  2-4 days later. People involved in an open problem are not picked for other changes.

Then one `python -m hrsync --config FILE sync` (JSON log; its `sync.finished` is read),
with `HRSYNC_SYNC__VERIFY_TIMEOUT_S=20` (`--verify-timeout`: a run that waits for a
count DX never reaches gives up after 20 s, so no run takes much over a minute; each is
killed after 120 s) and `HRSYNC_SYNC__MAX_ARCHIVE_FRACTION=1.0` as bench_sync sets it
(a departing lead's team is archived; lifted so that a busy day in a small org cannot be
refused for its share; `sync.max_archive`, 10 teams, still applies. In the measured runs
no sync archived more than 2 teams, so neither guard tripped).

**The simulator** runs in a child process of its own (this script with
`--serve-simulator SCENARIO`): the same server `hrsync simulator --scenario` runs
(`start_simulator`), plus a read-only view on a second port that answers each active
team with its members (`SimulatedDx.teams_view`) and every DX user (`users_view`).
`teams.list`, DX's method, shows a team's contributor count but not who they are, and the
check below needs who. The simulator's CPU is not the hrsync child's, nor the
benchmark's.

**Notifications.** `hrsync sync` sends no webhook: the daemon does, after each run, in
`Monitor.run_finished`. So after each run this script does what that method does with the
run the store recorded: `observe(run_id, outcome, quarantined=..., plan_digest=...,
reason=..., action=...)` from the `runs` row (the outcome is the hierarchy's: attributes
are not configured, so it is also the run's overall outcome; `quarantined` when the run
failed and the store's failure streak reached `sync.quarantine_after`; `archives` left
empty: they only word the message), then `Notifier.after_run`, `after_success` with the
run's stand-in leads as recorded (on `applied`/`in_sync`), and `after_held`. The Notifier
is hrsync's own, on the same state store, POSTing to a small receiver thread in this
script, with `now` the simulated day (so `notify.repeat_s`, a day, passes between runs).
Rebuilding a `SyncResult` for `Monitor` itself would need the run's `Plan`, which only the
child had; the calls above are the same ones with the same inputs.

Figures (days 1..N; day 0 is the baseline):

1. **ok runs**: share of runs whose `sync.finished.outcome` is `applied` or `in_sync`
   (target >= 95%).
2. **wrong-team person-days** (target 0): after each run, every *counted* person whose
   DX placement is not their HR manager's team. Counted: an HR row with Status `Active`,
   a non-empty Manager ID that names another active row (the top person is not counted),
   a *valid own row* (a non-empty e-mail that no other row of the export has; judged
   from the export itself, so a duplicate's victim is not counted either, nor anyone the
   benchmark broke), and the row's e-mail is a DX user now (the simulator's users). Right:
   exactly one active DX team lists them among its members, and its `reference_id` is the
   one hrsync's state store keeps for `manager:<their Manager ID>` (`team_identities`,
   `hr_key` -> `reference_id`). A lead is counted as a member of their manager's team;
   leading their own team is not membership. A team whose identity hrsync has not
   recorded yet counts as wrong for its people. The reports of a manager who left and
   whom HR has not re-pointed yet belong in the departed manager's team
   (`manager:<departed id>`).
3. **wrong `applied`**: runs that ended `applied` while figure 2 found someone wrong
   right after them (target 0).
4. **notifications**: messages the receiver got, by event (`held`, `stand_in`,
   `unverified`, `recovered`, ...), beside the problems injected. A problem episode is a
   held person (the store's `held_people`, after each run) or a stand-in lead (the run's
   recorded `substitutes`, keyed by team and lead), from the run it starts to the run it
   ends. Each episode should be told at most once as started and once as ended; **repeats**
   counts the mentions beyond that. (There is no "not in DX past an alert window" event in
   this code base yet; hires not yet DX users are counted among the problems, with no
   message expected.)
5. **CPU per run**: user+sys of the hrsync child (`getrusage(RUSAGE_CHILDREN)` deltas
   around each run), median and max, and as a multiple of a floor measured in the same
   run: the median CPU of 9 `python -m hrsync --version` (interpreter and CLI start-up).

6. **people in no team** (target 0): after each run, counted people (as in figure 2)
   whom no active DX team lists at all: the people an org would lose from DX silently.

Also printed: leaver-days (a leaver who is a DX user still listed in a DX team after a
run) and the outcomes by kind. `--json PATH` writes every figure and the per-day rows
(each run's outcome, reason, last `verify.waiting` detail, counts, CPU, wrong people).

`--all-in-dx` is a control: every hire and new manager is a DX user from their first
day, so nobody is unknown to DX (the same random stream; choices that depend on who is
a DX user, such as whom to promote, diverge from there).
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import random
import resource
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter, defaultdict
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime, timedelta
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import httpx
from sqlalchemy import select

from hrsync import logs
from hrsync.commands.demo import CONFIG as DEMO_CONFIG
from hrsync.core import defaults
from hrsync.core.report.notify import SUCCESS, observe
from hrsync.core.settings import NotifySettings, SyncSettings
from hrsync.monitor.webhook import Notifier
from hrsync.simulator.scenario import load_scenario
from hrsync.simulator.server import start_simulator
from hrsync.simulator.variation import STEADY_SEED, variation_for
from hrsync.store import tables
from hrsync.store.repo import Store

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_sync import TOKEN, scenario_for
from generator import _FIRST, _IC_TITLES, _LAST, COLUMNS, generate_org

VERIFY_TIMEOUT_S = 20.0
RUN_TIMEOUT_S = 120
OVERRIDES = {
    "HRSYNC_SYNC__MAX_ARCHIVE_FRACTION": "1.0",
    "HRSYNC_LOG__FORMAT": "json",
}
IMPORT_DELAY_S = 0.2
OK_OUTCOMES = frozenset(SUCCESS)
BAD_KINDS = ("empty_email", "duplicate_email", "manager_not_in_dx")

Row = dict[str, str]


# ------------------------------------------------------------------ the simulator child


# ------------------------------------------------------------------ the day clock

# Each run stands for one day. hrsync and the simulator read one clock, the real time
# moved on by the simulated day (a file the benchmark writes before each run), so what
# counts in days (the recheck of people not in DX, their alert, the webhook's repeat)
# counts simulated days, and DX's times and hrsync's agree as in production.
DAY_FILE = "day"


def day_offset(workdir: Path) -> timedelta:
    try:
        return timedelta(days=float((workdir / DAY_FILE).read_text()))
    except (OSError, ValueError):
        return timedelta(0)


def day_clock(workdir: Path) -> Callable[[], datetime]:
    return lambda: datetime.now(UTC) + day_offset(workdir)


# hrsync's one clock (`hrsync.clock.utcnow`), moved on before anything else imports it.
HRSYNC_ON_THE_DAY = """
import sys
from datetime import UTC, datetime, timedelta
import hrsync.clock
days = timedelta(days=float(sys.argv.pop(1)))
hrsync.clock.utcnow = lambda: datetime.now(UTC) + days
from hrsync.cli import main
raise SystemExit(main())
"""


def serve_simulator(scenario_path: Path) -> int:
    """The child: the simulator, and a read-only view of its teams (with members) and
    users on a second port. Prints both URLs as one JSON line; stops at stdin's end."""
    logs.configure("console", "warning", sys.stderr)
    # The scenario's seed (`--dx-seed`) chooses what DX's contract leaves open.
    sim = start_simulator(load_scenario(scenario_path), clock=day_clock(scenario_path.parent))

    class View(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            if self.path == "/teams":
                body = json.dumps(sim.dx.teams_view()).encode()
            elif self.path == "/users":
                body = json.dumps(sim.dx.users_view()).encode()
            else:
                self.send_error(404)
                return
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, format: str, *args: object) -> None:
            pass

    view = ThreadingHTTPServer(("127.0.0.1", 0), View)
    threading.Thread(target=view.serve_forever, daemon=True).start()
    print(
        json.dumps({"base_url": sim.base_url, "view_url": f"http://127.0.0.1:{view.server_port}"}),
        flush=True,
    )
    sys.stdin.read()  # until the parent closes our stdin
    view.shutdown()
    sim.stop()
    return 0


@dataclass
class Simulator:
    base_url: str
    view_url: str
    client: httpx.Client

    def add_user(self, name: str, email: str) -> None:
        r = self.client.post(
            f"{self.base_url}/simulator.users.add",
            json={"name": name, "email": email},
            headers={"Authorization": f"Bearer {TOKEN}"},
        )
        if r.status_code != 200:
            raise RuntimeError(f"simulator.users.add {email}: {r.status_code} {r.text}")

    def teams(self) -> list[dict[str, Any]]:
        teams: list[dict[str, Any]] = self.client.get(f"{self.view_url}/teams").json()
        return teams

    def users(self) -> set[str]:
        users: list[dict[str, str]] = self.client.get(f"{self.view_url}/users").json()
        return {u["email"].casefold() for u in users}


@contextmanager
def simulator_process(scenario_path: Path) -> Iterator[Simulator]:
    proc = subprocess.Popen(
        [sys.executable, str(Path(__file__).resolve()), "--serve-simulator", str(scenario_path)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
        env={**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[1])},
    )
    try:
        assert proc.stdout is not None and proc.stdin is not None
        urls = json.loads(proc.stdout.readline())
        with httpx.Client(timeout=30) as client:
            yield Simulator(urls["base_url"], urls["view_url"], client)
    finally:
        if proc.stdin is not None:
            proc.stdin.close()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


# ------------------------------------------------------------------ the webhook receiver


class Receiver:
    """A local webhook: keeps every JSON body POSTed to it."""

    def __init__(self) -> None:
        self.messages: list[dict[str, Any]] = []
        received = self.messages

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length", "0"))
                received.append(json.loads(self.rfile.read(length)))
                self.send_response(200)
                self.send_header("Content-Length", "0")
                self.end_headers()

            def log_message(self, format: str, *args: object) -> None:
                pass

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self._server.server_port}/hook"
        threading.Thread(target=self._server.serve_forever, daemon=True).start()

    def stop(self) -> None:
        self._server.shutdown()
        self._server.server_close()


# ------------------------------------------------------------------ the HR export


def _email(row: Row) -> str:
    return row["Work Email"].strip().casefold()


def _manager(row: Row) -> str:
    return row["Manager ID"].strip()


def _active(row: Row) -> bool:
    return row["Status"].strip() == "Active"


@dataclass
class Problem:
    kind: str  # empty_email | duplicate_email | manager_not_in_dx | hire_not_in_dx
    person: str  # the employee id it is about
    day: int
    fixed_day: int | None = None


class Churn:
    """The HR export as it changes day by day, and what is due on later days."""

    def __init__(
        self,
        rows: list[Row],
        sim: Simulator,
        seed: int,
        *,
        all_in_dx: bool,
        lag_share: float = 0.5,
    ) -> None:
        self.all_in_dx = all_in_dx  # everyone who would join DX later is a DX user at once
        self.lag_share = lag_share  # leavers whose reports HR re-points only days later
        self.departed: set[str] = set()  # managers who left, their reports not re-pointed yet
        self.rows: dict[str, Row] = {r["Employee ID"].strip(): r for r in rows}
        self.sim = sim
        self.rng = random.Random(f"churn-{seed}")
        self.true_email: dict[str, str] = {}
        self.later: dict[int, list[Callable[[], None]]] = defaultdict(list)
        self.protected: set[str] = set()  # in an open problem: left alone by other changes
        self.problems: list[Problem] = []
        self.leavers: set[str] = set()  # e-mails (casefolded) of people who left
        self.changes: Counter[str] = Counter()
        self.hired = 0
        self.units = 0
        self.next_bad = {kind: 2 + i for i, kind in enumerate(BAD_KINDS)}

    # ---- views

    def active(self) -> list[str]:
        return [eid for eid, r in self.rows.items() if _active(r)]

    def reports(self) -> dict[str, list[str]]:
        out: dict[str, list[str]] = defaultdict(list)
        for eid, r in self.rows.items():
            if _active(r) and _manager(r):
                out[_manager(r)].append(eid)
        return out

    def managers(self) -> list[str]:
        reports = self.reports()
        return [eid for eid in self.active() if reports.get(eid)]

    def below(self, eid: str) -> set[str]:
        """`eid` and everyone under them."""
        reports, out, todo = self.reports(), {eid}, [eid]
        while todo:
            for child in reports.get(todo.pop(), ()):
                if child not in out:
                    out.add(child)
                    todo.append(child)
        return out

    def movable(self) -> list[str]:
        """Active people with a manager, in no open problem."""
        return [e for e in self.active() if _manager(self.rows[e]) and e not in self.protected]

    def ics(self, *, dx_users: set[str] | None = None) -> list[str]:
        reports = self.reports()
        return [
            eid
            for eid in self.active()
            if not reports.get(eid)
            and _manager(self.rows[eid])
            and eid not in self.protected
            and (dx_users is None or _email(self.rows[eid]) in dx_users)
        ]

    # ---- changes

    def hire(self, day: int, manager: str, *, joins_in: int | None) -> str:
        """A new row under `manager`; a DX user now (joins_in 0), in `joins_in` days, or
        never by itself (None: the caller decides)."""
        self.hired += 1
        eid = f"H{self.hired:05d}"
        first, last = self.rng.choice(_FIRST), self.rng.choice(_LAST)
        name = f"{first} {last}"
        email = f"{first}.{last}.h{self.hired}@example.com".lower()
        self.rows[eid] = {
            "Employee ID": eid,
            "Full Name": name,
            "Work Email": email,
            "Manager ID": manager,
            "Department": self.rows[manager]["Department"],
            "Status": "Active",
            "Title": self.rng.choice(_IC_TITLES),
        }
        self.true_email[eid] = email
        if joins_in == 0:
            self.sim.add_user(name, email)
        elif joins_in is not None:
            self.join_later(day, joins_in, eid, "hire_not_in_dx")
        return eid

    def join_later(self, day: int, days: int, eid: str, kind: str) -> None:
        row = self.rows[eid]
        name, email = row["Full Name"], self.true_email[eid]
        if self.all_in_dx:
            self.sim.add_user(name, email)
            return
        problem = Problem(kind, eid, day)
        self.problems.append(problem)

        def join() -> None:
            self.sim.add_user(name, email)
            problem.fixed_day = day + days
            self.protected.discard(eid)

        self.protected.add(eid)
        self.later[day + days].append(join)

    def leave(self, day: int) -> None:
        eid = self.rng.choice(self.movable())
        row = self.rows[eid]
        reports, boss = self.reports().get(eid, []), _manager(row)
        if reports and self.rng.random() < self.lag_share:
            self.repoint_later(day, eid, boss, reports)
        else:
            for report in reports:
                self.rows[report]["Manager ID"] = boss
        self.leavers.add(_email(row))
        if self.rng.random() < 0.5:
            del self.rows[eid]
            self.changes["leaver (row removed)"] += 1
        else:
            row["Status"] = "Terminated"
            self.changes["leaver (terminated)"] += 1

    def repoint_later(self, day: int, eid: str, boss: str, reports: list[str]) -> None:
        """HR re-points the departed `eid`'s reports to `boss` 1-3 days from now; until
        then they (and `boss`) are left alone by other changes."""
        days = self.rng.randint(1, 3)
        problem = Problem("lead_left", eid, day)
        self.problems.append(problem)
        self.departed.add(eid)
        held_back = {*reports, boss}
        self.protected |= held_back
        self.changes["departed manager, reports re-pointed later"] += 1

        def repoint() -> None:
            for report in reports:
                if report in self.rows and _manager(self.rows[report]) == eid:
                    self.rows[report]["Manager ID"] = boss
            self.departed.discard(eid)
            self.protected -= held_back
            problem.fixed_day = day + days

        self.later[day + days].append(repoint)

    def move(self) -> None:
        eid = self.rng.choice(self.movable())
        row = self.rows[eid]
        banned = self.below(eid) | {_manager(row)}
        targets = [m for m in self.managers() if m not in banned]
        if not targets:
            return
        new = self.rng.choice(targets)
        row["Manager ID"] = new
        if not self.reports().get(eid):  # an individual takes the new team's department
            row["Department"] = self.rows[new]["Department"]
        self.changes["move"] += 1

    def new_unit(self, parent: str) -> str:
        self.units += 1
        return f"{parent}/Squad {self.units}"

    def promote(self, dx_users: set[str]) -> None:
        ics = self.ics(dx_users=dx_users)
        lead = self.rng.choice(ics)
        boss = _manager(self.rows[lead])
        peers = [e for e in ics if e != lead and _manager(self.rows[e]) == boss]
        pool = peers if len(peers) >= 2 else [e for e in ics if e != lead]
        unit = self.new_unit(self.rows[lead]["Department"])
        self.rows[lead]["Title"] = "Engineering Manager"
        self.rows[lead]["Department"] = unit
        for eid in self.rng.sample(pool, 2):
            self.rows[eid]["Manager ID"] = lead
            self.rows[eid]["Department"] = unit
        self.changes["promotion"] += 1

    def rename_department(self) -> None:
        managers = [m for m in self.managers() if _manager(self.rows[m])]
        old = self.rows[self.rng.choice(managers)]["Department"]
        self.units += 1
        new = f"{old.rsplit('/', 1)[0]}/Renamed {self.units}" if "/" in old else f"{old} Renamed"
        for row in self.rows.values():
            dept = row["Department"]
            if dept == old or dept.startswith(old + "/"):
                row["Department"] = new + dept[len(old) :]
        self.changes["renamed department"] += 1

    # ---- bad rows

    def empty_email(self, day: int) -> None:
        fix_in = self.rng.randint(1, 3)
        if self.rng.random() < 0.5:
            eid = self.rng.choice(self.movable())
            self.true_email.setdefault(eid, self.rows[eid]["Work Email"])
        else:
            eid = self.hire(day, self.rng.choice(self.managers()), joins_in=0)
        problem = Problem("empty_email", eid, day)
        self.problems.append(problem)
        self.protected.add(eid)
        self.rows[eid]["Work Email"] = ""

        def fix() -> None:
            self.rows[eid]["Work Email"] = self.true_email[eid]
            problem.fixed_day = day + fix_in
            self.protected.discard(eid)

        self.later[day + fix_in].append(fix)

    def duplicate_email(self, day: int) -> None:
        victim = self.rng.choice(self.movable())
        eid = self.hire(day, self.rng.choice(self.managers()), joins_in=0)
        problem = Problem("duplicate_email", eid, day)
        self.problems.append(problem)
        self.protected |= {eid, victim}
        self.rows[eid]["Work Email"] = self.rows[victim]["Work Email"]

        def fix() -> None:
            self.rows[eid]["Work Email"] = self.true_email[eid]
            problem.fixed_day = day + 1
            self.protected -= {eid, victim}

        self.later[day + 1].append(fix)

    def manager_not_in_dx(self, day: int) -> None:
        boss = self.rng.choice([m for m in self.managers() if m not in self.protected])
        eid = self.hire(day, boss, joins_in=None)
        unit = self.new_unit(self.rows[boss]["Department"])
        self.rows[eid]["Title"] = "Engineering Manager"
        self.rows[eid]["Department"] = unit
        for report in self.rng.sample(self.ics(), self.rng.randint(2, 3)):
            self.rows[report]["Manager ID"] = eid
            self.rows[report]["Department"] = unit
        self.join_later(day, self.rng.randint(2, 4), eid, "manager_not_in_dx")

    # ---- a day

    def day(self, day: int, dx_users: set[str]) -> None:
        for due in self.later.pop(day, []):
            due()
        for _ in range(self.rng.randint(0, 2)):
            self.leave(day)
        for _ in range(self.rng.randint(1, 2)):
            self.move()
        for _ in range(self.rng.randint(1, 3)):
            joins_in = 0 if self.rng.random() < 0.5 else self.rng.randint(1, 5)
            self.hire(day, self.rng.choice(self.managers()), joins_in=joins_in)
            self.changes["hire"] += 1
        if day % 7 == 3:
            self.promote(dx_users)
        if day % 7 == 5:
            self.rename_department()
        for kind in BAD_KINDS:
            if self.next_bad[kind] == day:
                getattr(self, kind)(day)
                self.changes[kind] += 1
                self.next_bad[kind] = day + self.rng.randint(4, 6)

    def write(self, path: Path) -> None:
        with path.open("w", newline="", encoding="utf-8") as fh:
            writer = csv.DictWriter(fh, fieldnames=COLUMNS, lineterminator="\n")
            writer.writeheader()
            writer.writerows(self.rows.values())


# ------------------------------------------------------------------ the checks


def counted_people(
    rows: dict[str, Row], dx_users: set[str], departed: frozenset[str] = frozenset()
) -> dict[str, str]:
    """E-mail (casefolded) -> the hr_key of the team they belong in, for every counted
    person (see figure 2 in the module docstring). `departed`: managers who left whose
    reports HR has not re-pointed yet; their team is still where the reports belong."""
    emails = Counter(_email(r) for r in rows.values() if _email(r))
    out: dict[str, str] = {}
    for eid, row in rows.items():
        email, manager = _email(row), _manager(row)
        if not _active(row) or not email or emails[email] > 1 or email not in dx_users:
            continue
        boss = rows.get(manager)
        kept = boss is not None and _active(boss)
        if not manager or manager == eid or not (kept or manager in departed):
            continue
        out[email] = f"manager:{manager}"
    return out


@dataclass
class Placements:
    counted: int
    wrong: list[str]  # counted people in the wrong team, or in none (with why)
    in_no_team: list[str]  # counted people no active DX team lists at all


def wrong_placements(
    rows: dict[str, Row],
    dx_users: set[str],
    teams: list[dict[str, Any]],
    refs: dict[str, str],
    departed: frozenset[str] = frozenset(),
) -> Placements:
    """The counted people, those of them in the wrong DX team, and those in none."""
    member_of: dict[str, list[str | None]] = defaultdict(list)
    for team in teams:
        for email in team["member_emails"]:
            member_of[email.casefold()].append(team["reference_id"])
    counted = counted_people(rows, dx_users, departed)
    wrong, nowhere = [], []
    for email, hr_key in counted.items():
        want, have = refs.get(hr_key), member_of.get(email, [])
        if want is None or have != [want]:
            wrong.append(f"{email}: in {have}, belongs in {hr_key} ({want})")
        if not have:
            nowhere.append(email)
    return Placements(len(counted), wrong, nowhere)


def identities(store: Store) -> dict[str, str]:
    t = tables.team_identities
    with store.engine.connect() as conn:
        return {
            r.hr_key: r.reference_id
            for r in conn.execute(
                select(t.c.hr_key, t.c.reference_id).where(t.c.retired_at.is_(None))
            )
        }


def plan_digest(store: Store, run_id: str) -> str | None:
    t = tables.runs
    with store.engine.connect() as conn:
        digest: str | None = conn.execute(select(t.c.plan_digest).where(t.c.id == run_id)).scalar()
    return digest


# ------------------------------------------------------------------ runs


def child_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def sync(
    config: Path, verify_timeout_s: float, day: int = 0
) -> tuple[dict[str, Any], float, float]:
    """One `hrsync sync`: its `sync.finished` event (with the last `verify.waiting` detail
    added as `waiting_for`, when the run waited), its CPU seconds and wall seconds."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("HRSYNC_")}
    env.update(
        OVERRIDES, HRSYNC_SYNC__VERIFY_TIMEOUT_S=f"{verify_timeout_s:g}", HRSYNC_DX_TOKEN=TOKEN
    )
    cmd = [
        sys.executable,
        "-c",
        HRSYNC_ON_THE_DAY,
        str(day),
        "--config",
        str(config),
        "--log-level",
        "info",
        "sync",
    ]
    cpu, started = child_cpu(), time.perf_counter()
    try:
        proc = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=RUN_TIMEOUT_S)
        # The JSON log is on stderr when a summary is on stdout (`--summary`): read both.
        out, code = proc.stdout + proc.stderr, proc.returncode
    except subprocess.TimeoutExpired as exc:
        out, code = str(exc.stdout or "") + str(exc.stderr or ""), -1
    wall, cpu = time.perf_counter() - started, child_cpu() - cpu
    finished: dict[str, Any] = {"outcome": "timeout" if code == -1 else f"exit {code}"}
    waiting = None
    for line in out.splitlines():
        if '"verify.waiting"' in line:
            waiting = json.loads(line).get("detail")
        elif '"sync.finished"' in line:
            finished = json.loads(line)
    if waiting is not None:
        finished["waiting_for"] = waiting
    return finished, cpu, wall


def floor_cpu(repeat: int = 9) -> float:
    """The median CPU of `python -m hrsync --version`: start-up alone."""
    samples = []
    for _ in range(repeat):
        before = child_cpu()
        subprocess.run([sys.executable, "-m", "hrsync", "--version"], capture_output=True)
        samples.append(child_cpu() - before)
    return statistics.median(samples)


@dataclass
class Episodes:
    """Problem episodes as hrsync showed them, run after run (key -> runs it is open)."""

    open: dict[str, int] = field(default_factory=dict)
    count: Counter[str] = field(default_factory=Counter)  # episodes per key

    def seen(self, keys: set[str]) -> None:
        for key in keys - set(self.open):
            self.count[key] += 1
        self.open = {k: self.open.get(k, 0) + 1 for k in keys}


def notify(notifier: Notifier, store: Store, run_id: str, now: datetime) -> None:
    """What `Monitor.run_finished` does after a run, from the run the store recorded."""
    record = store.runs.get(run_id)
    if record is None or record.outcome is None:
        return
    failing = len(store.runs.consecutive_failures())
    seen = observe(
        run_id,
        record.outcome,
        quarantined=record.outcome == "failed" and failing >= SyncSettings().quarantine_after,
        plan_digest=plan_digest(store, run_id),
        reason=record.reason,
        action=record.action,
    )
    notifier.after_run(seen, now)
    if record.outcome in OK_OUTCOMES:
        notifier.after_success(run_id, record.substitutes, now)
    notifier.after_held(run_id, now)
    notifier.after_people(run_id, now, alert_days=defaults.NOT_IN_DX_ALERT_DAYS)
    notifier.after_leads_left(run_id, now, alert_days=defaults.LEAD_LEFT_ALERT_DAYS)


def mentions(messages: list[dict[str, Any]]) -> dict[str, Counter[str]]:
    """Per message kind and direction, how often each problem key was told."""
    out: dict[str, Counter[str]] = defaultdict(Counter)
    for m in messages:
        if m.get("event") == "held":
            out["held started"].update(p["person"] for p in m["started"])
            out["held cleared"].update(m["cleared"])
        elif m.get("event") == "not_in_dx":
            out["not_in_dx late"].update(p["email"] for p in m["people"])
        elif m.get("event") == "stand_in":
            out["stand_in started"].update(f"{s['reference_id']}|{s['lead']}" for s in m["started"])
            out["stand_in ended"].update(f"{s['reference_id']}|{s['lead']}" for s in m["ended"])
    return out


def bench(
    days: int,
    people: int,
    seed: int,
    workdir: Path,
    verify_timeout_s: float = VERIFY_TIMEOUT_S,
    *,
    all_in_dx: bool = False,
    lag_share: float = 0.5,
    dx_seed: int = STEADY_SEED,
) -> dict[str, Any]:
    rows = generate_org(people, seed=seed)
    scenario = scenario_for(rows)
    scenario["import_delay_s"] = IMPORT_DELAY_S
    scenario["seed"] = dx_seed
    print(f"DX: {variation_for(dx_seed).describe()}", flush=True)
    scenario_path = workdir / "scenario.json"
    scenario_path.write_text(json.dumps(scenario))
    export, db = workdir / "org.csv", workdir / "state.db"
    floor = floor_cpu()
    receiver = Receiver()
    daily: list[dict[str, Any]] = []
    held_eps, stand_in_eps = Episodes(), Episodes()
    try:
        with simulator_process(scenario_path) as sim:
            config = workdir / "hrsync.toml"
            config.write_text(DEMO_CONFIG.format(base_url=sim.base_url, export=export, db=db))
            churn = Churn(rows, sim, seed, all_in_dx=all_in_dx, lag_share=lag_share)
            store: Store | None = None
            notifier: Notifier | None = None
            for day in range(days + 1):
                (workdir / DAY_FILE).write_text(str(day))
                if day:
                    churn.day(day, sim.users())
                churn.write(export)
                finished, cpu, wall = sync(config, verify_timeout_s, day)
                if store is None:
                    store = Store.open(f"sqlite:///{db}")
                    notifier = Notifier(
                        NotifySettings(webhook_url_env="HOOK"),
                        store,
                        environ={"HOOK": receiver.url},
                    )
                assert notifier is not None
                run_id = str(finished.get("run_id", ""))
                before = len(receiver.messages)
                if run_id:
                    notify(notifier, store, run_id, day_clock(workdir)())
                dx_users, teams = sim.users(), sim.teams()
                placed = wrong_placements(
                    churn.rows, dx_users, teams, identities(store), frozenset(churn.departed)
                )
                counted, wrong = placed.counted, placed.wrong
                in_teams = {e.casefold() for t in teams for e in t["member_emails"]}
                left_in = sorted(churn.leavers & dx_users & in_teams)
                held = {r.person for r in store.people.held_notices().held}
                record = store.runs.get(run_id) if run_id else None
                subs = record.substitutes if record else ()
                held_eps.seen(held)
                stand_in_eps.seen({f"{s.reference_id}|{s.lead_email}" for s in subs})
                counts = finished.get("counts", {})
                daily.append(
                    {
                        "day": day,
                        "outcome": finished.get("outcome"),
                        "reason": finished.get("reason"),
                        "waiting_for": finished.get("waiting_for"),
                        "counts": {k: v for k, v in counts.items() if v},
                        "cpu_s": round(cpu, 3),
                        "wall_s": round(wall, 2),
                        "counted": counted,
                        "wrong": wrong,
                        "in_no_team": placed.in_no_team,
                        "leavers_in_teams": left_in,
                        "held": sorted(held),
                        "stand_ins": [s.log_fields() for s in subs],
                        "messages": [m.get("event") for m in receiver.messages[before:]],
                    }
                )
                d = daily[-1]
                print(
                    f"day {day:>2}: {d['outcome']!s:>10} {wall:>5.1f}s cpu {cpu:.2f}s "
                    f"counted {counted} wrong {len(wrong)} no team {len(placed.in_no_team)} "
                    f"held {len(held)} "
                    f"stand-ins {len(subs)} told {d['messages'] or '-'}",
                    flush=True,
                )
                for line in wrong[:5]:
                    print(f"        wrong: {line}", flush=True)
            if store is not None:
                store.close()
    finally:
        receiver.stop()
    return figures(daily[1:], floor, receiver.messages, held_eps, stand_in_eps, churn)


def figures(
    daily: list[dict[str, Any]],
    floor: float,
    messages: list[dict[str, Any]],
    held_eps: Episodes,
    stand_in_eps: Episodes,
    churn: Churn,
) -> dict[str, Any]:
    outcomes = Counter(str(d["outcome"]) for d in daily)
    ok = sum(n for o, n in outcomes.items() if o in OK_OUTCOMES)
    cpus = [float(d["cpu_s"]) for d in daily]
    told = mentions(messages)
    episodes = {
        "held started": held_eps.count,
        "held cleared": held_eps.count,
        "stand_in started": stand_in_eps.count,
        "stand_in ended": stand_in_eps.count,
    }
    repeats = {
        kind: sum(max(0, n - episodes[kind].get(key, 0)) for key, n in told[kind].items())
        for kind in episodes
    }
    injected = Counter(p.kind for p in churn.problems)
    return {
        "days": len(daily),
        "ok_share": ok / len(daily) if daily else 0.0,
        "outcomes": dict(outcomes),
        "wrong_person_days": sum(len(d["wrong"]) for d in daily),
        "counted_person_days": sum(int(d["counted"]) for d in daily),
        "in_no_team_person_days": sum(len(d["in_no_team"]) for d in daily),
        "wrong_applied": sum(1 for d in daily if d["outcome"] == "applied" and d["wrong"]),
        "leaver_days_in_teams": sum(len(d["leavers_in_teams"]) for d in daily),
        "messages": dict(Counter(str(m.get("event")) for m in messages)),
        "mentions": {k: sum(v.values()) for k, v in told.items()},
        "repeats": repeats,
        "episodes": {
            "held": sum(held_eps.count.values()),
            "stand_in": sum(stand_in_eps.count.values()),
        },
        "injected": dict(injected),
        "changes": dict(churn.changes),
        "cpu_median_s": statistics.median(cpus) if cpus else 0.0,
        "cpu_max_s": max(cpus, default=0.0),
        "cpu_floor_s": floor,
        "daily": daily,
        "problems": [asdict(p) for p in churn.problems],
        "received": messages,
    }


def report(f: dict[str, Any]) -> None:
    floor = f["cpu_floor_s"] or float("nan")
    print()
    print(f"days: {f['days']}; changes: {f['changes']}")
    print(
        f"1. runs applied or in_sync: {f['ok_share']:.0%} (target >= 95%); "
        f"outcomes: {f['outcomes']}"
    )
    print(
        f"2. wrong-team person-days: {f['wrong_person_days']} of "
        f"{f['counted_person_days']} counted (target 0)"
    )
    print(f"3. wrong `applied`: {f['wrong_applied']} (target 0)")
    print(
        f"4. messages by event: {f['messages']}; problems injected: {f['injected']}; "
        f"episodes hrsync showed: {f['episodes']}; people/teams told: {f['mentions']}; "
        f"repeats beyond one start and one end per episode: {f['repeats']}"
    )
    print(
        f"5. hrsync CPU per run: median {f['cpu_median_s']:.2f} s "
        f"({f['cpu_median_s'] / floor:.1f}x floor), max {f['cpu_max_s']:.2f} s "
        f"({f['cpu_max_s'] / floor:.1f}x); floor (`python -m hrsync --version`) "
        f"{f['cpu_floor_s']:.3f} s"
    )
    print(f"6. counted people in no DX team, person-days: {f['in_no_team_person_days']} (target 0)")
    print(f"leaver-days still in a DX team: {f['leaver_days_in_teams']}")


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--days", type=int, default=30)
    parser.add_argument("--people", type=int, default=300)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--json", type=Path, help="write the figures here")
    parser.add_argument(
        "--verify-timeout",
        type=float,
        default=VERIFY_TIMEOUT_S,
        help="sync.verify_timeout_s of every run (default 20)",
    )
    parser.add_argument(
        "--all-in-dx",
        action="store_true",
        help="every hire and new manager is a DX user from their first day (a control: "
        "the same changes without people DX does not know yet)",
    )
    parser.add_argument(
        "--lag-share",
        type=float,
        default=0.5,
        help="the share of departing managers whose reports HR re-points 1-3 days later "
        "instead of the same day (default 0.5)",
    )
    parser.add_argument(
        "--dx-seed",
        type=int,
        default=STEADY_SEED,
        help="the simulator's seed: how DX words an invalid_rows refusal, orders teams.list "
        f"and lags counts and audit events (default {STEADY_SEED}: a refusal as a message "
        "alone, no lag)",
    )
    parser.add_argument("--serve-simulator", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.serve_simulator:
        return serve_simulator(args.serve_simulator)
    logs.configure("console", "warning", sys.stderr)
    with tempfile.TemporaryDirectory(prefix="hrsync-churn-") as tmp:
        result = bench(
            args.days,
            args.people,
            args.seed,
            Path(tmp),
            args.verify_timeout,
            all_in_dx=args.all_in_dx,
            lag_share=args.lag_share,
            dx_seed=args.dx_seed,
        )
    report(result)
    if args.json:
        args.json.write_text(json.dumps(result, indent=2, default=str))
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
