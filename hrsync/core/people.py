"""Person, normalisation of export rows, and validation of the export (pure).

CONTRACT (shared with mapping, identity and the engine; change only with care):
- `SourceRow` (from `hrsync.core.rows`, beside the readers) is what a reader yields;
  `RowTable` is every row at once (`Export.table()`, what a run passes).
- `Person` is one validated, normalised person (a tuple, built in C); `Person.attributes`
  is their whole row, each value read trimmed and with null words blank (`PersonValues`),
  read when asked from the export's cells; `Person.location` is written when asked too.
  People are equal when they read alike.
- `Problem` names location, field, value and what was expected.

`read_people` turns an export's rows into a `Directory`, in this order:

0. Fields: a `[source.fields]` value with braces is a template over the row's columns
   (hrsync.core.templates), rendered for every row at once; empty when all its
   placeholders are. A cell equal to one of `source.null_values` is empty, in every column.
   The work runs column by column over every row (`_Rows`), not row by row: 100,000 rows
   are then a few passes in C per column hrsync uses, and a column it never uses is never
   read.
1. Columns: every column named in `[source.fields]` (non-empty; a template's every
   column) must be in the export,
   and every include/exclude field must be a logical field or a column; otherwise one
   whole-file problem lists what is missing, the closest columns and the columns found,
   and no row is read.
2. Normalisation: every value trimmed; names with inner whitespace collapsed; e-mails
   (the person's and a manager's) lower-cased.
3. Filters (hrsync.core.filters): status, include, exclude. A filtered row is not validated:
   a terminated row with a blank e-mail is no problem.
4. Validation of the kept rows, all problems at once: empty employee id; empty or
   invalid e-mail (see `is_valid_email`); duplicate ids and e-mails (each row names the
   others); a manager reference (id, or e-mail when there is no id) matching nobody; a
   person who is their own manager; reporting cycles, printed as a chain of ids. An empty
   name is a warning (the e-mail stands in). A manager who is in the export but filtered
   out is a warning: the report is kept with no manager. When both manager columns are
   set, the id wins and a disagreeing e-mail is a warning. `manager_name` (used when neither
   id nor e-mail is given) matches by `name_key`; a name two kept people share is fatal
   for the row naming it. With `unknown_manager = "top"` a reference matching nobody
   makes the person top of the org: one warning per distinct value, and
   `Directory.unknown_managers`.
5. `filter.root`: the root and everyone below them, following reporting lines also
   through filtered-out managers (a manager who left does not cut their team out of the
   org). The root's own manager is cut. Problems elsewhere in the export stay fatal: a
   mistyped manager id outside the root's reach may be exactly what cut a branch off.
   Warnings about people outside the org are dropped.
6. An export whose every row is filtered out is a fatal problem naming the filters (a
   wrong `filter.active_status` must not look like an empty org); an export with no rows
   at all (a header only) is fatal too, naming the file. Zero people is never a sync.

Every value hrsync uses (the columns of `[source.fields]`, filter fields, and the columns
named by `also_used`, e.g. those of `mapping.team_name`) is checked on every row, kept or
filtered: a control character in it (Unicode category Cc: NUL, ESC, DEL, CR, LF, ...; a
tab is allowed) is fatal, as is a value over `MAX_FIELD_CHARS` characters. Such a value
would reach DX as a team name, or silently filter a person out as an unknown status.
Messages cap every list they hold (`hrsync.core.listing.capped`).
"""

from __future__ import annotations

import re
import unicodedata
from collections import deque
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass
from functools import partial
from itertools import compress, repeat
from operator import eq, is_, itemgetter, not_
from types import MappingProxyType
from typing import NamedTuple, TypeVar, cast

from hrsync.core.emails import EMAIL_RULE, normalise_email, valid_emails
from hrsync.core.filters import (
    LOGICAL_FIELDS,
    STATUS_REASON,
    UnknownField,
    build_row_filter,
    closest_name,
)
from hrsync.core.listing import capped
from hrsync.core.rows import (
    MAX_FIELD_CHARS,
    LineLocations,
    RowTable,
    RowValues,
    SourceRow,
)
from hrsync.core.settings import DEFAULT_NULL_VALUES, FieldSettings, FilterSettings
from hrsync.core.templates import Template, check_template, is_template, template_names
from hrsync.core.text import (
    collapse_whitespace,
    collapse_whitespace_each,
    joined,
    padded,
    shown_value,
)
from hrsync.core.tree import forest

_T = TypeVar("_T")


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


@dataclass(frozen=True, slots=True)
class Problem:
    location: str  # "people.csv line 12", or the file name for whole-file problems
    field: str  # HR column name, or logical field name
    value: str
    expected: str  # what was expected, in words
    fatal: bool = True

    def __str__(self) -> str:
        kind = "" if self.fatal else "warning: "
        return f"{kind}{self.location}: {self.field} {self.expected}, got {shown_value(self.value)}"


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


# ---------------------------------------------------------------- row values

# Unicode category Cc except tab: C0 controls (NUL, CR, LF, ESC, ...), DEL and C1 controls.
_CONTROL = re.compile("[\x00-\x08\x0a-\x1f\x7f-\x9f]")

# ---------------------------------------------------------------- normalisation
# Every value is trimmed as it is read (`_normalise`, `PersonValues`); names and departments
# also go through `normalise_name`, e-mails through `normalise_email` (hrsync.core.emails,
# which the config's sync.notify_email follows too).


def normalise_name(value: str) -> str:
    """Trimmed, with every run of whitespace (tabs, no-break spaces, ...) one space."""
    return collapse_whitespace(value)


_PUNCTUATION = re.compile(r"[^\w\s,]")


def name_key(value: str) -> str:
    """A display name as `source.fields.manager_name` compares it.

    Case, surrounding and repeated whitespace and punctuation (``.``, ``'``, ``-``) do not
    count, and ``Last, First Middle`` reads as ``First Middle Last``: ``Brandon R.
    LeBlanc`` and ``LeBlanc, Brandon  R`` are one key. Only the first comma turns the
    order; a name without one is taken as written.
    """
    folded = _PUNCTUATION.sub("", value.casefold())
    last, comma, rest = folded.partition(",")
    if comma:
        folded = f"{rest.replace(',', ' ')} {last}"
    return " ".join(folded.split())


@dataclass(frozen=True, slots=True)
class UnknownManager:
    """A manager reference matching nobody, accepted by `source.unknown_manager = "top"`."""

    field: str  # the column (or template) it was read from
    value: str  # as written in the export
    reports: int  # how many people name it: each is top of the org
    first: str  # location of the first of them


# ---------------------------------------------------------------- reading people


@dataclass(frozen=True)
class Directory:
    """The export read as people.

    `people` are the kept, valid people in export order. When `ok` is false the run must
    stop; `people` then holds only what could be built, for diagnostics.
    """

    people: tuple[Person, ...]
    excluded: int  # rows dropped by filters (not errors)
    excluded_by_reason: Mapping[str, int]  # e.g. {"filter.active_status": 12}
    problems: tuple[Problem, ...]  # fatal
    warnings: tuple[Problem, ...]  # logged, not fatal
    rows_read: int = 0
    # With source.unknown_manager = "top": managers absent from the export, by value.
    unknown_managers: tuple[UnknownManager, ...] = ()

    @property
    def ok(self) -> bool:
        return not self.problems


def _lower(values: Sequence[str]) -> Sequence[str]:
    """The values lower-cased: `values` itself when that changes none (e-mails mostly are;
    "|" has no case, so joined they lower-case as each would)."""
    whole = joined(values)
    return values if whole == whole.lower() else list(map(str.lower, values))


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


class _Report:
    """Collects problems and warnings with the export position they belong to."""

    def __init__(self) -> None:
        self.problems: list[tuple[int, Problem]] = []
        self.warnings: list[tuple[int, Problem]] = []

    def fatal(self, position: int, location: str, field: str, value: str, expected: str) -> None:
        self.problems.append((position, Problem(location, field, value, expected)))

    def warn(self, position: int, location: str, field: str, value: str, expected: str) -> None:
        self.warnings.append((position, Problem(location, field, value, expected, fatal=False)))

    def sorted(
        self, keep_warning: Callable[[int], bool]
    ) -> tuple[tuple[Problem, ...], tuple[Problem, ...]]:
        def order(item: tuple[int, Problem]) -> tuple[int, str, str, str]:
            return (item[0], item[1].field, item[1].expected, item[1].value)

        problems = tuple(p for _, p in sorted(self.problems, key=order))
        warnings = tuple(p for pos, p in sorted(self.warnings, key=order) if keep_warning(pos))
        return problems, warnings


def read_people(
    export_name: str,
    columns: Sequence[str],
    rows: Iterable[SourceRow] | RowTable,
    fields: FieldSettings,
    filters: FilterSettings,
    *,
    also_used: Collection[str] = (),
    null_values: Collection[str] = DEFAULT_NULL_VALUES,
    unknown_manager: str = "refuse",
) -> Directory:
    """Normalise, filter and validate the rows of one export; every problem is reported.

    `rows`: the export's rows, one by one or as one table (`Export.table()`, what a run
    passes). `also_used`: columns hrsync reads beyond `[source.fields]` and the filters
    (e.g. `template_names(mapping.team_name)`), checked like them; names that are not
    columns of the export are ignored. `null_values`: cells that read as empty
    (`source.null_values`). `unknown_manager`: "top" accepts a manager reference that
    matches nobody as "no manager", collected in `Directory.unknown_managers`.
    """
    configured = {key: getattr(fields, key) for key in LOGICAL_FIELDS if getattr(fields, key)}
    # How messages name a field: its column, or the setting and its template.
    labels = {
        key: f"source.fields.{key} {value!r}" if is_template(value) else value
        for key, value in configured.items()
    }
    nulls = frozenset(value.strip() for value in null_values)
    report = _Report()
    row_filter, unknown = build_row_filter(filters, fields, columns)
    if _check_columns(export_name, columns, configured, unknown, report):
        problems, _ = report.sorted(lambda _: True)
        return Directory((), 0, {}, problems, ())
    _warn_unused_status(export_name, columns, configured, filters, report)

    table = rows if isinstance(rows, RowTable) else RowTable.of_rows(rows, columns)
    data = _Rows(table, configured, nulls)
    present = set(columns)
    template_names_used = [
        name
        for value in configured.values()
        if is_template(value)
        for name in template_names(value)
    ]
    filtered_on = [rule.column for rule in (*row_filter.include, *row_filter.exclude)]
    used = tuple(
        dict.fromkeys(
            c
            for c in (*configured.values(), *template_names_used, *filtered_on, *also_used)
            if c in present
        )
    )
    _check_values(data, used, report)
    data.reason = row_filter.reasons(data.column, data.count, status=data.status)

    # Row positions as one list of ints, shared by every list and index of rows below
    # (a range would make a new int each time it is walked).
    everyone = data.positions
    kept: Sequence[int] = everyone
    dropped: list[int] = []
    if data.reason.count(None) != data.count:
        is_kept = list(map(is_, data.reason, repeat(None)))
        kept = list(compress(everyone, is_kept))
        dropped = list(compress(everyone, map(not_, is_kept)))
    if not data.count:
        report.fatal(
            -1,
            export_name,
            "rows",
            "",
            "must hold at least one person, but the export has its header and no rows "
            "(an export with no people is never applied: it would archive every team)",
        )
    elif not kept:
        _report_all_filtered(export_name, data, filters, configured, report)
    valid = _validate_rows(data, kept, labels, report)
    kept_by_id = _Index(kept, data.employee_id)
    kept_by_email = _Index(kept, data.email)
    dropped_by_id = _first(data, dropped, data.employee_id)
    dropped_by_email = _first(data, dropped, data.email)
    by_name = "manager_name" in configured
    name_keys = list(map(name_key, data.name)) if by_name else data.blank
    names = _Names(
        _Index(kept if by_name else (), name_keys),
        _first(data, dropped if by_name else (), name_keys),
    )
    _report_duplicates(data, kept_by_id.repeated, labels["employee_id"], "employee id", report)
    _report_duplicates(data, kept_by_email.repeated, labels["email"], "e-mail", report)
    refs = _Refs(kept_by_id, kept_by_email, dropped_by_id, dropped_by_email, names)
    # Reporting lines by row are for filter.root only: without it they are not kept.
    links = bool(filters.root and filters.root.strip())
    absent = _resolve_managers(
        data, kept, refs, labels, report, top=unknown_manager == "top", links=links
    )
    _report_unknown_managers(export_name, absent, report)
    if links:
        _link_dropped(data, dropped, refs)
    _report_cycles(data, kept, kept_by_id, labels, report)

    in_org = _apply_root(export_name, filters.root, data, kept, dropped, refs, report)
    reasons: dict[str, int] = {}
    for i in dropped:
        reason = data.reason[i]
        assert reason is not None
        reasons[reason] = reasons.get(reason, 0) + 1
    if in_org is not None:
        outside = sum(1 for i in kept if i not in in_org)
        if outside:
            reasons[ROOT_REASON] = outside

    def keeps(position: int) -> bool:
        if position < 0:
            return True  # about the whole export
        return data.reason[position] is None and (in_org is None or position in in_org)

    people = _people(data, valid, kept_by_id, in_org)
    if not people and not report.problems:
        # Every path to an empty org above is its own problem; this one keeps it so.
        report.fatal(-1, export_name, "people", "0", "must number at least one")
    problems, warnings = report.sorted(keeps)
    return Directory(
        people=people,
        excluded=sum(reasons.values()),
        excluded_by_reason=reasons,
        problems=problems,
        warnings=warnings,
        rows_read=data.count,
        unknown_managers=tuple(absent),
    )


ROOT_REASON = "filter.root"


def _check_values(data: _Rows, used: Sequence[str], report: _Report) -> None:
    """Every used value of every row, kept or filtered: no control character, no value over
    `MAX_FIELD_CHARS`. A template's columns are used, so its rendered text needs no check."""
    suspicious: set[int] = set()
    for column in used:
        values = data.column(column)
        # A printable column has no control character; the length is one C pass.
        unprintable = not data.printable(column) and not "".join(values).isprintable()
        if unprintable or (not data.short and max(map(len, values), default=0) > MAX_FIELD_CHARS):
            suspicious.update(
                i
                for i, value in enumerate(values)
                if len(value) > MAX_FIELD_CHARS or _CONTROL.search(value)
            )
    for i in sorted(suspicious):
        _report_unusable(i, data.location[i], data.values(i), used, report)


_CONTROL_NAMES = {
    "\x00": "NUL",
    "\n": "a line break, LF",
    "\r": "a line break, CR",
    "\x1b": "ESC",
    "\x7f": "DEL",
}


def _report_unusable(
    position: int,
    location: str,
    values: Mapping[str, str],
    columns: Sequence[str],
    report: _Report,
) -> None:
    """Report each used value of one row that is over the length limit or holds a control
    character (the row's joined text showed there is at least one)."""
    for column in columns:
        value = values.get(column, "")
        if len(value) > MAX_FIELD_CHARS:
            report.fatal(
                position,
                location,
                column,
                value[:40] + "…",
                f"must be at most {MAX_FIELD_CHARS:,} characters, but holds {len(value):,}",
            )
            continue
        found = _CONTROL.search(value)
        if found is None:
            continue
        at = found.start()
        char = found.group()
        name = _CONTROL_NAMES.get(char) or unicodedata.name(char, "a control character")
        report.fatal(
            position,
            location,
            column,
            value[max(0, at - 30) : at + 30],
            f"must not contain control characters (only a tab is allowed): found "
            f"U+{ord(char):04X} ({name}) at character {at + 1}",
        )


def _check_columns(
    export_name: str,
    columns: Sequence[str],
    configured: Mapping[str, str],
    unknown: Sequence[UnknownField],
    report: _Report,
) -> bool:
    """Report configured columns the export lacks (one problem) and unknown filter fields."""
    present = set(columns)
    missing: list[tuple[str, str, str]] = []  # (key, column, the template naming it or "")
    for key, value in configured.items():
        if is_template(value):
            # Its shape first (braces, filters); its columns below, with the others.
            where = f"source.fields.{key}"
            for problem in check_template(value, template_names(value), where=where):
                report.fatal(-1, export_name, "template", value, problem)
            missing.extend(
                (key, name, value) for name in template_names(value) if name not in present
            )
        elif value not in present:
            missing.append((key, value, ""))
    found = capped(columns, empty="(none)")
    if missing:
        details = []
        for key, column, template in missing:
            close = closest_name(column, [c for c in columns if c not in configured.values()])
            hint = f", did you mean {close!r}?" if close else ""
            setting = f"source.fields.{key} {template!r}" if template else f"source.fields.{key}"
            details.append(f"{column!r} ({setting}{hint})")
        report.fatal(
            -1,
            export_name,
            capped(column for _, column, _ in missing),
            found,
            f"must be {'a column' if len(missing) == 1 else 'columns'} of the export: "
            f"missing {capped(details, sep='; ')}; columns found",
        )
    for bad in unknown:
        hint = f"; did you mean {bad.suggestion!r}?" if bad.suggestion else ""
        if (
            bad.field in configured
            and configured[bad.field] not in present
            and not is_template(configured[bad.field])
        ):
            continue  # already reported as a missing column
        report.fatal(
            -1,
            export_name,
            bad.setting,
            bad.field,
            f"must name a column of the export or a field of [source.fields]{hint} "
            f"(columns: {found})",
        )
    return bool(report.problems)


def _warn_unused_status(
    export_name: str,
    columns: Sequence[str],
    configured: Mapping[str, str],
    filters: FilterSettings,
    report: _Report,
) -> None:
    """`status` is unset by default now: an export with a status column whose config names
    none keeps its terminated rows, so say so rather than sync them silently."""
    if "status" in configured or not filters.active_status:
        return
    found = [c for c in columns if c.casefold().replace("_", " ").strip() in _STATUS_NAMES]
    if found:
        report.warn(
            -1,
            export_name,
            "source.fields.status",
            "",
            f"is not set, so filter.active_status {list(filters.active_status)!r} is not "
            f"applied although the export has {capped(repr(c) for c in found)}: every row is "
            f'kept, whatever its status; set e.g. source.fields.status = "{found[0]}"',
        )


_STATUS_NAMES = frozenset({"status", "employment status", "worker status", "employee status"})


def _report_all_filtered(
    export_name: str,
    data: _Rows,
    filters: FilterSettings,
    columns: Mapping[str, str],
    report: _Report,
) -> None:
    counts: dict[str, int] = {}
    for reason in data.reason:
        assert reason is not None
        counts[reason] = counts.get(reason, 0) + 1
    by_reason = capped(f"{count} by {reason}" for reason, count in sorted(counts.items()))
    statuses = sorted(set(data.status))
    seen = ""
    if STATUS_REASON in counts:
        shown = capped(repr(s) for s in statuses)
        seen = f"; the {columns.get('status', 'status')} values in the export are {shown}"
    report.fatal(
        -1,
        export_name,
        "filters",
        capped(sorted(counts)),
        f"must keep at least one of the {data.count} rows, but all were excluded "
        f"({by_reason}){seen}; filter.active_status is {list(filters.active_status)!r}",
    )


def _validate_rows(
    data: _Rows, kept: Sequence[int], columns: Mapping[str, str], report: _Report
) -> Sequence[int]:
    """Report row-level problems; return the rows good enough to become people."""
    ids, emails, names = data.employee_id, data.email, data.name
    valid_email = valid_emails(emails)
    if all(_all_kept(column, kept) for column in (valid_email, ids, names)):
        return kept
    faulty = [i for i in kept if not (ids[i] and names[i] and valid_email[i])]
    id_column, email_column, name_column = columns["employee_id"], columns["email"], columns["name"]
    for i in faulty:
        location = data.location[i]
        if not ids[i]:
            report.fatal(i, location, id_column, "", "must not be empty")
        if not emails[i]:
            report.fatal(
                i,
                location,
                email_column,
                "",
                "must not be empty: every person synced to DX needs an e-mail address",
            )
        elif not valid_email[i]:
            report.fatal(i, location, email_column, emails[i], f"must be {EMAIL_RULE}")
        if not names[i]:
            report.warn(
                i,
                location,
                name_column,
                "",
                "should not be empty; the e-mail address stands in for the name",
            )
    return [i for i in kept if ids[i] and valid_email[i]]


class _Index:
    """Rows by a key: the first row for each key, and every row for keys held more than once."""

    def __init__(self, rows: Sequence[int], keys: Sequence[str]) -> None:
        held = _take(keys, rows)
        # Built backwards, so that the first row of each key is the one that stays.
        self.first: dict[str, int] = dict(zip(reversed(held), reversed(rows), strict=True))
        self.first.pop("", None)
        self.repeated: dict[str, list[int]] = {}
        if len(self.first) + held.count("") != len(held):
            for key, row in zip(held, rows, strict=True):
                if key and self.first[key] != row:
                    self.repeated.setdefault(key, [self.first[key]]).append(row)


def _first(data: _Rows, rows: Iterable[int], keys: Sequence[str]) -> dict[str, int]:
    """One row per key; on a tie the earliest location, whatever the order of the rows."""
    firsts: dict[str, int] = {}
    for row in rows:
        key = keys[row]
        if not key:
            continue
        held = firsts.get(key)
        if held is None or _natural(data.location[row]) < _natural(data.location[held]):
            firsts[key] = row
    return firsts


def _report_duplicates(
    data: _Rows, groups: Mapping[str, list[int]], column: str, what: str, report: _Report
) -> None:
    for value, rows in groups.items():
        # Every row after the first is told once, pointing back at the first; the words
        # are the same for all of them, so a repeated block of rows (an API serving a
        # page twice) groups into one line per column instead of one line per pair.
        first, *later = sorted(rows, key=lambda i: _natural(data.location[i]))
        for row in later:
            report.fatal(
                row,
                f"{data.location[row]} (first at {data.location[first]})",
                column,
                value,
                f"must be unique, but the same {what} is on an earlier row",
            )


def _natural(text: str) -> list[tuple[int, str]]:
    """Sort key that puts 'line 9' before 'line 10'."""
    return [(int(part), "") if part.isdigit() else (0, part) for part in re.split(r"(\d+)", text)]


@dataclass(frozen=True, slots=True)
class _Names:
    """Rows by `name_key` of their name, for `source.fields.manager_name` (empty when unset)."""

    kept: _Index
    dropped: Mapping[str, int]


@dataclass(frozen=True, slots=True)
class _Refs:
    """Where a manager reference may point: kept rows first, then filtered-out ones."""

    kept_by_id: _Index
    kept_by_email: _Index
    dropped_by_id: Mapping[str, int]
    dropped_by_email: Mapping[str, int]
    names: _Names

    def by_id(self, ref: str) -> int | None:
        return _lookup(ref, self.kept_by_id, self.dropped_by_id)

    def by_email(self, ref: str) -> int | None:
        return _lookup(ref, self.kept_by_email, self.dropped_by_email)

    def by_name(self, written: str) -> int | None:
        return _lookup(name_key(written), self.names.kept, self.names.dropped)


def _lookup(ref: str, kept: _Index, dropped: Mapping[str, int]) -> int | None:
    if not ref:
        return None
    found = kept.first.get(ref)
    return dropped.get(ref) if found is None else found


def _resolve_plain_ids(
    data: _Rows, kept: Sequence[int], kept_by_id: _Index, *, links: bool
) -> Sequence[int]:
    """The common case in bulk: a manager given by an id alone (no e-mail beside it to
    compare) that names one kept person other than the row itself. Returns the rows left
    for the exact, row-by-row rules (`_resolve_managers`)."""
    if kept_by_id.repeated or not any(data.manager_id_ref):
        return kept  # an id held twice needs the exact rules for every row naming it
    references = _take(data.manager_id_ref, kept)
    nobody = -1  # the position of no row: where a reference matches no kept person
    chosen = list(map(kept_by_id.first.get, references, repeat(nobody)))
    # Left for the exact rules: no match (or no id given), the row itself, an e-mail beside.
    left = set(compress(kept, map(nobody.__eq__, chosen)))
    # No id is held twice here, so a row names itself exactly when its manager is its row.
    if any(map(eq, chosen, kept)):
        left.update(r for r, c in zip(kept, chosen, strict=True) if c == r)
    if any(data.manager_email_ref):
        left.update(r for r in kept if data.manager_email_ref[r])
    if links:
        data.up.update(zip(kept, chosen, strict=True))
    # Found by id, the manager's id equals the reference. The manager's own id string is
    # kept, not the reference's copy of it: every later look-up by a manager's id (teams,
    # cycles, leads) then matches by identity instead of comparing text.
    owners = [*data.employee_id, None]  # owners[nobody] is None
    _scatter(data.manager, kept, _pick(owners, chosen))
    for row in left:
        data.up[row] = data.manager[row] = None
    return sorted(left)


def _resolve_managers(
    data: _Rows,
    kept: Sequence[int],
    refs: _Refs,
    columns: Mapping[str, str],
    report: _Report,
    *,
    top: bool,
    links: bool,
) -> list[UnknownManager]:
    """Each kept row's manager; with `top`, references matching nobody are returned
    (grouped by value) instead of reported."""
    id_column = columns.get("manager_id", "")
    email_column = columns.get("manager_email", "")
    name_column = columns.get("manager_name", "")
    absent: dict[tuple[str, str], list[int]] = {}
    ids, emails, reason = data.employee_id, data.email, data.reason
    id_refs, email_refs, name_refs = (
        data.manager_id_ref,
        data.manager_email_ref,
        data.manager_name_ref,
    )
    manager, up = data.manager, data.up
    for row in _resolve_plain_ids(data, kept, refs.kept_by_id, links=links):
        # The id wins when several are given, then the e-mail, then the name.
        written: str
        if id_refs[row]:
            ref = written = id_refs[row]
            column, kept_by, dropped_by = id_column, refs.kept_by_id, refs.dropped_by_id
            what, own = "employee id", ids[row]
        elif email_refs[row]:
            ref = written = email_refs[row]
            column, kept_by, dropped_by = email_column, refs.kept_by_email, refs.dropped_by_email
            what, own = "e-mail", emails[row]
        elif name_refs[row]:
            written, ref = name_refs[row], name_key(name_refs[row])
            column, kept_by, dropped_by = name_column, refs.names.kept, refs.names.dropped
            what, own = "name", None
        else:
            continue
        chosen = kept_by.first.get(ref)
        if chosen is None:
            chosen = dropped_by.get(ref)
        if chosen is None:
            if top:
                absent.setdefault((column, written), []).append(row)
                continue
            report.fatal(
                row,
                data.location[row],
                column,
                written,
                f"must be the {what} of a person in the export, but it matches nobody"
                + ' (source.unknown_manager = "top" makes such people top of the org)',
            )
            continue
        if what == "name" and ref in kept_by.repeated:
            # Ids and e-mails held twice are fatal anyway; a name held twice is fine until
            # someone's manager is given by it alone.
            same = sorted(kept_by.repeated[ref], key=lambda i: _natural(data.location[i]))
            listed = capped((f"{data.describe(i)} at {data.location[i]}" for i in same), sep="; ")
            report.fatal(
                row,
                data.location[row],
                column,
                written,
                f"must name one person, but it matches {len(same)}: {listed}; "
                "give the manager by id or e-mail too (source.fields.manager_id or "
                "manager_email), which wins over the name",
            )
            continue
        up[row] = chosen
        if ref in kept_by.repeated:
            data.ambiguous.add(row)
        if reason[chosen] is not None:
            report.warn(
                row,
                data.location[row],
                column,
                written,
                f"names {data.describe(chosen)} at {data.location[chosen]}, who is excluded "
                f"by {reason[chosen]}; {data.describe(row)} is kept without a manager",
            )
            continue
        if chosen == row or ref == own:
            report.fatal(
                row,
                data.location[row],
                column,
                written,
                "must name someone else: a person cannot be their own manager",
            )
            up[row] = None
            continue
        manager[row] = ids[chosen] or None
        if not (id_refs[row] and email_refs[row]):
            continue
        by_email = refs.by_email(email_refs[row])
        if by_email is not None and by_email != chosen:
            report.warn(
                row,
                data.location[row],
                email_column,
                email_refs[row],
                f"names {data.describe(by_email)}, but {id_column} names "
                f"{data.describe(chosen)}; the employee id wins",
            )
    return [
        UnknownManager(column, value, len(rows), data.location[rows[0]])
        for (column, value), rows in absent.items()
    ]


def _report_unknown_managers(
    export_name: str, absent: Sequence[UnknownManager], report: _Report
) -> None:
    """One warning per manager absent from the export: the people naming them are top."""
    for unknown in absent:
        people = "person naming it is" if unknown.reports == 1 else "people naming it are"
        report.warn(
            -1,
            export_name,
            unknown.field,
            unknown.value,
            f"matches nobody in the export; {unknown.reports} {people} top of the org "
            f'(first at {unknown.first}; source.unknown_manager = "top")',
        )


def _link_dropped(data: _Rows, dropped: Sequence[int], refs: _Refs) -> None:
    """Reporting lines through filtered-out rows, so filter.root still sees the whole org."""
    for row in dropped:
        up = refs.by_id(data.manager_id_ref[row])
        if up is None:
            up = refs.by_email(data.manager_email_ref[row])
        if up is None:
            up = refs.by_name(data.manager_name_ref[row])
        data.up[row] = up if up != row else None


def _report_cycles(
    data: _Rows,
    kept: Sequence[int],
    kept_by_id: _Index,
    columns: Mapping[str, str],
    report: _Report,
) -> None:
    # A duplicated id has no single manager, and a reference to a duplicated id or e-mail no
    # single target; both are already fatal, so they end chains here, which keeps the
    # reported cycles the same whatever the order of the rows.
    repeated, ambiguous = kept_by_id.repeated, data.ambiguous
    ids, manager = data.employee_id, data.manager
    if repeated or ambiguous:
        manager_of = {
            ids[i]: manager[i]
            for i in kept
            if manager[i] and ids[i] and i not in ambiguous and ids[i] not in repeated
        }
    else:
        # No id held twice, no reference to one. Everyone on a cycle is the manager of the
        # one before, so the walk needs only the managers, each with their own manager.
        row_of = kept_by_id.first
        bosses = dict.fromkeys(manager)
        bosses.pop(None, None)
        manager_of = {boss: manager[row_of[boss]] for boss in bosses if boss in row_of}
    column = (
        columns.get("manager_id") or columns.get("manager_email") or columns.get("manager_name", "")
    )
    for cycle in forest(manager_of).cycles:
        # From the smallest id, so a cycle reads the same whatever the order of the rows.
        first = cycle.index(min(cycle))
        chain = cycle[first:] + cycle[:first]
        owner = kept_by_id.first[chain[0]]
        report.fatal(
            owner,
            data.location[owner],
            column,
            capped([*chain, chain[0]], sep=" → "),
            "must not form a reporting cycle (each id's manager is the next one)",
        )


def _apply_root(
    export_name: str,
    root: str | None,
    data: _Rows,
    kept: Sequence[int],
    dropped: Sequence[int],
    refs: _Refs,
    report: _Report,
) -> set[int] | None:
    """Positions of the kept rows in the org under filter.root (None: no root filter)."""
    if root is None or not root.strip():
        return None
    wanted = root.strip()
    top = refs.kept_by_id.first.get(wanted)
    if top is None:
        top = refs.kept_by_email.first.get(normalise_email(wanted))
    if top is None:
        gone = refs.dropped_by_id.get(wanted)
        if gone is None:
            gone = refs.dropped_by_email.get(normalise_email(wanted))
        why = (
            f"names {data.describe(gone)} at {data.location[gone]}, who is excluded by "
            f"{data.reason[gone]}"
            if gone is not None
            else "must be the employee id or e-mail of a person in the export"
        )
        report.fatal(-1, export_name, "filter.root", wanted, why)
        return None
    below: dict[int, list[int]] = {}
    for row in [*kept, *dropped]:
        up = data.up.get(row)
        if up is not None:
            below.setdefault(up, []).append(row)
    in_org: set[int] = set()
    visited = {top}
    queue = [top]
    while queue:
        row = queue.pop()
        if data.reason[row] is None:
            in_org.add(row)
        for child in below.get(row, ()):
            if child not in visited:
                visited.add(child)
                queue.append(child)
    data.manager[top] = None
    return in_org


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


def _people(
    data: _Rows, valid: Sequence[int], kept_by_id: _Index, in_org: set[int] | None
) -> tuple[Person, ...]:
    first_by_id = kept_by_id.first
    ids = data.employee_id
    rows = valid
    if in_org is not None or kept_by_id.repeated:
        # A duplicate id is reported; its first row stands for diagnostics.
        rows = [i for i in valid if (in_org is None or i in in_org) and first_by_id[ids[i]] == i]
    if not rows:
        return ()
    # Every row is built and the people's rows picked by a mask, in C: cheaper than
    # picking each of eight columns when most rows are people (the usual case).
    emails, names = data.email, data.name
    if not _all_kept(names, rows):
        names = [name or email for name, email in zip(names, emails, strict=True)]
    # Collapsed already and none blank (the usual case): taken as they are.
    departments: Sequence[str | None] = data.department
    if not (data.department_collapsed and all(data.department)):
        normalised = {v: collapse_whitespace(v) or None for v in set(data.department)}
        departments = list(map(normalised.__getitem__, data.department))
    statuses = data.status
    columns = (
        ids,
        emails,
        names,
        data.manager,
        departments,
        statuses if all(statuses) else [status or None for status in statuses],
        # A location the export writes when asked (`LineLocations`) stays unwritten: each
        # person holds their row's position in it instead (see `Person.location`).
        data.positions if isinstance(data.location, LineLocations) else data.location,
        data.row,
        data.row_shape,
    )
    built: Iterable[tuple[object, ...]] = zip(*columns, strict=True)
    if len(rows) < data.count:
        chosen = bytearray(data.count)
        for row in rows:
            chosen[row] = 1
        built = compress(built, chosen)
    return tuple(map(_new_person, built))
