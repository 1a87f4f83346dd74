"""Counts and people in words: `1 person`, `2 people`, `Ada Lee (E1)`. The one owner of
plurals and of how a person is named, a leaf so that the log's messages
(`hrsync.log_messages`) and the core's (`hrsync.core.text`) say them alike."""

from __future__ import annotations


def plural(count: int, word: str) -> str:
    """`1 team`, `2 teams`, `2 people`: every noun used here but `person` takes a plain -s."""
    if count == 1:
        return f"{count} {word}"
    return f"{count} {plural_of(word)}"


def plural_of(word: str) -> str:
    """`word` for more than one (or a count not known): `teams`, `people`."""
    return _PLURALS.get(word, word + "s")


_PLURALS = {"person": "people"}


def name_and_id(name: str, employee_id: str) -> str:
    """A person as messages name them, `Name (id)`; the id alone when the name is not
    known (a manager whose row is gone is known by the id their reports still give)."""
    return f"{name} ({employee_id})" if name and name != employee_id else employee_id
