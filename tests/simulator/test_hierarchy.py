"""Pure pieces of the import: cycle detection and the full-replacement apply."""

from __future__ import annotations

import itertools
from datetime import UTC, datetime

from hypothesis import given
from hypothesis import strategies as st

from hrsync.simulator.hierarchy import find_cycle, teams_payload_size, validate_teams
from hrsync.simulator.importer import apply_import
from hrsync.simulator.records import HierarchyRow, IdMint, TeamRecord, UserRecord

AT = datetime(2026, 11, 22, tzinfo=UTC)


def row(
    ref: str, parent: str | None, lead: str = "a@x.example", name: str | None = None
) -> HierarchyRow:
    return HierarchyRow(
        0, name or ref.upper(), ref, lead, parent, parent.upper() if parent else None, ()
    )


# Each node picks a parent among all nodes or none: any graph with out-degree <= 1.
parent_maps = st.integers(min_value=1, max_value=8).flatmap(
    lambda n: st.lists(st.one_of(st.none(), st.integers(0, n - 1)), min_size=n, max_size=n)
)


def has_cycle(parents: list[int | None]) -> bool:
    for start in range(len(parents)):
        node: int | None = start
        for _ in range(len(parents) + 1):
            if node is None:
                break
            node = parents[node]
        if node is not None:
            return True
    return False


@given(parent_maps)
def test_find_cycle_finds_exactly_the_cyclic_hierarchies(parents: list[int | None]) -> None:
    rows = [row(f"t{i}", None if p is None else f"t{p}") for i, p in enumerate(parents)]
    cycle = find_cycle(rows)
    assert bool(cycle) == has_cycle(parents)
    if cycle:
        parent_of = {r.reference_id: r.parent_reference_id for r in rows}
        assert cycle[0] == cycle[-1]
        assert all(parent_of[a] == b for a, b in itertools.pairwise(cycle))


def test_payload_size_is_compact_utf8_json() -> None:
    assert teams_payload_size([{"name": "Zürich"}]) == len('[{"name":"Zürich"}]'.encode())


def test_validate_accepts_a_tree() -> None:
    teams = [
        {
            "name": "A",
            "reference_id": "a",
            "team_lead_email": "l@x.example",
            "parent_team_reference_id": None,
            "parent_team_name": None,
            "contributors": [],
        },
        {
            "name": "B",
            "reference_id": "b",
            "team_lead_email": "L@X.example",
            "parent_team_reference_id": "a",
            "parent_team_name": "A",
            "contributors": ["z@x.example"],
        },
    ]
    rows = validate_teams(teams, lambda email: email.casefold() == "l@x.example")
    assert isinstance(rows, tuple)
    assert [(r.reference_id, r.parent_reference_id) for r in rows] == [("a", None), ("b", "a")]


users = {"a@x.example": UserRecord("U1", "A", "a@x.example")}


@given(parent_maps.filter(lambda parents: not has_cycle(parents)), st.sets(st.integers(0, 10)))
def test_apply_makes_the_active_teams_exactly_the_request(
    parents: list[int | None], existing: set[int]
) -> None:
    mint = IdMint(1)
    teams: dict[str, TeamRecord] = {}
    for number in existing:
        team_id = mint.mint()
        teams[team_id] = TeamRecord(team_id, f"old {number}", f"t{number}", None, "U1", [], AT)
    web_app_id = mint.mint()
    teams[web_app_id] = TeamRecord(web_app_id, "web", None, None, "U1", [], AT)
    before_ids = {team.reference_id: team.id for team in teams.values()}
    rows = [row(f"t{i}", None if p is None else f"t{p}") for i, p in enumerate(parents)]
    apply_import(teams, rows, users, {"U1": users["a@x.example"]}, AT, mint.mint)
    active = {team.reference_id: team for team in teams.values() if team.archived_at is None}
    assert set(active) == {r.reference_id for r in rows}
    for r in rows:
        team = active[r.reference_id]
        assert team.name == r.name
        expected_parent = active[r.parent_reference_id].id if r.parent_reference_id else None
        assert team.parent_id == expected_parent
        if r.reference_id in before_ids:
            assert team.id == before_ids[r.reference_id]
    assert teams[web_app_id].archived_at == AT
    assert len({team.id for team in teams.values()}) == len(teams)
