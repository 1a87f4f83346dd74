"""The manager-chain strategy (pure): a team per person with reports.

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
"""

from __future__ import annotations

from collections import defaultdict, deque
from collections.abc import Iterable, Mapping, Sequence
from operator import attrgetter, eq
from typing import cast

from hrsync.core.people import LeftManagers, Person
from hrsync.core.teams.team_drafts import Drafts
from hrsync.core.teams.team_map import MANAGER_PREFIX, LeadLeft
from hrsync.core.tree import forest


def manager_drafts(
    people: Sequence[Person], by_id: dict[str, Person], notes: list[str], left: LeftManagers
) -> Drafts:
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
        # The same grouping in C: each person's e-mail appended to their manager's list
        # (`defaultdict` makes it on first sight, so the keys keep export order).
        groups = map(by_manager.__getitem__, map(_MANAGER_ID, people))
        deque(map(list.append, groups, map(_EMAIL, people)), maxlen=0)
    reports, leads, missing, gone = _leads(by_manager, by_id, left)
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
    key_of = dict(zip(reports, map(MANAGER_PREFIX.__add__, reports), strict=True))
    kept_gone = [manager for manager in sorted(gone) if manager in stand_ins]
    key_of.update((manager, MANAGER_PREFIX + manager) for manager in kept_gone)
    keys = list(map(key_of.__getitem__, reports))
    parents: list[str | None] = list(map(_MANAGER_ID, leads))
    if of_person or "" in parents:
        parents = [lead.manager_id or of_person.get(lead.employee_id) for lead in leads]
    drafts = Drafts()
    if left.people:
        drafts.parent = {
            key: None if parent is None or parent == lead_id else _team_above(parent, key_of, left)
            for key, lead_id, parent in zip(keys, reports, parents, strict=True)
        }
    else:
        # Nobody left: the chain up from a lead ends at their own manager, so the team
        # above is that manager's, if they lead one (`_team_above`, in C).
        by_lead = cast(Mapping[str | None, str], key_of)  # None is no lead: None
        drafts.parent = dict(zip(keys, map(by_lead.get, parents), strict=True))
        if any(map(eq, reports, parents)):
            for key, lead_id, parent in zip(keys, reports, parents, strict=True):
                if parent == lead_id:
                    drafts.parent[key] = None  # their own manager: a root
    drafts.lead = dict(zip(keys, leads, strict=True))
    drafts.contributors = dict(zip(keys, reports.values(), strict=True))
    departments: list[str] = list(map(_DEPARTMENT, leads))
    if not all(departments):  # None for a lead without one
        departments = [department or "" for department in departments]
    drafts.department = dict(zip(keys, departments, strict=True))
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
    top_leads = parents.count(None)
    if absent:
        top_leads += sum(1 for parent in parents if parent in absent)
    # No manager in the export (none, or one not in it): a lead of a root team, or a loner.
    tops = len(by_manager.get(None, ())) + sum(count for _, count in missing)
    loners = tops - top_leads
    if loners:
        one = loners == 1
        notes.append(
            f"{loners} {'person has' if one else 'people have'} neither a manager nor reports"
            f" in the filtered export and {'belongs' if one else 'belong'} to no team"
        )
    return drafts


_MANAGER_ID = attrgetter("manager_id")
_EMAIL = attrgetter("email")
_DEPARTMENT = attrgetter("department")


def _leads(
    by_manager: Mapping[str | None, list[str]], by_id: Mapping[str, Person], left: LeftManagers
) -> tuple[dict[str, list[str]], list[Person], list[tuple[str, int]], dict[str, list[str]]]:
    """The e-mails reporting to each lead and the leads, in `by_manager`'s order; the
    managers named but not in the export (with how many name them); and the managers who
    left, with the e-mails still naming them."""
    managers = [manager for manager in by_manager if manager is not None]
    found = list(map(by_id.get, managers))
    if all(found) and not any(map(eq, map(_MANAGER_ID, found), managers)):
        # The usual case, in C: every manager named is in the export, none their own.
        reporting = dict(zip(managers, map(by_manager.__getitem__, managers), strict=True))
        return reporting, cast(list[Person], found), [], {}
    reports: dict[str, list[str]] = {}
    leads: list[Person] = []  # of `reports`, in its order
    missing: list[tuple[str, int]] = []
    gone: dict[str, list[str]] = {}  # a manager who left -> the e-mails still naming them
    for manager, lead in zip(managers, found, strict=True):
        emails = by_manager[manager]
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
    return reports, leads, missing, gone


def _cut_cycles_through_gone(drafts: Drafts) -> None:
    """A cycle the teams of managers who left close: someone who named a departed manager
    as theirs was that manager's manager too (the stand-in then leads both teams). The
    cycle is cut at a team of a manager who left, which becomes a root."""
    parents = drafts.parent
    for cycle in forest(parents, sorted(parents)).cycles:
        gone = [key for key in cycle if key in drafts.stand_in]
        if gone:  # any other cycle is refused as ever (`depths_or_refuse`)
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
