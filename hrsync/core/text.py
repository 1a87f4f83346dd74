"""Words shared by the core's messages and the shell's reports (pure)."""

from __future__ import annotations


def plural(count: int, word: str) -> str:
    """`1 team`, `2 teams`: every noun used here takes a plain -s."""
    return f"{count} {word}" if count == 1 else f"{count} {word}s"


def quoted(name: str) -> str:
    # Double quotes read better than repr() for names such as "Ann's team".
    return f'"{name}"'


def parent_label(name: str | None) -> str:
    """A parent team as a person reads it: its name, or `(root)` for none."""
    return "(root)" if name is None else quoted(name)
