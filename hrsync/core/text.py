"""Words shared by the core's messages and the shell's reports (pure)."""

from __future__ import annotations

from collections.abc import Sequence


def plural(count: int, word: str) -> str:
    """`1 team`, `2 teams`: every noun used here takes a plain -s."""
    return f"{count} {word}" if count == 1 else f"{count} {word}s"


def quoted(name: str) -> str:
    # Double quotes read better than repr() for names such as "Ann's team".
    return f'"{name}"'


def parent_label(name: str | None) -> str:
    """A parent team as a person reads it: its name, or `(root)` for none."""
    return "(root)" if name is None else quoted(name)


def collapse_whitespace(value: str) -> str:
    """Trimmed, with every run of whitespace (tabs, no-break spaces, ...) one space."""
    # Most values are already so: every whitespace but the plain space is unprintable, so
    # three C tests spare building a list and a new string.
    if "  " in value or not value.isprintable() or value != value.strip():
        return " ".join(value.split())
    return value


def collapse_whitespace_each(values: Sequence[str]) -> Sequence[str]:
    """`collapse_whitespace` of each value: `values` itself when none needs it.

    One test over all the values joined, in C, instead of one call per value. "|" is
    printable and no whitespace, so a value's leading or trailing space shows beside it;
    a "|" inside a value only sends the values through the slow path, which is exact.
    """
    whole = "|".join(values)
    if (
        "  " in whole
        or " |" in whole
        or "| " in whole
        or whole != whole.strip()
        or not whole.isprintable()
    ):
        return list(map(collapse_whitespace, values))
    return values
