"""The canonical payload written out directly is byte for byte the JSON encoder's."""

from __future__ import annotations

import json

from hypothesis import given
from hypothesis import strategies as st

from hrsync.core.gate.plan import _written_out, canonical_payload, canonical_payload_json
from hrsync.core.teams.identity import TeamRow


def team_rows(text: st.SearchStrategy[str]) -> st.SearchStrategy[list[TeamRow]]:
    row = st.builds(
        TeamRow,
        key=text,
        reference_id=text,
        name=text,
        lead_email=text,
        parent_reference_id=st.none() | text,
        parent_name=st.none() | text,
        contributors=st.lists(text, max_size=4).map(tuple),
    )
    return st.lists(row, max_size=6, unique_by=lambda r: r.reference_id)


# Nothing JSON escapes (no quote, backslash or control character), some of it beyond ASCII.
PLAIN = st.text(st.characters(blacklist_categories=("Cc", "Cs"), blacklist_characters='"\\'))
# What an export mostly holds: plain and printable, so the fast way is taken.
PRINTABLE = st.text(
    st.characters(
        blacklist_categories=("Cc", "Cf", "Cs", "Co", "Cn", "Zl", "Zp", "Zs"),
        blacklist_characters='"\\',
        whitelist_characters=" ",
    )
)
# One character JSON escapes, or one `isprintable` refuses, among printable text.
TOUCHY = st.sampled_from(['"', "\\", "\n", "\x00", "\x1f", "\x7f", "\u2028", "\u00a0", "\u200b"])
ONE_TOUCHY = st.tuples(PRINTABLE, TOUCHY, PRINTABLE).map("".join)
# Anything at all.
ANY = st.text(st.characters(codec="utf-8"))
FIELDS = ("reference_id", "name", "lead_email", "parent_reference_id", "parent_name")


@st.composite
def one_touchy_value(draw: st.DrawFn) -> list[TeamRow]:
    """Printable rows but for one value, which holds one touchy character: the case where
    the fast way's test of the whole text has to see that one character."""
    rows = draw(team_rows(PRINTABLE).filter(bool))
    i = draw(st.integers(0, len(rows) - 1))
    value = draw(ONE_TOUCHY)
    field = draw(st.sampled_from((*FIELDS, "contributors")))
    if field == "contributors":
        rows[i] = rows[i]._replace(contributors=(*rows[i].contributors, value))
    else:
        fields = rows[i]._asdict()
        fields[field] = value
        rows[i] = TeamRow(**fields)
    return rows


@given(team_rows(PLAIN))
def test_plain_text_written_out_is_the_encoders_json(rows: list[TeamRow]) -> None:
    ordered = sorted(rows, key=lambda r: r.reference_id)
    assert _written_out(ordered).encode() == canonical_payload_json(rows)


@given(one_touchy_value() | team_rows(PRINTABLE) | team_rows(PLAIN | ANY))
def test_canonical_payload_is_the_encoders_json_for_any_text(rows: list[TeamRow]) -> None:
    assert canonical_payload(rows) == canonical_payload_json(rows)
    assert canonical_payload(list(reversed(rows))) == canonical_payload(rows)


def test_a_quote_backslash_or_control_character_is_escaped() -> None:
    row = TeamRow("k", "r1", 'Ops "core"', "a\\b@x.com", None, "line\nbreak", ("\x01@x.com",))
    teams = json.loads(canonical_payload([row]))
    assert teams == [
        {
            "contributors": ["\x01@x.com"],
            "name": 'Ops "core"',
            "parent_team_name": "line\nbreak",
            "parent_team_reference_id": None,
            "reference_id": "r1",
            "team_lead_email": "a\\b@x.com",
        }
    ]
