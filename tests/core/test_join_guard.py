"""The join guard (issue 26): a join matching a much smaller share of the export than in
the last accepted run refuses the plan, naming the join; `--allow-shrink` or an approval
of the plan id lets it through, as for a shrunken export."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from hrsync.core.gate.guards import Go, Refuse, gate, table_trips
from hrsync.core.people.second_tables import TableCount
from hrsync.core.settings import SyncSettings
from tests.core.test_guards import plan_archiving, safety

LAST = {"departments": TableCount.join("departments", 100, 100)}


@pytest.mark.parametrize(
    ("matched", "rows", "last", "refused"),
    [
        # sync.min_people_fraction (0.8) of the share matched last time.
        (80, 100, (100, 100), False),  # 80% of 100%: the limit itself is allowed
        (79, 100, (100, 100), True),
        (40, 100, (50, 100), False),  # an optional join matching half, then 40%
        (39, 100, (50, 100), True),
        (180, 200, (100, 100), False),  # the export doubled: the share is what counts
        (0, 100, (0, 100), False),  # nothing matched last time: no baseline to fall from
        (0, 0, (100, 100), True),
    ],
)
def test_the_join_guard_at_its_threshold(
    matched: int, rows: int, last: tuple[int, int], refused: bool
) -> None:
    refusal = safety(
        plan_archiving(0),
        joins=(TableCount.join("departments", rows, matched),),
        last_joins={"departments": TableCount.join("departments", last[1], last[0])},
    )
    assert (refusal is not None) == refused
    if refusal is not None:
        assert refusal.guards == ("min_join_fraction",)
        assert refusal.override_flags == ("--allow-shrink",)


def test_the_join_guards_message_names_the_join_and_the_numbers() -> None:
    refusal = safety(
        plan_archiving(0),
        joins=(TableCount.join("departments", 107, 40),),
        last_joins={"departments": TableCount.join("departments", 107, 106)},
    )
    assert refusal is not None
    assert refusal.trips[0].message == (
        "join 'departments' matched 40 of 107 rows (37.4%); the last accepted run matched "
        "106 of 107 (99.1%), minimum 80% of that = 85 rows (sync.min_people_fraction)"
    )


def test_a_join_without_a_baseline_or_let_through_passes() -> None:
    dropped = (TableCount.join("departments", 100, 10),)
    assert safety(plan_archiving(0), joins=dropped, last_joins={}) is None
    assert safety(plan_archiving(0), joins=dropped, last_joins=None) is None
    assert safety(plan_archiving(0), joins=dropped, last_joins=LAST, allow_shrink=True) is None
    other = {"okta": TableCount.join("okta", 100, 100)}
    assert safety(plan_archiving(0), joins=dropped, last_joins=other) is None


def test_an_approval_of_the_plan_id_lets_the_join_guard_through() -> None:
    now = datetime(2026, 12, 1, tzinfo=UTC)
    plan = plan_archiving(0)
    args = {
        "snapshots": (),
        "now": now,
        "settings": SyncSettings(),
        "people_count": 100,
        "last_accepted_people": 100,
        "current_team_count": 10,
        "payload_bytes": 100,
        "joins": (TableCount.join("departments", 100, 10),),
        "last_joins": LAST,
    }
    refused = gate(plan, **args)  # type: ignore[arg-type]
    assert isinstance(refused, Refuse) and refused.tripped == ("min_join_fraction",)
    approved = gate(plan, approved={refused.refusal.plan_id or ""}, **args)  # type: ignore[arg-type]
    assert isinstance(approved, Go) and approved.approved


def test_one_call_judges_joins_and_sources_each_by_its_own_measure() -> None:
    last = {"okta": TableCount.join("okta", 100, 100), "acq": TableCount.source("acq", 10, 10)}
    now = [TableCount.join("okta", 100, 50), TableCount.source("acq", 10, 5)]
    trips = table_trips(now, last, SyncSettings())
    # Both at sync.min_people_fraction (0.8): a join of its share of the rows, a source
    # of its people.
    assert [(t.guard, t.actual, t.limit) for t in trips] == [
        ("min_join_fraction", 50, 80),
        ("min_people_fraction", 5, 8),
    ]
    # A join's count is never measured against a source's of the same name.
    assert table_trips([TableCount.join("acq", 10, 1)], last, SyncSettings()) == []
