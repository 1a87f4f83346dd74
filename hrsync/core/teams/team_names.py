"""Team names (pure): `mapping.team_name` rendered per team, made unique.

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
"""

from __future__ import annotations

from collections import defaultdict, deque
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from itertools import islice
from operator import attrgetter

from hrsync.core.export.templates import FILTERS, Template, TemplateError, check_template
from hrsync.core.listing import LIMIT, capped
from hrsync.core.people import Person, export_columns
from hrsync.core.teams.team_drafts import Drafts

BUILTIN_PLACEHOLDERS: tuple[str, ...] = (
    "lead_name",
    "lead_first_name",
    "lead_last_name",
    "lead_email",
    "lead_employee_id",
    "department",
    "department_path",
)


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
_BUILTINS: Mapping[str, Callable[[list[Person], list[str], Drafts], list[str]]] = {
    "lead_name": lambda leads, keys, d: list(_names(leads)),
    "lead_first_name": lambda leads, keys, d: list(map(FILTERS["first"], _names(leads))),
    "lead_last_name": lambda leads, keys, d: list(map(FILTERS["last"], _names(leads))),
    "lead_email": lambda leads, keys, d: [lead.email for lead in leads],
    "lead_employee_id": lambda leads, keys, d: [lead.employee_id for lead in leads],
    "department": lambda leads, keys, d: [d.department[key] for key in keys],
    "department_path": lambda leads, keys, d: [d.department_path[key] for key in keys],
}


def _render_names(
    template: Template, drafts: Drafts, keys: list[str], leads: list[Person]
) -> Sequence[str]:
    """`mapping.team_name` for the teams of `keys` (led by `leads`), in that order,
    rendered all at once."""

    def column(name: str) -> list[str]:
        builtin = _BUILTINS.get(name)
        if builtin is not None:
            return builtin(leads, keys, drafts)
        return [lead.attributes.get(name, "") for lead in leads]

    return template.on_columns(column, len(keys))


def name_teams(
    drafts: Drafts, keys: list[str], leads: list[Person], template: Template, notes: list[str]
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
    # Each team's position appended to its folded name's list, in C.
    positions = map(groups.__getitem__, folded_names)
    deque(map(list.append, positions, range(len(folded_names))), maxlen=0)
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
