"""What a reader yields (pure): one row of an export, its values, and the limits on them.

CONTRACT (shared by the readers and `hrsync.core.people`; change only with care):
- `SourceRow` is where the row came from and its values by column name.
- `RowValues` is the compact form the readers use: one tuple per row, one shared index.
- `RowTable` is every row of an export at once, the form `read_people` works on: one
  index, one sequence of cells per row, one location per row.
- `MAX_FIELD_CHARS` is the longest value hrsync accepts.

Part of the core, so pure: `tests/test_architecture.py` keeps it so.
"""

from __future__ import annotations

import operator
from bisect import bisect_right
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from itertools import chain
from typing import TypeVar, overload

# The longest value hrsync accepts, in characters. No name, e-mail, id or department comes
# near it; a value past it is a document, binary data or a quote never closed.
MAX_FIELD_CHARS = 64 * 1024

_T = TypeVar("_T")


@dataclass(frozen=True, slots=True)
class Several:
    """The different values one column holds in one record (a JSON list whose items each
    give one), and the path that would pick one of them; or, with `kind`, a value that is
    no text at all where other records give text (an object, a list, a number, a boolean),
    its JSON in `values`."""

    values: tuple[str, ...]
    pick: str  # e.g. ``relations[0].value``: the path with its list picked by position
    kind: str | None = None  # "an object", "a list", "a number", "a boolean"; None: a list


@dataclass(frozen=True, slots=True)
class SourceRow:
    """One record of an export, as read. `location` is for messages:
    ``people.csv line 12`` or ``report.json Report_Entry[3]``. `several`: the columns
    that hold several different values in this record (their text joins them); None or
    empty when none does."""

    location: str
    values: Mapping[str, str]
    several: Mapping[str, Several] | None = None


class RowValues(Mapping[str, str]):
    """The values of one CSV row, keyed by column through an index shared by every row.

    A dict per row would repeat the keys 100,000 times; a tuple and a shared index do not.
    `cells` holds exactly one value per column of `index`, in the index's order.
    """

    __slots__ = ("cells", "index")

    def __init__(self, index: Mapping[str, int], cells: Sequence[str]) -> None:
        self.index = index
        self.cells = cells

    def __getitem__(self, key: str) -> str:
        return self.read(self.cells[self.index[key]])

    @overload
    def get(self, key: str, /) -> str | None: ...
    @overload
    def get(self, key: str, /, default: str | _T) -> str | _T: ...
    def get(self, key: str, /, default: object = None) -> object:
        # Mapping.get would go through __getitem__ and KeyError.
        position = self.index.get(key)
        return default if position is None else self.read(self.cells[position])

    def read(self, cell: str) -> str:
        """How a cell reads: as it is (a subclass may normalise it)."""
        return cell

    def __iter__(self) -> Iterator[str]:
        return iter(self.index)

    def __len__(self) -> int:
        return len(self.index)

    def __repr__(self) -> str:
        return f"RowValues({dict(self)!r})"


class _Locations(Sequence[str]):
    """Row locations written when asked: a subclass says how many (`__len__`) and the
    one at an index (`_at`); an index or slice is read as a list's."""

    __slots__ = ()

    @overload
    def __getitem__(self, position: int) -> str: ...
    @overload
    def __getitem__(self, position: slice) -> Sequence[str]: ...
    def __getitem__(self, position: int | slice) -> str | Sequence[str]:
        if isinstance(position, slice):
            return [self._at(i) for i in range(len(self))[position]]
        return self._at(range(len(self))[position])  # IndexError past it

    def _at(self, index: int) -> str:
        raise NotImplementedError


class LineLocations(_Locations):
    """``{name} line {n}`` for the rows of a file whose every row is one line, from line
    `first` on, each written when asked: most locations are never shown, and 100,000
    strings made up front cost a tenth of reading the file."""

    __slots__ = ("_count", "_first", "_where")

    def __init__(self, name: str, first: int, count: int) -> None:
        self._where = name.replace("%", "%%") + " line %d"
        self._first = first
        self._count = count

    def _at(self, index: int) -> str:
        return self._where % (self._first + index)

    def __len__(self) -> int:
        return self._count

    def __iter__(self) -> Iterator[str]:
        return map(self._where.__mod__, range(self._first, self._first + self._count))


class ChainedLocations(_Locations):
    """The locations of several exports' rows one after the other (`[[source.union]]`):
    each part's own, so a row is named by its own file and line; nothing is copied."""

    __slots__ = ("_parts", "_starts")

    def __init__(self, parts: Sequence[Sequence[str]]) -> None:
        self._parts = tuple(parts)
        starts, at = [], 0
        for part in self._parts:
            starts.append(at)
            at += len(part)
        self._starts = (*starts, at)

    def _at(self, index: int) -> str:
        part = bisect_right(self._starts, index) - 1
        return self._parts[part][index - self._starts[part]]

    def __len__(self) -> int:
        return self._starts[-1]

    def __iter__(self) -> Iterator[str]:
        return chain.from_iterable(self._parts)


@dataclass(frozen=True, slots=True)
class RowTable:
    """Every row of an export at once, keyed through one index of columns.

    `cells[i]` holds one value per column of `index`, in its order, for the row named
    `locations[i]`. A reader that can parse its whole file in one pass (the CSV reader) builds
    this directly: 100,000 rows are then 100,000 lists from the csv module, not 100,000
    objects built in Python. `partial` holds, by row, the values of the rows that lack some
    of the columns (JSON records of different shapes; their absent columns read as blank
    cells): a person's own values are what their record had, nothing more. `longest`, when
    the reader knows it, bounds the length of every value (None: unknown). `several`: by
    row, the columns holding several different values in that row (a JSON list).
    """

    index: Mapping[str, int]
    cells: Sequence[Sequence[str]]
    locations: Sequence[str]
    partial: Mapping[int, Mapping[str, str]]
    longest: int | None = None
    several: Mapping[int, Mapping[str, Several]] = field(default_factory=dict)

    @classmethod
    def of_rows(cls, rows: Iterable[SourceRow], columns: Iterable[str] = ()) -> RowTable:
        """The table of rows read one by one (JSON records, tests, the CSV reader's exact
        pass): `columns` (the export's), then any other key of a row, in order of first
        appearance."""
        held = list(rows)
        locations = [row.location for row in held]
        values = [row.values for row in held]
        several = {i: row.several for i, row in enumerate(held) if row.several}
        shared = _shared_cells(values)
        if shared is not None:
            return cls(shared[0], shared[1], locations, {}, several=several)
        index: dict[str, int] = {column: i for i, column in enumerate(columns)}
        for row_values in values:
            for key in row_values:
                index.setdefault(key, len(index))
        keys = tuple(index)
        cells = [tuple(v.get(key, "") for key in keys) for v in values]
        partial = {i: v for i, v in enumerate(values) if len(v) != len(keys)}
        return cls(index, cells, locations, partial, several=several)

    def rows(self) -> Iterator[SourceRow]:
        """Each row as a `SourceRow` again (its own values where it has `partial` ones)."""
        for i, location in enumerate(self.locations):
            values = self.partial[i] if i in self.partial else RowValues(self.index, self.cells[i])
            yield SourceRow(location, values, self.several.get(i))


def _shared_cells(
    values: Sequence[Mapping[str, str]],
) -> tuple[Mapping[str, int], list[Sequence[str]]] | None:
    """The index every row's values share and each row's cells, when every row is a plain
    `RowValues` over one index (a subclass may read its cells otherwise: it is read as a
    mapping, like any other)."""
    first = values[0] if values else None
    if type(first) is not RowValues:
        return None
    cells: list[Sequence[str]] = []
    for row_values in values:
        if type(row_values) is not RowValues or row_values.index is not first.index:
            return None
        cells.append(row_values.cells)
    return first.index, cells


def tails_like(
    cells: Sequence[Sequence[str]], tails: Sequence[tuple[str, ...]]
) -> Sequence[Sequence[str]]:
    """`tails` of the kind of row they are to extend (lists for the CSV reader's list
    rows, tuples for JSON's), so that `extended` adds each to its row in C."""
    return list(map(list, tails)) if cells and type(cells[0]) is list else tails


def extended(cells: Sequence[Sequence[str]], tails: Sequence[Sequence[str]]) -> list[Sequence[str]]:
    """Each row's cells with its tail after them: one C `+` per row (the joins, the
    precedence lists and the unions add columns so); rows of mixed kinds one by one."""
    try:
        return list(map(operator.add, cells, tails))
    except TypeError:
        return [(*row, *tail) for row, tail in zip(cells, tails, strict=True)]
