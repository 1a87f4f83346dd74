"""Tests for hrsync/core/export/templates.py: placeholders, filters, and what is refused."""

from __future__ import annotations

import sys

import pytest
from hypothesis import given
from hypothesis import strategies as st

from hrsync.core.export.templates import FILTERS, Template, check_template, template_names
from hrsync.core.settings import FieldSettings, MappingSettings
from hrsync.core.teams.mapping import build_teams
from tests.strategies import make_person

ROW = {"Office": "  São  Paulo ", "Cost Center": " CC-42 ", "Full Name": "Ana María López"}


@pytest.mark.parametrize(
    ("template", "rendered"),
    [
        ("{Office}", "São Paulo"),
        ("{Office|upper}", "SÃO PAULO"),
        ("{Office|lower}", "são paulo"),
        ("{Office|ascii}", "Sao Paulo"),
        ("{Office|nospace}", "SãoPaulo"),
        ("{Office|ascii|nospace|lower}", "saopaulo"),
        ("{Cost Center|strip}", "CC-42"),
        ("{Full Name|first}", "Ana"),
        ("{Full Name|last}", "López"),
        ("{Full Name|initial}.{Full Name|last}", "A.López"),
        ("{ Full Name | initial }", "A"),
        ("{Missing}", ""),
        ("{Missing|first}", ""),
        ("{Missing|initial}", ""),
        ("{{literal}} {Office}", "{literal} São Paulo"),
        ("x {Missing} y", "x y"),
    ],
)
def test_render(template: str, rendered: str) -> None:
    assert Template(template).render(lambda name: ROW.get(name, "")) == rendered


@pytest.mark.parametrize(
    ("template", "fragment"),
    [
        ("{Ofice}", "did you mean {Office}?"),
        ("{Office|uper}", "did you mean upper?"),
        ("{Office|shout}", "not one of lower, upper"),
        ("{Office|}", "uses the filter ''"),
        ("{}", "positional placeholder"),
        ("{Office:>3}", "no format spec"),
        ("{Office", "is not a valid template"),
        ("{{Office}}", "has no placeholder"),
        (" ", "is empty"),
    ],
)
def test_check_template_names_the_problem(template: str, fragment: str) -> None:
    problems = check_template(template, ["Office", "Cost Center"], where="attributes.Location")
    assert any(fragment in p for p in problems), problems
    assert all(p.startswith("attributes.Location") for p in problems)


def test_check_template_accepts_columns_with_filters() -> None:
    assert check_template("{Cost Center|strip|upper} ({Office})", ROW, where="x") == []


def test_names_leave_the_filters_off() -> None:
    assert template_names("{Office|lower} {Cost Center | strip} {Office}") == (
        "Office",
        "Cost Center",
    )
    assert template_names("{Title|upper} {lead_name}") == ("Title", "lead_name")
    assert template_names("{broken") == ()


def test_team_names_take_filters() -> None:
    people = [
        make_person("E1", "Ada Okafor", None, "Eng"),
        make_person("E2", "Ben Lee", "E1", "Eng"),
    ]
    teams = build_teams(
        people, MappingSettings(team_name="{lead_name|first|upper}"), FieldSettings()
    )
    assert [t.name for t in teams.teams] == ["ADA"]


@given(st.text(), st.sampled_from(sorted(FILTERS)))
def test_filters_never_grow_whitespace_or_fail(value: str, name: str) -> None:
    out = Template("{v|" + name + "}").render(lambda _: value)
    assert out == " ".join(out.split())


def test_no_case_mapping_or_strip_puts_whitespace_into_a_word() -> None:
    # Template.on_columns skips its whitespace pass for words (first, last, initial,
    # nospace) passed on through lower, upper or strip: this holds for every character.
    grown = [
        (hex(code), name)
        for code in range(sys.maxunicode + 1)
        if not (char := chr(code)).isspace()
        for name in ("lower", "upper", "strip")
        if (out := FILTERS[name](char)).split() != [out]
    ]
    assert grown == []


def test_a_lower_cased_character_lower_cases_to_itself() -> None:
    # Template.lower_case trusts a text of lower-cased pieces and lower-case literals to be
    # lower case as a whole: each character of a lower-cased character is its own lower case
    # (and the one rule that looks at neighbours, for a capital sigma, meets none).
    moved = [
        hex(code)
        for code in range(sys.maxunicode + 1)
        if any(char.lower() != char for char in chr(code).lower())
    ]
    assert moved == []


# ------------------------------------------- a fallback: {A || B}, the first non-empty

FALLBACK_ROWS = [
    {"Pref": "Bea", "Legal": "Beatrix", "Last": "Ng"},
    {"Pref": "", "Legal": "Carl", "Last": "Otto"},
    {"Pref": "  ", "Legal": "Dora", "Last": "Puck"},
    {"Pref": "", "Legal": "", "Last": ""},
]


@pytest.mark.parametrize(
    ("template", "rendered"),
    [
        ("{Pref || Legal} {Last}", ["Bea Ng", "Carl Otto", "Dora Puck", ""]),
        ("{Pref|upper || Legal|lower}", ["BEA", "carl", "dora", ""]),
        ("{Pref||Legal|initial}.{Last}", ["Bea.Ng", "C.Otto", "D.Puck", "."]),
        ("{Pref || Pref || Legal}", ["Bea", "Carl", "Dora", ""]),
    ],
)
def test_a_placeholder_falls_back_to_the_next_column_when_empty(
    template: str, rendered: list[str]
) -> None:
    parsed = Template(template)
    by_row = [parsed.render(lambda name, row=row: row[name]) for row in FALLBACK_ROWS]
    assert by_row == rendered
    at_once = parsed.on_columns(lambda name: [r[name] for r in FALLBACK_ROWS], len(FALLBACK_ROWS))
    assert list(at_once) == rendered
    blanked = parsed.on_columns(
        lambda name: [r[name] for r in FALLBACK_ROWS], len(FALLBACK_ROWS), blank_if_empty=True
    )
    assert list(blanked)[-1] == ""


def test_a_fallback_reads_every_column_it_names() -> None:
    assert Template("{Pref || Legal|upper} {Last}").names == ("Pref", "Legal", "Last")
    assert check_template("{Pref || Legal}", ["Pref", "Legal"], where="name") == []
    (problem,) = check_template("{Pref || Legl}", ["Pref", "Legal"], where="name")
    assert "{Legl}" in problem and "did you mean {Legal}" in problem
