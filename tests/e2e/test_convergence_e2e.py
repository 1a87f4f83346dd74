"""Issue 9: never call applied what DX did not take; drift and audit across runs.

`hrsync` as a subprocess against the simulator, with injected faults and hand edits.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import httpx
import pytest

from hrsync.simulator.faults import Fault
from tests.e2e.conftest import TOKEN, Workspace, read_rows

pytestmark = pytest.mark.slow

PROCESS = "orgfiles.teamHierarchy.process"
QUICK = {"HRSYNC_SYNC__VERIFY_TIMEOUT_S": "5"}


def move_carlos(workspace: Workspace) -> None:
    rows = read_rows("sample-org.csv")
    for row in rows:
        if row["Employee ID"] == "E104":
            row["Manager ID"], row["Department"] = "E021", "Developer Experience"
    workspace.write_export(rows)


def contributors(workspace: Workspace, team: str) -> int:
    return int(workspace.dx_teams()[team]["contributors"])


def hand_import(workspace: Workspace, teams: list[dict[str, Any]]) -> None:
    """An edit in DX by somebody else: an import of `teams`, waited for."""
    before = len(workspace.sim.dx.imports)
    reply = httpx.post(
        f"{workspace.sim.base_url}/{PROCESS}",
        headers={"Authorization": f"Bearer {TOKEN}"},
        json={"teams": teams},
    )
    assert reply.json()["ok"] is True
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        if len(workspace.sim.dx.imports) > before and workspace.sim.dx.pending_import is None:
            return
        time.sleep(0.05)
    raise AssertionError("the hand edit was never applied")


def test_a_move_whose_process_got_503_is_resent_and_applied(workspace: Workspace) -> None:
    assert workspace.hrsync("sync").code == 0
    move_carlos(workspace)
    workspace.sim.dx.add_fault(Fault(method=PROCESS, kind="503", count=1))
    run = workspace.hrsync("sync", env=QUICK)
    assert run.code == 0, run.stdout[-3000:]
    assert run.finished["outcome"] == "applied"
    (resent,) = run.named("sync.resent")
    assert resent["attempt"] == 1 and "lost" in resent["reason"]
    first, second = workspace.process_requests()[1:]
    assert first.body == second.body
    assert contributors(workspace, "Platform Infrastructure") == 3
    assert contributors(workspace, "Developer Experience") == 4


def test_a_move_dx_never_takes_ends_unverified_never_applied(workspace: Workspace) -> None:
    assert workspace.hrsync("sync").code == 0
    move_carlos(workspace)
    workspace.sim.dx.add_fault(Fault(method=PROCESS, kind="drop", count=10))
    run = workspace.hrsync("sync", env={**QUICK, "HRSYNC_SYNC__MAX_RESENDS": "1"})
    assert run.code == 5, run.stdout[-3000:]
    assert run.finished["outcome"] == "unverified"
    assert len(run.named("sync.resent")) == 1
    assert contributors(workspace, "Platform Infrastructure") == 4
    workspace.sim.dx.clear_faults()
    after = workspace.hrsync("sync")
    assert after.finished["outcome"] == "applied", after.stdout[-3000:]
    assert after.finished["counts"]["membership_change"] == 2
    assert contributors(workspace, "Developer Experience") == 4


def test_a_lead_changed_by_hand_is_drift_corrected_by_the_next_run(workspace: Workspace) -> None:
    assert workspace.hrsync("sync").code == 0
    (first,) = workspace.process_requests()
    edited = [dict(t) for t in first.body["teams"]]
    for team in edited:
        if team["name"] == "Payments":
            team["team_lead_email"] = "samuel.osei@example.com"  # by hand, not HR's choice
    hand_import(workspace, edited)
    users = {u["email"]: u["id"] for u in workspace.sim.dx.users_view()}
    assert workspace.dx_teams()["Payments"]["manager_id"] == users["samuel.osei@example.com"]

    run = workspace.hrsync("sync")
    assert run.code == 0, run.stdout[-3000:]
    assert run.finished["outcome"] == "applied"
    (drift,) = run.named("plan.drift")
    assert drift["team"] == "Payments" and drift["level"] == "warning"
    assert any("lead in DX is user" in d for d in drift["details"])
    assert run.finished["counts"]["lead_change"] == 1
    assert workspace.dx_teams()["Payments"]["manager_id"] == users["katherine.adeyemi@example.com"]

    again = workspace.hrsync("sync")
    assert again.finished["outcome"] == "in_sync", again.stdout[-3000:]
    assert again.named("plan.drift") == []


def test_two_applying_runs_back_to_back_report_no_unexpected_audit_events(
    workspace: Workspace,
) -> None:
    assert workspace.hrsync("sync").code == 0
    rows = read_rows("sample-org.csv")
    for row in rows:
        if row["Department"] == "Payments":
            row["Department"] = "Payments Platform"
    workspace.write_export(rows)
    first = workspace.hrsync("sync")
    assert first.finished["outcome"] == "applied"
    for row in rows:
        if row["Department"] == "Mobile":
            row["Department"] = "Mobile Apps"
    workspace.write_export(rows)
    second = workspace.hrsync("sync")
    assert second.finished["outcome"] == "applied"
    assert second.named("verify.audit_unexpected") == [], second.named("verify.audit_unexpected")
    assert {e["team"] for e in second.named("verify.audit_earlier")} == {"Payments"}
    (matched,) = [e for e in second.named("verify.audit_matched") if e["change"] == "rename"]
    assert matched["team"] == "Mobile"  # DX names the team as it was


def test_plan_with_changes_logs_no_lease_lost(workspace: Workspace) -> None:
    run = workspace.hrsync("plan", "--detailed-exitcode")
    assert run.code == 2
    assert run.named("sync.lease_lost") == []
    assert not [e for e in run.events if e.get("level") == "error"]


def test_a_handful_of_syncs_under_random_faults_never_say_applied_wrongly(
    tmp_path: Path,
) -> None:
    # The CI-sized version of benchmarks/bench_faults.py: 30% faults on every method,
    # each sync a real change; DX is checked against what hrsync claims after each.
    from benchmarks.bench_faults import run

    tally = run(syncs=5, rate=0.3, seed=3, workdir=tmp_path)
    assert tally.wrong_applied == 0, tally.notes
    assert tally.wrongly_archived == 0, tally.notes
    assert tally.by_next == tally.syncs, tally.notes


def test_a_negative_max_resends_is_a_configuration_error_naming_the_key(
    workspace: Workspace,
) -> None:
    run = workspace.hrsync("sync", env={"HRSYNC_SYNC__MAX_RESENDS": "-1"})
    assert run.code == 2
    assert "sync.max_resends must be 0 or more, got -1" in run.stderr
    assert workspace.process_requests() == []
