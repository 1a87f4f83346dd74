"""The run's first stages: read the export → map the people to teams.

`read_export` and `map_teams` are also `hrsync check`'s (and `explain`'s): they raise
`InputRefused` or `SourceUnavailable` and log nothing, so each caller reports in its own
words. The run's wrapper, `read_and_map`, logs and ends the run through `context.end`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Literal

from hrsync import logs
from hrsync.config.loading import Settings
from hrsync.core.export.page_signs import first_run_page
from hrsync.core.export.read_columns import ColumnsRead, columns_read
from hrsync.core.export.rows import RowTable
from hrsync.core.people import (
    NOT_IN_EXPORT,
    SUSPECT_REFERENCES,
    Directory,
    HeldPerson,
    KnownTeam,
    Problem,
    read_people,
)
from hrsync.core.people.joins import Joined, JoinReport, join_behind, join_people, names_read
from hrsync.core.people.precedence import Preceded, PrecedenceReport, apply_precedence
from hrsync.core.people.second_tables import SecondTable, TableCount
from hrsync.core.people.union import (
    Merged,
    Part,
    attach_refusals,
    kept_nobody,
    merge,
    only,
    source_counts,
)
from hrsync.core.report.problems import group_problems, grouped_lines, located_lines
from hrsync.core.settings import FieldSettings, SourceSettings, UnionSettings
from hrsync.core.teams.held import (
    NOTHING_KNOWN,
    HeldTeams,
    KnownPlaces,
    graph_people,
    held_refusal,
    place_held,
)
from hrsync.core.teams.mapping import (
    MANAGER_PREFIX,
    LeadLeft,
    TeamMap,
    build_teams,
    no_team_problem,
    team_name_problems,
)
from hrsync.logcap import log_each
from hrsync.outcome import Outcome
from hrsync.sources.base import Export as SourceExport
from hrsync.sources.base import SourceError, SourceUnavailable
from hrsync.sources.open import open_export
from hrsync.sources.secondary import open_tables
from hrsync.store.repo import LeadLeftRecord, Store
from hrsync.sync.context import Mapped, Run, end
from hrsync.sync.holding import known_places, log_held, remember_held
from hrsync.sync.results import Reading

log = logs.get_logger(__name__)


class InputRefused(Exception):
    """The export, or the teams made from it, cannot be synced; nothing is sent.

    `stage`: "source" (the export cannot be read), "export" (rows with problems),
    "template" (the mapping settings do not fit the export), "mapping" (the teams).
    """

    def __init__(
        self,
        stage: Literal["source", "export", "template", "mapping"],
        problems: Sequence[str],
        *,
        source: str = "",
        directory: Directory | None = None,
        located: Sequence[str] = (),
    ) -> None:
        super().__init__(problems[0] if problems else "unknown problem")
        self.stage = stage
        self.problems = tuple(problems)
        # The problems without the HR values they quote, where there are such (`located`
        # lines): what the run stores as its reason, logs and sends.
        self.located = tuple(located)
        self.source = source
        self.directory = directory  # the people read, when the export itself was fine


@dataclass(frozen=True, slots=True)
class Export:
    source: str
    directory: Directory
    pages: int = 1  # HTTP pages read (1 for a file)
    # The reader's notes, worth a look but no refusal (an answer of a common page size).
    notes: tuple[str, ...] = ()
    # An HTTP answer of exactly a common page size, read without paging: a first run
    # refuses it (`source.single_page`); 0: none.
    page_sized: int = 0
    joins: tuple[JoinReport, ...] = ()  # each `[[source.join]]` as it went
    precedence: tuple[PrecedenceReport, ...] = ()  # each precedence list as it went
    # The fields that read `directory`'s rows: `[source.fields]`, or with
    # `[[source.union]]` the merged columns (hrsync.core.people.union).
    fields: FieldSettings = field(default_factory=FieldSettings)
    # With `[[source.union]]`: each source's rows in the merged table, and its counts.
    parts: tuple[Part, ...] = ()
    sources: tuple[TableCount, ...] = ()


def read_export(
    settings: Settings,
    *,
    allow_held: int | None = None,
    lean: bool = False,
    known_teams: Mapping[str, KnownTeam] = {},
    gate_held: bool = False,
) -> Export:
    """read: the export as people, or InputRefused / SourceUnavailable (retry later).

    People with problems of their own row are held (`Directory.held`), unless there are
    more than the held guard lets through (`sync.max_held = 0`: any; `allow_held`:
    `sync --allow-held N`): then the export is refused as a whole.
    `gate_held` (a run's): too many held people are left to the gate, which refuses the
    plan with an id a person can approve, unless what the rows say proves the export
    itself broken (managers of another kind of id, a join's table missing rows).
    `lean`: the rows hold only the columns the config reads (a run's; `explain` and
    `check` show more of a row). `known_teams`: the teams DX last took (`teams_known`), so
    that a manager whose row is missing from the export is one who left, not a problem.
    """
    src = settings.source
    read = columns_read(settings)
    try:
        export, joined, merged, union_lists = open_merged(settings, read, lean=lean)
        directory = read_people(
            export.name,
            merged.columns,
            merged.table,
            merged.fields,
            settings.filter,
            also_used=read.value_names,
            null_values=src.null_values,
            unknown_manager=src.unknown_manager,
            hold_people=True,
            row_problems=joined.findings,
            known_teams=known_teams,
        )
    except SourceUnavailable:
        raise
    except SourceError as exc:
        raise InputRefused("source", [str(exc)]) from None
    if not directory.ok:
        raise InputRefused(
            "export",
            # One line per kind: a wrong column is one problem with a count, not 404.
            grouped_lines(directory.problems),
            source=export.name,
            directory=directory,
            located=located_lines(directory.problems),
        )
    sources: tuple[TableCount, ...] = ()
    if merged.unions:
        ids = [person.employee_id for person in directory.people]
        held_ids = [person.employee_id for person in directory.held if person.employee_id]
        sources = source_counts(merged.parts, ids)
        # A held person is still in the org (where DX last had them): one to attach to.
        refusals = [
            *attach_refusals(merged.parts, {*ids, *held_ids}),
            *kept_nobody(merged.parts, sources, held_ids),
        ]
        if refusals:
            raise InputRefused("export", refusals, source=export.name, directory=directory)
    refused = held_refused(
        settings, export.name, directory, joined.reports, allow_held, gate_held=gate_held
    )
    if refused is not None:
        raise refused
    parts = merged.parts if merged.unions else ()
    return Export(
        export.name,
        directory,
        export.pages,
        export.notes,
        joins=joined.reports,
        precedence=(*joined.precedence, *union_lists),
        fields=merged.fields,
        parts=parts,
        sources=sources,
        page_sized=export.page_sized,
    )


def open_merged(
    settings: Settings, read: ColumnsRead | None = None, *, lean: bool = False
) -> tuple[SourceExport, Joined, Merged, tuple[PrecedenceReport, ...]]:
    """Every source as one table, as a run reads it: the people export opened, its rows
    with every `[[source.join]]` table's columns and each precedence list's column added,
    each `[[source.union]]` export merged in; and the unions' precedence lists as they
    went. `read`: `columns_read(settings)`, when the caller has it. Raises SourceError (a
    join's or union's own named), SourceUnavailable, or InputRefused for a join, list or
    union that cannot be trusted. `lean`: a JSON export's rows hold only the columns the
    config reads (`names_read`), not every field of a record."""
    names = (read or columns_read(settings)).names
    keep = names_read(settings) if lean else None
    export = open_export(settings.source, also_read=names, keep=keep)
    joined = _joined(settings, export)
    merged, union_lists = _merged(settings, export, joined, names)
    return export, joined, merged, union_lists


def _joined(settings: Settings, export: SourceExport) -> Joined:
    """The export's rows with every `[[source.join]]` table's columns added, then each
    precedence list's column (none of either: the rows as they are); a join or list that
    cannot be trusted refuses the export, naming it."""
    src = settings.source
    joined = Joined(export.columns, export.table(), (), ())
    if src.join:
        names = names_read(settings)
        tables = open_tables(src.join, names)
        joined = join_people(
            export.name,
            export.columns,
            joined.table,
            tables,
            fields=src.fields,
            null_values=src.null_values,
            read=names,
        )
        if joined.refusals:
            raise InputRefused("export", joined.refusals, source=export.name)
    if not src.first_of:
        return joined
    preceded = _ranked(export.name, joined.columns, joined.table, src)
    return replace(
        joined, columns=preceded.columns, table=preceded.table, precedence=preceded.reports
    )


def _merged(
    settings: Settings, export: SourceExport, joined: Joined, read: Sequence[str]
) -> tuple[Merged, tuple[PrecedenceReport, ...]]:
    """The export (its joins' columns added) with every `[[source.union]]` export merged
    into it (none: the rows and fields as they are), and the unions' precedence lists as
    they went; a union that cannot be trusted refuses the export, naming it."""
    src = settings.source
    primary = SecondTable(export.name, joined.columns, joined.table, src.fields, src.null_values)
    if not src.union:
        return only(primary), ()
    tables: list[tuple[UnionSettings, SecondTable]] = []
    reports: list[PrecedenceReport] = []
    for union, table in open_tables(src.union, read):
        preceded, listed = _preceded(union, table)
        tables.append((union, preceded))
        reports.extend(listed)
    merged = merge(primary, tables, active_status=settings.filter.active_status)
    if merged.refusals:
        raise InputRefused("export", merged.refusals, source=export.name)
    return merged, tuple(reports)


def _preceded(
    union: UnionSettings, table: SecondTable
) -> tuple[SecondTable, tuple[PrecedenceReport, ...]]:
    """A union's export with its own `[source.union.fields]` lists' columns added."""
    if not union.table.first_of:
        return table, ()
    where = f"source.union[{union.name}]"
    preceded = _ranked(
        table.name, table.columns, table.table, union.table, own=union.name, key=f"{where}.fields"
    )
    return replace(table, columns=preceded.columns, table=preceded.table), preceded.reports


def _ranked(
    name: str,
    columns: Sequence[str],
    rows: RowTable,
    src: SourceSettings,
    *,
    own: str | None = None,
    key: str = "source.fields",
) -> Preceded:
    """The rows with each precedence list of `src`'s fields made a column, or
    InputRefused naming the field and the name that is no column."""
    preceded = apply_precedence(
        name,
        columns,
        rows,
        src.first_of,
        null_values=src.null_values,
        own=src.name if own is None else own,
        key=key,
    )
    if preceded.refusals:
        raise InputRefused("export", preceded.refusals, source=name)
    return preceded


def held_refused(
    settings: Settings,
    source: str,
    directory: Directory,
    joins: Sequence[JoinReport],
    allow_held: int | None,
    *,
    gate_held: bool = False,
) -> InputRefused | None:
    """The export refused for its held people: more than the held guard lets through
    (`allow_held`: `sync --allow-held N`). `gate_held`: only when what their rows say
    proves the export broken; the gate judges the rest, with a plan id to approve."""
    if not directory.held:
        return None
    held = len(directory.held)
    sync = settings.sync
    too_many = held_refusal(
        held, held + len(directory.people), sync.max_held, sync.max_held_fraction, allow_held
    )
    if too_many is None:
        return None
    problems = dict.fromkeys(p for person in directory.held for p in person.problems)
    if sync.max_held == 0 and allow_held is None:
        # `max_held = 0` holds nobody: each problem refuses the export, said as itself.
        guard = []
    else:
        broken = _broken_export(list(problems), directory.held, joins)
        if broken is None and gate_held:
            return None
        guard = [_held_guard_line(too_many, held, broken)]
    return InputRefused(
        "export",
        [*guard, *grouped_lines(problems)],
        source=source,
        directory=directory,
        located=[*guard, *located_lines(problems)],
    )


def _broken_export(
    problems: Sequence[Problem], people: Sequence[HeldPerson], joins: Sequence[JoinReport]
) -> str | None:
    """Why so many held people say the export itself is broken, when they do: managers
    matching nobody too many to be strays (a missing page, a column of another kind of
    id), or most of the people matching no row of a join (its table missing rows).
    Holding those people would sync a wrong org, so `--allow-held` is no fix then."""
    behind = join_behind([person.row for person in people], joins)
    if behind is not None:
        return behind
    suspect = next((p for p in problems if SUSPECT_REFERENCES in p.expected), None)
    if suspect is None:
        return None
    why = suspect.expected.partition("; ")[2]
    return f"so many rows with problems say the export itself is broken: {suspect.field}: {why}"


def _held_guard_line(too_many: str, held: int, broken: str | None) -> str:
    """The held guard's refusal, as `check` (and a run, for a broken export) says it."""
    if broken is not None:
        return f"{too_many}: {broken}"
    return (
        f"{too_many}: so many rows with problems say the export itself is broken; fix "
        f"them, or run `hrsync sync --allow-held {held}` to hold them and sync everyone else"
    )


def map_teams(settings: Settings, export: Export, known: KnownPlaces = NOTHING_KNOWN) -> HeldTeams:
    """map: the desired teams of the people read, held people where DX last verifiably
    had them (`known`), or InputRefused."""
    directory = export.directory
    held = directory.held
    absent = frozenset(u.value.strip() for u in directory.unknown_managers)
    people = graph_people(directory.people, held, known)
    template = team_name_problems(settings.mapping.team_name, people)
    if template:
        raise InputRefused("template", template, source=export.source)
    mapping, fields = settings.mapping, export.fields
    built = build_teams(people, mapping, fields, absent_managers=absent, left=directory.left)
    if built.problems and held:
        # A held person put back under the manager DX had them with may close a cycle
        # with today's rows: then they stay without one.
        unrestored = graph_people(directory.people, held, known, restore_managers=False)
        again = build_teams(
            unrestored, mapping, fields, absent_managers=absent, left=directory.left
        )
        if not again.problems:
            built = again
    placed = place_held(built, held, known)
    team_map = placed.team_map
    if team_map.problems:
        # The held people's own problems too: they are what to fix first.
        own = dict.fromkeys(p for person in held for p in person.problems)
        raise InputRefused(
            "mapping", grouped_lines([*team_map.problems, *own]), source=export.source
        )
    empty = no_team_problem(
        export.source, len(directory.people), team_map, settings.mapping.strategy
    )
    if empty is not None:
        raise InputRefused("mapping", [empty], source=export.source)
    return placed


def teams_known(store: Store, settings: Settings) -> dict[str, KnownTeam]:
    """The teams of managers DX last verifiably took, by manager id, with the manager of the
    team above: what keeps a team whose manager's row is dropped from the export (many HR
    exports drop leavers) until HR re-points their reports."""
    if settings.mapping.strategy != "manager":
        return {}
    last = store.submissions.last_verified()
    if last is None:
        return {}
    rows = last.plan.rows
    key_of = {row.reference_id: row.key for row in rows}
    known: dict[str, KnownTeam] = {}
    for row in rows:
        if not row.key.startswith(MANAGER_PREFIX):
            continue
        parent = key_of.get(row.parent_reference_id or "", "")
        above = parent.removeprefix(MANAGER_PREFIX) if parent.startswith(MANAGER_PREFIX) else None
        known[row.key.removeprefix(MANAGER_PREFIX)] = KnownTeam(row.name, above or None)
    return known


def name_departed(export: Export, store: Store) -> Export:
    """Managers whose rows are gone from the export, named by the e-mail DX took for their
    id: all hrsync knows of them, and more to a reader than an HR id (a GUID in Entra ID)."""
    left = export.directory.left
    gone = {manager for manager, why in left.reason.items() if why == NOT_IN_EXPORT}
    if not gone:
        return export
    # Once their team is led by a stand-in, DX no longer holds them: the name found the
    # first time is kept with the team (the store's `leads_left`).
    emails = {
        r.lead: r.lead_name
        for r in store.leads_left.current()
        if r.lead_name and r.lead_name != r.lead
    }
    emails |= store.people.emails_of(gone)
    named = {manager: emails[manager] for manager in gone & emails.keys()}
    if not named:
        return export
    people = {
        manager: person._replace(name=named[manager]) if manager in named else person
        for manager, person in left.people.items()
    }
    directory = replace(export.directory, left=left._replace(people=people))
    return replace(export, directory=directory)


def read_known(
    settings: Settings,
    store: Store,
    *,
    allow_held: int | None = None,
    lean: bool = False,
    gate_held: bool = False,
) -> Export:
    """`read_export` as the state store knows the org: a manager missing from the export
    whose team DX last took is one who left (`teams_known`), named as DX knew them
    (`name_departed`). What a run, `check` and `explain` read alike."""
    export = read_export(
        settings,
        allow_held=allow_held,
        lean=lean,
        known_teams=teams_known(store, settings),
        gate_held=gate_held,
    )
    return name_departed(export, store)


def read_and_map(run: Run) -> Mapped:
    """read → map, logged; a refused or unavailable export ends the run."""
    try:
        export = read_known(
            run.settings,
            run.store,
            allow_held=run.request.allow_held,
            lean=True,
            gate_held=True,
        )
    except SourceUnavailable as exc:
        # Not the export's fault: a failed run, retried on the next schedule.
        log.error("export.unavailable", detail=str(exc))
        end(run, Outcome.FAILED, reason=str(exc))
    except InputRefused as exc:
        if exc.directory is not None:
            _log_warnings(exc.directory)
        _refuse_input(run, exc)
    if export.page_sized and run.store.runs.last_accepted_people_count() is None:
        # No accepted run to compare with: the shrink guard cannot tell a capped page.
        _refuse_input(
            run, InputRefused("source", [first_run_page(export.source, export.page_sized)])
        )
    directory = export.directory
    _log_warnings(directory)
    for note in export.notes:
        log.warning("source.note", detail=note, see="hrsync check")
    log.info(
        "export.read",
        source=export.source,
        pages=export.pages,
        people=len(directory.people),
        excluded=directory.excluded,
    )
    for join in export.joins:
        log.info(
            "join.read",
            join=join.name,
            source=join.table,
            rows=join.table_rows,
            matched=join.matched,
            of=join.rows,
            unmatched=join.unmatched_count,
            several=join.several_count,
        )
    for listed in export.precedence:
        log.info(
            "fields.first_of",
            field=listed.field,
            won={source.name: source.won for source in listed.sources},
            empty=listed.empty,
            detail=listed.line(),
        )
    for part, count in zip(export.parts[1:], export.sources[1:], strict=True):
        log.info(
            "union.read", union=part.name, source=part.export, rows=count.rows, people=count.kept
        )
    known = known_places(run.store, directory)
    try:
        placed = map_teams(run.settings, export, known)
    except InputRefused as exc:
        # So many held people that the teams cannot be made (leads held that DX never
        # took): the held guard is the cause to tell, as it was before any plan.
        held = held_refused(
            run.settings, export.source, directory, export.joins, run.request.allow_held
        )
        _refuse_input(run, held or exc)
    team_map = placed.team_map
    log_held(placed.holds)
    if run.request.operational:
        remember_held(run.store, placed.holds, run.clock())
        run.store.leads_left.replace(map(_left_record, team_map.leads_left), run.clock())
    log_each(log, "mapping.note", team_map.notes, lambda note: {"detail": note})
    _log_unplaced(team_map)
    reading = Reading(
        len(directory.people),
        directory,
        placed.holds,
        team_map.unplaced,
        team_map.leads_left,
        export.joins,
        export.precedence,
        export.sources,
    )
    return Mapped(export.source, team_map, reading, export.notes)


def _left_record(entry: LeadLeft) -> LeadLeftRecord:
    """A manager who left, as the store keeps it (since when: kept while unbroken)."""
    return LeadLeftRecord(
        entry.key,
        entry.team,
        entry.employee_id,
        entry.name,
        entry.stand_in_email,
        len(entry.reports),
    )


def _log_warnings(directory: Directory) -> None:
    # Warnings of one kind are one event with a count, as problems are.
    log_each(
        log,
        "export.warning",
        group_problems(directory.warnings),
        lambda g: {"detail": str(g)},
        "warning",
        see="hrsync check",
    )


def _log_unplaced(team_map: TeamMap) -> None:
    # The total always, at warning, then one event per person through the log's cap (a
    # 50,000-person export without managers is not 50,000 lines): nobody leaves unseen.
    unplaced = team_map.unplaced
    if unplaced:
        log.warning("mapping.people_in_no_team", total=len(unplaced), see="hrsync plan")
    log_each(
        log,
        "mapping.person_in_no_team",
        unplaced,
        lambda p: {
            "person": p.employee_id,
            "name": p.name,
            "location": p.location,
            "reason": p.reason,
            "needs_person": p.needs_person,
        },
        "warning",
        see="hrsync plan",
    )
    log_each(
        log,
        "mapping.lead_left",
        team_map.leads_left,
        LeadLeft.log_fields,
        "warning",
        see="hrsync plan",
    )
    log_each(
        log,
        "mapping.lead_without_reports",
        team_map.leads_without_reports,
        lambda w: {
            "unit": w.unit,
            "person": w.employee_id,
            "location": w.location,
            "detail": str(w),
        },
        "warning",
        see="hrsync check",
    )


def _refuse_input(run: Run, refused: InputRefused) -> None:
    # The report, read at the terminal by whoever runs it, quotes the values; the reason,
    # the log and hence the webhook say where they are.
    problems = refused.located or refused.problems
    first = problems[0] if problems else "unknown problem"
    more = f" (and {len(problems) - 1} more)" if len(problems) > 1 else ""
    if refused.stage == "source":
        # Not the export's fault: it was never read (a file not found, credentials the
        # HR API refused, an answer of another shape).
        for problem in problems:
            log.error("source.unreadable", detail=problem)
        reason = f"source unreadable: {first}{more}"
        heading = "The export could not be read; nothing was sent:\n"
    else:
        for problem in problems:
            log.error("export.problem", detail=problem)
        reason = f"export invalid: {first}{more}"
        heading = "The export has problems; nothing was sent:\n"
    end(
        run,
        Outcome.REFUSED,
        reason=reason,
        report=heading + "\n".join(f"  - {p}" for p in refused.problems),
        problems=refused.problems,  # the document of this run, for whoever ran it
    )
