"""People to desired teams (pure): `build_teams` runs the strategy the settings name,
folds small teams, names them and lists the people in no team.

CONTRACT: `DesiredTeam` is what identity assignment consumes; `build_teams` makes them.

Each step has a module of its own in hrsync/core/teams/: the strategies (by_manager.py,
the default, and by_department.py) make drafts (team_drafts.py); folding.py folds the
teams below ``mapping.min_team_size``; team_names.py renders and dedupes the names;
unplaced.py lists the people left out, and why. The types are in team_map.py and
importable from here, where callers have always found them.

Output order: parents before children, by depth, then by key.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import replace
from functools import partial
from operator import attrgetter
from typing import cast

from hrsync.core.export.templates import Template
from hrsync.core.people import NO_MANAGER_LEFT, LeftManagers, Person, Problem
from hrsync.core.settings import FieldSettings, MappingSettings
from hrsync.core.teams.by_department import department_drafts
from hrsync.core.teams.by_manager import manager_drafts
from hrsync.core.teams.folding import fold_small
from hrsync.core.teams.team_drafts import ManagerCycle, team_depths
from hrsync.core.teams.team_map import (
    DEPARTMENT_PREFIX,
    MANAGER_PREFIX,
    NO_MANAGER_NO_REPORTS,
    DesiredTeam,
    LeadLeft,
    LeadWithoutReports,
    SortedEmails,
    TeamMap,
    Unplaced,
)
from hrsync.core.teams.team_names import (
    BUILTIN_PLACEHOLDERS,
    name_teams,
    team_name_problems,
    validate_template,
)
from hrsync.core.teams.unplaced import unplaced_people, written_manager

# The mapping's vocabulary, importable from here as it always was.
__all__ = [
    "BUILTIN_PLACEHOLDERS",
    "DEPARTMENT_PREFIX",
    "MANAGER_PREFIX",
    "NO_MANAGER_NO_REPORTS",
    "DesiredTeam",
    "LeadLeft",
    "LeadWithoutReports",
    "SortedEmails",
    "TeamMap",
    "Unplaced",
    "build_teams",
    "no_team_problem",
    "team_name_problems",
    "validate_template",
    "written_manager",
]


_new_team = cast(Callable[[tuple[object, ...]], DesiredTeam], partial(tuple.__new__, DesiredTeam))


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
    except ManagerCycle as cycle:
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
        drafts = department_drafts(people, by_id, settings, fields, notes, problems, weak_leads)
    else:
        drafts = manager_drafts(people, by_id, notes, left)
    if settings.min_team_size > 0:
        fold_small(drafts, team_depths(drafts), settings.min_team_size, notes)
    # Parents before children: by depth, then key (`keys` is sorted, and a stable sort
    # by depth keeps that within a depth: two sorts in C, no key tuple per team).
    keys, depth = team_depths(drafts)
    keys.sort(key=depth.__getitem__)
    leads = list(map(drafts.lead.__getitem__, keys))
    names = name_teams(drafts, keys, leads, Template(settings.team_name), notes)
    if drafts.stand_in:
        # A team of a manager who left: named for them, led by the stand-in.
        leads = [drafts.stand_in.get(key, lead) for key, lead in zip(keys, leads, strict=True)]
    parent = drafts.parent
    members = list(map(drafts.contributors.__getitem__, keys))
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
        unplaced=unplaced_people(
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
