"""A person as `read_people` builds them, and how they read their row (pure)."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from functools import partial
from types import MappingProxyType
from typing import ClassVar, NamedTuple, cast

from hrsync.core.export.rows import RowValues


class RowShape(NamedTuple):
    """How the cells of an export's rows read as a mapping: one column index and the null
    words, shared by every row (`PersonValues`)."""

    columns: Mapping[str, int]  # a row's cell by column name
    nulls: frozenset[str]
    locations: Sequence[str] = ()  # by row position, for a person whose location is one


_NO_ATTRIBUTES: Mapping[str, str] = MappingProxyType({})


class _PersonFields(NamedTuple):
    employee_id: str
    email: str  # lower-cased, validated
    name: str  # trimmed, inner whitespace collapsed
    manager_id: str | None  # the manager's employee_id, resolved even when the export gives e-mails
    department: str | None
    status: str | None
    # Where the row came from: the text, or, with a `shape`, the row's position in its
    # `locations` (written as text only when asked: `Person.location`).
    at: str | int
    # The row: by column; or, with a `shape`, the export's cells, read through it.
    row: Mapping[str, str] | Sequence[str] = _NO_ATTRIBUTES
    shape: RowShape | None = None


class Person(_PersonFields):
    """One validated, normalised person, as its fields say.

    A tuple, built in C: a run builds one per person of the export, 100,000s. Its row is
    held as the export's cells and read as a mapping (`attributes`) only when asked, and
    its location is written only when asked: most runs never read most people's rows or
    locations, and each object less per person is a tenth of the time to read an export.
    Made by hand, a person takes its location as text and its row as a mapping.
    """

    __slots__ = ()

    # Unhashable on purpose. People are equal when they read alike, and how a person reads
    # takes its whole row, a mapping whose maker may still hold and change it: a hash would
    # read every cell, and could change while the person sits in a set. People are keyed by
    # `employee_id` or `email` instead (each unique among a Directory's people).
    __hash__: ClassVar[None] = None  # type: ignore[assignment]

    @property
    def location(self) -> str:
        """Where the row came from, for messages: ``people.csv line 12``."""
        at, shape = self.at, self.shape
        if isinstance(at, str):
            return at
        return cast(RowShape, shape).locations[at]

    @property
    def attributes(self) -> Mapping[str, str]:
        """Every column of the row by its HR name (normalised text), for templates and
        filters."""
        return read_row(self.row, self.shape)

    def __getnewargs__(self) -> tuple[object, ...]:
        # copy and pickle rebuild a person as it reads, not from the shape it shares with
        # every other person of its export.
        return (*self[:6], self.location, dict(self.attributes))

    def __eq__(self, other: object) -> bool:
        # Alike when they read alike: a row held as cells equals the same row as a mapping.
        if not isinstance(other, Person):
            return NotImplemented
        return (
            self[:6] == other[:6]
            and self.location == other.location
            and dict(self.attributes) == dict(other.attributes)
        )

    def __ne__(self, other: object) -> bool:
        # The tuple's own != would compare the fields as they are held.
        equal = self.__eq__(other)
        return equal if equal is NotImplemented else not equal

    def __repr__(self) -> str:
        # As the person would be made by hand: equal to this one.
        shown = zip(self._fields, self[:6], strict=False)
        fields = ", ".join(f"{name}={value!r}" for name, value in shown)
        return f"Person({fields}, at={self.location!r}, row={dict(self.attributes)!r})"


# A Person from its fields in order, built in C (Person() and Person._make are Python calls).
new_person = cast(Callable[[Iterable[object]], Person], partial(tuple.__new__, Person))


def export_columns(people: Iterable[Person]) -> set[str]:
    """Every column any person's row has (for templates over columns: team names,
    attributes)."""
    columns: set[str] = set()
    last: object = None
    for person in people:
        # Rows of one export share one column index: read its keys once, not per person.
        shape, row = person.shape, person.row
        keys: Iterable[str]
        if shape is not None:
            keys = shape.columns
        elif isinstance(row, RowValues):
            keys = row.index
        else:
            keys = cast(Mapping[str, str], row)
        if keys is not last:
            columns.update(keys)
            last = keys
    return columns


def read_value(cell: str, nulls: frozenset[str]) -> str:
    """A cell as hrsync reads it: trimmed, and blank when it is a null word."""
    value = cell.strip()
    return "" if value in nulls else value


def read_row(row: Mapping[str, str] | Sequence[str], shape: RowShape | None) -> Mapping[str, str]:
    """A row as a person holds it, read by column: its cells through the export's shape,
    or, without one, the mapping it is."""
    if shape is None:
        return cast(Mapping[str, str], row)
    return PersonValues(shape.columns, cast(Sequence[str], row), shape.nulls)


class PersonValues(RowValues):
    """A person's row as hrsync reads it: each value trimmed, a null word
    (`source.null_values`) blank.

    Done as a value is read, not to every cell up front: most columns of an export are
    never read (a Workday report has dozens), and those hrsync reads are normalised once
    each, as whole columns (`hrsync.core.people.columns`).
    """

    __slots__ = ("nulls",)

    def __init__(self, index: Mapping[str, int], cells: Sequence[str], nulls: frozenset[str]):
        self.index = index
        self.cells = cells
        self.nulls = nulls

    def read(self, cell: str) -> str:
        return read_value(cell, self.nulls)
