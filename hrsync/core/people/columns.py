"""The export as columns: each used column read once, trimmed, its null words blank,
in C passes over every row (pure)."""

from __future__ import annotations

from collections import deque
from collections.abc import Iterable, Mapping, Sequence
from operator import itemgetter
from typing import NamedTuple, TypeVar

from hrsync.core.people.person import RowShape, read_row, read_value
from hrsync.core.templates import Template, is_template
from hrsync.core.text import collapse_whitespace, collapse_whitespace_each, joined, padded
from hrsync.sources.rows import MAX_FIELD_CHARS, RowTable

# ---------------------------------------------------------------- normalisation
# Every value is trimmed as it is read (`_normalise`, `PersonValues`); names and departments
# also go through `normalise_name`, e-mails through `normalise_email` (hrsync.core.emails,
# which the config's sync.notify_email follows too).


def normalise_name(value: str) -> str:
    """Trimmed, with every run of whitespace (tabs, no-break spaces, ...) one space."""
    return collapse_whitespace(value)


def _lower(values: Sequence[str]) -> Sequence[str]:
    """The values lower-cased: `values` itself when that changes none (e-mails mostly are;
    "|" has no case, so joined they lower-case as each would)."""
    whole = joined(values)
    return values if whole == whole.lower() else list(map(str.lower, values))


class ColumnFacts(NamedTuple):
    """What reading a column (`_normalise`) found out about it, for the steps after."""

    printable: bool  # no value holds an unprintable character (control, tab, no-break space)
    collapsed: bool  # when asked (`spacing`): no value has two spaces in a row, or any edge
    spaceless: bool  # no value holds whitespace at all (each is one word, or empty)


def _normalise(values: list[str], nulls: frozenset[str], *, spacing: bool = False) -> ColumnFacts:
    """Trim every value of a column and blank its null words, in place, and say what it
    found (`ColumnFacts`; `collapsed` is False unless `spacing` asks for it).

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
    """`_normalise` for a column of few `distinct` values: each is read once, and every row
    takes its value as read, so equal values are one string (later look-ups and sets then
    match them by identity)."""
    printable = all(map(str.isprintable, distinct))
    read = {value: read_value(value, nulls) for value in distinct}
    values[:] = map(read.__getitem__, values)
    collapsed = spacing and all(v.isprintable() and "  " not in v for v in read.values())
    spaceless = all(v.isprintable() and " " not in v for v in read.values())
    return ColumnFacts(printable, collapsed, spaceless)


class _Rows:
    """The rows of the export as columns: one list per logical field, by row position.

    A run reads 100,000 rows: each step below is a pass over a column (mostly in C), not a
    Python object per row, and a column is read only when hrsync uses it. Positions are
    the rows' order in the export; problems are sorted by them.
    """

    def __init__(
        self, table: RowTable, configured: Mapping[str, str], nulls: frozenset[str]
    ) -> None:
        count = len(table.cells)
        self.count = count
        self.location = table.locations
        self.positions = list(range(count))
        self.index = table.index
        self.rows = table.cells
        self.nulls = nulls
        # The reader vouches that no value is over the limit: no column needs measuring.
        self.short = table.longest is not None and table.longest <= MAX_FIELD_CHARS
        self._columns: dict[int, list[str]] = {}
        self._facts: dict[int, ColumnFacts] = {}
        # Columns read as names or departments, whose inner spacing is collapsed: tested
        # as they are read (`_normalise`), so that a collapsed column is not copied.
        self._spaced = {
            self.index[column]
            for key in ("name", "department")
            if (column := configured.get(key, "")) in self.index
        }
        self._filtered: dict[tuple[str, ...], Sequence[str]] = {}  # templates' filtered columns
        # Each row as a person holds it: its cells, read through one shape.
        self.row: Sequence[Sequence[str] | Mapping[str, str]] = table.cells
        shape = RowShape(table.index, nulls, table.locations)
        self.row_shape: list[RowShape | None] = [shape] * count
        if table.partial:
            self.row = list(table.cells)
            for i, own in table.partial.items():
                # A record without some columns keeps just its own.
                self.row[i] = {key: read_value(value, nulls) for key, value in own.items()}
                self.row_shape[i] = None
        self.blank: Sequence[str] = ("",) * count
        picked = {key: self._field(configured.get(key, "")) for key in _PICKED}
        self._filtered.clear()  # the templates' intermediate columns: 100,000s of strings
        self.employee_id = picked["employee_id"]
        # A template lower-cased by construction needs no second look.
        email = configured.get("email", "")
        lower_case = is_template(email) and Template(email).lower_case
        self.email = picked["email"] if lower_case else _lower(picked["email"])
        # A template's text is collapsed already.
        name = configured.get("name", "")
        collapsed = is_template(name) or self.collapsed(name)
        self.name = picked["name"] if collapsed else collapse_whitespace_each(picked["name"])
        self.manager_id_ref = picked["manager_id"]
        self.manager_email_ref = _lower(picked["manager_email"])
        self.manager_name_ref = picked["manager_name"]
        self.department = picked["department"]
        department = configured.get("department", "")
        self.department_collapsed = is_template(department) or self.collapsed(department)
        self.status = picked["status"]
        self.reason: list[str | None] = [None] * count  # None: kept; else the excluding setting
        # By row: the resolved manager's employee id (None: no manager), and the manager's
        # row, kept or not (for filter.root only: filled then).
        self.manager: list[str | None] = [None] * count
        self.up: dict[int, int | None] = {}
        self.ambiguous: set[int] = set()  # rows whose manager reference matches several

    def column(self, name: str) -> Sequence[str]:
        """A column's value on every row, read as `PersonValues` reads it ("" where the
        export lacks the column). Read from the rows on first use."""
        position = self.index.get(name)
        if position is None:
            return self.blank
        values = self._columns.get(position)
        if values is None:
            values = list(map(itemgetter(position), self.rows))
            spacing = position in self._spaced
            self._facts[position] = _normalise(values, self.nulls, spacing=spacing)
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

    def _field(self, source: str) -> Sequence[str]:
        if not source:
            return self.blank
        if is_template(source):
            return Template(source).on_columns(
                self.column,
                self.count,
                blank_if_empty=True,
                memo=self._filtered,
                words=self.spaceless,
            )
        return self.column(source)

    def values(self, i: int) -> Mapping[str, str]:
        """Row `i` by column, as its person's `attributes` reads it."""
        return read_row(self.row[i], self.row_shape[i])

    def describe(self, i: int) -> str:
        who = self.name[i] or self.email[i] or self.employee_id[i]
        eid = self.employee_id[i]
        return f"{who} ({eid})" if eid and who != eid else who


# The logical fields taken from each row, and the settings that may name them.
_PICKED = (
    "employee_id",
    "email",
    "name",
    "manager_id",
    "manager_email",
    "department",
    "status",
    "manager_name",
)

_T = TypeVar("_T")


def _take(values: Sequence[_T], rows: Sequence[int]) -> Sequence[_T]:
    """The values at `rows` (positions, ascending), in one C call."""
    if len(rows) == len(values):
        return values  # every row: positions ascending and unique, so all of them in order
    return _pick(values, rows)


def _scatter(values: list[_T], positions: Iterable[int], new: Iterable[_T]) -> None:
    """Set `values[p]` to each of `new` in turn for each p of `positions`, in C."""
    deque(map(values.__setitem__, positions, new), maxlen=0)


def _pick(values: Sequence[_T], positions: Sequence[int]) -> Sequence[_T]:
    """The values at `positions`, in their order, in one C call."""
    if not positions:
        return ()
    picked = itemgetter(*positions)(values)
    return picked if len(positions) > 1 else (picked,)


def _all_kept(values: Sequence[object], kept: Sequence[int]) -> bool:
    """Whether every kept row's value is truthy: the whole column first, in C (a filtered
    row may well be blank), then the kept rows alone."""
    return all(values) or all(_take(values, kept))
