"""Reading DX's `invalid_rows` refusal whatever the shape of its details
(hrsync/core/confirmation/refusal_details.py)."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from hrsync.core.confirmation.refusal_details import read_refusal, suspected_leads
from hrsync.core.teams.identity import TeamRow


def row(ref: str, lead: str, parent: str | None = None) -> TeamRow:
    name = f"Team {ref}"
    return TeamRow(f"k-{ref}", ref, name, lead, parent, f"Team {parent}" if parent else None, ())


SENT = (
    row("top", "ceo@x.com"),
    row("mid", "vp@x.com", "top"),
    row("low", "new.mgr@x.com", "mid"),
    row("side", "other.new@x.com", "top"),
)
NEW = "new.mgr@x.com"
SHOWN = frozenset({"ceo@x.com", "vp@x.com"})


@pytest.mark.parametrize(
    ("details", "message"),
    [
        # The bundled simulator's first shape: rows naming the field.
        (
            {"rows": [{"index": 2, "field": "team_lead_email", "message": "user not found"}]},
            "1 problem",
        ),
        # A reason only, the row by index and reference_id.
        (
            {
                "errors": [
                    {
                        "index": 2,
                        "reference_id": "low",
                        "reason": f"team_lead_email '{NEW}' does not belong to a known user",
                    }
                ]
            },
            "invalid",
        ),
        # The details a list; the row by reference id alone; the words another language's.
        ([{"reference_id": "low", "error": "Benutzer unbekannt: New.Mgr@x.com"}], None),
        # 1-based row numbers and a column name.
        ({"invalid": {"teams": [{"row_number": 3, "column": "team_lead_email"}]}}, None),
        # A team named by name, the problem a sentence naming the e-mail.
        ({"problems": [{"team": "Team low", "detail": f"unknown user {NEW}."}]}, None),
        # A path into the request.
        ({"errors": ["teams[2].team_lead_email: not a user"]}, None),
        # An object with a message naming the e-mail, nothing else.
        ({"message": f"lead e-mail {NEW} not in the system"}, None),
        # Only the message says it.
        (None, f"team entry invalid: lead {NEW} not in the system"),
        # A nested team.
        ({"failures": [{"team": {"reference_id": "low"}, "field": "team_lead_email"}]}, None),
    ],
)
def test_the_lead_is_found_in_any_shape(details: object, message: str | None) -> None:
    refusal = read_refusal(details, message, SENT)
    assert refusal.leads == {NEW}
    assert suspected_leads(refusal, SENT, SHOWN) == {NEW}
    for named in refusal.rows:
        assert (named.index, named.reference_id, named.lead, named.about) == (
            2,
            "low",
            NEW,
            "lead",
        )


def test_a_row_named_for_another_field_is_no_lead_problem() -> None:
    details = {"rows": [{"index": 1, "field": "parent_team_name", "message": "mismatch"}]}
    refusal = read_refusal(details, "invalid", SENT)
    (named,) = refusal.rows
    assert (named.about, named.field, named.team) == ("other", "parent_team_name", "Team mid")
    assert refusal.leads == frozenset()
    assert suspected_leads(refusal, SENT, SHOWN) is None


@pytest.mark.parametrize(
    "details",
    [None, {}, [], "", {"message": "1 team entry is invalid"}, {"code": 17}, [1, "x", None]],
)
def test_details_naming_nothing_suspect_the_new_leads_below_the_top(details: object) -> None:
    refusal = read_refusal(details, "some team entries are invalid", SENT)
    assert refusal.names_nothing
    # Never the top team's lead (nobody stands in for them), never one DX showed as a user.
    assert suspected_leads(refusal, SENT, SHOWN) == {NEW, "other.new@x.com"}


def test_a_row_named_without_a_reason_suspects_its_lead_only_when_new() -> None:
    unexplained = read_refusal({"rows": [{"index": 2}]}, None, SENT)
    assert [r.about for r in unexplained.rows] == ["unexplained"]
    assert suspected_leads(unexplained, SENT, SHOWN) == {NEW}
    known = read_refusal({"rows": [{"index": 1}]}, None, SENT)
    assert suspected_leads(known, SENT, SHOWN) == frozenset()


def test_bare_row_indexes() -> None:
    refusal = read_refusal({"invalid_rows": [2]}, None, SENT)
    assert [(r.index, r.about) for r in refusal.rows] == [(2, "unexplained")]


def test_a_contributors_email_is_not_a_lead() -> None:
    refusal = read_refusal(None, "stranger@x.com is unknown", SENT)
    assert refusal.names_nothing


def test_indexes_out_of_range_or_odd_name_no_row() -> None:
    refusal = read_refusal({"rows": [{"index": 99}, {"index": True}, {"row": -1}]}, None, SENT)
    assert refusal.rows == ()


def test_deep_details_end() -> None:
    deep: Any = {"index": 2, "field": "team_lead_email"}
    for _ in range(200):
        deep = {"inner": [deep]}
    refusal = read_refusal(deep, None, SENT)
    assert refusal.rows == ()  # beyond any sane depth: not read, and no recursion error


# ---- property: any wrapper, any key, any way of naming the row --------------------------

LEADS = [f"lead{i}@corp.example" for i in range(8)]
IDENTIFYING = {"index", "row", "idx", "position", "line", "number", "name", "team", "ref", "path"}
# Any key a server might wrap its list in, except words that would name a row themselves.
WRAPPER_KEYS = st.sampled_from(["rows", "errors", "invalid_rows", "details"]) | st.text(
    alphabet="abcdefghijklmnopqrstuvwxyz_", min_size=1, max_size=12
).filter(lambda key: not any(word in key for word in IDENTIFYING) and "reference" not in key)


@st.composite
def sent_rows(draw: st.DrawFn) -> tuple[TeamRow, ...]:
    count = draw(st.integers(2, 8))
    rows = [row("r0", LEADS[0])]
    for i in range(1, count):
        parent = f"r{draw(st.integers(0, i - 1))}"
        rows.append(row(f"r{i}", LEADS[i], parent))
    return tuple(rows)


def naming(draw: st.DrawFn, index: int, sent: tuple[TeamRow, ...]) -> object:
    """One row named in one of the ways a server might."""
    target = sent[index]
    identify = draw(st.sampled_from(["index", "row", "row_number", "reference_id", "name"]))
    ident: dict[str, object] = {
        "index": {"index": index},
        "row": {"row": index},
        "row_number": {"row_number": index + 1},
        "reference_id": {"reference_id": target.reference_id},
        "name": {"name": target.name},
    }[identify]
    say = draw(st.sampled_from(["field", "reason", "email_only", "path"]))
    if say == "path":
        return f"teams[{index}].team_lead_email: unknown"
    if say == "field":
        return {**ident, "field": "team_lead_email", "message": "not found"}
    if say == "reason":
        return {**ident, "reason": f"team_lead_email {target.lead_email!r} unknown"}
    return {**ident, "detail": f"no such user <{target.lead_email.upper()}>"}


@given(st.data())
def test_named_leads_are_found_whatever_the_wrapper(data: st.DataObject) -> None:
    sent = data.draw(sent_rows())
    indexes = data.draw(st.sets(st.integers(0, len(sent) - 1), min_size=1))
    named = [naming(data.draw, i, sent) for i in sorted(indexes)]
    details: object = named
    for key in data.draw(st.lists(WRAPPER_KEYS, max_size=3)):
        details = {key: details, "count": len(named)}
    refusal = read_refusal(details, data.draw(st.sampled_from([None, "invalid rows"])), sent)
    assert refusal.leads == {sent[i].lead_email for i in indexes}
    assert all(r.about == "lead" for r in refusal.rows)


JSON_WORDS = st.sampled_from(["message", "code", "status", "hint", "errors", "detail"])
PLAIN = st.text(alphabet="abc xyz0123.", max_size=20)
NOTHING = st.recursive(
    st.none() | st.booleans() | st.floats(allow_nan=False) | PLAIN,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(JSON_WORDS, inner, max_size=4),
    max_leaves=20,
)


@given(NOTHING, st.none() | PLAIN)
def test_details_naming_nothing_yield_nothing(details: object, message: str | None) -> None:
    sent = (row("r0", LEADS[0]), row("r1", LEADS[1], "r0"))
    assert read_refusal(details, message, sent).names_nothing
