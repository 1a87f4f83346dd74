"""Approvals bound to a plan (issue 23), as a person uses them against the simulator:
a refused plan has an id, `hrsync approve ID` records it, the next sync applies exactly
that plan, a changed plan is refused again naming the difference, and an approval
expires."""

from __future__ import annotations

import json
import re
from datetime import UTC, datetime, timedelta

import pytest
from freezegun import freeze_time
from sqlalchemy import update

from hrsync.cli import main
from hrsync.config.loading import load_settings
from hrsync.daemon.scheduler import APPROVAL_JOB
from hrsync.daemon.service import Daemon
from hrsync.outcome import Outcome
from hrsync.simulator.faults import Fault
from hrsync.store import tables
from hrsync.store.repo import Store
from hrsync.sync.context import Pacing
from hrsync.sync.results import SyncRequest, SyncResult
from hrsync.sync.story import run_sync
from tests.e2e.conftest import TOKEN, Workspace, read_rows

pytestmark = pytest.mark.slow

STRICT = {"HRSYNC_SYNC__MAX_ARCHIVE": "0"}


def refused_plan_id(workspace: Workspace) -> str:
    refused = workspace.hrsync("sync", env=STRICT)
    assert refused.code == 4, refused.stdout[-2000:]
    plan_id = refused.finished["plan_id"]
    assert re.fullmatch(r"[0-9a-f]{8}", plan_id)
    assert f"approve {plan_id}" in refused.stdout
    return str(plan_id)


def reorganised(workspace: Workspace) -> str:
    """The org synced, then the reorganisation export, refused (it archives a team)."""
    assert workspace.hrsync("sync").code == 0
    workspace.use_export("sample-org-reorg.csv")
    return refused_plan_id(workspace)


def test_approve_then_sync_applies_exactly_that_plan_and_history_says_who(
    workspace: Workspace,
) -> None:
    plan_id = reorganised(workspace)
    plan = workspace.hrsync("plan", "--format", "json", env=STRICT)
    document = json.loads(plan.stdout)
    assert document["plan_id"] == plan_id and document["guards"]["plan_id"] == plan_id
    assert document["guards"]["approve_plan_with"].endswith(f"approve {plan_id}")

    status = json.loads(workspace.hrsync("status", "--format", "json").stdout)
    (refusal,) = [a for a in status["attention"] if a["reason"] == "refused"]
    assert refusal["plan_id"] == plan_id and refusal["approve"].endswith(f"approve {plan_id}")
    assert f"approve {plan_id}" in workspace.hrsync("status").stdout

    approved = workspace.hrsync("approve", plan_id, "--by", "ana@example.com", "--note", "Q4")
    assert approved.code == 0, approved.stderr
    status = json.loads(workspace.hrsync("status", "--format", "json").stdout)
    assert [(a["plan_id"], a["by"], a["note"]) for a in status["approvals"]] == [
        (plan_id, "ana@example.com", "Q4")
    ]
    assert f"Approved plan {plan_id}" in approved.stdout
    assert len(workspace.process_requests()) == 1  # approving sends nothing

    applied = workspace.hrsync("sync", env=STRICT)
    assert applied.code == 0, applied.stdout[-2000:]
    assert applied.finished["counts"]["archive"] == 1
    assert applied.finished["approval"] == {
        "plan_id": plan_id,
        "by": "ana@example.com",
        "note": "Q4",
        "via": "approve",
        "approved_at": applied.finished["approval"]["approved_at"],
    }
    history = json.loads(workspace.hrsync("history", "--format", "json").stdout)
    newest = history["runs"][0]
    assert newest["id"] == applied.finished["run_id"]
    assert newest["approval"]["by"] == "ana@example.com"
    text = workspace.hrsync("history").stdout
    assert f"plan {plan_id} approved by ana@example.com (Q4)" in text
    listing = workspace.hrsync("approvals").stdout
    assert f"plan {plan_id}  applied" in listing
    assert applied.finished["run_id"] in listing


def test_unknown_plan_id_is_a_usage_error(workspace: Workspace) -> None:
    assert workspace.hrsync("db", "upgrade").code == 0  # a store, with no refused plan in it
    unknown = workspace.hrsync("approve", "0123abcd")
    assert unknown.code == 2
    assert "no refused plan 0123abcd" in unknown.stderr
    assert workspace.hrsync("approve", "not-an-id").code == 2


def test_hr_changes_after_approval_refuses_naming_the_difference(workspace: Workspace) -> None:
    plan_id = reorganised(workspace)
    assert workspace.hrsync("approve", plan_id, "--by", "ana@example.com").code == 0
    # HR changes meanwhile: Payments' manager leaves, their reports go to the director,
    # so one more team (Payments) would be archived.
    kept = [r for r in read_rows("sample-org-reorg.csv") if r["Employee ID"] != "E022"]
    for row in kept:
        if row["Manager ID"] == "E022":
            row["Manager ID"] = "E011"
    workspace.write_export(kept)
    again = workspace.hrsync("sync", env=STRICT)
    assert again.code == 4, again.stdout[-2000:]
    new_id = again.finished["plan_id"]
    assert new_id != plan_id
    assert f"1 more team to archive than plan {plan_id} approved by ana@example.com" in again.stdout
    assert 'also archives "Payments"' in again.stdout
    assert f"approve {new_id}" in again.stdout
    (event,) = again.named("sync.approval_not_matching")
    assert event["approved_plan_id"] == plan_id
    assert len(workspace.process_requests()) == 1


def test_an_expired_approval_is_not_applied(workspace: Workspace) -> None:
    plan_id = reorganised(workspace)
    assert workspace.hrsync("approve", plan_id).code == 0
    store = Store.open(f"sqlite:///{workspace.db}")
    try:
        # As if 72 hours had passed: the approval lapses.
        with store.engine.begin() as connection:
            connection.execute(
                update(tables.approvals).values(expires_at=datetime.now(UTC) - timedelta(minutes=1))
            )
    finally:
        store.close()
    refused = workspace.hrsync("sync", env=STRICT)
    assert refused.code == 4
    assert refused.finished["plan_id"] == plan_id
    assert f"plan {plan_id}  expired" in workspace.hrsync("approvals").stdout


def test_an_approval_waits_out_a_snapshot_window(workspace: Workspace) -> None:
    plan_id = reorganised(workspace)
    assert workspace.hrsync("approve", plan_id).code == 0
    completed = datetime.now(UTC).replace(microsecond=0) - timedelta(days=2)
    workspace.sim.dx.add_snapshot(snapshot_id="recent", completed_at=completed)
    deferred = workspace.hrsync("sync", env=STRICT)
    assert deferred.code == 3, deferred.stdout[-2000:]
    assert len(workspace.process_requests()) == 1
    assert f"plan {plan_id}  pending" in workspace.hrsync("approvals").stdout
    # The window closes: DX's clock moves past it, and hrsync's window is one day.
    workspace.sim.dx.advance(timedelta(days=20).total_seconds())
    closed = {**STRICT, "HRSYNC_SYNC__RETRO_WINDOW_DAYS": "1"}
    applied = workspace.hrsync("sync", env=closed)
    assert applied.code == 0, applied.stdout[-2000:]
    assert applied.finished["approval"]["plan_id"] == plan_id


def test_an_approval_given_in_a_window_outlives_it_and_the_first_run_after_applies_it(
    workspace: Workspace,
) -> None:
    """An approval during a window waits and applies after it: its lifetime does not run
    while the window defers the plan (the retro window is ~3 weeks, the ttl 72 hours)."""
    plan_id = reorganised(workspace)
    now = datetime.now(UTC).replace(microsecond=0)
    workspace.sim.dx.add_snapshot(snapshot_id="recent", completed_at=now - timedelta(days=1))
    settings = load_settings(workspace.config, {"HRSYNC_DX_TOKEN": TOKEN, **STRICT})
    with freeze_time(now):
        assert main(["--config", str(workspace.config), "approve", plan_id, "--by", "ana"]) == 0
    store = Store.open(settings.state.database_url)
    try:
        with freeze_time(now, tick=True):
            first = run_sync(settings, SyncRequest(), store=store)
        assert first.outcome is Outcome.DEFERRED
        # The first run after the window (the resume the deferral set) applies nothing.
        deferral = store.deferrals.pending()
        assert deferral is not None
        resume = deferral.resume_at
        workspace.sim.dx.advance((resume - now).total_seconds() + 60)
        with freeze_time(resume + timedelta(minutes=1), tick=True):
            after = run_sync(settings, SyncRequest(trigger="resume"), store=store)
    finally:
        store.close()
    assert after.outcome is Outcome.APPLIED, (after.outcome, after.reason)


def test_manual_allow_archive_is_audited_with_the_os_user(workspace: Workspace) -> None:
    plan_id = reorganised(workspace)
    allowed = workspace.hrsync("sync", "--allow-archive", "1", env=STRICT)
    assert allowed.code == 0
    approval = allowed.finished["approval"]
    assert approval["via"] == "sync" and approval["plan_id"] == plan_id
    assert approval["by"] and approval["note"] == "sync --allow-archive=1"
    history = json.loads(workspace.hrsync("history", "--format", "json").stdout)
    assert history["runs"][0]["approval"]["via"] == "sync"


def test_an_approval_expires_after_approval_ttl_hours(workspace: Workspace) -> None:
    plan_id = reorganised(workspace)
    settings = load_settings(workspace.config, {"HRSYNC_DX_TOKEN": TOKEN, **STRICT})
    approved_at = datetime.now(UTC).replace(microsecond=0)
    with freeze_time(approved_at):
        assert main(["--config", str(workspace.config), "approve", plan_id, "--by", "ana"]) == 0
    store = Store.open(settings.state.database_url)
    try:
        (approval,) = store.approvals.recent()
        assert approval.expires_at == approved_at + timedelta(hours=72)
        assert approval.state(approved_at + timedelta(hours=71)) == "pending"
        # tick: the run's own waits and timeouts still see time pass.
        with freeze_time(approved_at + timedelta(hours=72, seconds=1), tick=True):
            late = run_sync(settings, SyncRequest(), store=store)
    finally:
        store.close()
    assert late.outcome is Outcome.REFUSED and late.plan_id == plan_id
    assert late.approval is None
    assert len(workspace.process_requests()) == 1


def test_the_daemon_honours_an_approval_no_longer_than_its_own_ttl(
    workspace: Workspace, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An earlier release's approver gave it 1000 hours; the daemon honours 72."""
    plan_id = reorganised(workspace)
    settings = load_settings(workspace.config, {"HRSYNC_DX_TOKEN": TOKEN, **STRICT})
    approved_at = datetime.now(UTC).replace(microsecond=0)
    store = Store.open(settings.state.database_url)
    try:
        # As `hrsync approve` records it, with the expiry an older configuration allowed.
        store.approvals.add(
            plan_id,
            approved_by="ana",
            note=None,
            now=approved_at,
            expires_at=approved_at + timedelta(hours=1000),
        )
        (approval,) = store.approvals.recent()
        assert approval.expires_at == approved_at + timedelta(hours=1000)
        with freeze_time(approved_at + timedelta(hours=72, seconds=1), tick=True):
            late = run_sync(settings, SyncRequest(), store=store)
    finally:
        store.close()
    assert late.outcome is Outcome.REFUSED and late.plan_id == plan_id
    assert late.approval is None
    assert len(workspace.process_requests()) == 1


def test_an_approval_from_the_future_is_not_honoured(
    workspace: Workspace, capsys: pytest.CaptureFixture[str]
) -> None:
    """An approver's clock a day ahead (or a row written into the store) would otherwise
    live a day past an approval's 72 hours."""
    plan_id = reorganised(workspace)
    settings = load_settings(workspace.config, {"HRSYNC_DX_TOKEN": TOKEN, **STRICT})
    now = datetime.now(UTC).replace(microsecond=0)
    with freeze_time(now + timedelta(hours=24)):
        assert main(["--config", str(workspace.config), "approve", plan_id, "--by", "ana"]) == 0
    capsys.readouterr()
    store = Store.open(settings.state.database_url)
    try:
        soon = run_sync(settings, SyncRequest(), store=store)
        logged = capsys.readouterr()
        # Nor later, when the clock has passed its date (56 h after it, 80 h after it
        # was really given: past this daemon's 72 h).
        with freeze_time(now + timedelta(hours=80), tick=True):
            late = run_sync(settings, SyncRequest(), store=store)
    finally:
        store.close()
    for result in (soon, late):
        assert result.outcome is Outcome.REFUSED and result.plan_id == plan_id
        assert result.approval is None
    assert len(workspace.process_requests()) == 1
    assert "sync.approval_from_the_future" in logged.out + logged.err


class FrozenClock:
    def __init__(self, now: datetime) -> None:
        self.now = now

    def __call__(self) -> datetime:
        return self.now


def test_the_daemon_applies_an_approval_within_a_minute(workspace: Workspace) -> None:
    plan_id = reorganised(workspace)
    settings = load_settings(workspace.config, {"HRSYNC_DX_TOKEN": TOKEN, **STRICT})
    store = Store.open(settings.state.database_url)
    clock = FrozenClock(datetime.now(UTC))
    fast = Pacing(poll_s=0.05, poll_max_s=0.2)

    def sync(request: SyncRequest) -> SyncResult:
        return run_sync(settings, request, store=store, pacing=fast)

    daemon = Daemon(settings, store=store, run_sync=sync, clock=clock)
    daemon.start(paused=True)
    try:
        job = daemon.scheduler.get_job(APPROVAL_JOB)
        assert job is not None and job.next_run_time - clock() <= timedelta(minutes=1)
        assert job.func() is None  # nothing approved: no run, nothing sent
        assert len(workspace.process_requests()) == 1

        assert workspace.hrsync("approve", plan_id, "--by", "ana@example.com").code == 0
        result = job.func()  # the minute's look, as the scheduler fires it
        assert result is not None and result.outcome is Outcome.APPLIED, result
        assert result.approval is not None and result.approval.plan_id == plan_id
        assert len(workspace.process_requests()) == 2
        assert job.func() is None  # applied: nothing pending, no more runs
    finally:
        daemon.scheduler.shutdown(wait=False)
        store.close()
    after = Store.open(settings.state.database_url)
    try:
        (approval,) = after.approvals.recent()
    finally:
        after.close()
    assert approval.applied_run_id == result.run_id


def preview_requests(workspace: Workspace) -> list[object]:
    return [
        r for r in workspace.sim.dx.requests if r.method_name == "orgfiles.teamHierarchy.preview"
    ]


def test_preview_by_plan_id_shows_exactly_the_refused_plan_once(workspace: Workspace) -> None:
    plan_id = reorganised(workspace)
    first = workspace.hrsync("sync", "--preview", plan_id)
    assert first.code == 0, first.stdout[-2000:] + first.stderr[-2000:]
    assert f"Preview of plan {plan_id}: http" in first.stdout
    (request,) = preview_requests(workspace)
    refused = Store.open(f"sqlite:///{workspace.db}")
    try:
        stored = refused.approvals.refused_plan_payload(plan_id)
    finally:
        refused.close()
    assert stored is not None
    sent = sorted(request.body["teams"], key=lambda t: t["reference_id"])  # type: ignore[attr-defined]
    assert [t["reference_id"] for t in sent] == [t["reference_id"] for t in json.loads(stored)]
    # Once per plan id: asked again, the same URL, and no second preview in DX.
    again = workspace.hrsync("sync", "--preview", plan_id)
    assert again.code == 0 and first.stdout.split()[-1] in again.stdout
    assert len(preview_requests(workspace)) == 1
    assert len(workspace.process_requests()) == 1
    assert workspace.hrsync("sync", "--preview", "0123abcd").code == 2


def test_a_daemon_refusal_carries_a_preview_of_its_plan_made_once(workspace: Workspace) -> None:
    plan_id = reorganised(workspace)
    settings = load_settings(workspace.config, {"HRSYNC_DX_TOKEN": TOKEN, **STRICT})
    store = Store.open(settings.state.database_url)
    try:
        first = run_sync(settings, SyncRequest(trigger="schedule"), store=store)
        second = run_sync(settings, SyncRequest(trigger="schedule"), store=store)
    finally:
        store.close()
    assert first.outcome is Outcome.REFUSED and first.plan_id == plan_id
    assert first.preview_url and first.preview_url == second.preview_url
    assert len(preview_requests(workspace)) == 1
    # Never inside a window: the gate defers first, and nothing is previewed.
    workspace.sim.dx.add_snapshot(snapshot_id="live")
    window = Store.open(settings.state.database_url)
    try:
        deferred = run_sync(settings, SyncRequest(trigger="schedule"), store=window)
    finally:
        window.close()
    assert deferred.outcome is Outcome.DEFERRED and deferred.preview_url is None
    assert len(preview_requests(workspace)) == 1


def test_an_approval_stays_pending_when_dx_never_took_the_plan(workspace: Workspace) -> None:
    """Every process call is dropped before DX does anything: DX never takes the plan,
    yet the person's approval is consumed and listed 'applied'."""
    plan_id = reorganised(workspace)
    assert workspace.hrsync("approve", plan_id, "--by", "ana").code == 0
    workspace.sim.dx.add_fault(
        Fault(method="orgfiles.teamHierarchy.process", kind="drop", count=10)
    )
    env = {**STRICT, "HRSYNC_SYNC__VERIFY_TIMEOUT_S": "3"}
    run = workspace.hrsync("sync", env=env, timeout=120)
    assert run.code != 0, run.stdout[-1500:]
    listing = workspace.hrsync("approvals").stdout
    assert f"plan {plan_id}  pending" in listing, listing


def test_after_dx_never_took_an_approved_plan_the_next_run_applies_it_without_asking_again(
    workspace: Workspace,
) -> None:
    plan_id = reorganised(workspace)
    assert workspace.hrsync("approve", plan_id, "--by", "ana").code == 0
    workspace.sim.dx.add_fault(
        Fault(method="orgfiles.teamHierarchy.process", kind="drop", count=10)
    )
    env = {**STRICT, "HRSYNC_SYNC__VERIFY_TIMEOUT_S": "3"}
    lost = workspace.hrsync("sync", env=env, timeout=120)
    assert lost.finished["outcome"] == "unverified", lost.finished
    workspace.sim.dx.clear_faults()
    again = workspace.hrsync("sync", env=env, timeout=120)
    listing = workspace.hrsync("approvals").stdout
    # The same plan, DX still without it: the approval given for it applies it.
    assert again.finished["outcome"] == "applied", again.finished
    assert f"plan {plan_id}  applied" in listing, listing
    assert again.finished["run_id"] in listing, listing
