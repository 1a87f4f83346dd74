"""Counts in words: `1 person`, `2 people`. The one owner of plurals, a leaf so that the
log's messages (`hrsync.log_messages`) and the core's (`hrsync.core.text`) say them alike."""

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
