"""`hrsync approve` and `hrsync approvals` on a state store alone (no token, no export)."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from hrsync.cli import main
from hrsync.core.gate.plan_ids import PlanSummary
from hrsync.store.repo import Store
from hrsync.sync.approval_step import os_user


def summary(*guards: str) -> PlanSummary:
    return PlanSummary(
        guards=guards, archives=("Payments",), people=30, last_accepted_people=40,
        current_teams=13,
    )  # fmt: skip


@pytest.fixture
def config(tmp_path: Path) -> Path:
    db = tmp_path / "state.db"
    path = tmp_path / "hrsync.toml"
    path.write_text(f'[state]\ndatabase_url = "sqlite:///{db}"\n', encoding="utf-8")
    store = Store.open(f"sqlite:///{db}")
    try:
        now = datetime.now(UTC)
        for plan_id, guards in (("3f9c2a11", ("max_archive",)), ("0badc0de", ("empty_export",))):
            store.approvals.save_refused_plan(
                plan_id, run_id="r1", now=now, payload_digest="d" * 64,
                summary=summary(*guards), payload_json="[]",
            )  # fmt: skip
    finally:
        store.close()
    return path


def test_approve_records_who_and_why_and_approvals_lists_it(
    config: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["--config", str(config), "approve", "3F9C2A11", "--note", "Q4"]) == 0
    out = capsys.readouterr().out
    assert f"Approved plan 3f9c2a11 (sync.max_archive; archives 1 team) as {os_user()}" in out
    assert "Nothing was sent to DX" in out
    assert main(["--config", str(config), "approvals", "--format", "json"]) == 0
    (listed,) = json.loads(capsys.readouterr().out)["approvals"]
    assert listed["plan_id"] == "3f9c2a11" and listed["state"] == "pending"
    assert listed["by"] == os_user() and listed["note"] == "Q4" and listed["via"] == "approve"


def test_approve_in_a_snapshot_window_says_when_it_applies_and_expires_after_it(
    config: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    db = config.read_text(encoding="utf-8").split('"')[1]
    store = Store.open(db)
    now = datetime.now(UTC).replace(microsecond=0)
    window_ends = now + timedelta(days=20)
    try:
        store.runs.start("r2", "schedule", now, dry_run=False)
        store.runs.finish("r2", now, outcome="deferred", exit_code=3, counts={}, reason="window",
                         defer_kind="snapshot_window")  # fmt: skip
        store.deferrals.add("r2", "window", window_ends, now)
    finally:
        store.close()
    assert main(["--config", str(config), "approve", "3f9c2a11", "--by", "ana"]) == 0
    out = capsys.readouterr().out
    expires = window_ends + timedelta(hours=72)
    assert (
        f"DX is in a snapshot window until {window_ends:%Y-%m-%d %H:%M} UTC: the daemon "
        f"applies it then; it expires at {expires:%Y-%m-%d %H:%M} UTC"
    ) in out, out
    store = Store.open(db)
    try:
        (approval,) = store.approvals.recent()
    finally:
        store.close()
    assert approval.expires_at.replace(tzinfo=UTC) == expires


@pytest.mark.parametrize(
    ("plan_id", "said"),
    [
        ("0123abcd", "no refused plan 0123abcd"),
        ("nonsense", "is not a plan id"),
        ("0badc0de", "empty_export is never overridden"),
    ],
)
def test_what_cannot_be_approved_exits_2(
    config: Path, capsys: pytest.CaptureFixture[str], plan_id: str, said: str
) -> None:
    assert main(["--config", str(config), "approve", plan_id, "--by", "ana"]) == 2
    assert said in capsys.readouterr().err
    assert main(["--config", str(config), "approvals"]) == 0
    assert capsys.readouterr().out.strip() == "no approvals yet"


def test_approving_a_plan_already_applied_says_so_and_records_nothing(
    config: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["--config", str(config), "approve", "3f9c2a11", "--by", "ana"]) == 0
    store = Store.open(f"sqlite:///{config.parent / 'state.db'}")
    try:
        (approval,) = store.approvals.recent()
        assert store.approvals.mark_applied(approval.id, "run-9", datetime.now(UTC))
    finally:
        store.close()
    capsys.readouterr()
    assert main(["--config", str(config), "approve", "3f9c2a11", "--by", "bo"]) == 0
    out = capsys.readouterr().out
    assert "plan 3f9c2a11 is already applied (by run run-9" in out and "nothing" in out
    assert main(["--config", str(config), "approvals", "--format", "json"]) == 0
    listed = json.loads(capsys.readouterr().out)["approvals"]
    assert [a["state"] for a in listed] == ["applied"]
