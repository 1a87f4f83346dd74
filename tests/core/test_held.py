"""Held people (pure): which problems hold one person and which refuse the export, and
how a held person keeps what DX last verifiably had for them."""

from __future__ import annotations

from collections.abc import Sequence

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hrsync.core.export.rows import Several, SourceRow
from hrsync.core.people import Directory, read_people
from hrsync.core.settings import FilterSettings, MappingSettings
from hrsync.core.teams.held import (
    NOTHING_KNOWN,
    PLACEHOLDER_DOMAIN,
    KnownPlaces,
    graph_people,
    held_refusal,
    place_held,
)
from hrsync.core.teams.mapping import TeamMap, build_teams
from tests.core.test_people import COLUMNS, FIELDS, ORG, row, source

MAPPING = MappingSettings(team_name="{lead_name}")


def read_held(rows: Sequence[Sequence[str]]) -> Directory:
    return read_people(
        "people.csv", COLUMNS, source(rows), FIELDS, FilterSettings(), hold_people=True
    )


def teams(directory: Directory, known: KnownPlaces = NOTHING_KNOWN) -> tuple[TeamMap, tuple]:
    people = graph_people(directory.people, directory.held, known)
    placed = place_held(build_teams(people, MAPPING, FIELDS), directory.held, known)
    return placed.team_map, placed.holds


def known_from(team_map: TeamMap, directory: Directory) -> KnownPlaces:
    """What the store keeps after DX verifiably took `team_map`."""
    return KnownPlaces(
        {p.employee_id: p.email for p in directory.people},
        {email: t.key for t in team_map.teams for email in t.contributors},
    )


def membership(team_map: TeamMap) -> dict[str, tuple[str, str | None, tuple[str, ...]]]:
    return {t.key: (t.lead_email, t.parent_key, tuple(t.contributors)) for t in team_map.teams}


@pytest.mark.parametrize(
    ("changed", "held", "says"),
    [
        (row("E3", "E1", email=""), ["E3"], "must not be empty"),
        (row("E3", "E1", email="e3@"), ["E3"], "must be an e-mail address"),
        (row("E3", "E9"), ["E3"], "matches nobody"),
        (row("E3", "E3"), ["E3"], "cannot be their own manager"),
        (row("E3", "E1", email="e2@example.com"), ["E2", "E3"], "must be unique"),
        (row("E2", "E1", email="e3@example.com"), ["E2", "E3"], "must be unique"),
        (row("E2", "E5"), ["E2", "E4", "E5"], "reporting cycle"),
    ],
)
def test_a_problem_of_one_row_holds_those_people_and_reads_everyone_else(
    changed: Sequence[str], held: list[str], says: str
) -> None:
    rows = [r if r[0] != changed[0] else tuple(changed) for r in ORG]
    directory = read_held(rows)
    assert directory.ok, directory.problems
    assert sorted(h.key for h in directory.held) == held
    assert all(says in h.detail for h in directory.held if h.key == changed[0])
    kept = {p.employee_id for p in directory.people}
    assert kept == {r[0] for r in ORG} - set(held)


def test_a_blank_id_is_held_by_its_email_and_a_duplicate_id_holds_both_rows() -> None:
    directory = read_held([*ORG, row("", "E1", email="x@example.com"), row("E5", "E1")])
    assert directory.ok
    assert [(h.key, h.node) for h in directory.held] == [
        ("E5", True),
        ("x@example.com", False),
        ("E5", False),
    ]


def test_a_problem_of_the_export_refuses_it_whole_with_every_problem() -> None:
    control = ("E6", "Bad\x1bName", "e6@example.com", "E1", "Eng", "Active")
    directory = read_held([*ORG, control, row("E7", "E1", email="")])
    assert not directory.ok and directory.held == ()
    assert len(directory.problems) == 2


def test_without_hold_people_every_problem_refuses_the_export() -> None:
    rows = [*ORG, row("E7", "E1", email="")]
    directory = read_people("people.csv", COLUMNS, source(rows), FIELDS, FilterSettings())
    assert not directory.ok and directory.held == ()


def test_a_held_person_dx_had_keeps_their_team_and_a_held_lead_keeps_leading() -> None:
    before_directory = read_held(ORG)
    before, _ = teams(before_directory)
    known = known_from(before, before_directory)
    # E2 leads E4 (who leads E5); E4's e-mail breaks, E3's manager breaks.
    rows = [
        *ORG[:2],
        row("E3", "E9"),
        row("E4", "E2", email="e4@"),
        ORG[4],
    ]
    directory = read_held(rows)
    after, holds = teams(directory, known)
    assert membership(after) == membership(before)
    kept = {h.person.key: h.kept for h in holds}
    assert kept == {
        "E3": "DX keeps them in 'Person E1'",
        "E4": "DX keeps them in 'Person E2', leading 'Person E4'",
    }


def test_a_held_person_never_synced_is_not_sent_and_a_new_held_lead_is_stood_in_for() -> None:
    rows = [*ORG, row("E6", "E1", email=""), row("E7", "E6"), row("E8", "E6")]
    directory = read_held(rows)
    after, holds = teams(directory)
    (hold,) = holds
    assert hold.dx_email is None and hold.stood_in == (("Person E6", "e1@example.com"),)
    new = next(t for t in after.teams if t.key == "manager:E6")
    assert new.lead_email == "e1@example.com"
    assert new.contributors == ("e7@example.com", "e8@example.com")
    sent = {e for t in after.teams for e in (t.lead_email, *t.contributors)}
    assert not any(PLACEHOLDER_DOMAIN in e for e in sent)


def test_a_top_lead_never_synced_cannot_be_held() -> None:
    directory = read_held([row("E1", email=""), *ORG[1:]])
    after, _ = teams(directory)
    (problem,) = after.problems
    assert "cannot be held" in problem.expected and "must not be empty" in problem.expected


@pytest.mark.parametrize(
    ("held", "people", "allowed", "refused"),
    [
        (1, 40, None, None),
        (2, 40, None, None),  # a duplicate e-mail in a small org is no broken export
        (3, 40, None, None),  # ... nor is a typo beside it
        (4, 149, None, None),
        (5, 40, None, "sync.max_held_fraction"),
        (5, 200, None, "sync.max_held_fraction"),
        (5, 250, None, None),
        (3, 200, None, None),
        (26, 10_000, None, "sync.max_held (25)"),
        (3, 40, 3, None),
        (4, 40, 3, "--allow-held 3"),
    ],
)
def test_the_held_guard(held: int, people: int, allowed: int | None, refused: str | None) -> None:
    why = held_refusal(held, people, 25, 0.02, allowed)
    assert (why is None) == (refused is None)
    if refused is not None:
        assert why is not None and refused in why


def test_a_share_just_over_the_limit_reads_as_more_than_it() -> None:
    why = held_refusal(5, 249, 25, 0.02)
    assert why is not None and "(2.01%)" in why and "(2.0%)" in why


# ------------------------------------------------------------------ property


@st.composite
def orgs_and_a_broken_row(draw: st.DrawFn) -> tuple[list[tuple[str, ...]], int, str]:
    """A valid org (a tree under E0) and one row to break, and how."""
    n = draw(st.integers(min_value=2, max_value=25))
    rows = [row("E0")]
    for i in range(1, n):
        rows.append(row(f"E{i}", f"E{draw(st.integers(0, i - 1))}"))
    broken = draw(st.integers(1, n - 1))
    how = draw(st.sampled_from(["no_email", "bad_email", "unknown_manager", "own_manager"]))
    return rows, broken, how


@settings(max_examples=150, deadline=None)
@given(orgs_and_a_broken_row())
def test_breaking_one_synced_persons_row_changes_nothing_dx_has(
    case: tuple[list[tuple[str, ...]], int, str],
) -> None:
    """Whatever breaks in one synced person's row (their e-mail, their manager), the teams
    sent are exactly those DX took before: the person, their team and their reports stay."""
    rows, broken, how = case
    before_directory = read_held(rows)
    before, _ = teams(before_directory)
    known = known_from(before, before_directory)
    eid, _, email, manager, *rest = rows[broken]
    changed = {
        "no_email": (eid, f"Person {eid}", "", manager, *rest),
        "bad_email": (eid, f"Person {eid}", email.replace("@", ""), manager, *rest),
        "unknown_manager": (eid, f"Person {eid}", email, "E999", *rest),
        "own_manager": (eid, f"Person {eid}", email, eid, *rest),
    }[how]
    directory = read_held([*rows[:broken], changed, *rows[broken + 1 :]])
    assert [h.key for h in directory.held] == [eid]
    after, holds = teams(directory, known)
    assert not after.problems
    assert membership(after) == membership(before)
    assert holds[0].dx_email == email


def test_an_over_long_value_of_a_held_lead_never_names_their_team() -> None:
    long_department = "D" * 70_000
    lead = ("E2", "Person E2", "e2@example.com", "E1", long_department, "Active")
    directory = read_held([ORG[0], lead, *ORG[2:]])
    assert [h.key for h in directory.held] == ["E2"]
    mapping = MappingSettings(team_name="{department}")
    people = graph_people(directory.people, directory.held, NOTHING_KNOWN)
    team_map = place_held(build_teams(people, mapping, FIELDS), directory.held, NOTHING_KNOWN)
    names = [t.name for t in team_map.team_map.teams]
    assert all(len(name) < 100 for name in names), [len(n) for n in names]


def several_managers(
    rows: Sequence[Sequence[str]], at: int, values: tuple[str, ...]
) -> list[SourceRow]:
    """`rows` as read, row `at`'s Manager ID several values of a JSON list."""
    read = source(rows)
    joined = "; ".join(values)
    read[at] = SourceRow(
        read[at].location,
        {**read[at].values, "Manager ID": joined},
        {"Manager ID": Several(values, "positions[0].manager_id")},
    )
    return read


def test_several_values_hold_that_person_and_name_the_values_and_a_pick() -> None:
    rows = [row("E1"), row("E2", "E1"), row("E3", "E1"), row("E4", "E2")]
    read = several_managers(rows, 2, ("E1", "E2"))
    directory = read_people(
        "people.json", COLUMNS, read, FIELDS, FilterSettings(), hold_people=True
    )
    assert directory.ok
    assert [p.employee_id for p in directory.people] == ["E1", "E2", "E4"]
    (held,) = directory.held
    assert held.employee_id == "E3" and not held.manager_usable
    # One problem, not also "matches nobody" for the joined text.
    (problem,) = held.problems
    assert problem.field == "Manager ID"
    assert "holds several values: 'E1', 'E2'" in held.detail
    assert "'positions[0].manager_id'" in held.detail
    assert "'positions[key=value].manager_id'" in held.detail

    refused = read_people("people.json", COLUMNS, read, FIELDS, FilterSettings())
    assert not refused.ok and "holds several values" in str(refused.problems[0])


def test_several_values_only_matter_in_a_used_column_of_a_kept_row() -> None:
    rows = [row("E1"), row("E2", "E1"), row("E3", "E1", status="Terminated")]
    read = several_managers(rows, 2, ("E1", "E2"))
    read[1] = SourceRow(
        read[1].location, read[1].values, {"Title": Several(("a", "b"), "titles[0]")}
    )
    directory = read_people(
        "people.json", COLUMNS, read, FIELDS, FilterSettings(), hold_people=True
    )
    assert directory.ok and not directory.held
    assert [p.employee_id for p in directory.people] == ["E1", "E2"]


def test_a_long_list_of_several_values_is_capped() -> None:
    values = tuple(f"E{i}" for i in range(10, 40))
    read = several_managers([row("E1"), row("E2", "E1")], 1, values)
    directory = read_people(
        "people.json", COLUMNS, read, FIELDS, FilterSettings(), hold_people=True
    )
    (held,) = directory.held
    assert "'E13', 'E14' and 25 more; pick one" in held.detail


def test_several_managers_are_no_unknown_manager_with_top() -> None:
    read = several_managers([row("E1"), row("E2", "E1"), row("E3", "E1")], 2, ("E1", "E2"))
    directory = read_people(
        "people.json",
        COLUMNS,
        read,
        FIELDS,
        FilterSettings(),
        unknown_manager="top",
        hold_people=True,
    )
    assert [h.employee_id for h in directory.held] == ["E3"]
    assert directory.unknown_managers == () and directory.warnings == ()


def test_one_person_held_past_allow_held_reads_as_one_person() -> None:
    why = held_refusal(1, 40, 25, 0.02, allowed=0)
    assert why == "1 person would be held, more than --allow-held 0 lets through"
