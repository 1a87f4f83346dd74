"""`read_people`: an export's rows to a `Directory` (pure)."""

from __future__ import annotations

from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass
from itertools import compress, repeat
from operator import is_, not_

from hrsync.core.filters import LOGICAL_FIELDS, build_row_filter
from hrsync.core.people.columns import _all_kept, _Rows
from hrsync.core.people.managers import (
    UnknownManager,
    _apply_root,
    _first,
    _Index,
    _link_dropped,
    _Names,
    _Refs,
    _report_cycles,
    _report_unknown_managers,
    _resolve_managers,
    name_key,
)
from hrsync.core.people.person import Person, _new_person
from hrsync.core.people.validation import (
    Problem,
    _check_columns,
    _check_values,
    _Report,
    _report_all_filtered,
    _report_duplicates,
    _validate_rows,
    _warn_unused_status,
)
from hrsync.core.settings import DEFAULT_NULL_VALUES, FieldSettings, FilterSettings
from hrsync.core.templates import is_template, template_names
from hrsync.core.text import collapse_whitespace
from hrsync.sources.rows import LineLocations, RowTable, SourceRow

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
