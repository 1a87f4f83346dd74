"""A person as `read_people` builds them, and how they read their row (pure)."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from functools import partial
from types import MappingProxyType
from typing import NamedTuple, cast

from hrsync.sources.rows import RowValues


class RowShape(NamedTuple):
    """How the cells of an export's rows read as a mapping: one column index and the null
    words, shared by every row (`PersonValues`)."""

    columns: Mapping[str, int]  # a row's cell by column name
    nulls: frozenset[str]
    locations: Sequence[str] = ()  # by row position, for a person whose location is one


class _PersonFields(NamedTuple):
    employee_id: str
    email: str  # lower-cased, validated
    name: str  # trimmed, inner whitespace collapsed
    manager_id: str | None  # the manager's employee_id, resolved even when the export gives e-mails
    department: str | None
    status: str | None
    # Where the row came from, for messages: the text, or the row's position in
    # `row_shape.locations` (read as text by `Person.location`).
    location: str | int
    # The row: its cells, read through `row_shape`; or, without a shape, the mapping itself.
    row: Sequence[str] | Mapping[str, str]
    row_shape: RowShape | None


_NO_ATTRIBUTES: Mapping[str, str] = MappingProxyType({})


class Person(_PersonFields):
    """One validated, normalised person. A tuple, built in C: a run builds one per person of
    the export, 100,000s. Its row is held as the export's cells and read as a mapping
    (`attributes`) only when asked, and its location is written only when asked: most runs
    never read most people's rows or locations, and each object less per person is a
    tenth of the time to read an export."""

    __slots__ = ()

    def __new__(
        cls,
        employee_id: str,
        email: str,
        name: str,
        manager_id: str | None,
        department: str | None,
        status: str | None,
        location: str,
        attributes: Mapping[str, str] = _NO_ATTRIBUTES,
    ) -> Person:
        fields = (employee_id, email, name, manager_id, department, status, location)
        return tuple.__new__(cls, (*fields, attributes, None))

    @property
    def location(self) -> str:
        """Where the row came from, for messages: ``people.csv line 12``."""
        at = self[6]
        if isinstance(at, str):
            return at
        return cast(RowShape, self.row_shape).locations[at]

    @property
    def attributes(self) -> Mapping[str, str]:
        """Every column of the row by its HR name (normalised text), for templates and
        filters."""
        return read_row(self.row, self.row_shape)

    def __getnewargs__(self) -> tuple[object, ...]:
        # copy and pickle rebuild a person through __new__: from its reading, not its cells.
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
        equal = self.__eq__(other)
        return equal if equal is NotImplemented else not equal

    def __repr__(self) -> str:
        fields = ", ".join(
            f"{name}={value!r}" for name, value in zip(self._fields[:6], self, strict=False)
        )
        return f"Person({fields}, location={self.location!r}, attributes={dict(self.attributes)!r})"


# A Person from its nine fields in order, built in C (Person() is a Python call).
_new_person = cast(Callable[[tuple[object, ...]], Person], partial(tuple.__new__, Person))


def export_columns(people: Iterable[Person]) -> set[str]:
    """Every column any person's row has (for templates over columns: team names,
    attributes)."""
    columns: set[str] = set()
    last: object = None
    for person in people:
        # Rows of one export share one column index: read its keys once, not per person.
        shape, row = person.row_shape, person.row
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


def read_row(row: Sequence[str] | Mapping[str, str], shape: RowShape | None) -> Mapping[str, str]:
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
    each, as whole columns, by `read_people`.
    """

    __slots__ = ("nulls",)

    def __init__(self, index: Mapping[str, int], cells: Sequence[str], nulls: frozenset[str]):
        self.index = index
        self.cells = cells
        self.nulls = nulls

    def read(self, cell: str) -> str:
        return read_value(cell, self.nulls)
