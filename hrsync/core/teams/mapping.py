"""People to desired teams: the manager-chain and department strategies (pure).

CONTRACT: `DesiredTeam` is what identity assignment consumes; `build_teams` makes them.

Strategy ``manager`` (the default)
    Every person with direct reports leads a team, keyed ``manager:<employee_id>``. Every
    person whose manager is in the (filtered) export is a contributor of exactly one team:
    their manager's. A team's parent is the team led by the lead's manager; a lead whose
    manager is not in the export leads a root team. A manager id that names nobody in the
    export makes that person top-of-org; each such case is reported in `TeamMap.notes`.

A manager who left (strategy ``manager``)
    A manager filtered out of the export (terminated, excluded by a filter), or whose row
    is missing from it while DX last took their team (the reader knows it), whom kept
    people still name (`LeftManagers`, from the reader) keeps their team until HR
    re-points those people: same key (so same reference_id) and name (rendered from the
    departed manager's row; with no row, the name DX has), the people who name them as its
    contributors, led by a stand-in: the nearest kept manager up the chain, walking through
    filtered-out rows (the departed manager's row gives their own manager; with no row,
    the team DX had above theirs). The team's parent is the
    nearest team up that chain; a kept manager there leads a team even when nobody else
    reports to them, so the team keeps its parent. Each such team is in
    `TeamMap.leads_left`. When nobody up the chain is kept, nobody can stand in: the team
    is not made, it is in `TeamMap.leads_left` without a stand-in, and its people are in
    no team (unplaced, needing a person).

People in no team
    Whoever is neither a lead nor a contributor of a finished team is in
    `TeamMap.unplaced`, with why (no manager and no reports; a manager not among the
    people kept; no department), in export order. Only "no manager and no reports" is
    meant (someone outside every team: a board member, a contractor); everyone else in
    no team needs a person (`Unplaced.needs_person`).

Strategy ``department``
    One team per department value, keyed ``department:<unit>``. Without a parent column,
    a value is a path split on ``mapping.department_separator`` (segments trimmed, empty
    segments dropped): ``Engineering/Platform/Infra`` makes the units ``Engineering``,
    ``Engineering/Platform`` and ``Engineering/Platform/Infra``, each the parent of the
    next. With ``source.fields.department_parent`` set, the value is the unit as is and
    the parent unit comes from that column (paths are not split then). Contributors are
    the people whose department is exactly the unit. The lead comes from the
    ``source.fields.department_lead`` column (an employee id or an e-mail; every row of
    the unit that fills it must agree), or else is the unit's most senior manager: among
    the people of the unit and its sub-units, those with reports first, then the one
    highest in the manager chain, ties broken by employee id (every unit has someone in
    or below it, so there is always a lead). A unit where nobody has reports is led by
    its most senior individual contributor and listed in
    `TeamMap.leads_without_reports` (a warning). An empty
    ``mapping.department_separator`` means no nesting: each value is one unit.
    Disagreeing parent or lead values, a lead that matches nobody and parent cycles are
    `TeamMap.problems`: the engine refuses the run on any of them; the unit concerned
    is left out and its sub-units attach to the nearest unit above.

Team names
    ``mapping.team_name`` is rendered per team with str.format-style placeholders (no
    format specs, no conversions): ``{lead_name}``, ``{lead_first_name}``,
    ``{lead_last_name}``, ``{lead_email}``, ``{lead_employee_id}``, ``{department}`` and
    ``{department_path}``, plus any HR column of the lead by its name (``{Title}``); a
    built-in wins over a column of the same name. A placeholder may pass its value through
    filters, ``{lead_name|first}`` (hrsync.core.export.templates). With the manager strategy
    ``{department}`` and ``{department_path}`` are the lead's department value; with the
    department strategy ``{department}`` is the unit's own name (the last path segment)
    and ``{department_path}`` the whole path (use ``team_name = "{department}"`` there).
    A lead without a value for a column renders it empty; a name that renders blank
    falls back to ``"<lead name>'s team"`` (noted). Names are compared case-insensitively
    and made unique: among teams sharing a name, the one highest in the hierarchy (least
    deep; ties by smallest key) keeps it and the others get `` (2)``, `` (3)``, ... in
    that order (skipping any suffixed name already taken), so a suffixed team is never
    above the plain one. Each such group is noted.

``mapping.min_team_size``
    After the strategy has built the teams, deepest first (ties by key), a non-root team
    with fewer contributors than ``min_team_size`` is folded into its parent: its
    contributors join the parent's contributors, its lead too when the lead is a
    contributor of no team (with the manager strategy the lead is already one of the
    parent's contributors), and its sub-teams re-attach to the parent. Because children
    fold first, people folded into a team count towards that team's size. A root team
    is never folded; one below the minimum is kept and noted. Every fold is noted.

Output order: parents before children, by depth, then by key.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from functools import partial
from itertools import islice
from operator import attrgetter
from typing import NamedTuple, cast

from hrsync.core.export.templates import FILTERS, Template, TemplateError, check_template
from hrsync.core.listing import LIMIT, capped
from hrsync.core.people import (
    NO_MANAGER_LEFT,
    NOT_IN_EXPORT,
    LeftManagers,
    Person,
    Problem,
    export_columns,
    normalise_name,
)
from hrsync.core.settings import FieldSettings, MappingSettings
from hrsync.core.text import natural_key
from hrsync.core.tree import ancestors, forest

MANAGER_PREFIX = "manager:"
DEPARTMENT_PREFIX = "department:"

BUILTIN_PLACEHOLDERS: tuple[str, ...] = (
    "lead_name",
    "lead_first_name",
    "lead_last_name",
    "lead_email",
    "lead_employee_id",
    "department",
    "department_path",
)


class SortedEmails(tuple[str, ...]):
    """Contributors as `build_teams` makes them: sorted and unique. A tuple like any
    other; its type tells `identity.assign` they need no sorting again (at 100k people,
    comparing every e-mail once more cost as much as building the rows)."""

    __slots__ = ()


class DesiredTeam(NamedTuple):
    """One team as HR says it should be (a NamedTuple: a run builds one per team, 15,000s,
    and a frozen dataclass costs four times as much to build)."""

    key: str  # stable HR key: "manager:<lead employee_id>" or "department:<unit path or id>"
    name: str
    lead_email: str
    lead_employee_id: str | None
    parent_key: str | None  # None for a root team
    contributors: tuple[str, ...]  # sorted unique e-mails


_new_team = cast(Callable[[tuple[object, ...]], DesiredTeam], partial(tuple.__new__, DesiredTeam))


@dataclass(frozen=True, slots=True)
class Unplaced:
    """A kept person who is in no team (neither its lead nor a contributor), and why:
    nobody leaves the org without a word."""

    employee_id: str
    name: str
    email: str
    location: str
    reason: str
    # False only for someone meant to be in no team (no manager and nobody reports to
    # them); anyone else active in no team is lost to DX until a person acts.
    needs_person: bool = True

    def __str__(self) -> str:
        return f"{self.name} ({self.employee_id}, {self.location}): {self.reason}"


# The one reason someone is meant to be in no team.
NO_MANAGER_NO_REPORTS = "no manager and nobody reports to them"


@dataclass(frozen=True, slots=True)
class LeadLeft:
    """A manager who left while people still name them: their team, kept with a stand-in
    lead until HR re-points those people (or, with nobody to stand in, not kept)."""

    key: str  # the team's HR key, unchanged: "manager:<departed employee id>"
    team: str  # its name ("" when not kept)
    employee_id: str  # the manager who left
    name: str
    location: str  # their row
    why: str  # the filter that left them out ("filter.active_status")
    reports: tuple[str, ...]  # e-mails of the kept people who still name them, sorted
    stand_in_id: str | None  # the nearest kept manager up the chain; None: nobody
    stand_in_name: str = ""
    stand_in_email: str = ""

    @property
    def how(self) -> str:
        """How they left, as messages tell it."""
        return NOT_IN_EXPORT if self.why == NOT_IN_EXPORT else f"excluded by {self.why}"

    def __str__(self) -> str:
        who = f"{self.name} ({self.employee_id})"
        count = f"{len(self.reports)} {'person' if len(self.reports) == 1 else 'people'}"
        if self.stand_in_id is None:
            return (
                f"lead left: {who} is {self.how} and nobody up their chain is "
                f"kept to stand in; {count} who still name them are in no team"
            )
        return (
            f"lead left: {self.stand_in_name} ({self.stand_in_id}) stands in for {who} "
            f"({self.how}) as lead of {self.team!r} until HR re-points its "
            f"{count}"
        )

    def log_fields(self) -> dict[str, object]:
        """As the log tells it (`mapping.lead_left`)."""
        return {
            "team": self.team,
            "key": self.key,
            "lead": self.employee_id,
            "lead_name": self.name,
            "why": self.why,
            "stand_in": self.stand_in_email or None,
            "people": len(self.reports),
        }


@dataclass(frozen=True, slots=True)
class LeadWithoutReports:
    """Department strategy: no candidate for the unit's lead had reports, so an
    individual contributor leads it (a warning, `mapping.lead_without_reports`)."""

    unit: str
    employee_id: str
    name: str
    location: str

    def __str__(self) -> str:
        return (
            f"unit {self.unit!r} is led by {self.name} ({self.employee_id}, {self.location}), "
            "who has no reports: nobody in or below the unit has any; set "
            "source.fields.department_lead to choose its lead"
        )


@dataclass(frozen=True, slots=True)
class TeamMap:
    teams: tuple[DesiredTeam, ...]  # parents before children: by depth, then key
    notes: tuple[str, ...] = ()  # folds, renamed duplicates, people in no team
    problems: tuple[Problem, ...] = ()  # fatal: the engine refuses the run
    unplaced: tuple[Unplaced, ...] = ()  # people in no team, in export order
    leads_without_reports: tuple[LeadWithoutReports, ...] = ()  # by unit
    leads_left: tuple[LeadLeft, ...] = ()  # managers who left while people name them, by key

    @property
    def needing_person(self) -> tuple[Unplaced, ...]:
        """The people in no team who are not meant to be: each needs a person."""
        return tuple(u for u in self.unplaced if u.needs_person)


class _ManagerCycle(Exception):
    """Control flow inside this module, not an error: a chain of managers (or of their
    teams) leads back to itself. `build_teams` turns it into a problem of its TeamMap."""

    def __init__(self, cycle: Sequence[str]) -> None:
        super().__init__(" -> ".join([*cycle, cycle[0]]))
        self.chain = str(self)
        self.first = cycle[0]  # an employee id, or the key of a team (`manager:E1`)


# ---------------------------------------------------------------- templates


def team_name_problems(template: str, people: Sequence[Person]) -> list[str]:
    """Problems with `mapping.team_name` over the columns `people` have; empty when usable.
    The run checks this before `build_teams`, which expects a usable template."""
    return validate_template(template, _template_columns(template, people)) if people else []


def validate_template(template: str, columns: Collection[str]) -> list[str]:
    """Problems with `template` given the export's column names; empty when usable."""
    return check_template(
        template,
        columns,
        where=f"mapping.team_name {template!r}",
        builtins=BUILTIN_PLACEHOLDERS,
        example="{lead_name}",
    )


class _Drafts:
    """The teams while they are being built, folded and named before they are frozen: one
    dict per field, keyed by team key (cheaper than an object per team at 15k teams, and
    `parent` is the mapping `forest` walks)."""

    __slots__ = (
        "contributors",
        "department",
        "department_path",
        "lead",
        "left",
        "named",
        "parent",
        "stand_in",
    )

    def __init__(self) -> None:
        self.parent: dict[str, str | None] = {}
        self.lead: dict[str, Person] = {}
        # E-mails: a list may name one twice (a set once folding merges teams).
        self.contributors: dict[str, Collection[str]] = {}
        self.department: dict[str, str] = {}  # {department} of the team name
        self.department_path: dict[str, str] = {}  # {department_path}
        # Teams of a manager who left: `lead` is the manager (the name is theirs), the
        # stand-in leads the team sent.
        self.stand_in: dict[str, Person] = {}
        self.left: list[LeadLeft] = []  # every manager who left whom people still name
        # By key: a name to keep as is (a manager missing from the export has no row to
        # render one from; DX's name for the team stays).
        self.named: dict[str, str] = {}

    def add(
        self,
        key: str,
        lead: Person,
        parent: str | None,
        contributors: Collection[str],
        department: str,
        department_path: str,
    ) -> None:
        self.parent[key] = parent
        self.lead[key] = lead
        self.contributors[key] = contributors
        self.department[key] = department
        self.department_path[key] = department_path

    def remove(self, key: str) -> None:
        del self.parent[key], self.lead[key], self.contributors[key]
        del self.department[key], self.department_path[key]


def _template_columns(template: str, people: Sequence[Person]) -> Collection[str]:
    """The export's columns as far as validating `template` needs them: a template of
    built-ins only never reads a column, and listing them visits every person."""
    try:
        names = Template(template).names
    except TemplateError:
        return ()  # refused for its syntax, whatever the columns
    if all(name in BUILTIN_PLACEHOLDERS for name in names):
        return ()
    return export_columns(people)


def _names(leads: list[Person]) -> Iterable[str]:
    return map(attrgetter("name"), leads)


# Each built-in placeholder's values for teams (their leads, keys); a built-in wins over
# a column of its name.
_BUILTINS: Mapping[str, Callable[[list[Person], list[str], _Drafts], list[str]]] = {
    "lead_name": lambda leads, keys, d: list(_names(leads)),
    "lead_first_name": lambda leads, keys, d: list(map(FILTERS["first"], _names(leads))),
    "lead_last_name": lambda leads, keys, d: list(map(FILTERS["last"], _names(leads))),
    "lead_email": lambda leads, keys, d: [lead.email for lead in leads],
    "lead_employee_id": lambda leads, keys, d: [lead.employee_id for lead in leads],
    "department": lambda leads, keys, d: [d.department[key] for key in keys],
    "department_path": lambda leads, keys, d: [d.department_path[key] for key in keys],
}


def _render_names(
    template: Template, drafts: _Drafts, keys: list[str], leads: list[Person]
) -> Sequence[str]:
    """`mapping.team_name` for the teams of `keys` (led by `leads`), in that order,
    rendered all at once."""

    def column(name: str) -> list[str]:
        builtin = _BUILTINS.get(name)
        if builtin is not None:
            return builtin(leads, keys, drafts)
        return [lead.attributes.get(name, "") for lead in leads]

    return template.on_columns(column, len(keys))


# ---------------------------------------------------------------- building


def build_teams(
    people: Sequence[Person],
    settings: MappingSettings,
    fields: FieldSettings,
    *,
    absent_managers: Collection[str] = (),
    left: LeftManagers = NO_MANAGER_LEFT,
) -> TeamMap:
    """The desired teams for `people` (already filtered and validated), and every problem
    that stops them being synced (`TeamMap.problems`, the one way a mapping reports one).
    `left`: managers filtered out whom people still name (`Directory.left`).

    `settings.team_name` must be usable (`team_name_problems` is empty): an unusable
    template is the caller's error, raised as ValueError.
    """
    if not people:
        return TeamMap(teams=())
    if team_name_problems(settings.team_name, people):
        raise ValueError("mapping.team_name does not fit the export: see team_name_problems")
    by_id = dict(zip(map(attrgetter("employee_id"), people), people, strict=True))
    if len(by_id) < len(people):
        return TeamMap(teams=(), problems=_duplicate_ids(people, fields.employee_id))
    try:
        return _build_teams(people, by_id, settings, fields, absent_managers, left)
    except _ManagerCycle as cycle:
        # The manager column the export names managers by, and the row of one in the cycle.
        column = fields.manager_id or fields.manager_email or fields.manager_name or "manager"
        person = by_id.get(cycle.first.removeprefix("manager:"))
        location = person.location if person is not None else "export"
        problem = Problem(location, column, cycle.chain, "must not form a cycle")
        return TeamMap(teams=(), problems=(problem,))


def _build_teams(
    people: Sequence[Person],
    by_id: dict[str, Person],
    settings: MappingSettings,
    fields: FieldSettings,
    absent_managers: Collection[str],
    left: LeftManagers,
) -> TeamMap:
    notes: list[str] = []
    problems: list[Problem] = []
    weak_leads: list[LeadWithoutReports] = []
    if settings.strategy == "department":
        drafts = _department_drafts(people, by_id, settings, fields, notes, problems, weak_leads)
    else:
        drafts = _manager_drafts(people, by_id, notes, left)
    if settings.min_team_size > 0:
        _fold_small(drafts, _team_depths(drafts), settings.min_team_size, notes)
    # Parents before children: by depth, then key (`keys` is sorted, and a stable sort
    # by depth keeps that within a depth: two sorts in C, no key tuple per team).
    keys, depth = _team_depths(drafts)
    keys.sort(key=depth.__getitem__)
    leads = [drafts.lead[key] for key in keys]
    names = _name_teams(drafts, keys, leads, Template(settings.team_name), notes)
    if drafts.stand_in:
        # A team of a manager who left: named for them, led by the stand-in.
        leads = [drafts.stand_in.get(key, lead) for key, lead in zip(keys, leads, strict=True)]
    parent = drafts.parent
    members = [drafts.contributors[key] for key in keys]
    placed: set[str] = set().union(*members)
    if len(placed) < sum(map(len, members)):
        # Some e-mail is listed twice (in one team, or two): each team's made unique. As
        # many e-mails placed as listed means none is, and spares a set per team.
        members = [set(emails) for emails in members]
    team_fields = zip(
        keys,
        names,
        map(attrgetter("email"), leads),
        map(attrgetter("employee_id"), leads),
        map(parent.__getitem__, keys),
        map(SortedEmails, map(sorted, members)),
        strict=True,
    )
    teams = tuple(map(_new_team, team_fields))  # each built in C: DesiredTeam() is a Python call
    placed.update([lead.email for lead in leads])
    return TeamMap(
        teams=teams,
        notes=tuple(notes),
        problems=tuple(problems),
        unplaced=_unplaced(
            people, by_id, placed, settings.strategy, fields, absent_managers, drafts.left
        ),
        leads_without_reports=tuple(weak_leads),
        leads_left=_leads_left(drafts.left, dict(zip(keys, names, strict=True))),
    )


def _leads_left(found: Sequence[LeadLeft], names: Mapping[str, str]) -> tuple[LeadLeft, ...]:
    """Each manager who left, with their team's name as made. A kept team folded away by
    `min_team_size` is no longer theirs to tell of: its people joined the parent team."""
    out = []
    for entry in sorted(found, key=attrgetter("key")):
        if entry.stand_in_id is None:
            out.append(entry)  # nobody to stand in: never made
        elif entry.key in names:
            out.append(replace(entry, team=names[entry.key]))
    return tuple(out)


def _duplicate_ids(people: Sequence[Person], column: str) -> tuple[Problem, ...]:
    seen: set[str] = set()
    duplicates: list[Problem] = []
    for person in people:
        if person.employee_id in seen:
            duplicates.append(
                Problem(person.location, column, person.employee_id, "must appear once")
            )
        seen.add(person.employee_id)
    return tuple(duplicates)


def no_team_problem(source: str, people: int, team_map: TeamMap, strategy: str) -> str | None:
    """Why people who make not one team cannot be synced, or None when there are teams.

    `process` replaces the whole hierarchy: an empty one would archive every team in DX,
    and on a first run it would look like "in sync" while DX got nothing.
    """
    if people == 0 or team_map.teams:
        return None
    first = team_map.unplaced[0] if team_map.unplaced else None
    why = f"; e.g. {first.name} ({first.location}): {first.reason}" if first else ""
    return (
        f"{source}: {people} people but not one team could be made "
        f"(mapping.strategy = {strategy!r}: check the manager or department columns in "
        f"[source.fields]){why}"
    )


def _unplaced(
    people: Sequence[Person],
    by_id: Mapping[str, Person],
    placed: set[str],
    strategy: str,
    fields: FieldSettings,
    absent_managers: Collection[str],
    left: Sequence[LeadLeft] = (),
) -> tuple[Unplaced, ...]:
    """Everyone the teams leave out, found from the finished teams (`placed`: the e-mail
    of each contributor and lead), so whatever left them out, a strategy, a fold or a
    unit dropped for a problem, they are listed."""
    # Teams are made of these people only, so as many placed e-mails as people means
    # nobody is left out (the usual case), without a look-up per person.
    if len(placed) == len(people):
        return ()
    left_out = [p for p in people if p.email not in placed]
    if not left_out:
        return ()
    # Only to say why someone is left out: not built when nobody is.
    managers = {p.manager_id for p in people if p.manager_id not in (None, p.employee_id)}
    stranded = {email: gone for gone in left if gone.stand_in_id is None for email in gone.reports}
    out = []
    for p in left_out:
        gone = stranded.get(p.email)
        reason = (
            _why(p, by_id, managers, strategy, fields, absent_managers)
            if gone is None
            else (
                f"their manager {gone.name} ({gone.employee_id}) left ({gone.how}) "
                "and nobody up the chain is kept to stand in: set their "
                "manager in HR"
            )
        )
        out.append(
            Unplaced(
                p.employee_id,
                p.name,
                p.email,
                p.location,
                reason,
                needs_person=reason != NO_MANAGER_NO_REPORTS,
            )
        )
    out.sort(key=lambda u: natural_key(u.location))
    return tuple(out)


def _why(
    person: Person,
    by_id: Mapping[str, Person],
    managers: Collection[str | None],
    strategy: str,
    fields: FieldSettings,
    absent_managers: Collection[str] = (),
) -> str:
    if strategy == "department":
        if not _clean(person.department):
            return "no department"
        return "their unit was left out (see the mapping problems)"
    manager = person.manager_id
    if person.employee_id in managers:
        return "their team was left out"  # not reached today: a manager leads a team
    if manager is None:
        # The reader drops a manager who was filtered out (with a warning); the row still
        # names them, and that is the answer to "why is this person in no team?".
        found = written_manager(person, fields)
        if found is None:
            return NO_MANAGER_NO_REPORTS
        written, column = found
        if written.strip() in absent_managers:
            return (
                f"their manager {written!r} ({column}) is not in the export "
                '(source.unknown_manager = "top") and nobody reports to them'
            )
        return (
            f"their manager {written!r} ({column}) is not among the people kept "
            "(filtered out) and nobody reports to them"
        )
    if manager == person.employee_id:
        return "names themselves as manager and nobody reports to them"
    if manager not in by_id:
        return (
            f"their manager {manager!r} is not among the people kept (filtered out or "
            "absent from the export) and nobody reports to them"
        )
    return "left out by the mapping"  # not reached: a known manager's reports are placed


def written_manager(person: Person, fields: FieldSettings) -> tuple[str, str] | None:
    """The manager a person's row names, and its column, when the reader kept none for
    them (a manager filtered out, or absent with ``unknown_manager = "top"``)."""
    for column in (fields.manager_id, fields.manager_email, fields.manager_name):
        written = person.attributes.get(column) if column else None
        if written:
            return written, column
    return None


def _manager_drafts(
    people: Sequence[Person], by_id: dict[str, Person], notes: list[str], left: LeftManagers
) -> _Drafts:
    # E-mails grouped by the manager they name, in one pass in export order that only
    # appends; no person is visited again in another order (at 100k people, going back to
    # each person per team cost more than the grouping).
    by_manager: dict[str | None, list[str]] = defaultdict(list)
    of_person = left.of_person
    if of_person:
        # The reader keeps no manager for someone whose manager left; their row names one.
        for person in people:
            by_manager[person.manager_id or of_person.get(person.employee_id)].append(person.email)
    else:
        for person in people:
            by_manager[person.manager_id].append(person.email)
    reports: dict[str, list[str]] = {}
    leads: list[Person] = []  # of `reports`, in its order
    missing: list[tuple[str, int]] = []
    gone: dict[str, list[str]] = {}  # a manager who left -> the e-mails still naming them
    for manager, emails in by_manager.items():
        if manager is None:
            continue
        lead = by_id.get(manager)
        if lead is None:
            if manager in left.people:
                gone[manager] = emails
            else:
                missing.append((manager, len(emails)))
            continue
        if lead.manager_id == manager:
            # Someone naming themselves as manager joins no team of their own.
            if len(emails) == 1:
                continue
            emails.remove(lead.email)
        reports[manager] = emails
        leads.append(lead)
    for manager, count in sorted(missing):
        notes.append(
            f"{count} {'person reports' if count == 1 else 'people report'} to {manager!r}, "
            "who is not in the filtered export: treated as top of the org"
        )
    absent = {manager for manager, _ in missing}
    stand_ins = _stand_ins(gone, by_id, left)
    for manager in sorted(gone):
        stand_in = stand_ins.get(manager)
        if stand_in is not None and stand_in.employee_id not in reports:
            # Leads the team of the one who left: leads a team of their own too, so that
            # it keeps its place above (even with nobody else reporting to them).
            reports[stand_in.employee_id] = []
            leads.append(stand_in)
    # Each key made once, so a parent key is the very string of its team's key.
    key_of = {lead_id: MANAGER_PREFIX + lead_id for lead_id in reports}
    kept_gone = [manager for manager in sorted(gone) if manager in stand_ins]
    key_of.update((manager, MANAGER_PREFIX + manager) for manager in kept_gone)
    keys = [key_of[lead_id] for lead_id in reports]
    parents = [lead.manager_id or of_person.get(lead.employee_id) for lead in leads]
    drafts = _Drafts()
    drafts.parent = {
        key: None if parent is None or parent == lead_id else _team_above(parent, key_of, left)
        for key, lead_id, parent in zip(keys, reports, parents, strict=True)
    }
    drafts.lead = dict(zip(keys, leads, strict=True))
    drafts.contributors = dict(zip(keys, reports.values(), strict=True))
    drafts.department = {key: lead.department or "" for key, lead in zip(keys, leads, strict=True)}
    for manager in kept_gone:
        key, person = key_of[manager], left.people[manager]
        drafts.add(
            key,
            person,
            _team_above(person.manager_id, key_of, left),
            gone[manager],
            person.department or "",
            person.department or "",
        )
        drafts.stand_in[key] = stand_ins[manager]
        if manager in left.names:
            drafts.named[key] = left.names[manager]
    if kept_gone:
        _cut_cycles_through_gone(drafts)
    drafts.department_path = dict(drafts.department)
    drafts.left = [
        _lead_left(manager, gone[manager], stand_ins.get(manager), left) for manager in gone
    ]
    top_leads = sum(1 for parent in parents if parent is None or parent in absent)
    # No manager in the export (none, or one not in it): a lead of a root team, or a loner.
    tops = len(by_manager.get(None, ())) + sum(count for _, count in missing)
    loners = tops - top_leads
    if loners:
        notes.append(
            f"{loners} {'person has' if loners == 1 else 'people have'} neither a manager "
            "nor reports in the filtered export and belong to no team"
        )
    return drafts


def _cut_cycles_through_gone(drafts: _Drafts) -> None:
    """A cycle the teams of managers who left close: someone who named a departed manager
    as theirs was that manager's manager too (the stand-in then leads both teams). The
    cycle is cut at a team of a manager who left, which becomes a root."""
    parents = drafts.parent
    for cycle in forest(parents, sorted(parents)).cycles:
        gone = [key for key in cycle if key in drafts.stand_in]
        if gone:  # any other cycle is refused as ever (`_depths_or_refuse`)
            parents[min(gone)] = None


def _up_the_chain(manager: str | None, left: LeftManagers) -> Iterable[str]:
    """The ids above someone whose manager is `manager`: through managers who left, up to
    and with the first kept one (or an id nobody has), once each."""
    seen: set[str] = set()
    while manager is not None and manager not in seen:
        seen.add(manager)
        yield manager
        gone = left.people.get(manager)
        if gone is None:
            return  # kept, or nobody: the chain's end
        manager = gone.manager_id


def _stand_ins(
    gone: Mapping[str, Sequence[str]], by_id: Mapping[str, Person], left: LeftManagers
) -> dict[str, Person]:
    """Who stands in for each manager who left: the nearest kept manager up the chain."""
    found: dict[str, Person] = {}
    for manager in gone:
        above = left.people[manager].manager_id
        kept = next((by_id[m] for m in _up_the_chain(above, left) if m in by_id), None)
        if kept is not None:
            found[manager] = kept
    return found


def _team_above(manager: str | None, key_of: Mapping[str, str], left: LeftManagers) -> str | None:
    """The key of the nearest team up the chain from someone whose manager is `manager`."""
    return next((key_of[m] for m in _up_the_chain(manager, left) if m in key_of), None)


def _lead_left(
    manager: str, emails: Sequence[str], stand_in: Person | None, left: LeftManagers
) -> LeadLeft:
    person = left.people[manager]
    return LeadLeft(
        key=MANAGER_PREFIX + manager,
        team="",
        employee_id=manager,
        name=person.name,
        location=person.location,
        why=left.reason.get(manager, "a filter"),
        reports=tuple(sorted(set(emails))),
        stand_in_id=None if stand_in is None else stand_in.employee_id,
        stand_in_name="" if stand_in is None else stand_in.name,
        stand_in_email="" if stand_in is None else stand_in.email,
    )


def _team_depths(drafts: _Drafts) -> tuple[list[str], Mapping[str, int]]:
    """The keys sorted, and each team's depth."""
    keys = sorted(drafts.parent)
    return keys, _depths_or_refuse(drafts.parent, keys)


def _depths_or_refuse(
    parents: Mapping[str, str | None], order: Sequence[str] | None = None
) -> Mapping[str, int]:
    """Depths in a chain of managers (or their teams); a cycle is refused, naming it.
    `order`: the nodes sorted, when the caller has them (the walk needs that order)."""
    tree = forest(parents, sorted(parents) if order is None else order)
    if tree.cycles:
        raise _ManagerCycle(tree.cycles[0])
    return tree.depths


def _fold_small(
    drafts: _Drafts,
    sorted_depths: tuple[list[str], Mapping[str, int]],
    minimum: int,
    notes: list[str],
) -> None:
    keys, depth = sorted_depths
    parent_of = drafts.parent
    members = {key: set(emails) for key, emails in drafts.contributors.items()}
    children: dict[str, list[str]] = defaultdict(list)
    for key, parent_key in parent_of.items():
        if parent_key is not None:
            children[parent_key].append(key)
    placed: set[str] = set().union(*members.values())
    # Deepest first, then by key: `keys` is sorted, the sort by depth stable.
    for key in sorted(keys, key=lambda k: -depth[k]):
        size = len(members[key])
        if size >= minimum:
            continue
        parent_key = parent_of[key]
        if parent_key is None:
            notes.append(
                f"kept root team {key} with {size} contributor(s), below min_team_size "
                f"{minimum}: a root team is never folded"
            )
            continue
        merged = members[parent_key]
        merged |= members.pop(key)
        lead_email = drafts.lead[key].email
        if key not in drafts.stand_in and lead_email not in placed:
            merged.add(lead_email)
            placed.add(lead_email)
        moved = children.pop(key, [])
        for child in moved:
            parent_of[child] = parent_key
        children[parent_key] = [c for c in children[parent_key] if c != key] + moved
        drafts.remove(key)
        notes.append(
            f"folded {key} ({size} contributor(s), below min_team_size {minimum}) into "
            f"{parent_key}; {len(moved)} sub-team(s) re-attached to {parent_key}"
        )
    drafts.contributors = {key: emails for key, emails in members.items()}


def _name_teams(
    drafts: _Drafts, keys: list[str], leads: list[Person], template: Template, notes: list[str]
) -> list[str]:
    """Each team's name, made unique, in the order of `keys` (every team, by depth and
    then key); `leads`: their leads, in that order."""
    names = list(_render_names(template, drafts, keys, leads))
    if drafts.named:
        names = [drafts.named.get(key, name) for key, name in zip(keys, names, strict=True)]
    blank = [i for i, name in enumerate(names) if not name]
    for i in blank:
        names[i] = f"{leads[i].name}'s team"
    for i in sorted(blank, key=keys.__getitem__):
        notes.append(f"team {keys[i]}: the name template rendered empty; named it {names[i]!r}")
    folded_names = list(map(str.casefold, names))
    taken = set(folded_names)
    if len(taken) == len(names):
        return names  # every name is unique already: nothing to suffix
    groups: dict[str, list[int]] = defaultdict(list)
    for i, folded in enumerate(folded_names):
        groups[folded].append(i)
    for folded in sorted(folded for folded, group in groups.items() if len(group) > 1):
        # Highest in the hierarchy first (the order of `keys`), so a suffixed team is
        # never the parent of the plain one ("Sales (2)" above "Sales"); keys break ties
        # for determinism.
        first, *others = groups[folded]
        suffix = 2
        for i in others:
            # casefold() maps each character on its own: a suffixed name folds to the
            # folded name with the suffix, so no name is folded again per try.
            candidate = f"{folded} ({suffix})"
            while candidate in taken:
                suffix += 1
                candidate = f"{folded} ({suffix})"
            taken.add(candidate)
            names[i] = f"{names[i]} ({suffix})"
            suffix += 1  # just taken
        # The note shows the first renames only (`capped`): only those are written.
        renamed = (f"{keys[i]} -> {names[i]!r}" for i in others)
        notes.append(
            f"{len(others) + 1} teams are named {names[first]!r}: {keys[first]} keeps it, "
            f"{capped(islice(renamed, LIMIT), total=len(others))}"
        )
    return names


# ---------------------------------------------------------------- departments


class _Unit:
    __slots__ = ("children", "label", "members", "parent", "parent_sources", "unit_id")

    def __init__(self, unit_id: str, label: str) -> None:
        self.unit_id = unit_id
        self.label = label
        self.parent: str | None = None
        self.members: list[Person] = []
        self.children: list[str] = []
        # parent value -> first location that gave it (parent column mode)
        self.parent_sources: dict[str, str] = {}


def _clean(value: str | None) -> str:
    return normalise_name(value or "")


def _department_drafts(
    people: Sequence[Person],
    by_id: dict[str, Person],
    settings: MappingSettings,
    fields: FieldSettings,
    notes: list[str],
    problems: list[Problem],
    weak_leads: list[LeadWithoutReports],
) -> _Drafts:
    units = _build_units(people, settings.department_separator, fields, notes, problems)
    seniority = _seniority(people)
    has_reports = {p.manager_id for p in people if p.manager_id != p.employee_id}
    by_email = {p.email.casefold(): p for p in people}
    leads: dict[str, Person] = {}
    parents = {unit_id: unit.parent for unit_id, unit in units.items()}
    # Deepest units first, so a unit's best candidate can draw on its sub-units'.
    unit_depth = forest(parents).depths
    best: dict[str, Person] = {}
    for unit_id in sorted(units, key=lambda u: (-unit_depth[u], u)):
        unit = units[unit_id]
        candidates = list(unit.members) + [best[c] for c in unit.children if c in best]
        if candidates:
            # A manager before an individual contributor however senior (a technician
            # must not lead Production); then the most senior, then the smaller id.
            best[unit_id] = min(
                candidates,
                key=lambda p: (
                    p.employee_id not in has_reports,
                    seniority[p.employee_id],
                    p.employee_id,
                ),
            )
    for unit_id in sorted(units):
        unit = units[unit_id]
        lead, usable = _column_lead(unit, fields.department_lead, by_id, by_email, problems)
        if not usable:
            continue
        # Every unit has someone in or below it (units exist because people name them).
        if lead is None:
            lead = best[unit_id]
            if lead.employee_id not in has_reports:
                weak_leads.append(
                    LeadWithoutReports(unit_id, lead.employee_id, lead.name, lead.location)
                )
        leads[unit_id] = lead
    drafts = _Drafts()
    for unit_id, lead in leads.items():
        unit = units[unit_id]
        parent = next((a for a in ancestors(parents, unit_id) if a in leads), None)
        drafts.add(
            DEPARTMENT_PREFIX + unit_id,
            lead,
            None if parent is None else DEPARTMENT_PREFIX + parent,
            {p.email for p in unit.members},
            unit.label,
            unit_id,
        )
    return drafts


def _build_units(
    people: Sequence[Person],
    separator: str,
    fields: FieldSettings,
    notes: list[str],
    problems: list[Problem],
) -> dict[str, _Unit]:
    units: dict[str, _Unit] = {}
    parent_column = fields.department_parent
    unplaced = 0
    for person in people:
        raw = _clean(person.department)
        if parent_column:
            unit_id = raw
            if not unit_id:
                unplaced += 1
                continue
            unit = units.get(unit_id) or units.setdefault(unit_id, _Unit(unit_id, unit_id))
            parent = _clean(person.attributes.get(parent_column))
            if parent:
                unit.parent_sources.setdefault(parent, person.location)
        else:
            segments = [s.strip() for s in raw.split(separator)] if separator else [raw]
            segments = [s for s in segments if s]
            if not segments:
                unplaced += 1
                continue
            unit_id = separator.join(segments)
            parent_id: str | None = None
            for index in range(len(segments)):
                path = separator.join(segments[: index + 1])
                if path not in units:
                    units[path] = _Unit(path, segments[index])
                    units[path].parent = parent_id
                parent_id = path
            unit = units[unit_id]
        unit.members.append(person)
    if unplaced:
        notes.append(
            f"{unplaced} {'person has' if unplaced == 1 else 'people have'} no department "
            "and belong to no team"
        )
    if parent_column:
        _resolve_parent_column(units, parent_column, problems)
    for unit in units.values():
        if unit.parent is not None:
            units[unit.parent].children.append(unit.unit_id)
    return units


def _disagreement(column: str, values: Mapping[str, str], what: str) -> Problem:
    """The rows of one unit name different values (value -> first location) in `column`."""
    shown = capped(f"{v!r} ({loc})" for v, loc in sorted(values.items()))
    return Problem(
        location=min(values.values()),
        field=column,
        value=capped(sorted(values)),
        expected=f"must name {what}; its rows disagree: {shown}",
    )


def _resolve_parent_column(
    units: dict[str, _Unit], parent_column: str, problems: list[Problem]
) -> None:
    for unit_id in sorted(units):
        unit = units[unit_id]
        values = unit.parent_sources
        if len(values) > 1:
            what = f"one parent unit for {unit_id!r}"
            problems.append(_disagreement(parent_column, values, what))
            continue
        for value, location in values.items():
            if value == unit_id:
                problems.append(
                    Problem(
                        location,
                        parent_column,
                        value,
                        f"must name a parent unit other than {unit_id!r} itself",
                    )
                )
                continue
            if value not in units:
                units[value] = _Unit(value, value)
            unit.parent = value
    # A cycle of parent values is reported and cut at its first unit, so the units form
    # trees from here on.
    tree = forest({unit_id: unit.parent for unit_id, unit in units.items()}, sorted(units))
    for cycle in tree.cycles:
        cut = units[min(cycle)]
        problems.append(
            Problem(
                location=next(iter(cut.parent_sources.values()), "export"),
                field=parent_column,
                value=" -> ".join([*cycle, cycle[0]]),
                expected="must not form a cycle of parent units",
            )
        )
        cut.parent = None


def _seniority(people: Iterable[Person]) -> Mapping[str, int]:
    """Depth in the manager chain; people whose manager is outside the export are 0."""
    return _depths_or_refuse({person.employee_id: person.manager_id for person in people})


def _column_lead(
    unit: _Unit,
    column: str,
    by_id: dict[str, Person],
    by_email: dict[str, Person],
    problems: list[Problem],
) -> tuple[Person | None, bool]:
    """(lead named by the lead column or None when no row names one, False on a problem)."""
    if not column:
        return None, True
    values: dict[str, str] = {}
    for member in unit.members:
        value = _clean(member.attributes.get(column))
        if value:
            values.setdefault(value, member.location)
    if not values:
        return None, True
    if len(values) > 1:
        problems.append(_disagreement(column, values, f"one lead for unit {unit.unit_id!r}"))
        return None, False
    value, location = next(iter(values.items()))
    lead = by_id.get(value) or by_email.get(value.casefold())
    if lead is None:
        problems.append(
            Problem(
                location,
                column,
                value,
                f"must name the lead of unit {unit.unit_id!r} by the employee id or e-mail "
                "of someone in the filtered export",
            )
        )
        return None, False
    return lead, True
