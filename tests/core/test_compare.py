"""hrsync/core/gate/compare.py: a desired row against DX's team, as plan and verify judge it."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from hrsync.core.confirmation.verify import check_convergence
from hrsync.core.gate.compare import ROOT, DxParent, compare, index_dx
from hrsync.core.gate.plan import Move, Rename, make_plan
from hrsync.core.teams.identity import TeamRow
from hrsync.dx.models import DxTeam

SENTINEL = "LTE"


def row(ref: str, name: str, parent: str | None = None) -> TeamRow:
    return TeamRow(
        key=f"manager:{ref}",
        reference_id=ref,
        name=name,
        lead_email=f"lead-{ref}@example.com",
        parent_reference_id=parent,
        parent_name=None if parent is None else f"Team {parent}",
        contributors=(),
    )


def dx(team_id: str, ref: str | None, name: str, parent_id: str | None = SENTINEL) -> DxTeam:
    return DxTeam(id=team_id, name=name, parent_id=parent_id, reference_id=ref)


PARENT = dx("p1", "P", "Team P")
OTHER = dx("o1", "O", "Team O")

CASES: dict[str, tuple[TeamRow, DxTeam, list[DxTeam], bool, bool, DxParent]] = {
    "same root team": (row("A", "A"), dx("a1", "A", "A"), [], False, False, ROOT),
    "no parent_id is root": (row("A", "A"), dx("a1", "A", "A", None), [], False, False, ROOT),
    "own id as parent is root": (row("A", "A"), dx("a1", "A", "A", "a1"), [], False, False, ROOT),
    "renamed": (row("A", "New"), dx("a1", "A", "Old"), [], True, False, ROOT),
    "a case change is a rename": (row("A", "x"), dx("a1", "A", "X"), [], True, False, ROOT),
    "same parent by reference_id": (
        row("A", "A", parent="P"),
        dx("a1", "A", "A", "p1"),
        [PARENT],
        False,
        False,
        DxParent("p1", "P", "Team P"),
    ),
    "root in DX, a child in the row": (
        row("A", "A", parent="P"),
        dx("a1", "A", "A"),
        [PARENT],
        False,
        True,
        ROOT,
    ),
    "a child in DX, root in the row": (
        row("A", "A"),
        dx("a1", "A", "A", "p1"),
        [PARENT],
        False,
        True,
        DxParent("p1", "P", "Team P"),
    ),
    "another parent": (
        row("A", "A", parent="P"),
        dx("a1", "A", "A", "o1"),
        [PARENT, OTHER],
        False,
        True,
        DxParent("o1", "O", "Team O"),
    ),
    "a parent_id naming no given team is root": (
        row("A", "A", parent="P"),
        dx("a1", "A", "A", "gone"),
        [PARENT],
        False,
        True,
        ROOT,
    ),
}


@pytest.mark.parametrize("case", list(CASES))
def test_compare(case: str) -> None:
    desired, team, others, renamed, moved, parent = CASES[case]
    seen = compare(desired, team, index_dx([team, *others]))
    assert (seen.renamed, seen.moved, seen.parent, seen.name) == (renamed, moved, parent, team.name)


def test_the_smallest_id_holds_a_shared_reference_id_and_the_others_are_shadowed() -> None:
    teams = index_dx([dx("b", "R", "B"), dx("a", "R", "A"), dx("c", None, "C"), dx("a", "R", "A2")])
    assert teams.by_ref["R"].id == "a"
    assert teams.by_ref["R"].name == "A"  # a team listed twice counts once: the first
    assert [t.id for t in teams.shadowed] == ["b"]
    assert set(teams.by_id) == {"a", "b", "c"}


NAMES = st.sampled_from(["A", "B", "Team A"])
REFS = st.sampled_from(["R1", "R2", "R3"])
PARENT_IDS = st.one_of(st.none(), st.sampled_from([SENTINEL, "d1", "d2", "d3", "gone"]))


@given(
    st.lists(st.tuples(REFS, NAMES, st.one_of(st.none(), REFS)), min_size=1, max_size=3),
    st.lists(st.tuples(st.sampled_from(["d1", "d2", "d3"]), REFS, NAMES, PARENT_IDS), max_size=4),
)
def test_plan_and_verify_see_the_same_renames_and_moves(
    rows: list[tuple[str, str, str | None]], teams: list[tuple[str, str, str, str | None]]
) -> None:
    desired = list({ref: row(ref, name, parent) for ref, name, parent in rows}.values())
    current = [dx(team_id, ref, name, parent_id) for team_id, ref, name, parent_id in teams]
    plan = make_plan(desired, current, {})
    check = check_convergence(desired, [], current)
    assert {c.reference_id for c in plan.changes if isinstance(c, Rename)} == {
        m.reference_id for m in check.wrong_names
    }
    assert {c.reference_id for c in plan.changes if isinstance(c, Move)} == {
        m.reference_id for m in check.wrong_parents
    }
