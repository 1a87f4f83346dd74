"""The department strategy (pure): a team per department unit.

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
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence

from hrsync.core.listing import capped
from hrsync.core.people import Person, Problem, normalise_name
from hrsync.core.settings import FieldSettings, MappingSettings
from hrsync.core.teams.team_drafts import Drafts, depths_or_refuse
from hrsync.core.teams.team_map import DEPARTMENT_PREFIX, LeadWithoutReports
from hrsync.core.tree import ancestors, forest


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


def cleaned(value: str | None) -> str:
    return normalise_name(value or "")


def department_drafts(
    people: Sequence[Person],
    by_id: dict[str, Person],
    settings: MappingSettings,
    fields: FieldSettings,
    notes: list[str],
    problems: list[Problem],
    weak_leads: list[LeadWithoutReports],
) -> Drafts:
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
    drafts = Drafts()
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
        raw = cleaned(person.department)
        if parent_column:
            unit_id = raw
            if not unit_id:
                unplaced += 1
                continue
            unit = units.get(unit_id) or units.setdefault(unit_id, _Unit(unit_id, unit_id))
            parent = cleaned(person.attributes.get(parent_column))
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
        one = unplaced == 1
        notes.append(
            f"{unplaced} {'person has' if one else 'people have'} no department and "
            f"{'belongs' if one else 'belong'} to no team"
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
    return depths_or_refuse({person.employee_id: person.manager_id for person in people})


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
        value = cleaned(member.attributes.get(column))
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
