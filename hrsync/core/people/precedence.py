"""Per-field precedence across sources (pure): a `[source.fields]` entry written as a list
of columns, the first non-empty value of which is the person's.

``email = ["entra.mail", "workday.Work_Email"]`` reads the e-mail Entra ID holds when it
holds one, else the one Workday holds. Each name is a column of the export, a joined
table's ``join.COLUMN``, or the export's own column as ``source.name.COLUMN``.

The list becomes one column of the rows, named by `first_of_column` (``first of
entra.mail, workday.Work_Email``), which the field then names: every later step reads it
as any other column, and its messages name the list. The values are read as every value
is (trimmed, null words blank) before "empty" is judged.

What refuses the run, naming the field and the place in its list: a name that is not a
column of the rows.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass

from hrsync.core.export.filters import closest_name, did_you_mean
from hrsync.core.export.rows import RowTable, extended, tails_like
from hrsync.core.listing import capped
from hrsync.core.people.columns import ExportColumns


def first_of_column(names: Sequence[str]) -> str:
    """The column a precedence list makes, as its field then names it in messages."""
    return "first of " + ", ".join(names)


@dataclass(frozen=True, slots=True)
class FieldSource:
    """How often one name of a precedence list gave the value."""

    name: str
    won: int


@dataclass(frozen=True, slots=True)
class PrecedenceReport:
    """One field's list as it went: the rows each name won, and those none did."""

    field: str
    column: str  # the column the list made
    sources: tuple[FieldSource, ...]
    empty: int  # rows on which every name was empty
    key: str = "source.fields"  # the fields' table (a union's: source.union[acq].fields)

    def line(self) -> str:
        """``source.fields.email: entra.mail 950, workday.Work_Email 48, none 2``."""
        won = ", ".join(f"{s.name} {s.won:,}" for s in self.sources)
        return f"{self.key}.{self.field}: {won}, none {self.empty:,}"


@dataclass(frozen=True)
class Preceded:
    """The rows with a column added for each precedence list, or why they cannot be."""

    columns: tuple[str, ...]
    table: RowTable
    reports: tuple[PrecedenceReport, ...]
    refusals: tuple[str, ...] = ()


def column_named(name: str, index: Collection[str], own: str) -> str | None:
    """The column a list's name reads: itself, or the export's own column when it is
    written ``own.COLUMN`` (`own`: `source.name`); None when it is neither."""
    if name in index:
        return name
    prefix = own + "."
    if own and name.startswith(prefix) and name[len(prefix) :] in index:
        return name[len(prefix) :]
    return None


def apply_precedence(
    export_name: str,
    columns: Sequence[str],
    table: RowTable,
    first_of: Mapping[str, Sequence[str]],
    *,
    null_values: Collection[str],
    own: str = "",
    key: str = "source.fields",
) -> Preceded:
    """Each list's column added to every row (`first_of`: field -> its names, in order).
    `key`: how messages name the fields' table (a union's: ``source.union[acq].fields``)."""
    if not first_of:
        return Preceded(tuple(columns), table, ())
    refusals: list[str] = []
    resolved: dict[str, list[tuple[str, str]]] = {}
    for field_name, names in first_of.items():
        pairs: list[tuple[str, str]] = []
        for at, name in enumerate(names, 1):
            column = column_named(name, table.index, own)
            if column is None:
                refusals.append(
                    _not_a_column(export_name, f"{key}.{field_name}", at, name, columns, own)
                )
            else:
                pairs.append((name, column))
        resolved[field_name] = pairs
    if refusals:
        return Preceded(tuple(columns), table, (), tuple(refusals))
    export = ExportColumns(table, frozenset(v.strip() for v in null_values), ())
    added: dict[str, list[str]] = {}
    reports: list[PrecedenceReport] = []
    for field_name, pairs in resolved.items():
        values, report = _first_non_empty(field_name, pairs, export, key)
        added[report.column] = values
        reports.append(report)
    new_table = add_columns(table, added)
    new_columns = (*columns, *(c for c in added if c not in columns))
    return Preceded(new_columns, new_table, tuple(reports))


def _first_non_empty(
    field_name: str, pairs: Sequence[tuple[str, str]], export: ExportColumns, key: str
) -> tuple[list[str], PrecedenceReport]:
    names = [name for name, _ in pairs]
    column = first_of_column(names)
    values = list(export.column(pairs[0][1]))
    sources = [FieldSource(names[0], export.count - values.count(""))]
    for name, source in pairs[1:]:
        before = values.count("")
        if before:
            # In C: `or` of each pair keeps the value found first.
            values = list(map(_either, values, export.column(source)))
        sources.append(FieldSource(name, before - values.count("")))
    report = PrecedenceReport(field_name, column, tuple(sources), values.count(""), key)
    return values, report


def _either(first: str, second: str) -> str:
    return first or second


def _not_a_column(
    export_name: str, field_name: str, at: int, name: str, columns: Sequence[str], own: str
) -> str:
    prefix = own + "."
    if own and name.startswith(prefix):
        # Written as the export's own: the closest of its columns, written the same way.
        close = closest_name(name[len(prefix) :], columns)
        close = prefix + close if close else None
    else:
        close = closest_name(name, columns)
    found = capped(columns, empty="(none)")
    return (
        f"{field_name} entry {at} {name!r} is not a column of {export_name} "
        f"or of a join{did_you_mean(close)}; the columns: {found}"
    )


def add_columns(table: RowTable, added: Mapping[str, Sequence[str]]) -> RowTable:
    """The rows with `added` (column -> a value for every row) after every cell they
    have; a column of that name already there is read from the new cells instead."""
    if not added:
        return table
    cells = table.cells
    new = list(zip(*added.values(), strict=True)) if cells else []
    new_cells = extended(cells, tails_like(cells, new))
    width = max(table.index.values(), default=-1) + 1
    index = dict(table.index)
    for offset, column in enumerate(added):
        index[column] = width + offset
    partial = dict(table.partial)
    for i, own in table.partial.items():
        partial[i] = {**own, **{column: values[i] for column, values in added.items()}}
    return RowTable(index, new_cells, table.locations, partial, table.longest, table.several)


def winner(
    values: Mapping[str, str], names: Sequence[str], own: str = ""
) -> tuple[str, str] | None:
    """Which name of a list gave a person's value, and the value (`hrsync explain`); None
    when every one was empty. `values`: their row by column, as read."""
    for name in names:
        column = column_named(name, values, own)
        value = values.get(column, "") if column is not None else ""
        if value:
            return name, value
    return None


def provenance(
    values: Mapping[str, str], first_of: Mapping[str, Sequence[str]], own: str = ""
) -> list[str]:
    """One line per precedence list (`hrsync explain`): which of its names gave the
    person's value, and those before it that were empty."""
    lines: list[str] = []
    for field_name, names in first_of.items():
        won = winner(values, names, own)
        if won is None:
            lines.append(f"  {field_name}: empty in every one of {', '.join(names)}")
            continue
        skipped = names[: list(names).index(won[0])]
        before = f" ({', '.join(skipped)} empty)" if skipped else ""
        lines.append(f"  {field_name}: {won[1]!r} from {won[0]}{before}")
    return lines
