"""`hrsync demo`: a first look, with no network and no token.

Starts the simulator in this process with a seeded DX account, syncs the
sample org, syncs a reorganised export, shows a truncated export being refused,
then syncs one user attribute (Location, from an Office column) and a change to
one person's office, which sends exactly one call. The engine, the store and the
HTTP traffic are the real ones; only DX is simulated. Everything lives in a temporary
folder unless --keep is given; then the folder also holds DX as the demo left it and the
token, so that the commands printed go on working against `hrsync simulator`.
"""

from __future__ import annotations

import argparse
import csv
import json
import shutil
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, TextIO

from hrsync import logs
from hrsync.config.loading import Settings, load_settings
from hrsync.core.report.render import render_plan
from hrsync.dx.methods import PROCESS, USER_ATTRIBUTES_UPDATE
from hrsync.resources import shipped_dir
from hrsync.simulator.scenario import load_scenario
from hrsync.simulator.server import RunningSimulator, start_simulator
from hrsync.store.repo import Store
from hrsync.sync.results import SyncRequest, SyncResult
from hrsync.sync.story import run_sync

DEMO_TOKEN = "demo-org-token"  # the simulated account's token; not a secret
# What --keep leaves to go on by hand: DX as the demo left it, the token, a fixed port.
KEPT_SCENARIO = "scenario.json"
KEPT_TOKEN = "dx-token"
KEPT_PORT = 8765
OFFICES = ("Berlin", "Lisbon", "Toronto", "Nairobi")
ATTRIBUTES = '\n[attributes]\n"Location" = "{Office}"\n'

CONFIG = """\
# Written by `hrsync demo`: the configuration the demo ran with.
[dx]
base_url = "{base_url}"

[source]
path = "{export}"

[source.fields]
employee_id = "Employee ID"
name = "Full Name"
email = "Work Email"
manager_id = "Manager ID"
department = "Department"
status = "Status"

[mapping]
team_name = "{{department}}"

[sync]
verify_timeout_s = 20
notify_email = "people-ops@example.com"

[state]
database_url = "sqlite:///{db}"
"""


class Story:
    """Prints the demo as a short story; reads the run's own log for the details."""

    def __init__(self, out: TextIO, log_path: Path) -> None:
        self.out = out
        self.log_path = log_path

    def say(self, text: str = "") -> None:
        print(text, file=self.out, flush=True)

    def heading(self, text: str) -> None:
        self.say()
        self.say(text)
        self.say("=" * len(text))

    def events(self, run_id: str, name: str) -> list[dict[str, Any]]:
        found = []
        with self.log_path.open(encoding="utf-8") as fh:
            for line in fh:
                if f'"{name}"' not in line:
                    continue
                event = json.loads(line)
                if event.get("run_id") == run_id and event.get("event") == name:
                    found.append(event)
        return found


def demo(args: argparse.Namespace) -> int:
    # No settings to load: the demo writes its own config beside its state store.
    return run_demo(keep=args.keep, seed=args.seed)


def run_demo(*, keep: Path | None = None, out: TextIO = sys.stdout, seed: int | None = None) -> int:
    started = time.monotonic()
    with _workdir(keep) as work:
        samples = shipped_dir("config")
        export = work / "people.csv"
        log_path = work / "demo.log"
        log_stream = log_path.open("w", encoding="utf-8")
        logs.configure("json", "info", log_stream)
        story = Story(out, log_path)
        scenario_file = samples / "demo-scenario.json"
        scenario = load_scenario(scenario_file)
        try:
            with start_simulator(scenario, seed=seed) as sim:
                code = _tell(story, sim, samples, export, work, keep is not None)
                if keep is not None:
                    _keep(sim, scenario_file, work)
        finally:
            log_stream.close()
        story.say()
        story.say(f"Finished in {time.monotonic() - started:.1f}s.")
        if keep is not None:
            story.say(
                f"Kept in {work}: hrsync.toml, state.db, demo.log (the full JSON log), "
                f"{KEPT_SCENARIO} (DX as the demo left it) and {KEPT_TOKEN} (its token)."
            )
            story.say("To go on by hand, start that DX again in another terminal:")
            story.say(f"  hrsync simulator --scenario {work / KEPT_SCENARIO} --port {KEPT_PORT}")
            story.say("then, for example:")
            story.say(f"  hrsync --config {work / 'hrsync.toml'} plan")
        else:
            story.say(
                "Its folder is deleted now; `hrsync demo --keep DIR` keeps it, with what it "
                "needs to go on by hand."
            )
        return code


def _tell(
    story: Story, sim: RunningSimulator, samples: Path, export: Path, work: Path, kept: bool
) -> int:
    config = work / "hrsync.toml"
    db = work / "state.db"
    config.write_text(CONFIG.format(base_url=sim.base_url, export=export, db=db))
    settings = load_settings(config, {"HRSYNC_DX_TOKEN": DEMO_TOKEN})
    store = Store.open(settings.state.database_url)
    try:
        story.say("hrsync demo: keeping a (simulated) DX account in step with an HR export.")
        story.say(
            f"DX simulator: {sim.base_url}, account {sim.dx.scenario.account_name!r}, "
            f"{len(sim.dx.scenario.users)} users, no teams yet."
        )
        # Where DX's contract is silent the simulator's seed decides; told so a run replays.
        story.say(
            f"Simulator {sim.dx.variation.describe()} (replay: hrsync demo --seed {sim.dx.seed})."
        )

        story.heading("1. First sync of the sample org (config/sample-org.csv)")
        shutil.copy(samples / "sample-org.csv", export)
        first = _sync(story, settings, store)
        if first.outcome.value != "applied":
            return 1
        story.say(f"DX now lists {len(sim.dx.teams_view())} teams; running again changes nothing:")
        again = run_sync(settings, SyncRequest(), store=store)
        story.say(f"  -> {again.outcome.value}: no process call sent (DX already matches).")

        story.heading("2. A reorganisation (config/sample-org-reorg.csv)")
        story.say("A renamed team, a new team, a moved team and a departed manager.")
        shutil.copy(samples / "sample-org-reorg.csv", export)
        second = _sync(story, settings, store)
        if second.outcome.value != "applied":
            return 1

        story.heading("3. A truncated export (half the rows missing)")
        text = (samples / "sample-org-reorg.csv").read_text(encoding="utf-8")
        lines = text.splitlines()
        export.write_text("\n".join(lines[: 1 + (len(lines) - 1) // 2]) + "\n", encoding="utf-8")
        before = _process_calls(sim)
        third = run_sync(settings, SyncRequest(), store=store)
        story.say(_runnable(third.report.strip(), config, kept))
        story.say()
        story.say(
            f"  -> {third.outcome.value} (exit {third.exit_code}); "
            f"process calls sent: {_process_calls(sim) - before}. DX keeps its teams."
        )
        if third.outcome.value != "refused":
            return 1

        if not _attributes(story, sim, samples, export, config):
            return 1
        story.heading("What happened (hrsync history)")
        for run in store.runs.recent(10)[::-1]:
            counts = ", ".join(f"{k} {v}" for k, v in run.counts.items() if v) or "no changes"
            story.say(f"  {run.outcome:<9} {counts}")
    finally:
        store.close()
    return 0


def _runnable(report: str, config: Path, kept: bool) -> str:
    """The refusal's report as the demo can show it: the commands it names point into the
    demo's folder, which is gone when the demo ends unless kept."""
    if kept:
        return report
    lines = [line for line in report.splitlines() if f"--config {config}" not in line]
    if len(lines) < len(report.splitlines()):
        lines.append(
            "(A refusal names the commands that preview or apply it anyway; the demo's would "
            "point into its temporary folder: `hrsync demo --keep DIR` keeps it.)"
        )
    return "\n".join(lines)


def _keep(sim: RunningSimulator, scenario_file: Path, work: Path) -> None:
    """What the kept folder needs to go on by hand: DX as the demo left it (a scenario
    for `hrsync simulator`), its token in a file, and the config pointed at both. The
    simulator keeps its account in memory only, and the token is never in a config."""
    scenario = json.loads(scenario_file.read_text(encoding="utf-8"))
    users = sim.dx.users_view()
    email_of = {user["id"]: user["email"] for user in users}
    teams = sim.dx.teams_view()
    by_id = {team["id"]: team for team in teams}
    kept_teams = []
    for team in teams:
        entry: dict[str, Any] = {
            "name": team["name"],
            "reference_id": team["reference_id"],
            "lead_email": email_of[team["manager_id"]],
            "contributors": team["member_emails"],
            # Else every team would look edited by hand since hrsync last verified it.
            "last_changed_at": team["last_changed_at"],
        }
        parent = by_id.get(team["parent_id"])
        if parent is not None and parent["reference_id"]:
            entry["parent_reference_id"] = parent["reference_id"]
        elif parent is not None:  # made in the web app, without a reference_id
            entry["parent_name"] = parent["name"]
        kept_teams.append(entry)
    scenario["users"] = users
    scenario["teams"] = kept_teams
    scenario["seed"] = sim.dx.seed  # the kept DX answers as the demo's did
    (work / KEPT_SCENARIO).write_text(json.dumps(scenario, indent=2) + "\n", encoding="utf-8")
    (work / KEPT_TOKEN).write_text(DEMO_TOKEN + "\n", encoding="utf-8")
    (work / KEPT_TOKEN).chmod(0o600)  # a token file as it should be: no start warns of it
    config = work / "hrsync.toml"
    text = (
        config.read_text(encoding="utf-8")
        .replace(
            "# Written by `hrsync demo`: the configuration the demo ran with.",
            "# Written by `hrsync demo --keep`: the configuration the demo ran with, pointed at\n"
            f"# `hrsync simulator --scenario {KEPT_SCENARIO} --port {KEPT_PORT}` (DX as the demo "
            "left it).",
        )
        .replace(
            f'base_url = "{sim.base_url}"',
            f'base_url = "http://127.0.0.1:{KEPT_PORT}"\ntoken_file = "{KEPT_TOKEN}"',
        )
    )
    config.write_text(text, encoding="utf-8")


def _sync(story: Story, settings: Settings, store: Store) -> SyncResult:
    result = run_sync(settings, SyncRequest(), store=store)
    if result.plan is not None:
        story.say(render_plan(result.plan).rstrip())
    story.say()
    story.say(f"Sync: {result.outcome.value} (exit {result.exit_code}).")
    for event in story.events(result.run_id, "verify.converged"):
        story.say(f"  verify: teams.list {event['detail']} (poll {event['attempt']})")
    for event in story.events(result.run_id, "verify.audit_matched"):
        story.say(
            f"  audit trail: {event['action']} on {event['team']!r} matches the planned "
            f"{event['change'].replace('_', ' ')}"
        )
    for event in story.events(result.run_id, "verify.audit_missing"):
        story.say(f"  audit trail: no event for {event['summary']}")
    if result.reason:
        story.say(f"  reason: {result.reason}")
    return result


def _attributes(
    story: Story, sim: RunningSimulator, samples: Path, export: Path, config: Path
) -> bool:
    """Step 4: the Location attribute from an Office column, then one person moves."""
    story.heading("4. User attributes: Location from an Office column")
    with (samples / "sample-org-reorg.csv").open(encoding="utf-8", newline="") as fh:
        rows = list(csv.DictReader(fh))
    for index, row in enumerate(rows):
        row["Office"] = OFFICES[index % len(OFFICES)]
    _write_rows(export, rows)
    config.write_text(config.read_text(encoding="utf-8") + ATTRIBUTES, encoding="utf-8")
    story.say('The export gains an Office column; the config maps "Location" = "{Office}".')
    settings = load_settings(config, {"HRSYNC_DX_TOKEN": DEMO_TOKEN})
    store = Store.open(settings.state.database_url)
    try:
        before = _attribute_calls(sim)
        first = run_sync(settings, SyncRequest(), store=store)
        counts = first.counts
        story.say(
            f"Sync: attributes {_attribute_outcome(first)}: "
            f"{_attribute_calls(sim) - before} users.attributes.update calls, "
            f"{counts.get('attributes_updated', 0)} people updated."
        )
        mover = next(r for r in rows if r["Status"] == "Active" and r["Manager ID"])
        old = mover["Office"]
        mover["Office"] = "Reykjavik"
        _write_rows(export, rows)
        story.say(f"HR moves {mover['Full Name']} from {old} to Reykjavik:")
        before = _attribute_calls(sim)
        second = run_sync(settings, SyncRequest(), store=store)
        sent = _attribute_calls(sim) - before
        shown = sim.dx.user_attributes(mover["Work Email"])
        story.say(
            f"  -> attributes {_attribute_outcome(second)}: {sent} call, for "
            f"{mover['Work Email']}; DX now holds Location = {shown.get('Location')!r}."
        )
        return _attribute_outcome(first) == "applied" and sent == 1
    finally:
        store.close()


def _attribute_outcome(result: SyncResult) -> str:
    return result.attributes.outcome.value if result.attributes is not None else "skipped"


def _attribute_calls(sim: RunningSimulator) -> int:
    return sum(1 for r in sim.dx.requests if r.method_name == USER_ATTRIBUTES_UPDATE)


def _write_rows(path: Path, rows: list[dict[str, str]]) -> None:
    with path.open("w", encoding="utf-8", newline="") as fh:
        writer = csv.DictWriter(fh, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)


def _process_calls(sim: RunningSimulator) -> int:
    return sum(1 for r in sim.dx.requests if r.method_name == PROCESS)


@contextmanager
def _workdir(keep: Path | None) -> Iterator[Path]:
    if keep is not None:
        keep.mkdir(parents=True, exist_ok=True)
        for stale in ("state.db", "state.db-wal", "state.db-shm"):
            (keep / stale).unlink(missing_ok=True)
        yield keep.resolve()
        return
    with tempfile.TemporaryDirectory(prefix="hrsync-demo-") as tmp:
        yield Path(tmp)
