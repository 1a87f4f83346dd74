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

from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence

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
    drafts = Drafts()
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
