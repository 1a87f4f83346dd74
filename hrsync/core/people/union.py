"""`[[source.union]]`: more people exports merged into one org (pure).

The primary export (`[source]`, after its joins) and each union's export become one
`RowTable` that `read_people` reads with one `FieldSettings`:

- Each logical field any source configures (``email``, ``manager_id`` …) is a column of
  its own on every row, read per source with that source's fields (a column or a
  template, `read_fields`) and null words. `Merged.fields` names those columns; their
  names say where each source reads the field (``email (Work_Email; acq: workEmail)``),
  so a message about a value names the columns behind it, and the row names its file.
- A union's employee ids, and its manager ids (and `department_lead` ids: a value
  without an ``@``), are read with its prefix (``acq:7``): they never meet the primary's
  ids, which stay bare, so stored identities and held people stay as they were.
  E-mails and names are not prefixed.
- `attach_root_to`: a union row that names no manager (or only itself) gets that
  primary employee id as its manager; without it, such a row is a root of its own.
- A union that does not read a status while another source does: its rows read the
  first active status (an export without a status column lists the active people).
- Every raw column of a union row stays readable under its own name (filters, team-name
  templates, attributes); a column both exports have is one column. Each row keeps its
  own location.
- Column-wise: the rows are extended in C (`map`, `zip`), never copied cell by cell in
  Python; with no union the primary's table is returned as it is.

What refuses the run, naming the source: an export without rows, a field naming a
column its export lacks.
"""

from __future__ import annotations

import operator
from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass
from itertools import compress, repeat

from hrsync.core.export.filters import LOGICAL_FIELDS
from hrsync.core.export.rows import ChainedLocations, RowTable, Several, extended, tails_like
from hrsync.core.export.templates import is_template, template_names
from hrsync.core.listing import capped
from hrsync.core.people.columns import ExportColumns, PersonColumns, read_fields
from hrsync.core.people.second_tables import (
    PRIMARY,
    UNION,
    SecondTable,
    TableCount,
    no_rows,
    table_key,
)
from hrsync.core.people.validation import check_columns
from hrsync.core.settings import FieldSettings, FilterSettings, UnionSettings, keyed_under


@dataclass(frozen=True, slots=True)
class Part:
    """One source's rows in the merged table: positions `first` … `first + rows - 1`."""

    name: str  # PRIMARY, or the union's name
    export: str  # its file or URL, for messages
    prefix: str  # "" for the primary
    first: int
    rows: int
    attach_root_to: str = ""

    @property
    def label(self) -> str:
        """How messages name the source: ``source``, ``source.union[acq]``."""
        return PRIMARY if not self.prefix else table_key(UNION, self.name)


@dataclass(frozen=True)
class Merged:
    """The exports as one table and the fields that read it, or why they cannot be."""

    columns: tuple[str, ...]
    table: RowTable
    fields: FieldSettings
    parts: tuple[Part, ...]
    refusals: tuple[str, ...] = ()

    @property
    def unions(self) -> tuple[Part, ...]:
        return self.parts[1:]


def part_of(parts: Sequence[Part], employee_id: str) -> Part:
    """The source a (merged) employee id belongs to: a union's by its prefix."""
    for part in parts[1:]:
        if employee_id.startswith(part.prefix):
            return part
    return parts[0]


def source_counts(parts: Sequence[Part], people_ids: Sequence[str]) -> tuple[TableCount, ...]:
    """Each source's rows and its people among `people_ids` (the kept people's)."""
    unions = parts[1:]
    union_people = [sum(map(str.startswith, people_ids, repeat(part.prefix))) for part in unions]
    primary = parts[0]
    kept = len(people_ids) - sum(union_people)
    counts = [TableCount.source(primary.name, primary.rows, kept, primary.export)]
    counts.extend(
        TableCount.source(
            part.name, part.rows, people, part.export, part.prefix, part.attach_root_to
        )
        for part, people in zip(unions, union_people, strict=True)
    )
    return tuple(counts)


def origin(parts: Sequence[Part], employee_id: str) -> str | None:
    """Where a person came from, for `explain` (None without a union)."""
    if len(parts) < 2:
        return None
    part = part_of(parts, employee_id)
    own = employee_id[len(part.prefix) :]
    return f"{part.label} ({part.export}), employee id there {own!r}"


def attach_refusals(parts: Sequence[Part], people_ids: Collection[str]) -> list[str]:
    """Each union's `attach_root_to` that names nobody kept in the primary export."""
    found = []
    for part in parts[1:]:
        target = part.attach_root_to
        if target and (target not in people_ids or part_of(parts, target) is not parts[0]):
            found.append(
                f"{part.label}.attach_root_to {target!r} names nobody kept in the primary "
                f"export ({parts[0].export}): its people without a manager would report to "
                "nobody; nothing was sent"
            )
    return found


def kept_nobody(
    parts: Sequence[Part], counts: Sequence[TableCount], held_ids: Collection[str]
) -> list[str]:
    """Each union with rows of which nobody is kept nor held: the filters dropped the
    whole source, which no filter is written to do (an include on a column it lacks
    reads blank), so the run would drop a company without a word."""
    found = []
    for part, count in zip(parts[1:], counts[1:], strict=True):
        if not count.rows or count.kept:
            continue
        if any(map(str.startswith, held_ids, repeat(part.prefix))):
            continue
        found.append(
            f"{part.label}: the filters keep none of the {count.rows} rows of {part.export}: "
            "a filter on a column or field it lacks reads blank there ([filter] include, "
            "exclude, active_status); give it that column in its fields, or filter on one "
            "both exports have; nothing was sent"
        )
    return found


def only(primary: SecondTable) -> Merged:
    """The primary export alone: its table and fields as they are (no union)."""
    part = Part(PRIMARY, primary.name, "", 0, len(primary.table.cells))
    return Merged(primary.columns, primary.table, primary.fields, (part,))


def merge(
    primary: SecondTable,
    unions: Sequence[tuple[UnionSettings, SecondTable]],
    *,
    active_status: Sequence[str] = (),
) -> Merged:
    """The primary export and each union's as one table (see the module's docstring).
    `active_status`: `filter.active_status`, the status of a union that reads none."""
    if not unions:
        return only(primary)
    sources = [primary, *(table for _, table in unions)]
    settings: list[UnionSettings | None] = [None, *(union for union, _ in unions)]
    parts = _parts(sources, settings)
    refusals = [r for part, src in zip(parts, sources, strict=True) for r in _refusals(part, src)]
    if refusals:
        return Merged(primary.columns, primary.table, primary.fields, parts, tuple(refusals))
    configured = [_configured(src.fields) for src in sources]
    keys = [key for key in LOGICAL_FIELDS if any(key in c for c in configured)]
    status = next(iter(active_status), "")
    values = [
        _field_values(src, part, conf, keys, status if "status" in keys else "")
        for src, part, conf in zip(sources, parts, configured, strict=True)
    ]
    primary_ids = values[0][keys.index("employee_id")] if "employee_id" in keys else ()
    clashes = [r for part in parts[1:] for r in _prefix_clash(part, primary_ids, parts[0])]
    if clashes:
        return Merged(primary.columns, primary.table, primary.fields, parts, tuple(clashes))
    # The merged index: the primary's, each union's columns it lacks, then the fields.
    index = dict(primary.table.index)
    width = max(index.values(), default=-1) + 1
    for src in sources[1:]:
        for column in src.table.index:
            if column not in index:
                index[column] = width
                width += 1
    names = _field_names(keys, parts, configured, index)
    for offset, name in enumerate(names.values()):
        index[name] = width + offset
    cells: list[Sequence[str]] = []
    partial: dict[int, Mapping[str, str]] = {}
    several: dict[int, Mapping[str, Several]] = {}
    at_position = {position: column for column, position in index.items()}
    field_names = tuple(names.values())
    for src, part, conf, columns_of in zip(sources, parts, configured, values, strict=True):
        table = src.table
        tails: list[tuple[str, ...]] = list(zip(*columns_of, strict=True))
        if part.prefix:
            laid_out = _laid_out(table, at_position, width)
            cells.extend(extended(laid_out, tails_like(laid_out, tails)))
        else:
            after = _after_blanks(table, width, tails)
            cells.extend(extended(table.cells, tails_like(table.cells, after)))
        for row, values_of_row in table.partial.items():
            added = dict(zip(field_names, tails[row], strict=True))
            partial[part.first + row] = {**values_of_row, **added}
        for row, several_of_row in table.several.items():
            several[part.first + row] = {
                **several_of_row,
                **_several_fields(several_of_row, conf, names),
            }
    longest = _longest([src.table for src in sources], values)
    locations = ChainedLocations([src.table.locations for src in sources])
    merged = RowTable(index, cells, locations, partial, longest, several)
    fields = FieldSettings(**{key: names.get(key, "") for key in LOGICAL_FIELDS})
    columns = (*primary.columns, *(c for c in index if c not in primary.columns))
    return Merged(tuple(dict.fromkeys(columns)), merged, fields, parts)


def _parts(
    sources: Sequence[SecondTable], settings: Sequence[UnionSettings | None]
) -> tuple[Part, ...]:
    parts, first = [], 0
    for src, union in zip(sources, settings, strict=True):
        rows = len(src.table.cells)
        if union is None:
            parts.append(Part(PRIMARY, src.name, "", first, rows))
        else:
            parts.append(
                Part(union.name, src.name, union.prefix, first, rows, union.attach_root_to)
            )
        first += rows
    return tuple(parts)


def _configured(fields: FieldSettings) -> dict[str, str]:
    return {key: getattr(fields, key) for key in LOGICAL_FIELDS if getattr(fields, key)}


def _refusals(part: Part, src: SecondTable) -> list[str]:
    """What about one source refuses the run: no rows, a field's column missing."""
    where = part.label
    if not src.table.cells:
        return [no_rows(where, src.name, "its people would all leave the org")]
    found = check_columns(
        src.name, src.columns, _configured(src.fields), (), FilterSettings(active_status=())
    )
    problems = [str(problem) for _, problem in found if problem.fatal]
    if part.prefix:
        problems = [keyed_under(where, problem) for problem in problems]
    return [f"{where}: {problem}" for problem in problems]


def _prefix_clash(union: Part, primary_ids: Sequence[str], primary: Part) -> list[str]:
    """A union's prefix that begins some primary id: its people are told from the
    primary's by it (counts, `attach_root_to`, `explain`), so that would mistake them."""
    prefix = union.prefix
    if not any(map(str.startswith, primary_ids, repeat(prefix))):
        return []
    clashing = [i for i in primary_ids if i.startswith(prefix)]
    default = f"{union.name}:"
    such_as = f", such as the default {default!r}" if prefix != default else ""
    return [
        f"{union.label}.id_prefix {prefix!r} begins {len(clashing)} ids of the primary export "
        f"({primary.export}: {capped(clashing, limit=5)}): its people would be told from the "
        f"primary's by it; choose a prefix no primary id begins with{such_as}"
    ]


def _field_names(
    keys: Sequence[str],
    parts: Sequence[Part],
    configured: Sequence[Mapping[str, str]],
    index: Mapping[str, int],
) -> dict[str, str]:
    """Each field's merged column, named after where each source reads it:
    ``email (Work_Email; acq: workEmail)``, ``name (template of First, Last; acq:
    displayName)``; never a name the exports use."""
    names: dict[str, str] = {}
    for key in keys:
        read = []
        for part, conf in zip(parts, configured, strict=True):
            value = conf.get(key)
            if not value:
                continue
            # No brace in a column's name: a field naming it would read as a template.
            shown = (
                f"template of {', '.join(template_names(value))}" if is_template(value) else value
            )
            read.append(shown if not part.prefix else f"{part.name}: {shown}")
        name = f"{key} ({'; '.join(read)})"
        while name in index or name in names.values():
            name += "'"
        names[key] = name
    return names


def _field_values(
    src: SecondTable, part: Part, configured: Mapping[str, str], keys: Sequence[str], status: str
) -> list[Sequence[str]]:
    """Every row's value of each field of `keys`, by field: the columns the rows gain."""
    nulls = frozenset(value.strip() for value in src.null_values)
    spaced = (configured.get("name", ""), configured.get("department", ""))
    export = ExportColumns(src.table, nulls, spaced)
    person = read_fields(export, configured)
    return [_field(key, export, person, configured, part, status) for key in keys]


def _field(
    key: str,
    export: ExportColumns,
    person: PersonColumns,
    configured: Mapping[str, str],
    part: Part,
    status: str,
) -> Sequence[str]:
    prefix = part.prefix
    if key == "employee_id":
        return _prefixed(person.employee_id, prefix)
    if key == "manager_id":
        managers = _prefixed(person.manager_id_ref, prefix)
        if part.attach_root_to:
            managers = _attached(managers, person, part.attach_root_to)
        return managers
    if key in ("department_parent", "department_lead"):
        column = configured.get(key, "")
        values = export.column(column) if column else export.blank
        return _prefixed(values, prefix, keep_emails=True) if key == "department_lead" else values
    if key == "status" and "status" not in configured and status:
        return (status,) * export.count
    return {
        "email": person.email,
        "name": person.name,
        "manager_email": person.manager_email_ref,
        "manager_name": person.manager_name_ref,
        "department": person.department,
        "status": person.status,
    }[key]


def _prefixed(values: Sequence[str], prefix: str, *, keep_emails: bool = False) -> Sequence[str]:
    """`values` with `prefix` before each non-empty one (an e-mail kept as it is when
    asked), in C; `values` itself without a prefix."""
    if not prefix or not any(values):
        return values
    out = list(map(prefix.__add__, values))
    if not all(values):
        for i in compress(range(len(values)), map(operator.not_, values)):
            out[i] = ""
    if keep_emails:
        for i in compress(range(len(values)), map(operator.contains, values, repeat("@"))):
            out[i] = values[i]
    return out


def _attached(managers: Sequence[str], person: PersonColumns, target: str) -> list[str]:
    """Manager ids with `target` for each row that names no manager, or only itself."""
    out = list(managers)
    refs = zip(
        person.manager_id_ref, person.manager_email_ref, person.manager_name_ref, strict=True
    )
    for i in compress(range(len(out)), map(operator.not_, map(any, refs))):
        out[i] = target
    own, written = person.employee_id, person.manager_id_ref
    if any(map(operator.eq, written, own)):
        for i in compress(range(len(out)), map(operator.eq, written, own)):
            if written[i]:
                out[i] = target
    return out


def _after_blanks(
    table: RowTable, width: int, tails: list[tuple[str, ...]]
) -> list[tuple[str, ...]]:
    """The primary's tails after blank cells for the columns only the unions have."""
    own = max(table.index.values(), default=-1) + 1
    if own == width:
        return tails
    return list(map(operator.add, repeat(("",) * (width - own)), tails))


def _laid_out(table: RowTable, at_position: Mapping[int, str], width: int) -> list[tuple[str, ...]]:
    """A union's rows with their cells where the merged index puts them, blank for the
    columns their export lacks: one C call per row."""
    own = max(table.index.values(), default=-1) + 1
    positions = [table.index.get(at_position.get(p, ""), own) for p in range(width)]
    pad = ("",)
    pick = operator.itemgetter(*positions, own)  # one more: a tuple whatever the width
    rows: Iterable[Sequence[str]] = table.cells
    if type(table.cells[0]) is list:
        rows = map(tuple, rows)
    # The last picked (the pad again) is dropped by the slice, in C.
    cut = operator.itemgetter(slice(0, width))
    return list(map(cut, map(pick, map(operator.add, rows, repeat(pad)))))


def _several_fields(
    columns: Mapping[str, Several], configured: Mapping[str, str], names: Mapping[str, str]
) -> dict[str, Several]:
    """A row's several-valued columns as the merged fields read them: a field read from
    such a column holds several values too."""
    return {
        names[key]: columns[column]
        for key, column in configured.items()
        if column in columns and key in names
    }


def _longest(tables: Sequence[RowTable], values: Sequence[Sequence[Sequence[str]]]) -> int | None:
    """The longest value of the merged table, when every export knows its own."""
    known = [table.longest for table in tables]
    if any(length is None for length in known):
        return None
    fields = [max(map(len, column), default=0) for columns in values for column in columns]
    return max([*(k for k in known if k is not None), *fields], default=0)
