"""`hrsync explain PERSON`: why a person is (or is not) in a team, from the run's own
products (pure).

The command reads the export, maps it and assigns reference_ids with the run's own
stages; this module finds the person, derives each field again to show how it was made,
walks the manager chain and says which team they lead or belong to and why, or why they
are in no team. Nothing here reads a file, DX or the store: those answers come in.
"""

from __future__ import annotations

import difflib
import unicodedata
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, fields
from datetime import datetime

from hrsync.core.export.filters import STATUS_REASON, RowFilter
from hrsync.core.export.rows import SourceRow
from hrsync.core.export.templates import Template, is_template
from hrsync.core.gate.compare import index_dx
from hrsync.core.listing import capped
from hrsync.core.people import NOT_IN_EXPORT, HeldPerson, Person
from hrsync.core.settings import FieldSettings
from hrsync.core.teams.held import Hold
from hrsync.core.teams.identity import TeamRow
from hrsync.core.teams.mapping import DesiredTeam, TeamMap, Unplaced, written_manager
from hrsync.core.text import name_and_id, plural, quoted
from hrsync.dx.models import DxTeam

# A chain longer than this is cut (the mapping already refused any cycle).
_CHAIN_LIMIT = 50


@dataclass(frozen=True, slots=True)
class Sent:
    """The last submission that sent a team's row to DX."""

    run_id: str
    at: datetime
    status: str


@dataclass(frozen=True, slots=True)
class Derived:
    field: str  # the logical field (`email`)
    source: str  # the configured column, or template
    template: bool
    value: str  # what the column holds, or the template renders, on this row


def find_person(people: Sequence[Person], query: str) -> Person | None:
    """The person with this employee id (exact) or e-mail (any case)."""
    wanted = query.strip()
    folded = wanted.casefold()
    for person in people:
        if person.employee_id == wanted or person.email.casefold() == folded:
            return person
    return None


def people_named(people: Sequence[Person], query: str) -> tuple[Person, ...]:
    """The people whose name is `query`: written exactly so, else the same once case,
    accents and runs of spaces are set aside. Several when the name is shared."""
    wanted = query.strip()
    if not wanted:
        return ()
    exact = tuple(p for p in people if p.name == wanted)
    if exact:
        return exact
    folded = _folded_name(wanted)
    return tuple(p for p in people if _folded_name(p.name) == folded)


def _folded_name(name: str) -> str:
    # "José  Álvarez" and "jose alvarez": one name as a person types it.
    decomposed = unicodedata.normalize("NFKD", name)
    bare = "".join(c for c in decomposed if not unicodedata.combining(c))
    return " ".join(bare.casefold().split())


def find_held(held: Sequence[HeldPerson], query: str) -> HeldPerson | None:
    """The held person with this employee id (exact) or e-mail (any case), else the one
    named so (as `people_named` matches): a person asks by the name they know."""
    wanted = query.strip()
    folded = wanted.casefold()
    for person in held:
        if (person.employee_id and person.employee_id == wanted) or (
            person.email and person.email.casefold() == folded
        ):
            return person
    named = [p for p in held if p.name and p.name == wanted] or [
        p for p in held if p.name and _folded_name(p.name) == _folded_name(wanted)
    ]
    return named[0] if wanted and len(named) == 1 else None


def explain_held(hold: Hold, since: datetime | None) -> str:
    """A held person: since when, their row and what is wrong, and where DX keeps them."""
    person = hold.person
    when = f" since {since:%Y-%m-%d}" if since is not None else ""
    lines = [
        person.shown + (f" <{person.email}>" if person.email else ""),
        f"  held{when}: {person.location}, {person.detail}; {hold.kept}",
    ]
    if hold.dx_email is not None:
        lines.append(f"  DX has them as {hold.dx_email}, from the last import DX verifiably took")
    lines.extend(
        f"  leads {team!r} in HR, but DX never took them: {lead} stands in"
        for team, lead in hold.stood_in
    )
    lines.append("  fix their row in HR; the next run syncs them as it says")
    return "\n".join(lines) + "\n"


def suggestions(people: Sequence[Person], query: str, limit: int = 5) -> list[str]:
    """Employee ids and e-mails close to `query`, closest first; then names close to it
    (the name a person goes by, asked where the export holds their legal one)."""
    candidates = [p.employee_id for p in people] + [p.email for p in people]
    close = difflib.get_close_matches(query.strip(), candidates, n=limit, cutoff=0.6)
    names = {_folded_name(p.name): p.name for p in people if p.name}
    named = difflib.get_close_matches(_folded_name(query), list(names), n=limit, cutoff=0.6)
    return [*close, *(names[n] for n in named if names[n] not in close)][:limit]


@dataclass(frozen=True, slots=True)
class Excluded:
    """A row of the export that holds the person asked about but that the filters drop."""

    location: str  # `people.csv line 41`
    setting: str  # the filter that drops it: `filter.active_status`, `filter.exclude.x`
    column: str  # the column that filter read
    value: str  # what the row holds there
    # The row as read (its joined columns too), and the person's ids as the fields read
    # them: what `provenance` needs to show the joined values that decided it.
    values: Mapping[str, str] = field(default_factory=dict, repr=False)
    employee_id: str = ""
    email: str = ""


def find_excluded(
    rows: Iterable[SourceRow], fields: FieldSettings, row_filter: RowFilter, query: str
) -> Excluded | None:
    """The row a filter drops whose employee id (exact) or e-mail (any case) is `query`,
    else the one row named so (as `people_named` matches; a name two rows share is none).

    `find_person` sees only the people kept; without this, a person the filters leave out
    (a leaver, an excluded department) was answered "no person with that id", as if the
    export did not hold them.
    """
    wanted = query.strip()
    folded = wanted.casefold()
    if not wanted:
        return None
    readers = [
        (name, Template(source) if is_template(source) else source)
        for name in ("employee_id", "email", "name")
        if isinstance(source := getattr(fields, name), str) and source
    ]
    wanted_name = _folded_name(wanted)
    named: list[tuple[SourceRow, dict[str, str]]] = []
    for row in rows:
        ids = {name: _read(reader, row.values) for name, reader in readers}
        for name, value in ids.items():
            if name == "name":
                if value and _folded_name(value) == wanted_name:
                    named.append((row, ids))
            elif value == wanted or (name == "email" and value.casefold() == folded):
                return _excluded(row, ids, row_filter)
    return _excluded(*named[0], row_filter) if len(named) == 1 else None


def _excluded(row: SourceRow, ids: Mapping[str, str], row_filter: RowFilter) -> Excluded | None:
    values = row.values
    setting = row_filter.reason(values)
    if setting is None:
        return None  # kept by the filters: not left out, so not explained here
    column = _filter_column(row_filter, setting)
    return Excluded(
        row.location,
        setting,
        column,
        values.get(column, ""),
        values,
        employee_id=ids.get("employee_id", ""),
        email=ids.get("email", ""),
    )


def _read(reader: Template | str, values: Mapping[str, str]) -> str:
    return (
        reader.render(_cells(values)) if isinstance(reader, Template) else values.get(reader, "")
    ).strip()


def _cells(values: Mapping[str, str]) -> Callable[[str], str]:
    return lambda name: values.get(name, "")


def _filter_column(row_filter: RowFilter, setting: str) -> str:
    if setting == STATUS_REASON:
        return row_filter.status_column or ""
    for rule in (*row_filter.include, *row_filter.exclude):
        if rule.setting == setting:
            return rule.column
    return ""


def explain_excluded(query: str, excluded: Excluded) -> str:
    """The answer for a person the filters leave out."""
    held = f" ({excluded.column} {excluded.value!r})" if excluded.column else ""
    return (
        f"{query.strip()} is at {excluded.location}, but left out by {excluded.setting}{held}: "
        f"a person the filters leave out is in no team and is not sent to DX\n"
    )


def derive_fields(person: Person, settings: FieldSettings) -> tuple[Derived, ...]:
    """Each configured `[source.fields]` entry: its column or template and its value."""
    values = person.attributes
    out: list[Derived] = []
    for entry in fields(settings):
        source = getattr(settings, entry.name)
        if not isinstance(source, str) or not source:
            continue
        if is_template(source):
            value = Template(source).render(lambda name: values.get(name, ""))
            out.append(Derived(entry.name, source, True, value))
        else:
            out.append(Derived(entry.name, source, False, values.get(source, "")))
    return tuple(out)


def manager_chain(person: Person, people: Sequence[Person]) -> tuple[Person, ...]:
    """The person's manager, theirs, … up to the top (within the people kept)."""
    by_id = {p.employee_id: p for p in people}
    chain: list[Person] = []
    seen = {person.employee_id}
    current = person
    while current.manager_id is not None and len(chain) < _CHAIN_LIMIT:
        manager = by_id.get(current.manager_id)
        if manager is None or manager.employee_id in seen:
            break
        chain.append(manager)
        seen.add(manager.employee_id)
        current = manager
    return tuple(chain)


def _who(person: Person) -> str:
    return f"{person.name} ({person.employee_id})"


def _team_lines(
    team: DesiredTeam,
    rows: Mapping[str, TeamRow],
    dx_by_ref: Mapping[str, DxTeam],
    sent: Mapping[str, Sent],
) -> list[str]:
    row = rows.get(team.key)
    ref = row.reference_id if row is not None else None
    lines = [f"    HR key {team.key}, reference_id {ref or '(none yet)'}"]
    dx = dx_by_ref.get(ref) if ref else None
    if dx is None:
        lines.append("    DX: no team with this reference_id yet (the next sync creates it)")
    else:
        changed = f"{dx.last_changed_at:%Y-%m-%d %H:%M}Z" if dx.last_changed_at else "unknown"
        lines.append(f"    DX: team {dx.id} {quoted(dx.name)}, last changed {changed}")
    last = sent.get(ref) if ref else None
    if last is None:
        lines.append("    last sent: never, by this state store")
    else:
        lines.append(
            f"    last sent: run {last.run_id} at {last.at:%Y-%m-%d %H:%M}Z ({last.status})"
        )
    return lines


@dataclass(frozen=True, slots=True)
class DxUser:
    """What hrsync learned of whether DX counts the person (the store's `dx_people`)."""

    counted: bool | None
    evidence: str | None


def dx_user_line(user: DxUser | None) -> str | None:
    """The report's line on whether DX counts the person; None when never sent."""
    if user is None:
        return None
    if user.counted is False:
        return f"  not a DX user yet: {user.evidence or 'DX ignored this e-mail'}"
    if user.counted is True:
        return f"  a DX user: {user.evidence or 'DX counts them'}"
    if user.evidence:  # a count says some of their team are not counted, not whom
        return f"  whether DX counts them: not known yet ({user.evidence})"
    return "  whether DX counts them: not known yet (sent, no evidence either way)"


def explain(
    person: Person,
    people: Sequence[Person],
    team_map: TeamMap,
    settings: FieldSettings,
    *,
    rows: Sequence[TeamRow],
    dx_teams: Sequence[DxTeam],
    sent: Mapping[str, Sent],
    strategy: str,
    dx_user: DxUser | None = None,
    joined: Sequence[str] = (),
) -> str:
    """The report: the row, the fields, the chain, the team(s) and their DX side, and
    whether DX counts the person (`dx_user`). `joined`: where their joined values came
    from (hrsync.core.people.joins.provenance), after the fields."""
    lines = [f"{_who(person)} <{person.email}>", f"  row: {person.location}", "  fields:"]
    for d in derive_fields(person, settings):
        how = f"template {d.source!r}" if d.template else f"column {d.source!r}"
        lines.append(f"    {d.field} = {d.value!r}  ({how})")
    lines.extend(joined)
    chain = manager_chain(person, people)
    gone = next((g for g in team_map.leads_left if person.email in g.reports), None)
    if gone is not None:
        # A manager with no row has no location to show.
        where = "" if gone.why == NOT_IN_EXPORT else f" at {gone.location}"
        lines.append(
            f"  manager chain: {name_and_id(gone.name, gone.employee_id)} left "
            f"({gone.how}{where}); HR has not named a new manager yet"
        )
    elif chain:
        lines.append(f"  manager chain: {capped((_who(p) for p in chain), sep=' -> ')} (top)")
    elif person.manager_id is not None:
        lines.append(f"  manager chain: {person.manager_id!r} is not among the people kept")
    elif (written := written_manager(person, settings)) is not None:
        # The reader dropped a manager its filters left out: not the top of the org.
        manager, column = written
        lines.append(
            f"  manager chain: {manager!r} ({column}) is not among the people kept "
            "(filtered out or absent from the export)"
        )
    elif any(p.manager_id == person.employee_id for p in people):
        lines.append("  manager chain: none (top of the org)")
    else:
        lines.append("  manager chain: none, and nobody reports to them")
    by_row = {r.key: r for r in rows}
    # The team planning and verifying match (of two sharing a reference_id, the one kept).
    dx_by_ref = index_dx(dx_teams).by_ref
    led = [t for t in team_map.teams if t.lead_employee_id == person.employee_id]
    member = [t for t in team_map.teams if person.email in t.contributors]
    by_key = {t.key: t for t in team_map.teams}
    left_by_key = {g.key: g for g in team_map.leads_left}
    for team in led:
        reports = sum(1 for p in people if p.manager_id == person.employee_id)
        stood_for = left_by_key.get(team.key)
        if stood_for is not None:
            why = (
                f"lead left: {person.name} stands in for "
                f"{name_and_id(stood_for.name, stood_for.employee_id)}, {stood_for.how}, "
                "until HR re-points "
                f"its {plural(len(stood_for.reports), 'person')} (the nearest kept manager up "
                "the chain)"
            )
        elif strategy == "department":
            why = "the unit's lead (source.fields.department_lead, or its most senior manager)"
        elif reports == 0 and any(
            g.stand_in_id == person.employee_id for g in left_by_key.values()
        ):
            # Their only reports left: the team stays, so the one below keeps its parent.
            why = "nobody reports to them now, but a team below is that of a manager who left"
        else:
            why = f"{reports} {'person reports' if reports == 1 else 'people report'} to them"
        parent = by_key.get(team.parent_key) if team.parent_key else None
        under = f"under {quoted(parent.name)}" if parent else "a root team"
        lines.append(f"  leads {quoted(team.name)} ({under}): {why}")
        lines.extend(_team_lines(team, by_row, dx_by_ref, sent))
    for team in member:
        lead = team.lead_employee_id or team.lead_email
        if strategy == "department":
            why = f"their department is {team.key.removeprefix('department:')!r}"
        elif (left := left_by_key.get(team.key)) is not None:
            why = (
                f"their manager {name_and_id(left.name, left.employee_id)} left; lead left: "
                f"{left.stand_in_name} ({left.stand_in_id}) stands in until HR names their "
                "new manager"
            )
        elif team.lead_employee_id == person.manager_id:
            why = "their manager leads it"
        else:
            why = f"their manager's team was folded into it (mapping.min_team_size); lead {lead}"
        lines.append(f"  member of {quoted(team.name)}: {why}")
        lines.extend(_team_lines(team, by_row, dx_by_ref, sent))
    if not led and not member:
        unplaced: Unplaced | None = next(
            (u for u in team_map.unplaced if u.employee_id == person.employee_id), None
        )
        reason = unplaced.reason if unplaced is not None else "left out by the mapping"
        lines.append(f"  in no team: {reason}")
    if (line := dx_user_line(dx_user)) is not None:
        lines.append(line)
    return "\n".join(lines) + "\n"
