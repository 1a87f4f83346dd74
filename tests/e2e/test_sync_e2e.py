"""`hrsync sync` / `plan` / `history` as a user runs them, against the simulator over HTTP."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time
from datetime import UTC, datetime, timedelta

import pytest

from hrsync.simulator.faults import Fault
from hrsync.store.repo import Store
from tests.e2e.conftest import TOKEN, Workspace, read_rows

pytestmark = pytest.mark.slow


def test_first_sync_creates_the_org_and_a_second_sends_nothing(workspace: Workspace) -> None:
    first = workspace.hrsync("sync")
    assert first.code == 0, first.stderr
    assert first.finished["outcome"] == "applied"
    assert first.finished["counts"]["create"] == 13
    assert set(first.finished) >= {"outcome", "exit_code", "counts", "duration_s", "run_id"}
    teams = workspace.dx_teams()
    assert teams["Platform"]["parent_id"] == teams["Engineering"]["id"]
    (request,) = workspace.process_requests()
    assert request.body["email"] == "people-ops@example.com"
    assert all(t["reference_id"].startswith("hrsync-") for t in request.body["teams"])
    assert first.named("verify.converged")

    second = workspace.hrsync("sync")
    assert second.code == 0
    assert second.finished["outcome"] == "in_sync"
    assert second.finished["counts"]["unchanged"] == 13
    assert len(workspace.process_requests()) == 1


def test_reorg_rename_lead_change_move_and_archive(workspace: Workspace) -> None:
    assert workspace.hrsync("sync").code == 0
    before = workspace.dx_teams()
    workspace.use_export("sample-org-reorg.csv")
    run = workspace.hrsync("sync")
    assert run.code == 0, run.stdout[-2000:]
    counts = run.finished["counts"]
    assert counts["rename"] == 1 and counts["move"] == 1 and counts["create"] == 1
    assert counts["archive"] == 1 and counts["lead_change"] == 1
    after = workspace.dx_teams()
    # The renamed team keeps its reference_id, so DX keeps its history.
    assert (
        after["Developer Productivity"]["reference_id"]
        == (before["Developer Experience"]["reference_id"])
    )
    assert "Developer Experience" not in after
    # The moved team now sits under Data.
    assert after["Growth"]["parent_id"] == after["Data"]["id"]
    assert after["Growth"]["reference_id"] == before["Growth"]["reference_id"]
    # The departed manager's team is gone from DX (archived within the guard).
    archived = {t["name"] for t in workspace.sim.dx.archived_teams()}
    assert "Mobile Android" in archived
    matched = {(e["change"], e["action"]) for e in run.named("verify.audit_matched")}
    assert ("rename", "change_name") in matched
    assert ("lead_change", "change_manager") in matched
    assert not run.named("verify.audit_missing")


def test_truncated_export_is_refused_then_allowed_with_allow_shrink(workspace: Workspace) -> None:
    assert workspace.hrsync("sync").code == 0
    rows = read_rows("sample-org.csv")
    managers = {r["Manager ID"] for r in rows if r["Manager ID"]}
    # Keep every manager and one report each (no team disappears), drop the others:
    # the shape of an export cut short by a failed filter or a truncated download.
    kept, has_report = [], set()
    for row in rows:
        if row["Employee ID"] in managers:
            kept.append(row)
        elif row["Manager ID"] not in has_report:
            has_report.add(row["Manager ID"])
            kept.append(row)
    workspace.write_export(kept)
    refused = workspace.hrsync("sync")
    assert refused.code == 4
    assert refused.finished["outcome"] == "refused"
    assert "sync.min_people_fraction" in refused.finished["reason"]
    assert "--allow-shrink" in refused.stdout
    assert len(workspace.process_requests()) == 1
    allowed = workspace.hrsync("sync", "--allow-shrink")
    assert allowed.code == 0, allowed.stdout[-2000:]
    assert allowed.finished["outcome"] == "applied"
    assert len(workspace.process_requests()) == 2


def test_too_many_archives_refused_listing_them_then_allow_archive(workspace: Workspace) -> None:
    assert workspace.hrsync("sync").code == 0
    workspace.use_export("sample-org-reorg.csv")
    env = {"HRSYNC_SYNC__MAX_ARCHIVE": "0"}
    refused = workspace.hrsync("sync", env=env)
    assert refused.code == 4
    assert "sync.max_archive" in refused.finished["reason"]
    listed = [e["team"] for e in refused.named("sync.refused.would_archive")]
    assert listed == ["Mobile Android"]
    assert "Mobile Android" in refused.stdout and "--allow-archive 1" in refused.stdout
    assert len(workspace.process_requests()) == 1
    allowed = workspace.hrsync("sync", "--allow-archive", "1", env=env)
    assert allowed.code == 0
    assert allowed.finished["counts"]["archive"] == 1


def test_live_snapshot_defers_without_sending(workspace: Workspace) -> None:
    workspace.sim.dx.add_snapshot(snapshot_id="live")
    run = workspace.hrsync("sync")
    assert run.code == 3
    assert run.finished["outcome"] == "deferred" and run.finished["resume_at"]
    assert workspace.process_requests() == []


def test_snapshot_window_defers_until_its_end(workspace: Workspace) -> None:
    completed = datetime.now(UTC).replace(microsecond=0) - timedelta(days=2)
    workspace.sim.dx.add_snapshot(snapshot_id="recent", completed_at=completed)
    run = workspace.hrsync("sync")
    assert run.code == 3
    resume_at = datetime.fromisoformat(run.finished["resume_at"])
    assert resume_at == completed + timedelta(days=21)
    assert workspace.process_requests() == []
    store = Store.open(f"sqlite:///{workspace.db}")
    try:
        pending = store.deferrals.pending()
        assert pending is not None and pending.resume_at == resume_at
    finally:
        store.close()


@pytest.mark.parametrize("workspace", [3600.0], indirect=True)
def test_unverified_then_import_in_progress_backs_off(workspace: Workspace) -> None:
    first = workspace.hrsync("sync", env={"HRSYNC_SYNC__VERIFY_TIMEOUT_S": "0.5"})
    assert first.code == 5
    assert first.finished["outcome"] == "unverified"
    second = workspace.hrsync("sync")
    assert second.code == 3
    assert "import" in second.finished["reason"]
    resume_at = datetime.fromisoformat(second.finished["resume_at"])
    assert timedelta(seconds=30) < resume_at - datetime.now(UTC) <= timedelta(minutes=1)
    assert len(workspace.process_requests()) == 2
    # Still running: the backoff doubles.
    third = workspace.hrsync("sync")
    assert third.code == 3
    resume_at = datetime.fromisoformat(third.finished["resume_at"])
    assert timedelta(seconds=90) < resume_at - datetime.now(UTC) <= timedelta(minutes=2)


def test_dropped_connection_after_process_is_verified_not_resent(workspace: Workspace) -> None:
    workspace.sim.dx.add_fault(
        Fault(method="orgfiles.teamHierarchy.process", kind="drop_after_send", count=1)
    )
    run = workspace.hrsync("sync")
    assert run.code == 0, run.stdout[-3000:]
    assert run.finished["outcome"] == "applied"
    assert run.named("sync.outcome_unknown")
    assert len(workspace.process_requests()) == 1
    assert len(workspace.dx_teams()) == 13


@pytest.mark.parametrize("workspace", [2.0], indirect=True)
def test_sigkill_between_submission_and_verification(workspace: Workspace) -> None:
    import os

    env = {k: v for k, v in os.environ.items() if not k.startswith("HRSYNC_")}
    proc = subprocess.Popen(
        [sys.executable, "-m", "hrsync", "--config", str(workspace.config), "sync"],
        env={**env, "HRSYNC_DX_TOKEN": TOKEN},
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    deadline = time.monotonic() + 30
    while not workspace.process_requests() and time.monotonic() < deadline:
        time.sleep(0.05)
    assert workspace.process_requests(), "the first run never submitted"
    proc.send_signal(signal.SIGKILL)
    proc.wait(timeout=10)
    assert proc.stdout is not None and proc.stderr is not None
    workspace.outputs.append(proc.stdout.read().decode() + proc.stderr.read().decode())
    proc.stdout.close()
    proc.stderr.close()

    run = workspace.hrsync("sync")
    assert run.code == 0, run.stdout[-3000:]
    (recovered,) = run.named("sync.recovered")
    assert recovered["verified"] is True
    assert run.finished["outcome"] == "in_sync"
    assert len(workspace.process_requests()) == 1
    assert len(workspace.dx_teams()) == 13


def test_second_sync_while_lease_is_held_exits_3_naming_the_holder(workspace: Workspace) -> None:
    store = Store.open(f"sqlite:///{workspace.db}")
    try:
        assert store.acquire_lease("ops-laptop:4242:abc", datetime.now(UTC), 600).acquired
        run = workspace.hrsync("sync")
    finally:
        store.close()
    assert run.code == 3
    assert "ops-laptop:4242:abc" in run.finished["reason"]
    assert workspace.process_requests() == []
    history = workspace.hrsync("history")
    assert "deferred" in history.stdout and "another sync is running" in history.stdout


def test_plan_detailed_exitcode_and_preview(workspace: Workspace) -> None:
    plan = workspace.hrsync("plan", "--detailed-exitcode")
    assert plan.code == 2
    assert 'create "Engineering"' in plan.stdout
    assert "Plan: 13 to create" in plan.stdout
    preview = workspace.hrsync("sync", "--preview")
    assert preview.code == 0
    assert "https://app.dx.example/" in preview.stdout
    assert workspace.process_requests() == []
    assert workspace.hrsync("sync").code == 0
    assert workspace.hrsync("plan", "--detailed-exitcode").code == 0


def test_plan_detailed_exitcode_is_an_error_when_the_attributes_cannot_be_planned(
    workspace: Workspace,
) -> None:
    # The hierarchy is in sync, but the attributes name a column the export lacks: the
    # attribute step is refused before any plan. "0: no changes" would tell CI all is well.
    assert workspace.hrsync("sync").code == 0
    config = workspace.config.read_text()
    workspace.config.write_text(config + '\n[attributes]\n"Location" = "{Office}"\n')
    plan = workspace.hrsync("plan", "--detailed-exitcode")
    assert "attributes refused" in plan.stdout + plan.stderr
    assert plan.code == 1


def test_invalid_export_refused_before_anything_is_sent(workspace: Workspace) -> None:
    rows = read_rows("sample-org.csv")
    rows[3]["Work Email"] = "not-an-email"
    rows[5]["Manager ID"] = "E999"
    workspace.write_export(rows)
    run = workspace.hrsync("sync")
    assert run.code == 4
    problems = [e["detail"] for e in run.named("export.problem")]
    assert any("line 5" in p and "Work Email" in p for p in problems), problems
    assert any("line 7" in p and "Manager ID" in p for p in problems), problems
    assert [r for r in workspace.sim.dx.requests if r.method_name.startswith("orgfiles")] == []


def test_history_lists_runs(workspace: Workspace) -> None:
    workspace.hrsync("sync")
    workspace.hrsync("sync")
    history = workspace.hrsync("history")
    lines = history.stdout.strip().splitlines()
    assert len(lines) == 2
    assert "in_sync" in lines[0] and "applied" in lines[1] and "create=13" in lines[1]


def test_history_leaves_out_dry_runs_unless_asked(workspace: Workspace) -> None:
    # Was mostly `plan` runs, with no way to keep them out.
    workspace.hrsync("sync")
    for _ in range(3):
        workspace.hrsync("plan")
    lines = workspace.hrsync("history").stdout.strip().splitlines()
    assert len(lines) == 2 and "applied" in lines[0], lines
    assert lines[-1] == "(3 dry runs and previews not shown: hrsync history --all)"
    every = workspace.hrsync("history", "--all").stdout.strip().splitlines()
    assert len(every) == 4 and sum("(dry run)" in line for line in every) == 3
    doc = json.loads(workspace.hrsync("history", "--format", "json").stdout)
    assert [r["outcome"] for r in doc["runs"]] == ["applied"]


def test_hand_edit_in_dx_is_logged_as_drift_and_corrected(workspace: Workspace) -> None:
    import httpx

    assert workspace.hrsync("sync").code == 0
    (first,) = workspace.process_requests()
    # Somebody renames a team in DX by hand (here: an import of the same payload with
    # one name changed, as the web app would leave it).
    edited = [dict(t) for t in first.body["teams"]]
    for team in edited:
        if team["name"] == "Payments":
            team["name"] = "Payments (old)"
        if team["parent_team_name"] == "Payments":
            team["parent_team_name"] = "Payments (old)"
    reply = httpx.post(
        f"{workspace.sim.base_url}/orgfiles.teamHierarchy.process",
        headers={"Authorization": f"Bearer {TOKEN}"},
        json={"teams": edited},
    )
    assert reply.json()["ok"] is True
    deadline = time.monotonic() + 10  # the import applies after 0.2 s; slack for a busy CI
    while "Payments (old)" not in workspace.dx_teams() and time.monotonic() < deadline:
        time.sleep(0.05)
    assert "Payments (old)" in workspace.dx_teams()

    run = workspace.hrsync("sync")
    assert run.code == 0, run.stdout[-2000:]
    (drift,) = run.named("plan.drift")
    assert drift["team"] == "Payments"
    assert run.finished["counts"]["rename"] == 1
    assert "Payments" in workspace.dx_teams() and "Payments (old)" not in workspace.dx_teams()
    assert len(workspace.process_requests()) == 3


def test_unreachable_hr_endpoint_is_a_failed_run_not_a_refusal(workspace: Workspace) -> None:
    env = {"HRSYNC_SOURCE__PATH": "", "HRSYNC_SOURCE__URL": "http://127.0.0.1:9/people.csv"}
    run = workspace.hrsync("sync", env=env)
    assert run.code == 1
    assert run.finished["outcome"] == "failed"
    assert "could not fetch http://127.0.0.1:9/people.csv" in run.finished["reason"]
    assert [r for r in workspace.sim.dx.requests if r.method_name.startswith("orgfiles")] == []
