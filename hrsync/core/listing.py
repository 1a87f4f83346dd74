"""Lists inside messages, kept short (pure).

A message that lists every column of a 100,000-column header, or every row sharing one
duplicated id, stops being read. Every list a person reads is cut at `LIMIT` items and
says how many were left out.
"""

from __future__ import annotations

from collections.abc import Iterable

LIMIT = 20


def capped(
    items: Iterable[object],
    *,
    limit: int = LIMIT,
    sep: str = ", ",
    empty: str = "none",
    total: int | None = None,
) -> str:
    """The first `limit` items joined by `sep`, then "and N more"; `empty` when none.

    Reads only what it shows, plus a count of the rest, so a generator of a million items
    costs no list of them. `total` is the number of items in all when `items` holds only
    the first of them (a caller that kept just those).
    """
    if limit < 1:
        raise ValueError(f"limit must be at least 1, got {limit}")
    shown: list[str] = []
    rest = 0
    for item in items:
        if len(shown) < limit:
            shown.append(str(item))
        else:
            rest += 1
    if not shown:
        return empty
    if total is not None:
        rest = max(rest, total - len(shown))
    text = sep.join(shown)
    return f"{text} and {rest} more" if rest else text
