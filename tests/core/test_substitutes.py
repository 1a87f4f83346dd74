"""Stand-in leads for teams whose lead DX does not know yet (hrsync/core/teams/substitutes.py)."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from hrsync.core.teams.identity import TeamRow
from hrsync.core.teams.substitutes import LeadSubstitute, substitute_leads


def row(ref: str, lead: str, parent: str | None = None) -> TeamRow:
    return TeamRow(f"k-{ref}", ref, f"Team {ref}", lead, parent, f"Team {parent}", ("m@x.com",))


TOP = row("top", "ceo@x.com")
MID = row("mid", "vp@x.com", "top")
LOW = row("low", "mgr@x.com", "mid")


def test_nothing_unknown_changes_nothing() -> None:
    assert substitute_leads([TOP, MID, LOW], []) == ((TOP, MID, LOW), ())


def test_the_parents_lead_stands_in_and_the_team_keeps_the_rest() -> None:
    result = substitute_leads([TOP, MID, LOW], ["MGR@x.com"])
    assert result is not None
    rows, substitutes = result
    assert rows == (TOP, MID, LOW._replace(lead_email="vp@x.com"))
    assert substitutes == (LeadSubstitute("low", "Team low", "mgr@x.com", "vp@x.com"),)


def test_when_the_parents_lead_is_unknown_too_the_next_one_up_stands_in() -> None:
    result = substitute_leads([TOP, MID, LOW], ["vp@x.com", "mgr@x.com"])
    assert result is not None
    rows, substitutes = result
    assert [r.lead_email for r in rows] == ["ceo@x.com", "ceo@x.com", "ceo@x.com"]
    assert [(s.lead_email, s.substitute_email) for s in substitutes] == [
        ("vp@x.com", "ceo@x.com"),
        ("mgr@x.com", "ceo@x.com"),
    ]


def test_a_top_team_has_nobody_to_stand_in() -> None:
    assert substitute_leads([TOP, MID], ["ceo@x.com"]) is None


def test_a_parent_outside_the_rows_cannot_stand_in() -> None:
    assert substitute_leads([LOW], ["mgr@x.com"]) is None


@st.composite
def forests(draw: st.DrawFn) -> tuple[list[TeamRow], set[str]]:
    """Rows parents first (each parent an earlier row, or none), leads from a small pool
    so that one person may lead several teams, and a set of leads DX does not know."""
    count = draw(st.integers(1, 12))
    leads = [f"p{i}@x.com" for i in range(6)]
    rows: list[TeamRow] = []
    for i in range(count):
        parent = draw(st.none() | st.integers(0, i - 1)) if i else None
        lead = draw(st.sampled_from(leads))
        rows.append(row(f"t{i}", lead, None if parent is None else f"t{parent}"))
    unknown = draw(st.sets(st.sampled_from(leads)))
    return rows, unknown


def nearest_known_lead_above(rows: list[TeamRow], index: int, unknown: set[str]) -> str | None:
    """The reference: walk up the parents until a team whose own HR lead DX knows."""
    by_ref = {r.reference_id: r for r in rows}
    parent = rows[index].parent_reference_id
    while parent is not None:
        above = by_ref[parent]
        if above.lead_email not in unknown:
            return above.lead_email
        parent = above.parent_reference_id
    return None


@given(forests())
def test_each_stand_in_is_the_nearest_lead_above_whom_dx_knows(
    forest: tuple[list[TeamRow], set[str]],
) -> None:
    rows, unknown = forest
    expected = [
        nearest_known_lead_above(rows, i, unknown) if r.lead_email in unknown else r.lead_email
        for i, r in enumerate(rows)
    ]
    result = substitute_leads(rows, unknown)
    if None in expected:
        assert result is None
        return
    assert result is not None
    out, substitutes = result
    assert [r.lead_email for r in out] == expected
    # Only the lead changes: names, members, parents and reference_ids stay.
    assert [r._replace(lead_email="") for r in out] == [r._replace(lead_email="") for r in rows]
    assert [s.reference_id for s in substitutes] == [
        r.reference_id for r in rows if r.lead_email in unknown
    ]
    assert all(s.substitute_email not in unknown for s in substitutes)
