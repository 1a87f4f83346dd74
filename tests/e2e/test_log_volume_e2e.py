"""Log volume: at info, events about one team or person each stop at a cap per kind, then
one `log.capped` summary says how many and where to see them all; members' e-mails are
written only at debug."""

from __future__ import annotations

import csv
import sys
from collections import Counter

import pytest

from hrsync.core import defaults
from tests.e2e.conftest import ROOT, Workspace

CAP = defaults.EVENTS_PER_KIND
CHANGE_KINDS = ("create", "rename", "move", "lead_change", "membership_change", "archive")


@pytest.fixture
def generated(workspace: Workspace) -> Workspace:
    sys.path.insert(0, str(ROOT / "benchmarks"))
    from generator import generate_org, write_csv

    rows = generate_org(400, seed=5)
    write_csv(rows, workspace.export)
    known = {user["email"] for user in workspace.sim.dx.users_view()}
    for row in rows:  # DX knows the people (other integrations told it)
        email = row["Work Email"].strip().lower()
        if email not in known:
            workspace.sim.dx.add_user(row["Full Name"].strip(), email)
            known.add(email)
    return workspace


def lines(run_output: str) -> list[str]:
    return [line for line in run_output.splitlines() if line.strip()]


def test_a_first_sync_logs_a_capped_number_of_lines(generated: Workspace) -> None:
    run = generated.hrsync("sync")
    assert run.code == 0, run.stdout[-3000:] + run.stderr[-3000:]
    creates = run.finished["counts"]["create"]
    assert creates > CAP  # enough teams for the cap to matter
    assert len(run.named("plan.change")) == CAP
    (summary,) = [e for e in run.named("log.capped") if e["kind"] == "plan.change"]
    assert summary["total"] == creates and summary["logged"] == CAP
    assert summary["at_debug"] == creates - CAP
    assert summary["see"] == "hrsync plan --format json"
    assert summary["level"] == "info"
    # Every kind stays at the cap.
    for kind in {e["event"] for e in run.events}:
        assert len(run.named(kind)) <= max(CAP, 6), kind
    # Each capped kind adds its cap: a few dozen lines beside them.
    capped = len(run.named("log.capped"))
    assert len(lines(run.stdout + run.stderr)) < 80 + capped * (CAP - 3)
    # No member e-mail at info (a plan.change names counts, not people).
    emails = {e["lead"] for e in run.named("plan.change") if e.get("lead")}
    for event in run.named("plan.change"):
        assert "added" not in event and "removed" not in event
        assert "@" not in event["summary"] or any(lead in event["summary"] for lead in emails)


def test_at_debug_every_change_is_logged_with_its_members(generated: Workspace) -> None:
    first = generated.hrsync("sync")
    assert first.code == 0
    # In each team of two contributors or more, one without reports leaves: more
    # membership changes, each naming them, than the cap.
    with generated.export.open(encoding="utf-8", newline="") as fh:
        rows = list(csv.DictReader(fh))
    managers = {row["Manager ID"].strip() for row in rows}
    contributors = [r for r in rows if r["Employee ID"].strip() not in managers]
    per_team = Counter(r["Manager ID"].strip() for r in contributors)
    leavers = list(
        {
            r["Manager ID"].strip(): r
            for r in contributors
            if per_team[r["Manager ID"].strip()] > 1
        }.values()
    )
    generated.write_export([r for r in rows if r not in leavers])
    run = generated.hrsync("--log-level", "debug", "plan")
    assert run.code == 0, run.stderr[-3000:]
    (ready,) = run.named("plan.ready")
    changed = sum(ready[k] for k in CHANGE_KINDS)
    assert changed > CAP and len(run.named("plan.change")) == changed
    members = run.named("plan.members")
    removed = {email for m in members for email in m["removed"]}
    assert removed and all("@" in email for email in removed)
    (summary,) = [e for e in run.named("log.capped") if e["kind"] == "plan.change"]
    assert summary["at_debug"] == changed - CAP
