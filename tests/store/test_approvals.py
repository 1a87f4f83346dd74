"""Refused plans by plan id, and approvals of them (store/approvals.py)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from hrsync.core.gate.plan_ids import PlanSummary
from hrsync.store.repo import Store

NOW = datetime(2026, 11, 27, 14, 2, tzinfo=UTC)
H = timedelta(hours=1)
SUMMARY = PlanSummary(
    guards=("max_archive",),
    archives=("Mobile Android",),
    people=39,
    last_accepted_people=40,
    current_teams=13,
    counts={"archive": 1},
)


def test_a_refused_plan_keeps_its_first_run_and_what_tripped(store: Store) -> None:
    store.approvals.save_refused_plan(
        "3f9c2a11", run_id="r1", now=NOW, payload_digest="d" * 64, summary=SUMMARY,
        payload_json="[]",
    )  # fmt: skip
    store.approvals.save_refused_plan(
        "3f9c2a11", run_id="r2", now=NOW + H, payload_digest="d" * 64, summary=SUMMARY,
        payload_json="[]",
    )  # fmt: skip
    plan = store.approvals.refused_plan("3f9c2a11")
    assert plan is not None
    assert plan.run_id == "r1" and plan.created_at == NOW and plan.last_refused_at == NOW + H
    assert plan.summary == SUMMARY and plan.guards == ("max_archive",)
    assert store.approvals.refused_plan("0badc0de") is None
    assert set(store.approvals.refused_plans({"3f9c2a11", "0badc0de"})) == {"3f9c2a11"}


def test_pending_approvals_leave_out_applied_and_expired_ones(store: Store) -> None:
    old = store.approvals.add("aaaaaaaa", approved_by="ana", note=None, now=NOW - 80 * H,
                             expires_at=NOW - 8 * H)  # fmt: skip
    used = store.approvals.add("bbbbbbbb", approved_by="ana", note="ok", now=NOW - H,
                              expires_at=NOW + 71 * H)  # fmt: skip
    fresh = store.approvals.add("cccccccc", approved_by="bo", note=None, now=NOW,
                               expires_at=NOW + 72 * H)  # fmt: skip
    assert store.approvals.mark_applied(used.id, "run-9", NOW)
    assert not store.approvals.mark_applied(used.id, "run-10", NOW)  # one run applies it
    assert [a.id for a in store.approvals.pending(NOW)] == [fresh.id]
    states = {a.plan_id: a.state(NOW) for a in store.approvals.recent()}
    assert states == {"aaaaaaaa": "expired", "bbbbbbbb": "applied", "cccccccc": "pending"}
    assert old.via == "approve"
    applied = store.approvals.applied_by(["run-9", "run-x"])
    assert list(applied) == ["run-9"] and applied["run-9"].note == "ok"


def test_a_manual_override_is_kept_as_an_applied_approval(store: Store) -> None:
    store.approvals.add("dddddddd", approved_by="root", note="sync --allow-archive=6", now=NOW,
                       expires_at=NOW, via="sync", applied_run_id="run-1")  # fmt: skip
    (kept,) = store.approvals.recent()
    assert kept.via == "sync" and kept.state(NOW) == "applied"
    assert kept.applied_run_id == "run-1" and kept.applied_at == NOW
    assert store.approvals.pending(NOW - H) == []


def test_a_run_dx_is_later_seen_to_have_taken_applies_the_approval_it_honoured(
    store: Store,
) -> None:
    approval = store.approvals.add("3f9c2a11", approved_by="ana", note=None, now=NOW - H,
                                  expires_at=NOW + 71 * H)  # fmt: skip
    store.runs.start("run-lost", "approval", NOW, dry_run=False)
    store.runs.finish("run-lost", NOW, outcome="unverified", exit_code=5, counts={}, reason=None,
                     plan_id="3f9c2a11")  # fmt: skip
    store.runs.start("run-plain", "schedule", NOW, dry_run=False)
    store.runs.finish("run-plain", NOW, outcome="unverified", exit_code=5, counts={}, reason=None)
    assert not store.approvals.mark_plan_applied("run-plain", NOW + H)
    assert [a.id for a in store.approvals.pending(NOW + H)] == [approval.id]
    assert store.approvals.mark_plan_applied("run-lost", NOW + H)
    assert store.approvals.pending(NOW + H) == []
    assert store.approvals.applied_by(["run-lost"])["run-lost"].id == approval.id
    assert not store.approvals.mark_plan_applied("run-lost", NOW + 2 * H)  # applied once
