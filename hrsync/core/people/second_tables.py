"""A second table beside the export: what a `[[source.join]]` and a `[[source.union]]`
share (pure).

Both read a table exactly as the export is read, and both are counted run to run so that
one that fell far since the last accepted run stops the run before it reaches DX. They
differ only in what the table brings: a join adds columns to the people, matched by a key
(hrsync.core.people.joins); a union adds people (hrsync.core.people.union).

- `SecondTable`: a table as read (the export itself too, when a union merges into it).
- `TableCount`: how much of it counted, by kind: a join's rows of the export its key
  matched once; a source's people kept. What the guard compares, and what the store
  keeps as its baseline.
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass, field
from typing import Final, Literal, NamedTuple

from hrsync.core.export.rows import RowTable
from hrsync.core.settings import FieldSettings

# The kinds of a second table, as the config spells them (``source.join[…]``).
Kind = Literal["join", "union"]
JOIN: Final = "join"
UNION: Final = "union"

# How counts and messages name the primary export, a source of a union's kind.
PRIMARY = "source"


@dataclass(frozen=True, slots=True)
class SecondTable:
    """A table as read: its name for messages (its file or URL), its columns, its rows,
    the null words it is read with, and, for people (the export, a union), the fields
    that read it. A join's table reads no fields: its columns are named by the config."""

    name: str
    columns: tuple[str, ...]
    table: RowTable
    fields: FieldSettings = field(default_factory=FieldSettings)
    null_values: Collection[str] = ()


class TableCount(NamedTuple):
    """One table's size this run: what its guard compares with the last accepted run's."""

    kind: Kind
    name: str
    rows: int  # a join: rows of the people export; a source: rows of its own export
    kept: int  # a join: of them, those whose key found exactly one row; a source: its people
    # For reports (`plan --format json`), not kept in the store: a source's file or URL,
    # the prefix of its ids ("" for the primary), its attach_root_to.
    export: str = ""
    prefix: str = ""
    attach_root_to: str = ""

    @classmethod
    def join(cls, name: str, rows: int, matched: int) -> TableCount:
        return cls(JOIN, name, rows, matched)

    @classmethod
    def source(
        cls,
        name: str,
        rows: int,
        people: int,
        export: str = "",
        prefix: str = "",
        attach_root_to: str = "",
    ) -> TableCount:
        return cls(UNION, name, rows, people, export, prefix, attach_root_to)

    # What `kept` is, in each kind's own word.
    @property
    def matched(self) -> int:
        return self.kept

    @property
    def people(self) -> int:
        return self.kept

    @property
    def share(self) -> float:
        return self.kept / self.rows if self.rows else 0.0

    @property
    def label(self) -> str:
        """How messages name it: ``join 'okta'``, ``source``, ``source.union[acq]``."""
        if self.kind == JOIN:
            return f"join {self.name!r}"
        return PRIMARY if self.name == PRIMARY else table_key(UNION, self.name)


def table_key(kind: Kind, name: str) -> str:
    """The config key of a declared table: ``source.join[okta]``, ``source.union[acq]``."""
    return f"source.{kind}[{name}]"


def no_rows(where: str, table: str, because: str) -> str:
    """The refusal of a table without rows: it is never read as an empty org."""
    return (
        f"{where}: {table} has no rows: {because} (an empty answer or a cut file?); "
        "nothing was sent"
    )
