"""`read_people` (pure): an export's rows to a `Directory`, as the steps the package's
docstring lists, each one call returning what it finds."""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass
from itertools import compress, repeat
from operator import is_, not_
from typing import NamedTuple

from hrsync.core.export.filters import LOGICAL_FIELDS, RowFilter, build_row_filter
from hrsync.core.export.rows import ChainedLocations, LineLocations, RowTable, SourceRow
from hrsync.core.export.templates import is_template, template_names
from hrsync.core.people.columns import ExportColumns, PersonColumns, all_kept, read_fields
from hrsync.core.people.managers import (
    NO_MANAGER_LEFT,
    KnownTeam,
    LeftManagers,
    ManagerRules,
    Org,
    Refs,
    RowIndex,
    UnknownManager,
    apply_root,
    find_cycles,
    index_rows,
    left_managers,
    resolve_managers,
)
from hrsync.core.people.person import Person, new_person
from hrsync.core.people.validation import (
    WHOLE_EXPORT,
    Finding,
    Problem,
    TextColumns,
    check_columns,
    check_several,
    check_some_kept,
    check_values,
    fatal,
    report_duplicates,
    sort_findings,
    validate_rows,
)
from hrsync.core.settings import DEFAULT_NULL_VALUES, FieldSettings, FilterSettings
from hrsync.core.text import collapse_whitespace, natural_key, shown_value

ROOT_REASON = "filter.root"


@dataclass(frozen=True, slots=True)
class HeldPerson:
    """A person held for a problem of their own row (an e-mail, an id, their manager): not
    built as a `Person`, and not sent as the row says; DX keeps what it last verifiably
    had for them (`hrsync.core.teams.held`)."""

    row: int  # the row's position in the export
    location: str
    employee_id: str  # as read ("" when blank)
    email: str  # as read, lower-cased ("" when empty)
    name: str
    department: str | None
    # Their manager's employee id when the row names one usably; None when it names
    # nobody usable (a problem of this row: `manager_usable` is then false) or none at all.
    manager_id: str | None
    manager_usable: bool
    # Whether reports can name them: a non-blank id, on the first row holding it.
    node: bool
    problems: tuple[Problem, ...]
    values: Mapping[str, str]  # the row by column, as a person's `attributes`

    @property
    def key(self) -> str:
        """What names them from run to run: their employee id, else e-mail, else row."""
        return self.employee_id or self.email or self.location

    @property
    def shown(self) -> str:
        """``Carl Contractor (E901)``, for messages."""
        who = self.name or self.email or self.employee_id or self.location
        eid = self.employee_id
        return f"{who} ({eid})" if eid and who != eid else who

    @property
    def detail(self) -> str:
        """What is wrong with the row, in words: ``Work Email must not be empty: …``. Without
        the row's values: this is what the store keeps and the webhook tells."""
        return "; ".join(f"{p.field} {p.expected}" for p in self.problems)

    @property
    def detail_shown(self) -> str:
        """`detail` with the value each problem's field holds, ``…, got 'E0O2'``: for the
        operator's terminal (`plan`, `check`), where HR's typo is found faster in front of
        them."""
        return "; ".join(
            f"{p.field} {p.expected}" + (f", got {shown_value(p.value)}" if p.value else "")
            for p in self.problems
        )


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
    # With `hold_people`: the people held for problems of their own row, in export order
    # (not in `people`; their problems not in `problems`).
    held: tuple[HeldPerson, ...] = ()
    # Managers filtered out whom kept people still name: their teams stay (mapping).
    left: LeftManagers = NO_MANAGER_LEFT

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
    hold_people: bool = False,
    row_problems: Sequence[Finding] = (),
    known_teams: Mapping[str, KnownTeam] = {},
) -> Directory:
    """Normalise, filter and validate the rows of one export; every problem is reported.

    `rows`: the export's rows, one by one or as one table (`Export.table()`, what a run
    passes). `also_used`: columns hrsync reads beyond `[source.fields]` and the filters
    (e.g. `template_names(mapping.team_name)`), checked like them; names that are not
    columns of the export are ignored. `null_values`: cells that read as empty
    (`source.null_values`). `unknown_manager`: "top" accepts a manager reference that
    matches nobody as "no manager", collected in `Directory.unknown_managers`.
    `hold_people`: when every problem is one of a person's own row (`Problem.holds`),
    those people are held (`Directory.held`) and the rest are read as people; any other
    problem still refuses the export, with every problem listed. `row_problems`: problems
    of people's own rows found before (a join that matched no row for them), told and
    held as the rows' own, for the rows the filters keep. `known_teams`: the teams DX last
    took, by their manager's id; a manager id naming nobody in the export but one of them
    is a manager who left (`Directory.left`), not a problem.
    """
    configured = {key: getattr(fields, key) for key in LOGICAL_FIELDS if getattr(fields, key)}
    # How messages name a field: its column, or the setting and its template.
    labels = {
        key: f"source.fields.{key} {value!r}" if is_template(value) else value
        for key, value in configured.items()
    }
    row_filter, unknown_fields = build_row_filter(filters, fields, columns)

    # The steps of the package's docstring, in its order.
    header = check_columns(export_name, columns, configured, unknown_fields, filters)  # 1
    if any(problem.fatal for _, problem in header):
        return Directory((), 0, {}, sort_findings(header)[0], ())
    table = rows if isinstance(rows, RowTable) else RowTable.of_rows(rows, columns)
    nulls = frozenset(value.strip() for value in null_values)
    spaced = (configured.get("name", ""), configured.get("department", ""))
    export = ExportColumns(table, nulls, spaced)
    person_columns = read_fields(export, configured)  # 2
    used = _used_columns(columns, configured, row_filter, also_used)
    unusable = check_values(export, used)  # 3
    filtered = filter_rows(row_filter, export, person_columns.status)  # 4
    kept, dropped, reason = filtered.kept, filtered.dropped, filtered.reason
    several = check_several(  # 4, several values, values of the wrong kind
        table.several, kept, export.locations, _text_columns(columns, configured, also_used)
    )
    manager_columns = {configured.get(k) for k in ("manager_id", "manager_email", "manager_name")}
    several_managers = [f for f in several if f[1].field in manager_columns]
    person_columns = _unread_managers(person_columns, several_managers, configured)
    checked = validate_rows(person_columns, kept, labels)  # 5
    refs = index_rows(person_columns, kept, dropped, by_name="manager_name" in configured)  # 6
    duplicates = report_duplicates(
        person_columns, refs.kept_by_id.repeated, refs.kept_by_email.repeated, labels
    )
    rules = ManagerRules(
        person_columns, reason, refs, labels, top=unknown_manager == "top", known=known_teams
    )
    managers = resolve_managers(  # 7
        export_name,
        kept,
        rules,
        # Reporting lines by row are for filter.root only: without it they are not kept.
        links=bool(filters.root and filters.root.strip()),
    )
    cycles = find_cycles(person_columns, kept, refs.kept_by_id, managers, labels)  # 8
    org = apply_root(  # 9
        export_name, filters.root, person_columns, reason, kept, dropped, refs, managers.up
    )
    nobody = check_some_kept(  # 10
        export_name, reason, kept, person_columns.status, filters, configured
    )
    findings = _told_once(
        several,
        [
            *header,
            *unusable,
            *nobody,
            *checked.findings,
            *duplicates,
            *managers.findings,
            *cycles,
            *org.findings,
            *(found for found in row_problems if reason[found[0]] is None),
        ],
    )
    held: tuple[HeldPerson, ...] = ()
    valid = checked.valid
    if hold_people:
        held = hold_rows(
            export,
            person_columns,
            findings,
            [*managers.findings, *cycles, *several_managers],
            managers.manager,
            refs,
            org,
        )
        if held:
            rows_held = {h.row for h in held}
            valid = [i for i in valid if i not in rows_held]
            findings = [f for f in findings if not (f[1].fatal and f[1].holds)]
    people = build_people(  # 11
        export, person_columns, valid, refs.kept_by_id, managers.manager, org
    )
    if not people and not any(problem.fatal for _, problem in findings):
        # Every path to an empty org above is its own problem; this one keeps it so.
        findings.append(fatal(WHOLE_EXPORT, export_name, "people", "0", "must number at least one"))
    problems, warnings = sort_findings(findings, _in_org(reason, org))
    excluded = _excluded(filtered, org)
    return Directory(
        people=people,
        excluded=sum(excluded.values()),
        excluded_by_reason=excluded,
        problems=problems,
        warnings=warnings,
        rows_read=export.count,
        unknown_managers=managers.unknown,
        held=held,
        left=left_managers(
            person_columns,
            export.values,
            reason,
            refs,
            managers.left,
            org,
            managers.gone,
            known_teams,
        ),
    )


def hold_rows(
    export: ExportColumns,
    fields: PersonColumns,
    findings: Sequence[Finding],
    about_managers: Sequence[Finding],
    manager: Sequence[str | None],
    refs: Refs,
    org: Org,
) -> tuple[HeldPerson, ...]:
    """The people to hold, when every fatal problem is one of a person's own row; none
    (the export is refused whole) when any other is fatal."""
    fatal_problems = [problem for _, problem in findings if problem.fatal]
    if not fatal_problems or not all(problem.holds for problem in fatal_problems):
        return ()
    by_row: dict[int, list[Problem]] = {}
    for problem in fatal_problems:
        for row in problem.holds:
            by_row.setdefault(row, []).append(problem)
    manager_rows = {row for _, p in about_managers if p.fatal for row in p.holds}
    in_org = org.rows
    first_by_id = refs.kept_by_id.first
    ids = fields.employee_id
    held = []
    for row in sorted(by_row, key=lambda i: natural_key(fields.location[i])):
        if in_org is not None and row not in in_org:
            continue  # outside filter.root's org: not synced either way
        usable = row not in manager_rows
        held.append(
            HeldPerson(
                row=row,
                location=fields.location[row],
                employee_id=ids[row],
                email=fields.email[row],
                name=fields.name[row],
                department=collapse_whitespace(fields.department[row]) or None,
                manager_id=manager[row] if usable else None,
                manager_usable=usable,
                node=bool(ids[row]) and first_by_id.get(ids[row]) == row,
                problems=tuple(dict.fromkeys(by_row[row])),
                values=export.values(row),
            )
        )
    return tuple(held)


def _field_columns(
    columns: Sequence[str], configured: Mapping[str, str], also_used: Collection[str]
) -> set[str]:
    """The columns whose one value a person's row must give: those of the fields (a
    template's too) and `also_used`; not the filters' (a pattern may match any value)."""
    named = [
        name
        for value in (*configured.values(), *also_used)
        for name in (template_names(value) if is_template(value) else (value,))
    ]
    return set(named) & set(columns)


def _text_columns(
    columns: Sequence[str], configured: Mapping[str, str], also_used: Collection[str]
) -> TextColumns:
    """The field columns (`_field_columns`), those where e-mails and names are read, and
    the status's."""

    def of(*keys: str) -> set[str]:
        return _field_columns(columns, {k: v for k, v in configured.items() if k in keys}, ())

    return TextColumns(
        _field_columns(columns, configured, also_used),
        of("email", "manager_email", "name", "manager_name"),
        of("status"),
    )


def _unread_managers(
    fields: PersonColumns, several: Sequence[Finding], configured: Mapping[str, str]
) -> PersonColumns:
    """`fields` with the manager references that are several values blank: those rows are
    held for it, and the joined text is nobody's reference (no "matches nobody", no
    unknown manager)."""
    if not several:
        return fields
    replaced: dict[str, Sequence[str]] = {}
    for key, attribute in _MANAGER_REFS:
        rows = [at for at, problem in several if problem.field == configured.get(key)]
        if rows:
            column = list(getattr(fields, attribute))
            for row in rows:
                column[row] = ""
            replaced[attribute] = column
    return fields._replace(
        manager_id_ref=replaced.get("manager_id_ref", fields.manager_id_ref),
        manager_email_ref=replaced.get("manager_email_ref", fields.manager_email_ref),
        manager_name_ref=replaced.get("manager_name_ref", fields.manager_name_ref),
    )


_MANAGER_REFS = (
    ("manager_id", "manager_id_ref"),
    ("manager_email", "manager_email_ref"),
    ("manager_name", "manager_name_ref"),
)


def _told_once(several: Sequence[Finding], findings: Sequence[Finding]) -> list[Finding]:
    """`several` and the other findings, but for those another check makes of the same
    value of the same row (its several values match nobody as a manager): one is enough."""
    if not several:
        return list(findings)
    told = {(at, problem.field) for at, problem in several}
    return [
        *several,
        *(
            (at, problem)
            for at, problem in findings
            if not (problem.fatal and problem.holds == (at,) and (at, problem.field) in told)
        ),
    ]


def _used_columns(
    columns: Sequence[str],
    configured: Mapping[str, str],
    row_filter: RowFilter,
    also_used: Collection[str],
) -> tuple[str, ...]:
    """Every column of the export hrsync reads: those of the fields (a template's too), of
    the filters, and `also_used`."""
    present = set(columns)
    in_templates = [
        name
        for value in configured.values()
        if is_template(value)
        for name in template_names(value)
    ]
    filtered_on = [rule.column for rule in (*row_filter.include, *row_filter.exclude)]
    named = (*configured.values(), *in_templates, *filtered_on, *also_used)
    return tuple(dict.fromkeys(c for c in named if c in present))


class Filtered(NamedTuple):
    reason: Sequence[str | None]  # by row: None when kept, else the setting excluding it
    kept: Sequence[int]  # positions, ascending
    dropped: Sequence[int]


def filter_rows(row_filter: RowFilter, export: ExportColumns, status: Sequence[str]) -> Filtered:
    """Each row kept or filtered out (status, include, exclude)."""
    reason = row_filter.reasons(export.column, export.count, status=status)
    everyone = export.positions
    if reason.count(None) == export.count:
        return Filtered(reason, everyone, [])
    is_kept = list(map(is_, reason, repeat(None)))
    kept = list(compress(everyone, is_kept))
    dropped = list(compress(everyone, map(not_, is_kept)))
    return Filtered(reason, kept, dropped)


def _in_org(reason: Sequence[str | None], org: Org) -> Callable[[int], bool]:
    """Whether a warning at a position stays: those about people outside the org go."""
    rows = org.rows

    def keeps(position: int) -> bool:
        if position < 0:
            return True  # about the whole export
        return reason[position] is None and (rows is None or position in rows)

    return keeps


def _excluded(filtered: Filtered, org: Org) -> dict[str, int]:
    """How many rows each filter excluded, filter.root's outside the org too."""
    counts: dict[str, int] = {}
    for row in filtered.dropped:
        reason = filtered.reason[row]
        assert reason is not None
        counts[reason] = counts.get(reason, 0) + 1
    if org.rows is not None:
        outside = sum(1 for row in filtered.kept if row not in org.rows)
        if outside:
            counts[ROOT_REASON] = outside
    return counts


def build_people(
    export: ExportColumns,
    person_columns: PersonColumns,
    valid: Sequence[int],
    kept_by_id: RowIndex,
    manager: Sequence[str | None],
    org: Org,
) -> tuple[Person, ...]:
    """The people of the valid rows (of the org, with filter.root), in export order. A
    duplicate id is reported; its first row stands for diagnostics."""
    first_by_id = kept_by_id.first
    ids = person_columns.employee_id
    rows = valid
    if org.rows is not None or kept_by_id.repeated:
        in_org = org.rows
        rows = [i for i in valid if (in_org is None or i in in_org) and first_by_id[ids[i]] == i]
    if not rows:
        return ()
    # Every row is built and the people's rows picked by a mask, in C: cheaper than
    # picking each of nine columns when most rows are people (the usual case).
    emails, names = person_columns.email, person_columns.name
    if not all_kept(names, rows):
        names = [name or email for name, email in zip(names, emails, strict=True)]
    # Collapsed already and none blank (the usual case): taken as they are.
    departments: Sequence[str | None] = person_columns.department
    if not (person_columns.department_collapsed and all(departments)):
        normalised = {v: collapse_whitespace(v) or None for v in set(person_columns.department)}
        departments = list(map(normalised.__getitem__, person_columns.department))
    statuses = person_columns.status
    if org.root is not None:
        manager = [*manager]
        manager[org.root] = None  # the root's own manager is cut
    columns = (
        ids,
        emails,
        names,
        manager,
        departments,
        statuses if all(statuses) else [status or None for status in statuses],
        # A location the export writes when asked (`LineLocations`, several exports'
        # `ChainedLocations`) stays unwritten: each person holds their row's position in
        # it instead (see `Person.location`), read through their row's shape. A record of
        # a shape of its own (`RowTable.partial`) has none: then every location is text.
        export.positions
        if isinstance(export.locations, LineLocations | ChainedLocations) and not export.partial
        else list(export.locations),
        export.held,
        export.shapes,
    )
    built: Iterable[tuple[object, ...]] = zip(*columns, strict=True)
    if len(rows) < export.count:
        chosen = bytearray(export.count)
        deque(map(chosen.__setitem__, rows, repeat(1)), maxlen=0)  # each row's mark, in C
        built = compress(built, chosen)
    return tuple(map(new_person, built))
