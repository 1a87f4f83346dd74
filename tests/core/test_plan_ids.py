"""Plan ids, approvals' states and how a new plan differs from an approved one (pure)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from hrsync.core.gate.plan_ids import (
    Approval,
    PlanSummary,
    approval_for,
    difference,
    difference_line,
    normalise_plan_id,
    pending,
    plan_id,
)

T0 = datetime(2026, 11, 27, 14, 2, tzinfo=UTC)
H = timedelta(hours=1)


def summary(
    archives: tuple[str, ...] = ("A", "B"),
    people: int = 100,
    guards: tuple[str, ...] = ("max_archive",),
    **counts: int,
) -> PlanSummary:
    return PlanSummary(
        guards=guards,
        archives=archives,
        people=people,
        last_accepted_people=100,
        current_teams=20,
        counts=counts,
    )


def approval(
    plan: str = "3f9c2a11", *, at: datetime = T0, ttl: timedelta = 72 * H, **kw: object
) -> Approval:
    return Approval(
        id=int(str(kw.pop("id", 1))),
        plan_id=plan,
        approved_by="ana@example.com",
        approved_at=at,
        expires_at=at + ttl,
        **kw,  # type: ignore[arg-type]
    )


def test_a_plan_id_is_short_hex_and_ignores_the_order_of_its_parts() -> None:
    one = plan_id("d" * 64, ["max_archive", "max_archive_fraction"], ["x", "y"])
    two = plan_id("d" * 64, ["max_archive_fraction", "max_archive"], ["y", "x"])
    assert one == two and len(one) == 8 and int(one, 16) >= 0


@pytest.mark.parametrize(
    ("digest", "guards", "archived"),
    [
        ("e" * 64, ["max_archive"], ["x", "y"]),  # another payload
        ("d" * 64, ["max_archive", "min_people_fraction"], ["x", "y"]),  # another guard
        ("d" * 64, ["max_archive"], ["x", "y", "z"]),  # one more DX team archived
    ],
)
def test_a_plan_id_changes_with_what_is_sent_the_guards_and_the_archives(
    digest: str, guards: list[str], archived: list[str]
) -> None:
    assert plan_id(digest, guards, archived) != plan_id("d" * 64, ["max_archive"], ["x", "y"])


@pytest.mark.parametrize(
    ("typed", "expected"),
    [("3F9C2A11", "3f9c2a11"), (" 3f9c2a11\n", "3f9c2a11"), ("3f9c2a", None), ("zzzzzzzz", None)],
)
def test_a_typed_plan_id_is_normalised_or_refused(typed: str, expected: str | None) -> None:
    assert normalise_plan_id(typed) == expected


@pytest.mark.parametrize(
    ("now", "applied", "state"),
    [
        (T0 + H, False, "pending"),
        (T0 + 72 * H - timedelta(seconds=1), False, "pending"),
        (T0 + 72 * H, False, "expired"),
        (T0 + 100 * H, True, "applied"),
    ],
)
def test_an_approval_is_pending_until_it_expires_or_is_applied(
    now: datetime, applied: bool, state: str
) -> None:
    extra = {"applied_run_id": "r1", "applied_at": T0 + H} if applied else {}
    assert approval(**extra).state(now) == state


def test_the_newest_pending_approval_of_exactly_the_plan_is_used() -> None:
    old = approval(id=1, at=T0)
    new = approval(id=2, at=T0 + H)
    other = approval("aaaaaaaa", id=3, at=T0 + 2 * H)
    expired = approval(id=4, at=T0 - 80 * H)
    now = T0 + 3 * H
    assert [a.id for a in pending([old, new, other, expired], now)] == [3, 2, 1]
    assert approval_for([old, new, other, expired], "3f9c2a11", now) == new
    assert approval_for([expired], "3f9c2a11", now) is None


@pytest.mark.parametrize(
    ("now", "said"),
    [
        (summary(("A", "B", "C", "D")), ["2 more teams to archive", 'also archives "C", "D"']),
        (summary(("A",)), ["1 fewer team to archive", 'no longer archives "B"']),
        (summary(("A", "C")), ['also archives "C"', 'no longer archives "B"']),
        (summary(people=97), ["3 fewer people in the export"]),
        (
            summary(guards=("max_archive", "min_people_fraction")),
            ["also trips sync.min_people_fraction"],
        ),
        (summary(create=2), ["2 more teams to create"]),
        (summary(), ["the same figures, but other teams, leads or members would be sent"]),
    ],
)
def test_the_difference_names_what_changed_in_a_persons_terms(
    now: PlanSummary, said: list[str]
) -> None:
    assert difference(now, summary()) == said


def test_the_difference_line_names_the_approval_and_the_new_id() -> None:
    line = difference_line(
        "0badc0de",
        summary(("A", "B", "C", "D")),
        approval(),
        summary(),
        "hrsync approve 0badc0de",
    )
    assert line == (
        "Not the approved plan: 2 more teams to archive than plan 3f9c2a11 approved by "
        'ana@example.com at 2026-11-27 14:02 UTC; also archives "C", "D". This plan is '
        "0badc0de: review it, then approve it with: hrsync approve 0badc0de"
    )
    same = difference_line("0badc0de", summary(), approval(), summary(), "x")
    assert same.startswith(
        "Not the approved plan: this is not plan 3f9c2a11 approved by ana@example.com at "
        "2026-11-27 14:02 UTC; the same figures, but other teams, leads or members would be sent."
    )


def test_a_summary_survives_the_store() -> None:
    kept = summary(create=1)
    assert PlanSummary.from_json(kept.to_json()) == kept


def test_a_plan_holding_people_names_them_in_its_id_and_its_difference() -> None:
    # Plans that hold nobody keep the ids they always had; the people a plan holds (a
    # held person is kept where DX had them: the payload alone does not change) make
    # another id, and a difference a person reads.
    assert plan_id("d" * 64, ["max_held"], [], []) == plan_id("d" * 64, ["max_held"], [])
    held = plan_id("d" * 64, ["max_held"], [], ["E1", "E2"])
    assert held == plan_id("d" * 64, ["max_held"], [], ["E2", "E1"])
    assert held != plan_id("d" * 64, ["max_held"], [], ["E1", "E3"])
    now = summary(guards=("max_held",), held=6)
    assert difference(now, summary(guards=("max_held",), held=5)) == ["1 more person held"]


def test_the_attribute_guard_is_named_by_its_own_setting() -> None:
    now = summary(guards=("max_change_fraction",))
    clauses = difference(now, summary())
    assert "also trips attributes.max_change_fraction" in clauses
    assert "no longer trips sync.max_archive" in clauses
