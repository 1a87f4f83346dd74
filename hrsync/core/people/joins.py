"""`[[source.join]]`: a second table joined to the people on one key (pure).

A join reads as new columns of the people export: the table's columns the config names
as ``name.COLUMN`` (``departments.DEPARTMENT_NAME``) are added to every person's row, so
`[source.fields]`, templates, filters, team names and attributes read them as any
other column, and `read_people` checks them as it checks the export's own.

- The key: on the people's side a column of the export (or of a join above), or
  ``email`` / ``employee_id``, the person's own field as `[source.fields]` reads it; on
  the table's side a column. Both are read as every value is (trimmed, null words
  blank); an e-mail key is matched without regard to case, any other exactly. An empty
  key matches nothing.
- A hash join: the table's rows by key once, then one look-up per person.
- A person whose key matches two rows or more, or no row when the join is declared
  ``match = "one"``, has a problem of their own row (`Problem.holds`): held, as for any
  other (hrsync.core.teams.held), and their joined columns read empty.
- What refuses the run, naming the join: a table without rows, a key column missing on
  either side, a column the config reads missing from the table.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from itertools import repeat

from hrsync.core.export.filters import closest_name, did_you_mean
from hrsync.core.export.read_columns import columns_read
from hrsync.core.export.rows import RowTable, Several, extended, tails_like
from hrsync.core.export.templates import is_template, template_names
from hrsync.core.listing import capped
from hrsync.core.people.columns import ExportColumns, read_fields
from hrsync.core.people.precedence import PrecedenceReport
from hrsync.core.people.second_tables import SecondTable, TableCount, no_rows
from hrsync.core.people.validation import Finding, of_person
from hrsync.core.settings import JOIN_FIELDS, FieldSettings, JoinSettings, Settings

# Unmatched rows a report keeps as examples (`hrsync check`, the JSON plan).
EXAMPLES = 5


@dataclass(frozen=True, slots=True)
class Unmatched:
    location: str  # the person's row
    key: str  # their key, as read ("" when empty)


@dataclass(frozen=True, slots=True)
class RowUsed:
    """A row of a joined table and the people it gave values to."""

    key: str
    location: str
    people: int


@dataclass(frozen=True)
class JoinReport:
    """One join as it went: the table read, what matched, and where each value came from."""

    name: str
    table: str  # the table's name for messages: its file, or its URL
    left: str
    right: str
    match: str
    table_rows: int
    rows: int  # rows of the people export
    matched: int
    unmatched: tuple[Unmatched, ...]  # the first EXAMPLES of them
    unmatched_count: int
    several: tuple[Unmatched, ...]  # rows whose key matched two table rows or more (first few)
    several_count: int
    columns: tuple[str, ...]  # the table's columns the config reads (without the prefix)
    # Where each value came from: the table row by key, the people of each row.
    _row_by_key: Mapping[str, int] = field(default_factory=dict, repr=False)
    _locations: Sequence[str] = field(default=(), repr=False)
    _row_of: Sequence[int] = field(default=(), repr=False)  # by person: their table row
    _repeated: Mapping[str, Sequence[int]] = field(default_factory=dict, repr=False)

    @property
    def count(self) -> TableCount:
        return TableCount.join(self.name, self.rows, self.matched)

    @property
    def on(self) -> str:
        return f"{self.left} = {self.right}"

    def row_for(self, key: str) -> RowUsed | None:
        """The table row a key matched (an e-mail key in any case), or None."""
        wanted = key.strip().lower() if self.left == "email" else key.strip()
        row = self._row_by_key.get(wanted)
        if row is None or wanted in self._repeated:
            return None
        return RowUsed(wanted, self._locations[row], self._people_by_row.get(row, 0))

    @cached_property
    def _people_by_row(self) -> Mapping[int, int]:
        # Counted when asked (explain, the JSON plan), not on every run.
        counts = Counter(self._row_of)
        counts.pop(len(self._locations), None)
        return counts

    def rows_of(self, key: str) -> list[str]:
        """Where a key is in the table: every row holding it (two or more: a problem)."""
        wanted = key.strip().lower() if self.left == "email" else key.strip()
        if wanted in self._repeated:
            return [self._locations[row] for row in self._repeated[wanted]]
        row = self._row_by_key.get(wanted)
        return [] if row is None else [self._locations[row]]

    def missed(self, rows: Iterable[int]) -> int:
        """How many of these rows of the export matched no single row of the table."""
        none = len(self._locations)
        row_of = self._row_of
        return sum(1 for i in rows if i < len(row_of) and row_of[i] == none)

    def rows_used(self) -> list[RowUsed]:
        """Every table row that gave values to someone, in the table's order."""
        keys = {row: key for key, row in self._row_by_key.items()}
        return [
            RowUsed(keys[row], self._locations[row], people)
            for row, people in sorted(self._people_by_row.items())
        ]


@dataclass(frozen=True)
class Joined:
    """The people export with every join's columns added, or why it cannot be."""

    columns: tuple[str, ...]
    table: RowTable
    reports: tuple[JoinReport, ...]
    findings: tuple[Finding, ...]  # problems of people's own rows (they hold them)
    refusals: tuple[str, ...] = ()  # problems of a join itself: the run is refused
    # Each `[source.fields]` precedence list as it went (hrsync.core.people.precedence), made
    # over the joined rows.
    precedence: tuple[PrecedenceReport, ...] = ()

    @property
    def counts(self) -> tuple[TableCount, ...]:
        return tuple(report.count for report in self.reports)


def joined_column(join: str, column: str) -> str:
    return f"{join}.{column}"


def names_read(settings: Settings) -> tuple[str, ...]:
    """Every column name the config reads from a person's row: `[source.fields]` (a
    template's names and a precedence list's too), team names, attributes, filters, and
    the joins' keys."""
    names: list[str] = []
    for value in vars(settings.source.fields).values():
        names.extend(template_names(value) if is_template(value) else (value,))
    names.extend(columns_read(settings).names)
    names.extend(join.left for join in settings.source.join)
    for listed in settings.source.first_of.values():
        names.extend(listed)
    return tuple(dict.fromkeys(name for name in names if name))


def columns_of(join: str, names: Iterable[str]) -> tuple[str, ...]:
    """The columns of join `join` among `names` (``departments.X`` gives ``X``)."""
    prefix = join + "."
    return tuple(dict.fromkeys(name[len(prefix) :] for name in names if name.startswith(prefix)))


def join_people(
    people_name: str,
    columns: Sequence[str],
    people: RowTable,
    joins: Sequence[tuple[JoinSettings, SecondTable]],
    *,
    fields: FieldSettings,
    null_values: Collection[str],
    read: Collection[str],
) -> Joined:
    """Each join in turn, over the people's rows as the joins above left them. `read`:
    every name the config reads (`names_read`), so that only the columns read are added."""
    reports: list[JoinReport] = []
    findings: list[Finding] = []
    refusals: list[str] = []
    nulls = frozenset(value.strip() for value in null_values)
    all_columns = tuple(columns)
    for join, table in joins:
        done = _join_one(people_name, all_columns, people, join, table, fields, nulls, read)
        if isinstance(done, str):
            refusals.append(done)
            continue
        people, report, found = done
        all_columns = (*all_columns, *(joined_column(join.name, c) for c in report.columns))
        reports.append(report)
        findings.extend(found)
    return Joined(all_columns, people, tuple(reports), tuple(findings), tuple(refusals))


def _join_one(
    people_name: str,
    columns: Sequence[str],
    people: RowTable,
    join: JoinSettings,
    table: SecondTable,
    fields: FieldSettings,
    nulls: frozenset[str],
    read: Collection[str],
) -> tuple[RowTable, JoinReport, list[Finding]] | str:
    """One join: the people's rows with its columns added, its report and the problems
    of people's rows; or the problem of the join itself that refuses the run."""
    where = f"join {join.name!r}"
    rows = table.table
    if not rows.cells:
        return no_rows(where, table.name, "every person would go without a match")
    wanted = columns_of(join.name, read)
    missing_right = join.right not in rows.index
    missing = [c for c in wanted if c not in rows.index]
    if missing_right or missing:
        found = capped(table.columns, empty="(none)")
        what = [
            _missing(c, table.columns, f"read as {joined_column(join.name, c)}") for c in missing
        ]
        if missing_right:
            what.insert(0, _missing(join.right, table.columns, "the table's side of its on"))
        return f"{where}: {table.name} lacks {'; '.join(what)}; its columns: {found}"
    left_keys = _left_keys(people_name, columns, people, join, fields, nulls)
    if isinstance(left_keys, str):
        return f"{where}: {left_keys}"
    lookup = ExportColumns(rows, frozenset(v.strip() for v in table.null_values), ())
    email = join.left == "email"
    right_keys = lookup.column(join.right)
    if email:
        right_keys = list(map(str.lower, right_keys))
    first, repeated = _index(right_keys)
    # Each person's table row, in C; `none` (one past the table's rows) where nothing, or
    # more than one row, matched.
    none = len(rows.cells)
    row_of = list(map(first.get, left_keys, repeat(none)))
    if repeated:
        for i, key in enumerate(left_keys):
            if key in repeated:
                row_of[i] = none
    brought = tuple(dict.fromkeys((*wanted, join.right)))
    values = list(zip(*(lookup.column(c) for c in brought), strict=True))
    table_out = _extend(people, join.name, brought, values, row_of, rows)
    findings: list[Finding] = []
    unmatched: list[Unmatched] = []
    several: list[Unmatched] = []
    unmatched_count = several_count = 0
    locations = people.locations
    label = f"join {join.name}: {join.left} = {join.right}"
    missed = [i for i, row in enumerate(row_of) if row == none] if none in row_of else []
    for i in missed:
        key = left_keys[i]
        if key in repeated:
            several_count += 1
            if len(several) < EXAMPLES:
                several.append(Unmatched(locations[i], key))
            shown = capped((rows.locations[r] for r in repeated[key]), limit=5)
            findings.append(
                of_person(
                    i,
                    locations[i],
                    join.left,
                    key,
                    f"must match at most one row of {table.name} ({label}): it matches {shown}",
                )
            )
            continue
        unmatched_count += 1
        if len(unmatched) < EXAMPLES:
            unmatched.append(Unmatched(locations[i], key))
        if join.match == "one":
            findings.append(
                of_person(
                    i,
                    locations[i],
                    join.left,
                    key,
                    f"must match a row of {table.name} ({label})",
                )
            )
    report = JoinReport(
        name=join.name,
        table=table.name,
        left=join.left,
        right=join.right,
        match=join.match,
        table_rows=len(rows.cells),
        rows=len(row_of),
        matched=len(row_of) - unmatched_count - several_count,
        unmatched=tuple(unmatched),
        unmatched_count=unmatched_count,
        several=tuple(several),
        several_count=several_count,
        columns=brought,
        _row_by_key=first,
        _locations=rows.locations,
        _row_of=row_of,
        _repeated=repeated,
    )
    return table_out, report, findings


def _missing(column: str, columns: Sequence[str], what: str) -> str:
    return f"{column!r} ({what}{did_you_mean(closest_name(column, columns))})"


def _left_keys(
    people_name: str,
    columns: Sequence[str],
    people: RowTable,
    join: JoinSettings,
    fields: FieldSettings,
    nulls: frozenset[str],
) -> Sequence[str] | str:
    """Each person's key, as hrsync reads the column or field; or what is missing."""
    export = ExportColumns(people, nulls, ())
    left = join.left
    if left in JOIN_FIELDS:
        written = getattr(fields, left)
        names = template_names(written) if is_template(written) else (written,)
        absent = [name for name in names if name not in people.index]
        if absent:
            return (
                f"{capped(map(repr, absent))} (source.fields.{left}, the people's side of its "
                f"on) is not a column of {people_name}"
            )
        person = read_fields(export, {left: written})
        return person.email if left == "email" else person.employee_id
    if left not in people.index:
        what = _missing(left, columns, "the people's side of its on")
        found = capped(columns, empty="(none)")
        return f"{what} is not a column of {people_name}; its columns: {found}"
    return export.column(left)


def _index(keys: Sequence[str]) -> tuple[dict[str, int], dict[str, list[int]]]:
    """The first row of each non-empty key, and the rows of each key found twice or more."""
    # In C: reversed, so that the first row of a key is the one left standing.
    first = dict(zip(reversed(keys), range(len(keys) - 1, -1, -1), strict=True))
    first.pop("", None)
    repeated: dict[str, list[int]] = {}
    if len(first) + keys.count("") < len(keys):
        counts = Counter(keys)
        for row, key in enumerate(keys):
            if key and counts[key] > 1:
                repeated.setdefault(key, []).append(row)
    return first, repeated


def _extend(
    people: RowTable,
    name: str,
    brought: Sequence[str],
    values: list[tuple[str, ...]],
    row_of: Sequence[int],
    table: RowTable,
) -> RowTable:
    """The people's rows with `brought` added as ``name.COLUMN``: each matched row's values
    from the table (read as its own null words say), blank where nothing matched (row
    `len(values)`)."""
    cells = people.cells
    # Each table row made a tail once (2,000 of them, not one per person), then each
    # person's row extended by theirs; the last tail is the blank of no match.
    added = tails_like(cells, [*values, ("",) * len(brought)])
    new_cells = extended(cells, list(map(added.__getitem__, row_of)))
    # The new cells go after every cell a row has (an index may name fewer: a joined name
    # the export has itself, a JSON path, reads the join's value).
    width = max(people.index.values(), default=-1) + 1
    index = dict(people.index)
    for offset, column in enumerate(brought):
        index[joined_column(name, column)] = width + offset
    partial = dict(people.partial)
    for i, own in people.partial.items():
        mine = added[row_of[i]]
        joined = dict(zip((joined_column(name, c) for c in brought), mine, strict=True))
        partial[i] = {**own, **joined}
    several = dict(people.several)
    if table.several:
        wanted = set(brought)
        for i, row in enumerate(row_of):
            theirs = table.several.get(row)
            if theirs:
                extra = {
                    joined_column(name, column): Several(
                        s.values, joined_column(name, s.pick) if s.pick else "", s.kind
                    )
                    for column, s in theirs.items()
                    if column in wanted
                }
                if extra:
                    several[i] = {**several.get(i, {}), **extra}
    longest = (
        max(people.longest, table.longest)
        if people.longest is not None and table.longest is not None
        else None
    )
    return RowTable(index, new_cells, people.locations, partial, longest, several)


def join_behind(held_rows: Collection[int], reports: Sequence[JoinReport]) -> str | None:
    """Why so many people would be held, when a join is why: most of them matched no row
    of it, so its columns (their e-mail, their manager…) read empty for them. A join
    table missing rows (a page of an API, a cut file) looks like that; holding those
    people is no fix, so the held guard's refusal names the join instead."""
    for report in reports:
        missed = report.missed(held_rows)
        if held_rows and missed * 2 > len(held_rows):
            return (
                f"{missed} of them matched no row of join {report.name!r} ({report.matched:,} "
                f"of the {report.rows:,} rows of the export matched on {report.on}; "
                f"{report.table_rows:,} rows read from {report.table}), so its columns read "
                f"empty for them: a joined table missing rows (a page not read, a cut file) "
                f"looks like this; check join {report.name!r} with `hrsync check` before "
                f"holding anyone"
            )
    return None


def provenance(
    values: Mapping[str, str], email: str, employee_id: str, reports: Sequence[JoinReport]
) -> list[str]:
    """Where a person's joined values came from, one line per join (`hrsync explain`):
    the table's row their key matched, and each value it brought."""
    lines: list[str] = []
    for report in reports:
        by = {"email": email, "employee_id": employee_id}
        key = by.get(report.left, values.get(report.left, ""))
        where = report.rows_of(key) if key else []
        on = f"{report.left} {key!r} = {report.right}"
        if len(where) == 1:
            names = [joined_column(report.name, column) for column in report.columns]
            brought = ", ".join(f"{name} = {values.get(name, '')!r}" for name in names)
            lines.append(f"  join {report.name}: {where[0]} ({on}): {brought}")
        elif where:
            lines.append(
                f"  join {report.name}: {on} matches {len(where)} rows of {report.table} "
                f"({capped(where, limit=5)}): none taken"
            )
        else:
            lines.append(f"  join {report.name}: no row of {report.table} ({on})")
    return lines
