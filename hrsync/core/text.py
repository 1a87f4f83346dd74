"""Words shared by the core's messages and the shell's reports (pure)."""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence

# Plurals have one owner, a leaf the log's messages can import too.
from hrsync.words import name_and_id as name_and_id
from hrsync.words import plural as plural

# How `hrsync init` starts a value it could not decide, and the loader knows one by: here,
# so that loading a config does not import init's guessing.
TODO_PREFIX = "TODO"


def quoted(name: str) -> str:
    # Double quotes read better than repr() for names such as "Ann's team".
    return f'"{name}"'


def parent_label(name: str | None) -> str:
    """A parent team as a person reads it: its name, or `(root)` for none."""
    return "(root)" if name is None else quoted(name)


# The longest value a message quotes whole; longer ones (a value may be 64 Ki characters)
# are cut and their length said. Room enough for a list already capped at 20 short items
# (the columns an export has, in a missing-column problem).
SHOWN_CHARS = 300


def shown_value(value: object, limit: int = SHOWN_CHARS) -> str:
    """A value as a message quotes it: its repr, a text cut at `limit` characters."""
    if not isinstance(value, str) or len(value) <= limit:
        return repr(value)
    return f"{value[:limit]!r}… ({len(value):,} characters)"


def collapse_whitespace(value: str) -> str:
    """Trimmed, with every run of whitespace (tabs, no-break spaces, ...) one space."""
    # Most values are already so: every whitespace but the plain space is unprintable, so
    # three C tests spare building a list and a new string.
    if "  " in value or not value.isprintable() or value != value.strip():
        return " ".join(value.split())
    return value


def collapse_whitespace_each(values: Sequence[str]) -> Sequence[str]:
    """`collapse_whitespace` of each value: `values` itself when none needs it.

    One test over all the values joined (`joined`), in C, instead of one call per value.
    """
    whole = joined(values)
    if "  " in whole or padded(whole) or not whole.isprintable():
        return list(map(collapse_whitespace, values))
    return values


def joined(values: Iterable[str]) -> str:
    """Values joined by "|", for tests over all of them at once. "|" is printable and no
    whitespace, so a value's leading or trailing space shows beside it (`padded`); a "|"
    inside a value can only make such a test fail, which callers meet with the exact,
    value-by-value path."""
    return "|".join(values)


def padded(whole: str) -> bool:
    """Whether a value in `joined` text may begin or end with a space (other whitespace is
    unprintable: test `isprintable` for it)."""
    return " |" in whole or "| " in whole or whole[:1] == " " or whole[-1:] == " "


_DIGITS = re.compile(r"(\d+)")


def natural_key(text: str) -> tuple[str | int, ...]:
    """Sort key that puts ``line 9`` before ``line 10``: runs of digits compare as numbers,
    so locations sort in export order."""
    # Split on a group, text and digit runs alternate, text first: at each place both keys
    # hold the same kind, so a str is never compared with an int.
    return tuple(int(part) if i % 2 else part for i, part in enumerate(_DIGITS.split(text)))
