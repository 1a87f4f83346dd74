"""The leads_left table: a team kept for a manager who left keeps its `since` while
unbroken (the late notice counts from it, across runs and restarts), and one told late
stays until its clearing is told."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from hrsync.store.leads_left import LATE
from hrsync.store.repo import LeadLeftRecord, Store

NOW = datetime(2026, 12, 1, 6, 0, tzinfo=UTC)


def gone(key: str = "manager:E22", stand_in: str = "e11@example.com") -> LeadLeftRecord:
    return LeadLeftRecord(key, "Payments", key.removeprefix("manager:"), "Kat", stand_in, 4)


def test_since_survives_runs_and_a_told_team_stays_until_its_clearing_is_told(
    store: Store,
) -> None:
    store.leads_left.replace([gone()], NOW)
    store.leads_left.replace([gone(stand_in="e2@example.com")], NOW + timedelta(days=1))
    (kept,) = store.leads_left.current()
    assert (kept.since, kept.stand_in, kept.people) == (NOW, "e2@example.com", 4)
    assert store.leads_left.people_count() == 4

    store.leads_left.told(["manager:E22"], [])
    store.leads_left.replace([], NOW + timedelta(days=5))  # HR re-pointed them
    assert store.leads_left.current() == []
    assert store.leads_left.people_count() == 0
    (cleared,) = store.leads_left.notices()
    assert cleared.notified == LATE and cleared.cleared_at == NOW + timedelta(days=5)
    store.leads_left.told([], ["manager:E22"])
    assert store.leads_left.notices() == []


def test_a_team_never_told_is_forgotten_when_it_clears_and_starts_anew(store: Store) -> None:
    store.leads_left.replace([gone(), gone("manager:E7", "")], NOW)
    assert store.leads_left.people_count() == 4  # nobody stands in for E7: those are in no team
    store.leads_left.replace([gone("manager:E7", "")], NOW + timedelta(days=1))
    assert [r.team_key for r in store.leads_left.notices()] == ["manager:E7"]
    store.leads_left.replace([gone()], NOW + timedelta(days=2))
    (again,) = store.leads_left.current()
    assert again.since == NOW + timedelta(days=2)
