"""The column engine (pure): an export's rows read as columns, each column hrsync uses read
once, trimmed and its null words blank, in a few C passes over every row.

A run reads 100,000 rows: each step of `read_people` is a pass over a column (mostly in C),
not a Python object per row, and a column hrsync never uses is never read. Positions are
the rows' order in the export; problems are sorted by them.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Collection, Iterable, Mapping, Sequence
from itertools import compress, islice
from operator import is_, itemgetter, ne
from typing import NamedTuple, TypeVar

from hrsync.core.export.rows import MAX_FIELD_CHARS, RowTable
from hrsync.core.export.templates import Template, is_template
from hrsync.core.people.person import RowShape, read_row, read_value
from hrsync.core.text import collapse_whitespace, collapse_whitespace_each, joined, padded

_T = TypeVar("_T")

# Every value is trimmed as it is read (`normalise_column`, `PersonValues`); names and
# departments also go through `normalise_name`, e-mails through `normalise_email`
# (hrsync.core.people.emails, which the config's sync.notify_email follows too).


def normalise_name(value: str) -> str:
    """Trimmed, with every run of whitespace (tabs, no-break spaces, ...) one space."""
    return collapse_whitespace(value)


def lower_each(values: Sequence[str]) -> Sequence[str]:
    """The values lower-cased: `values` itself when that changes none (e-mails mostly are;
    "|" has no case, so joined they lower-case as each would)."""
    whole = joined(values)
    if whole == whole.lower():
        return values
    # Only the values lower-casing changes are replaced. The others keep their string,
    # already hashed: new copies of 100,000 addresses would each be memory a fresh
    # process must map in, and hashed again by the e-mail index.
    lowered = list(values)
    for i in compress(range(len(values)), map(ne, map(str.lower, values), values)):
        lowered[i] = values[i].lower()
    return lowered


class ColumnFacts(NamedTuple):
    """What reading a column (`normalise_column`) found out about it, for the steps after."""

    printable: bool  # no value holds an unprintable character (control, tab, no-break space)
    collapsed: bool  # when asked (`spacing`): no value has two spaces in a row, or any edge
    spaceless: bool  # no value holds whitespace at all (each is one word, or empty)


def normalise_column(
    values: list[str], nulls: frozenset[str], *, spacing: bool = False
) -> ColumnFacts:
    """Trim every value of a column and blank its null words, in place (the column is read
    for this alone), and say what it found (`collapsed` is False unless `spacing` asks).

    One test over the values joined (`hrsync.core.text.joined`), in C, instead of one per
    value; the exact pass only when it fails. A column of few distinct values (statuses,
    departments) reads each of them once instead (`_normalise_distinct`).
    """
    sample = values[:_SAMPLE]
    if len(set(sample)) * 2 <= len(sample):
        distinct = set(values)
        if len(distinct) * 8 <= len(values):
            return _normalise_distinct(values, distinct, nulls, spacing=spacing)
    whole = joined(values)
    printable = whole.isprintable()
    # Before trimming: spaces at a value's end may go, so these may say no wrongly, never
    # yes (and trimming leaves a printable column printable). Every whitespace character
    # but the space is unprintable.
    collapsed = spacing and printable and "  " not in whole
    spaceless = printable and " " not in whole
    if not printable or padded(whole):
        values[:] = map(str.strip, values)  # a value already trimmed is returned as it is
    # Hashing each value here is no extra cost: ids, e-mails, departments and statuses are
    # looked up by value later, and a string keeps its hash.
    if nulls and not nulls.isdisjoint(values):
        for i in [i for i, v in enumerate(values) if v in nulls]:
            values[i] = ""
    return ColumnFacts(printable, collapsed, spaceless)


# How many values of a column tell whether it may have few distinct values.
_SAMPLE = 1000


def _normalise_distinct(
    values: list[str], distinct: set[str], nulls: frozenset[str], *, spacing: bool
) -> ColumnFacts:
    """`normalise_column` for a column of few `distinct` values: each is read once, and
    every row takes its value as read, so equal values are one string (later look-ups and
    sets then match them by identity)."""
    printable = all(map(str.isprintable, distinct))
    read = {value: read_value(value, nulls) for value in distinct}
    if not all(map(is_, read.values(), read)):
        values[:] = map(read.__getitem__, values)
    # Else every value reads as it is, and the rows keep theirs: one string per value
    # already when read by `ExportColumns` (`_cells_of`).
    collapsed = spacing and all(v.isprintable() and "  " not in v for v in read.values())
    spaceless = all(v.isprintable() and " " not in v for v in read.values())
    return ColumnFacts(printable, collapsed, spaceless)


def _cells_of(cells: Sequence[Sequence[str]], position: int) -> list[str]:
    """The cells of a column, in row order. In a column of few distinct values (statuses,
    departments: `_SAMPLE` rows tell) equal cells are one string, the first of them,
    matched as they are read: later look-ups and sets then match them by identity."""
    cell = itemgetter(position)
    sample = list(map(cell, islice(cells, _SAMPLE)))
    if len(set(sample)) * 2 > len(sample):
        return list(map(cell, cells))
    first: dict[str, str] = {}
    return list(map(first.setdefault, map(cell, cells), map(cell, cells)))


class ExportColumns:
    """An export's rows as columns, each read from the cells when first asked for.

    A column read is kept with its facts, so it is read once whichever step asks first;
    nothing else changes once built. `spaced` names the columns read as names or
    departments, whose inner spacing is tested as they are read, so that a collapsed
    column is not copied.
    """

    def __init__(self, table: RowTable, nulls: frozenset[str], spaced: Collection[str]) -> None:
        count = len(table.cells)
        self.count = count
        self.locations = table.locations
        # Row positions as one list of ints, shared by every list and index of rows (a
        # range would make a new int each time it is walked).
        self.positions = list(range(count))
        self.index = table.index
        self.cells = table.cells
        self.nulls = nulls
        # The reader vouches that no value is over the limit: no column needs measuring.
        self.short = table.longest is not None and table.longest <= MAX_FIELD_CHARS
        self.blank: Sequence[str] = ("",) * count
        self._columns: dict[int, list[str]] = {}
        self._facts: dict[int, ColumnFacts] = {}
        self._spaced = {self.index[column] for column in spaced if column in self.index}
        # Each row as a person holds it: its cells, read through one shape.
        held: Sequence[Sequence[str] | Mapping[str, str]] = table.cells
        shape = RowShape(table.index, nulls, table.locations)
        shapes: list[RowShape | None] = [shape] * count
        if table.partial:
            held = list(table.cells)
            for i, own in table.partial.items():
                # A record without some columns keeps just its own.
                held[i] = {key: read_value(value, nulls) for key, value in own.items()}
                shapes[i] = None
        self.held = held
        self.shapes: Sequence[RowShape | None] = shapes
        self.partial = bool(table.partial)  # some rows are records of a shape of their own

    def column(self, name: str) -> Sequence[str]:
        """A column's value on every row, read as `PersonValues` reads it ("" where the
        export lacks the column)."""
        position = self.index.get(name)
        if position is None:
            return self.blank
        values = self._columns.get(position)
        if values is None:
            values = _cells_of(self.cells, position)
            spacing = position in self._spaced
            self._facts[position] = normalise_column(values, self.nulls, spacing=spacing)
            self._columns[position] = values
        return values

    def facts(self, name: str) -> ColumnFacts:
        """What reading a column found out about it (a column the export lacks is blank)."""
        position = self.index.get(name)
        if position is None:
            return ColumnFacts(printable=True, collapsed=True, spaceless=True)
        self.column(name)
        return self._facts[position]

    def printable(self, name: str) -> bool:
        """Whether a column is known to hold no unprintable character."""
        return self.facts(name).printable

    def collapsed(self, name: str) -> bool:
        """Whether a column read as a name or department is known to read collapsed."""
        return self.facts(name).collapsed

    def spaceless(self, name: str) -> bool:
        """Whether a column is known to hold no whitespace (for templates: `words`)."""
        return self.facts(name).spaceless

    def values(self, i: int) -> Mapping[str, str]:
        """Row `i` by column, as its person's `attributes` reads it."""
        return read_row(self.held[i], self.shapes[i])


class PersonColumns(NamedTuple):
    """The logical fields of every row, normalised, by row position (`read_fields`)."""

    employee_id: Sequence[str]
    email: Sequence[str]  # lower-cased
    name: Sequence[str]  # inner whitespace collapsed
    manager_id_ref: Sequence[str]  # the manager references, as written (trimmed)
    manager_email_ref: Sequence[str]  # lower-cased
    manager_name_ref: Sequence[str]
    department: Sequence[str]  # collapsed only when `department_collapsed` says so
    department_collapsed: bool
    status: Sequence[str]
    location: Sequence[str]

    def describe(self, i: int) -> str:
        """Row `i`'s person for messages: ``Ann Lee (E1)``."""
        who = self.name[i] or self.email[i] or self.employee_id[i]
        eid = self.employee_id[i]
        return f"{who} ({eid})" if eid and who != eid else who


def read_fields(export: ExportColumns, configured: Mapping[str, str]) -> PersonColumns:
    """The logical fields `configured` names (a column, or a template over columns), read
    from every row and normalised."""
    # The templates' filtered columns, shared between templates: 100,000s of strings, let
    # go once the fields are read.
    memo: dict[tuple[str, ...], Sequence[str]] = {}

    def field(key: str) -> Sequence[str]:
        source = configured.get(key, "")
        if not source:
            return export.blank
        if is_template(source):
            return Template(source).on_columns(
                export.column,
                export.count,
                blank_if_empty=True,
                memo=memo,
                words=export.spaceless,
            )
        return export.column(source)

    # A template lower-cased by construction needs no second look, and a template's text
    # is collapsed already.
    email, name, department = (configured.get(k, "") for k in ("email", "name", "department"))
    email_lower = is_template(email) and Template(email).lower_case
    name_collapsed = is_template(name) or export.collapsed(name)
    return PersonColumns(
        employee_id=field("employee_id"),
        email=field("email") if email_lower else lower_each(field("email")),
        name=field("name") if name_collapsed else collapse_whitespace_each(field("name")),
        manager_id_ref=field("manager_id"),
        manager_email_ref=lower_each(field("manager_email")),
        manager_name_ref=field("manager_name"),
        department=field("department"),
        department_collapsed=is_template(department) or export.collapsed(department),
        status=field("status"),
        location=export.locations,
    )


def take(values: Sequence[_T], rows: Sequence[int]) -> Sequence[_T]:
    """The values at `rows` (positions, ascending), in one C call."""
    if len(rows) == len(values):
        return values  # every row: positions ascending and unique, so all of them in order
    return pick(values, rows)


def pick(values: Sequence[_T], positions: Sequence[int]) -> Sequence[_T]:
    """The values at `positions`, in their order, in one C call."""
    if not positions:
        return ()
    picked = itemgetter(*positions)(values)
    return picked if len(positions) > 1 else (picked,)


def scatter(values: list[_T], positions: Iterable[int], new: Iterable[_T]) -> None:
    """Set `values[p]` to each of `new` in turn for each p of `positions`, in C."""
    deque(map(values.__setitem__, positions, new), maxlen=0)


def all_kept(values: Sequence[object], kept: Sequence[int]) -> bool:
    """Whether every kept row's value is truthy: the whole column first, in C (a filtered
    row may well be blank), then the kept rows alone."""
    return all(values) or all(take(values, kept))
