"""The config `hrsync init` writes: valid TOML whatever the columns are called, every
guess under its evidence, TODOs as values the loader refuses."""

from __future__ import annotations

import tomllib

from hypothesis import assume, given
from hypothesis import strategies as st

from hrsync.core.export.templates import Template
from hrsync.core.starter.guess_fields import Column, propose
from hrsync.core.starter.starter_config import StarterSource, render, toml_string

_MANAGER_WORDS = ("manag", "supervis", "report", "vorgesetzt")


@given(st.text())
def test_any_text_is_written_as_a_toml_string(text: str) -> None:
    assert tomllib.loads(f"key = {toml_string(text)}")["key"] == text


@given(st.lists(st.text(min_size=1, max_size=20), min_size=4, max_size=4, unique=True))
def test_the_config_is_valid_toml_whatever_the_columns_are_called(names: list[str]) -> None:
    # A column of unique ids named like a manager's is rightly no employee id.
    assume(not any(word in name.lower() for name in names for word in _MANAGER_WORDS))
    people = [
        ("E1", "Ada Okafor", "ada@example.com", ""),
        ("E2", "Ben Lee", "ben@example.com", "E1"),
        ("E3", "Chen Rossi", "chen@example.com", "E1"),
    ]
    columns = [Column(name, tuple(p[i] for p in people)) for i, name in enumerate(names)]
    proposal = propose(columns)
    written = tomllib.loads(render(proposal, StarterSource("people.csv", "people.csv", "csv")))
    fields = written["source"]["fields"]
    # A setting with a brace reads as a template: such a column is never proposed (nor a
    # manager column whose ids are in one: the ids' column cannot be named).
    braced = [("{" in name or "}" in name) for name in names]
    for key, name, unnamable in (
        ("email", names[2], braced[2]),
        ("manager_id", names[3], braced[3] or braced[0]),
    ):
        if unnamable:
            assert fields[key].startswith("TODO") or fields[key] not in names
        else:
            assert fields[key] == name
    for value in fields.values():
        if "{" in value or "}" in value:
            Template(value)  # a template init writes parses


def test_a_column_named_with_a_brace_is_not_proposed_and_a_note_says_why() -> None:
    columns = [
        Column("Id", ("E1", "E2", "E3")),
        Column("{Name}", ("Ada Okafor", "Ben Lee", "Chen Rossi")),
        Column("Email", ("ada@example.com", "ben@example.com", "chen@example.com")),
        Column("Manager Id", ("", "E1", "E1")),
    ]
    proposal = propose(columns)
    text = render(proposal, StarterSource("people.csv", "people.csv", "csv"))
    fields = tomllib.loads(text)["source"]["fields"]
    assert fields["name"] == "TODO: name (see above)"
    assert "'{Name}': a column whose name holds a brace cannot be named" in text


def test_every_guess_is_written_under_its_evidence_and_a_todo_as_a_value() -> None:
    proposal = propose([Column("Work Email", ("a@example.com", "b@example.com"))])
    text = render(proposal, StarterSource("people.csv", "people.csv", "csv"))
    lines = text.splitlines()
    at = lines.index('email = "Work Email"')
    assert lines[at - 1] == "# Work Email: 2 of 2 values are e-mail addresses"
    written = tomllib.loads(text)
    assert written["source"]["fields"]["name"] == "TODO: name (see above)"
    assert written["source"]["fields"]["manager_id"] == "TODO: manager id (see above)"
    assert "3 values starting with TODO could not be decided" in " ".join(
        line.removeprefix("# ") for line in lines[:6]
    )
