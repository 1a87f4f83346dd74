"""Person, normalisation of export rows, and validation of the export (pure).

CONTRACT (shared with mapping, identity and the engine; change only with care):
- `SourceRow` (from `hrsync.sources.rows`, beside the readers) is what a reader yields.
- `Person` is one validated, normalised person.
- `Problem` names location, field, value and what was expected.

`read_people` turns an export's rows into a `Directory`, in this order:

0. Fields: a `[source.fields]` value with braces is a template over the row's columns
   (hrsync.core.templates), rendered once per row; empty when all its placeholders are.
   A cell equal to one of `source.null_values` is empty, in every column.
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

import operator
import re
import unicodedata
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass, field

from hrsync.core.emails import EMAIL_RULE, is_valid_email, normalise_email
from hrsync.core.filters import (
    LOGICAL_FIELDS,
    STATUS_REASON,
    UnknownField,
    build_row_filter,
    closest_name,
)
from hrsync.core.listing import capped
from hrsync.core.settings import DEFAULT_NULL_VALUES, FieldSettings, FilterSettings
from hrsync.core.templates import Template, check_template, is_template, template_names
from hrsync.core.tree import forest
from hrsync.sources.rows import EXTRA_VALUES, MAX_FIELD_CHARS, RowValues, SourceRow


@dataclass(frozen=True, slots=True)
class Person:
    employee_id: str
    email: str  # lower-cased, validated
    name: str  # trimmed, inner whitespace collapsed
    manager_id: str | None  # the manager's employee_id, resolved even when the export gives e-mails
    department: str | None
    status: str | None
    location: str  # where the row came from, for messages
    # Every column of the row by its HR name (normalised text), for templates and filters.
    attributes: Mapping[str, str] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class Problem:
    location: str  # "people.csv line 12", or the file name for whole-file problems
    field: str  # HR column name, or logical field name
    value: str
    expected: str  # what was expected, in words
    fatal: bool = True

    def __str__(self) -> str:
        kind = "" if self.fatal else "warning: "
        return f"{kind}{self.location}: {self.field} {self.expected}, got {self.value!r}"


def export_columns(people: Iterable[Person]) -> set[str]:
    """Every column any person's row has (for templates over columns: team names,
    attributes)."""
    columns: set[str] = set()
    last: object = None
    for person in people:
        # Rows of one export share one column index: read its keys once, not per person.
        attributes = person.attributes
        keys = attributes.index if isinstance(attributes, RowValues) else attributes
        if keys is not last:
            columns.update(keys)
            last = keys
    return columns


# ---------------------------------------------------------------- row values

# Unicode category Cc except tab: C0 controls (NUL, CR, LF, ESC, ...), DEL and C1 controls.
_CONTROL = re.compile("[\x00-\x08\x0a-\x1f\x7f-\x9f]")

# ---------------------------------------------------------------- normalisation
# Every value is trimmed as it is read (`_trimmed`); names and departments also go through
# `normalise_name`, e-mails through `normalise_email` (hrsync.core.emails, which the config's
# sync.notify_email follows too).


def normalise_name(value: str) -> str:
    """Trimmed, with every run of whitespace (tabs, no-break spaces, ...) one space."""
    # Most names are already so: every whitespace but the plain space is unprintable, so
    # three C tests spare building a list and a new string per person.
    if "  " in value or not value.isprintable() or value != value.strip():
        return " ".join(value.split())
    return value


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


class _Row:
    __slots__ = (
        "ambiguous",
        "attributes",
        "department",
        "email",
        "employee_id",
        "location",
        "manager",
        "manager_email_ref",
        "manager_id_ref",
        "manager_name_ref",
        "name",
        "position",
        "reason",
        "status",
        "up",
    )

    def __init__(
        self,
        position: int,
        location: str,
        attributes: Mapping[str, str],
        picked: _Picked,
        reason: str | None,
    ) -> None:
        self.position = position
        self.location = location
        self.attributes = attributes
        self.reason = reason  # None: kept; else the filter setting that drops it
        employee_id, email, name, manager_id, manager_email, department, status, manager_name = (
            picked
        )
        self.employee_id = employee_id
        self.email = email.lower()  # values arrive trimmed
        self.name = normalise_name(name)
        self.manager_id_ref = manager_id
        self.manager_email_ref = manager_email.lower()
        self.manager_name_ref = manager_name
        self.department = department
        self.status = status
        self.manager: str | None = None  # the resolved manager's employee id
        self.up: _Row | None = None  # the manager's row, kept or not (for filter.root)
        self.ambiguous = False  # the manager reference matches several kept people


# The logical fields a _Row picks from each record, in the order of `picked`.
_Picked = tuple[str, str, str, str, str, str, str, str]
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
_TEMPLATED = "\x00template"  # stands in for a templated field's column: no column has it


class _Picker:
    """Takes the logical fields out of a record; fast for CSV rows sharing one column index.

    A field configured as a template (``{First} {Last}``) is rendered from the row's cells
    by a renderer compiled once per column index (hrsync.core.templates).
    """

    def __init__(self, configured: Mapping[str, str]) -> None:
        self.columns = tuple(
            _TEMPLATED if is_template(configured.get(key, "")) else configured.get(key, "")
            for key in _PICKED
        )
        self.templates = tuple(
            (i, Template(configured[key]))
            for i, key in enumerate(_PICKED)
            if is_template(configured.get(key, ""))
        )
        self._index: Mapping[str, int] | None = None
        self._getter: Callable[[tuple[str, ...]], _Picked] = operator.itemgetter(0)
        self._renderers: tuple[tuple[int, Callable[[Sequence[str]], str]], ...] = ()
        self._pad = False

    @property
    def template_columns(self) -> tuple[str, ...]:
        return tuple(name for _, template in self.templates for name in template.names)

    def __call__(self, record: Mapping[str, str]) -> _Picked:
        if isinstance(record, RowValues):
            if record.index is not self._index:
                self._prepare(record.index)
            cells = record.cells + _BLANK if self._pad else record.cells
            picked = self._getter(cells)
            if not self._renderers:
                return picked
            out = list(picked)
            for position, render in self._renderers:
                out[position] = render(cells)
            return tuple(out)  # type: ignore[return-value]  # eight fields, as picked
        values = [
            record.get(column, "") if column and column != _TEMPLATED else ""
            for column in self.columns
        ]
        for position, template in self.templates:
            values[position] = template.render(
                lambda name: record.get(name, ""), blank_if_empty=True
            )
        a, b, c, d, e, f, g, h = values
        return a, b, c, d, e, f, g, h

    def _prepare(self, index: Mapping[str, int]) -> None:
        # A field the export lacks reads the blank appended after the last column.
        blank = len(index)
        positions = [index.get(column, blank) if column else blank for column in self.columns]
        self._index = index
        self._renderers = tuple(
            (position, template.on_cells(index, blank_if_empty=True))
            for position, template in self.templates
        )
        self._pad = blank in positions or any(t.missing(index) for _, t in self.templates)
        self._getter = operator.itemgetter(*positions)


_BLANK = ("",)


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
    rows: Iterable[SourceRow],
    fields: FieldSettings,
    filters: FilterSettings,
    *,
    also_used: Collection[str] = (),
    null_values: Collection[str] = DEFAULT_NULL_VALUES,
    unknown_manager: str = "refuse",
) -> Directory:
    """Normalise, filter and validate the rows of one export; every problem is reported.

    `also_used`: columns hrsync reads beyond `[source.fields]` and the filters (e.g.
    `template_columns(mapping.team_name)`), checked like them; names that are not columns
    of the export are ignored. `null_values`: cells that read as empty
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

    all_rows: list[_Row] = []
    width = len(columns)
    pick = _Picker(configured)
    present = set(columns)
    filtered_on = [rule.column for rule in (*row_filter.include, *row_filter.exclude)]
    used = tuple(
        dict.fromkeys(
            c
            for c in (*configured.values(), *pick.template_columns, *filtered_on, *also_used)
            if c in present
        )
    )
    # The picked fields are at hand for every row; other used columns cost a lookup each.
    extra = tuple(c for c in used if c not in pick.columns)
    control = _CONTROL.search
    join = " ".join
    reason_of = row_filter.reason
    for position, source in enumerate(rows):
        values = source.values
        if type(values) is not RowValues and EXTRA_VALUES in values:
            report.fatal(
                position,
                source.location,
                "row",
                values[EXTRA_VALUES],
                f"must have at most {width} values like the header (one more usually means a "
                f"value holds an unquoted delimiter)",
            )
        attributes = _trimmed(values, nulls)
        picked = pick(attributes)
        # Every used value is a cell of the row (a template's too: only its cells are
        # checked), so a row whose cells are all short and printable needs no check by column:
        # one join per row instead of one per field. isprintable is false for every control
        # character (and for a few harmless ones, such as a tab or a no-break space): the
        # cheap test first, the exact one after.
        whole = join(attributes.cells) if type(attributes) is RowValues else None
        if whole is None or len(whole) > MAX_FIELD_CHARS or not whole.isprintable():
            text = join([*picked, *[attributes.get(column, "") for column in extra]])
            if len(text) > MAX_FIELD_CHARS or (not text.isprintable() and control(text)):
                _report_unusable(position, source.location, attributes, used, report)
        reason = reason_of(attributes, picked[6])
        all_rows.append(_Row(position, source.location, attributes, picked, reason))

    kept = [row for row in all_rows if row.reason is None]
    if not all_rows:
        report.fatal(
            -1,
            export_name,
            "rows",
            "",
            "must hold at least one person, but the export has its header and no rows "
            "(an export with no people is never applied: it would archive every team)",
        )
    elif not kept:
        _report_all_filtered(export_name, all_rows, filters, configured, report)
    valid = _validate_rows(kept, labels, report)
    kept_by_id = _Index(kept, _EMPLOYEE_ID)
    kept_by_email = _Index(kept, _EMAIL_OF)
    dropped = [row for row in all_rows if row.reason is not None]
    dropped_by_id = _first(dropped, _EMPLOYEE_ID)
    dropped_by_email = _first(dropped, _EMAIL_OF)
    by_name = "manager_name" in configured
    names = _Names(
        _Index(kept if by_name else (), _NAME_KEY),
        _first(dropped if by_name else (), _NAME_KEY),
    )
    _report_duplicates(kept_by_id.repeated, labels["employee_id"], "employee id", report)
    _report_duplicates(kept_by_email.repeated, labels["email"], "e-mail", report)
    absent = _resolve_managers(
        kept,
        kept_by_id,
        kept_by_email,
        dropped_by_id,
        dropped_by_email,
        names,
        labels,
        report,
        top=unknown_manager == "top",
    )
    _report_unknown_managers(export_name, absent, report)
    _link_dropped(dropped, kept_by_id, kept_by_email, dropped_by_id, dropped_by_email, names)
    _report_cycles(kept, kept_by_id, labels, report)

    in_org = _apply_root(
        export_name,
        filters.root,
        kept,
        kept_by_id,
        kept_by_email,
        dropped,
        dropped_by_id,
        dropped_by_email,
        report,
    )
    reasons: dict[str, int] = {}
    for row in dropped:
        assert row.reason is not None
        reasons[row.reason] = reasons.get(row.reason, 0) + 1
    if in_org is not None:
        outside = sum(1 for row in kept if row.position not in in_org)
        if outside:
            reasons[ROOT_REASON] = outside
    kept_positions = {row.position for row in kept}

    def keeps(position: int) -> bool:
        if position < 0:
            return True  # about the whole export
        return position in kept_positions and (in_org is None or position in in_org)

    people = _people(valid, kept_by_id, in_org)
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
        rows_read=len(all_rows),
        unknown_managers=tuple(absent),
    )


ROOT_REASON = "filter.root"


def template_columns(template: str) -> tuple[str, ...]:
    """The names a template reads (built-ins and columns alike, filters left off).

    For `read_people(also_used=...)`: names that are no column are ignored there. A
    template that does not parse reads nothing (the mapping reports it).
    """
    return template_names(template)


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


_EMPLOYEE_ID: Callable[[_Row], str] = operator.attrgetter("employee_id")
_EMAIL_OF: Callable[[_Row], str] = operator.attrgetter("email")


def _report_all_filtered(
    export_name: str,
    rows: Sequence[_Row],
    filters: FilterSettings,
    columns: Mapping[str, str],
    report: _Report,
) -> None:
    counts: dict[str, int] = {}
    for row in rows:
        assert row.reason is not None
        counts[row.reason] = counts.get(row.reason, 0) + 1
    by_reason = capped(f"{count} by {reason}" for reason, count in sorted(counts.items()))
    statuses = sorted({row.status for row in rows})
    seen = ""
    if STATUS_REASON in counts:
        shown = capped(repr(s) for s in statuses)
        seen = f"; the {columns.get('status', 'status')} values in the export are {shown}"
    report.fatal(
        -1,
        export_name,
        "filters",
        capped(sorted(counts)),
        f"must keep at least one of the {len(rows)} rows, but all were excluded "
        f"({by_reason}){seen}; filter.active_status is {list(filters.active_status)!r}",
    )


def _trimmed(values: Mapping[str, str], nulls: frozenset[str]) -> Mapping[str, str]:
    if isinstance(values, RowValues):
        row = values.stripped()
        # Most rows hold no null word: one set test, and a copy only when they do.
        if nulls and not nulls.isdisjoint(row.cells):
            return RowValues(row.index, tuple("" if c in nulls else c for c in row.cells))
        return row
    out: dict[str, str] = {}
    for key, value in values.items():
        if key != EXTRA_VALUES:
            value = value.strip()
            out[key] = "" if value in nulls else value
    return out


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


def _validate_rows(kept: Sequence[_Row], columns: Mapping[str, str], report: _Report) -> list[_Row]:
    """Report row-level problems; return the rows good enough to become people."""
    id_column, email_column, name_column = columns["employee_id"], columns["email"], columns["name"]
    valid: list[_Row] = []
    for row in kept:
        if row.employee_id and row.name and is_valid_email(row.email):
            valid.append(row)
            continue
        if not row.employee_id:
            report.fatal(row.position, row.location, id_column, "", "must not be empty")
        if not row.email:
            report.fatal(
                row.position,
                row.location,
                email_column,
                "",
                "must not be empty: every person synced to DX needs an e-mail address",
            )
        elif not is_valid_email(row.email):
            report.fatal(
                row.position, row.location, email_column, row.email, f"must be {EMAIL_RULE}"
            )
        if not row.name:
            report.warn(
                row.position,
                row.location,
                name_column,
                "",
                "should not be empty; the e-mail address stands in for the name",
            )
        if row.employee_id and is_valid_email(row.email):
            valid.append(row)
    return valid


class _Index:
    """Rows by a key: the first row for each key, and every row for keys held more than once."""

    def __init__(self, rows: Iterable[_Row], key: Callable[[_Row], str]) -> None:
        self.first: dict[str, _Row] = {}
        self.repeated: dict[str, list[_Row]] = {}
        for row in rows:
            value = key(row)
            if not value:
                continue
            held = self.first.setdefault(value, row)
            if held is not row:
                self.repeated.setdefault(value, [held]).append(row)

    def count(self, key: str) -> int:
        if key in self.repeated:
            return len(self.repeated[key])
        return 1 if key in self.first else 0


def _first(rows: Iterable[_Row], key: Callable[[_Row], str]) -> dict[str, _Row]:
    """One row per key; on a tie the earliest location, whatever the order of the rows."""
    firsts: dict[str, _Row] = {}
    for row in rows:
        value = key(row)
        if not value:
            continue
        held = firsts.get(value)
        if held is None or _natural(row.location) < _natural(held.location):
            firsts[value] = row
    return firsts


def _report_duplicates(
    groups: Mapping[str, list[_Row]], column: str, what: str, report: _Report
) -> None:
    for value, rows in groups.items():
        # Every row after the first is told once, pointing back at the first; the words
        # are the same for all of them, so a repeated block of rows (an API serving a
        # page twice) groups into one line per column instead of one line per pair.
        first, *later = sorted(rows, key=lambda o: _natural(o.location))
        for row in later:
            report.fatal(
                row.position,
                f"{row.location} (first at {first.location})",
                column,
                value,
                f"must be unique, but the same {what} is on an earlier row",
            )


def _natural(text: str) -> list[tuple[int, str]]:
    """Sort key that puts 'line 9' before 'line 10'."""
    return [(int(part), "") if part.isdigit() else (0, part) for part in re.split(r"(\d+)", text)]


def _describe(row: _Row) -> str:
    who = row.name or row.email or row.employee_id
    return f"{who} ({row.employee_id})" if row.employee_id and who != row.employee_id else who


@dataclass(frozen=True, slots=True)
class _Names:
    """Rows by `name_key` of their name, for `source.fields.manager_name` (empty when unset)."""

    kept: _Index
    dropped: Mapping[str, _Row]


def _name_key_of(row: _Row) -> str:
    return name_key(row.name)


_NAME_KEY: Callable[[_Row], str] = _name_key_of


def _resolve_managers(
    kept: Sequence[_Row],
    kept_by_id: _Index,
    kept_by_email: _Index,
    dropped_by_id: Mapping[str, _Row],
    dropped_by_email: Mapping[str, _Row],
    names: _Names,
    columns: Mapping[str, str],
    report: _Report,
    *,
    top: bool,
) -> list[UnknownManager]:
    """Each kept row's manager; with `top`, references matching nobody are returned
    (grouped by value) instead of reported."""
    id_column = columns.get("manager_id", "")
    email_column = columns.get("manager_email", "")
    name_column = columns.get("manager_name", "")
    absent: dict[tuple[str, str], list[_Row]] = {}
    for row in kept:
        # The id wins when several are given, then the e-mail, then the name.
        written: str
        if row.manager_id_ref:
            ref = written = row.manager_id_ref
            column, kept_by, dropped_by = id_column, kept_by_id, dropped_by_id
            what = "employee id"
        elif row.manager_email_ref:
            ref = written = row.manager_email_ref
            column, kept_by, dropped_by = email_column, kept_by_email, dropped_by_email
            what = "e-mail"
        elif row.manager_name_ref:
            written, ref = row.manager_name_ref, name_key(row.manager_name_ref)
            column, kept_by, dropped_by = name_column, names.kept, names.dropped
            what = "name"
        else:
            continue
        chosen = kept_by.first.get(ref) or dropped_by.get(ref)
        if chosen is None:
            if top:
                absent.setdefault((column, written), []).append(row)
                continue
            report.fatal(
                row.position,
                row.location,
                column,
                written,
                f"must be the {what} of a person in the export, but it matches nobody"
                + ' (source.unknown_manager = "top" makes such people top of the org)',
            )
            continue
        if what == "name" and ref in kept_by.repeated:
            # Ids and e-mails held twice are fatal anyway; a name held twice is fine until
            # someone's manager is given by it alone.
            same = sorted(kept_by.repeated[ref], key=lambda o: _natural(o.location))
            report.fatal(
                row.position,
                row.location,
                column,
                written,
                f"must name one person, but it matches {len(same)}: "
                f"{capped((f'{_describe(o)} at {o.location}' for o in same), sep='; ')}; "
                "give the manager by id or e-mail too (source.fields.manager_id or "
                "manager_email), which wins over the name",
            )
            continue
        row.up = chosen
        row.ambiguous = ref in kept_by.repeated
        if chosen.reason is not None:
            report.warn(
                row.position,
                row.location,
                column,
                written,
                f"names {_describe(chosen)} at {chosen.location}, who is excluded by "
                f"{chosen.reason}; {_describe(row)} is kept without a manager",
            )
            continue
        if chosen is row or ref == (
            row.employee_id if row.manager_id_ref else row.email if row.manager_email_ref else None
        ):
            report.fatal(
                row.position,
                row.location,
                column,
                written,
                "must name someone else: a person cannot be their own manager",
            )
            row.up = None
            continue
        row.manager = chosen.employee_id or None
        if not (row.manager_id_ref and row.manager_email_ref):
            continue
        by_email = _lookup(row.manager_email_ref, kept_by_email, dropped_by_email)
        if by_email is not None and by_email is not chosen:
            report.warn(
                row.position,
                row.location,
                email_column,
                row.manager_email_ref,
                f"names {_describe(by_email)}, but {id_column} names "
                f"{_describe(chosen)}; the employee id wins",
            )
    return [
        UnknownManager(column, value, len(rows), rows[0].location)
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


def _lookup(ref: str, kept: _Index, dropped: Mapping[str, _Row]) -> _Row | None:
    if not ref:
        return None
    return kept.first.get(ref) or dropped.get(ref)


def _link_dropped(
    dropped: Sequence[_Row],
    kept_by_id: _Index,
    kept_by_email: _Index,
    dropped_by_id: Mapping[str, _Row],
    dropped_by_email: Mapping[str, _Row],
    names: _Names,
) -> None:
    """Reporting lines through filtered-out rows, so filter.root still sees the whole org."""
    for row in dropped:
        up = (
            _lookup(row.manager_id_ref, kept_by_id, dropped_by_id)
            or _lookup(row.manager_email_ref, kept_by_email, dropped_by_email)
            or _lookup(name_key(row.manager_name_ref), names.kept, names.dropped)
        )
        row.up = up if up is not row else None


def _report_cycles(
    kept: Sequence[_Row],
    kept_by_id: _Index,
    columns: Mapping[str, str],
    report: _Report,
) -> None:
    # A duplicated id has no single manager, and a reference to a duplicated id or e-mail no
    # single target; both are already fatal, so they end chains here, which keeps the
    # reported cycles the same whatever the order of the rows.
    repeated = kept_by_id.repeated
    manager_of = {
        row.employee_id: row.manager
        for row in kept
        if row.manager and not row.ambiguous and row.employee_id and row.employee_id not in repeated
    }
    column = (
        columns.get("manager_id") or columns.get("manager_email") or columns.get("manager_name", "")
    )
    for cycle in forest(manager_of).cycles:
        # From the smallest id, so a cycle reads the same whatever the order of the rows.
        first = cycle.index(min(cycle))
        chain = cycle[first:] + cycle[:first]
        owner = kept_by_id.first[chain[0]]
        report.fatal(
            owner.position,
            owner.location,
            column,
            capped([*chain, chain[0]], sep=" → "),
            "must not form a reporting cycle (each id's manager is the next one)",
        )


def _apply_root(
    export_name: str,
    root: str | None,
    kept: Sequence[_Row],
    kept_by_id: _Index,
    kept_by_email: _Index,
    dropped: Sequence[_Row],
    dropped_by_id: Mapping[str, _Row],
    dropped_by_email: Mapping[str, _Row],
    report: _Report,
) -> set[int] | None:
    """Positions of the kept rows in the org under filter.root (None: no root filter)."""
    if root is None or not root.strip():
        return None
    wanted = root.strip()
    top = _lookup(wanted, kept_by_id, {}) or _lookup(normalise_email(wanted), kept_by_email, {})
    if top is None:
        gone = dropped_by_id.get(wanted) or dropped_by_email.get(normalise_email(wanted))
        why = (
            f"names {_describe(gone)} at {gone.location}, who is excluded by {gone.reason}"
            if gone is not None
            else "must be the employee id or e-mail of a person in the export"
        )
        report.fatal(-1, export_name, "filter.root", wanted, why)
        return None
    below: dict[int, list[_Row]] = {}
    for row in [*kept, *dropped]:
        if row.up is not None:
            below.setdefault(row.up.position, []).append(row)
    in_org: set[int] = set()
    visited = {top.position}
    queue = [top]
    while queue:
        row = queue.pop()
        if row.reason is None:
            in_org.add(row.position)
        for child in below.get(row.position, ()):
            if child.position not in visited:
                visited.add(child.position)
                queue.append(child)
    top.manager = None
    return in_org


def _people(
    valid: Sequence[_Row],
    kept_by_id: _Index,
    in_org: set[int] | None,
) -> tuple[Person, ...]:
    people: list[Person] = []
    departments: dict[str, str] = {}  # as given -> normalised; values repeat a lot
    for row in valid:
        if in_org is not None and row.position not in in_org:
            continue
        if kept_by_id.first[row.employee_id] is not row:
            continue  # a duplicate id, reported; the first row stands for diagnostics
        department = departments.get(row.department)
        if department is None:
            department = departments[row.department] = normalise_name(row.department)
        people.append(
            Person(
                row.employee_id,
                row.email,
                row.name or row.email,
                row.manager,
                department or None,
                row.status or None,
                row.location,
                row.attributes,
            )
        )
    return tuple(people)
