"""Held people with the department strategy (issue 26): a held person whose row gives no
department (a join that could not say which row is theirs) stays in the unit DX had them
in, as a held person whose manager reference is the problem stays under their lead."""

from __future__ import annotations

from hrsync.core.people import read_people
from hrsync.core.settings import FilterSettings, MappingSettings
from hrsync.core.teams.held import NOTHING_KNOWN, KnownPlaces, graph_people, place_held
from hrsync.core.teams.mapping import build_teams
from tests.core.test_people import COLUMNS, FIELDS, source

MAPPING = MappingSettings(strategy="department", team_name="{department}")


def rows(marketing: str) -> list[tuple[str, ...]]:
    return [
        ("E1", "Ann", "e1@example.com", "", "Exec", "Active"),
        ("E2", "Ben", "e2@example.com", "E1", marketing, "Active"),
        ("E3", "Cat", "e3@example.com", "E2", marketing, "Active"),
    ]


def test_a_held_person_without_a_department_stays_in_the_unit_dx_had_them_in() -> None:
    before = read_people("p.csv", COLUMNS, source(rows("Marketing")), FIELDS, FilterSettings())
    first = build_teams(before.people, MAPPING, FIELDS)
    known = KnownPlaces(
        {p.employee_id: p.email for p in before.people},
        {e: t.key for t in first.teams for e in t.contributors},
    )
    # Both of Marketing's people are held and their rows give no department now.
    directory = read_people(
        "p.csv", COLUMNS, source(rows("")), FIELDS, FilterSettings(), hold_people=True,
        row_problems=[(1, _problem(1)), (2, _problem(2))],
    )  # fmt: skip
    assert [h.employee_id for h in directory.held] == ["E2", "E3"]
    people = graph_people(directory.people, directory.held, known)
    placed = place_held(build_teams(people, MAPPING, FIELDS), directory.held, known)
    teams = {t.name: (t.lead_email, tuple(t.contributors)) for t in placed.team_map.teams}
    assert teams == {
        "Exec": ("e1@example.com", ("e1@example.com",)),
        "Marketing": ("e2@example.com", ("e2@example.com", "e3@example.com")),
    }
    # Never synced: nothing known, so no unit to keep them in.
    fresh = graph_people(directory.people, directory.held, NOTHING_KNOWN)
    assert [p.department for p in fresh if p.employee_id in ("E2", "E3")] == [None, None]


def _problem(row: int):  # type: ignore[no-untyped-def]
    from hrsync.core.people import Problem

    return Problem(
        f"p.csv line {row + 2}", "DEPT", "20", "must match at most one row", holds=(row,)
    )
