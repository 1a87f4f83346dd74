"""Teams under DX's reporting floor at the next snapshot (pure): counted as DX counts,
named with their people, capped in messages, complete in JSON."""

from __future__ import annotations

from collections.abc import Mapping
from datetime import date

import pytest
from hypothesis import given
from hypothesis import strategies as st

from hrsync.core.gate.reporting_floor import (
    PEOPLE_SHOWN,
    REPORTING_FLOOR,
    SmallTeam,
    Team,
    floor_document,
    floor_lines,
    under_floor,
)
from hrsync.core.gate.snapshot_ahead import NextSnapshot
from hrsync.core.listing import LIMIT

SNAP = NextSnapshot("snap-dec", date(2026, 12, 7))


def team(name: str, *people: str) -> Team:
    return (name, f"ref-{name}", people)


@pytest.mark.parametrize(
    ("teams", "known", "small", "unsure"),
    [
        ([], {}, [], 0),
        ([team("A", "a", "b", "c")], {}, [], 1),  # three, none known yet: may fall under
        ([team("A", "a", "b", "c")], {"a": True, "b": True, "c": True}, [], 0),
        ([team("A", "a", "b")], {}, [SmallTeam("A", "ref-A", ("a", "b"), ())], 0),
        # a person known not to be a DX user does not count
        (
            [team("A", "a", "b", "c")],
            {"a": True, "b": True, "c": False},
            [SmallTeam("A", "ref-A", ("a", "b"), ("c",))],
            0,
        ),
        # an empty team and one with a duplicate e-mail: counted once
        ([team("E")], {}, [SmallTeam("E", "ref-E", (), ())], 0),
        ([team("D", "a", "a", "b")], {}, [SmallTeam("D", "ref-D", ("a", "b"), ())], 0),
        # named in order, whatever the input's
        (
            [team("Z", "z"), team("B", "b")],
            {},
            [SmallTeam("B", "ref-B", ("b",), ()), SmallTeam("Z", "ref-Z", ("z",), ())],
            0,
        ),
    ],
)
def test_under_floor(
    teams: list[Team], known: Mapping[str, bool | None], small: list[SmallTeam], unsure: int
) -> None:
    floor = under_floor(SNAP, teams, known)
    assert floor is not None
    assert list(floor.teams) == small
    assert floor.unsure == unsure and floor.lower_bound == (unsure > 0)


def test_nothing_without_a_snapshot_ahead() -> None:
    assert under_floor(None, [team("A", "a")], {}) is None
    assert floor_lines(None) == [] and floor_document(None) is None


EMAILS = st.sampled_from([f"p{i}@example.com" for i in range(8)])


@given(
    st.lists(st.lists(EMAILS, max_size=6), max_size=6),
    st.dictionaries(EMAILS, st.none() | st.booleans()),
)
def test_a_team_is_named_exactly_when_dx_counts_fewer_than_three(
    members: list[list[str]], known: dict[str, bool | None]
) -> None:
    teams = [team(f"T{i}", *people) for i, people in enumerate(members)]
    floor = under_floor(SNAP, teams, known)
    assert floor is not None
    named = {t.name for t in floor.teams}
    unsure = 0
    for name, _, people in teams:
        may_count = {p for p in people if known.get(p) is not False}
        surely = {p for p in people if known.get(p) is True}
        assert (name in named) == (len(may_count) < REPORTING_FLOOR)
        unsure += len(may_count) >= REPORTING_FLOOR > len(surely)
    assert floor.unsure == unsure
    for small in floor.teams:
        assert not set(small.counted) & set(small.not_dx_users)
        assert all(known.get(p) is False for p in small.not_dx_users)


def test_the_message_names_teams_and_people_says_dx_leaves_them_out_and_how_to_fold() -> None:
    floor = under_floor(
        SNAP,
        [team("Mobile Android", "zainab@x", "oliver@x"), team("Big", "a", "b", "c")],
        {"a": True, "b": True},
    )
    text = "\n".join(floor_lines(floor))
    assert text.startswith(
        "1 team will have fewer than 3 counted contributors at snapshot snap-dec (2026-12-07):"
        " DX leaves it out of the snapshot's results."
    )
    assert '- "Mobile Android": 2 (oliver@x, zainab@x)' in text
    assert "At least these: 1 more team may fall under it too" in text
    assert "mapping.min_team_size = 3" in text


def test_the_message_is_capped_and_the_json_is_not() -> None:
    many = [team(f"T{i:02}", "a") for i in range(LIMIT + 5)]
    crowded = team("Crowd", "a", *(f"gone{i}" for i in range(PEOPLE_SHOWN + 3)))
    known = {f"gone{i}": False for i in range(PEOPLE_SHOWN + 3)}
    floor = under_floor(SNAP, [*many, crowded], known)
    lines = floor_lines(floor)
    assert sum(line.lstrip().startswith("- ") for line in lines) == LIMIT
    assert "… and 6 more" in "\n".join(lines)
    assert "not DX users: gone0" in floor.teams[0].people and "and 3 more" in floor.teams[0].people
    doc = floor_document(floor)
    assert doc is not None and len(doc["teams"]) == LIMIT + 6
    assert doc["floor"] == 3 and doc["scheduled_for"] == "2026-12-07"
    assert len(doc["teams"][0]["not_dx_users"]) == PEOPLE_SHOWN + 3
