"""Held people in the teams (pure): a person held for a problem of their own row stays
where DX last verifiably had them, and a person never synced before is not sent.

Their reports still need them: a held person whom reports can name (`HeldPerson.node`)
joins the team graph under a placeholder e-mail (`graph_people`), so their reports keep
their team and its place. Once the teams are made, `place_held` takes every placeholder
out and puts back what DX had: the e-mail DX took for them as a member of the team DX had
them in, and as the lead of a team they lead. A team whose held lead DX never took is led
by the nearest lead above, as for a lead DX does not know (hrsync.core.teams.substitutes).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Literal, NamedTuple

from hrsync.core.export.rows import MAX_FIELD_CHARS
from hrsync.core.people import HeldPerson, Person, Problem
from hrsync.core.teams.mapping import (
    DEPARTMENT_PREFIX,
    MANAGER_PREFIX,
    DesiredTeam,
    SortedEmails,
    TeamMap,
)
from hrsync.core.text import plural

# `.invalid` is reserved: no mail system delivers there, and no DX user has one.
PLACEHOLDER_DOMAIN = "held.hrsync.invalid"


@dataclass(frozen=True, slots=True)
class KnownPlaces:
    """Where DX last verifiably had each person (the state store's `dx_people` and the
    last verified submission)."""

    email_by_id: Mapping[str, str]  # employee id -> the e-mail DX took
    member_of: Mapping[str, str]  # e-mail -> key of the team DX had them in


NOTHING_KNOWN = KnownPlaces({}, {})


class Hold(NamedTuple):
    """What holding did for one held person."""

    person: HeldPerson
    dx_email: str | None  # the e-mail DX took for them; None: never synced, not sent
    team: str | None  # the team DX keeps them in (its name), None: none
    leads: tuple[str, ...]  # teams they still lead, as DX had them (names)
    stood_in: tuple[tuple[str, str], ...]  # (team, who leads it instead): DX never took them

    @property
    def kept(self) -> str:
        """Where DX keeps them, in words: ``DX keeps them in 'Payments'``."""
        if self.dx_email is None:
            return "never synced: not sent until their row is fixed"
        where = f"DX keeps them in {self.team!r}" if self.team else "DX has them in no team"
        if self.leads:
            where += f", leading {', '.join(repr(t) for t in self.leads)}"
        return where


class HeldTeams(NamedTuple):
    team_map: TeamMap
    holds: tuple[Hold, ...]  # in the order of `Directory.held`


def placeholder(person: HeldPerson) -> str:
    return f"held-{person.row}@{PLACEHOLDER_DOMAIN}"


def dx_emails(held: Sequence[HeldPerson], known: KnownPlaces) -> dict[int, str]:
    """The e-mail DX took for each held person (by row) who was synced before.

    Found by employee id; a row whose id is blank, by the e-mail it gives. Two rows
    claiming one person (a duplicate id) give it to the row with that e-mail, else to the
    first: the e-mail is placed once.
    """
    claims: dict[str, list[HeldPerson]] = {}
    for person in held:
        email = known.email_by_id.get(person.employee_id) if person.employee_id else None
        if email is None and not person.employee_id and person.email in known.member_of:
            email = person.email
        if email is not None:
            claims.setdefault(email, []).append(person)
    found: dict[int, str] = {}
    for email, rows in claims.items():
        owner = next((p for p in rows if p.email == email), rows[0])
        found[owner.row] = email
    return found


def graph_people(
    people: Sequence[Person],
    held: Sequence[HeldPerson],
    known: KnownPlaces,
    *,
    restore_managers: bool = True,
) -> Sequence[Person]:
    """`people` and, under placeholder e-mails, the held people reports can name. A held
    person whose own manager reference is the problem is put under the lead of the team
    DX had them in (`restore_managers`), so neither they nor their team moves; one whose
    row gives no department, in the unit DX had them in."""
    if not held:
        return people  # the usual run: no copy of every person
    emails = dx_emails(held, known)
    nodes = []
    for person in held:
        if not person.node:
            continue
        manager = person.manager_id
        if not person.manager_usable and restore_managers and person.row in emails:
            team = known.member_of.get(emails[person.row], "")
            if team.startswith(MANAGER_PREFIX) and team != MANAGER_PREFIX + person.employee_id:
                manager = team.removeprefix(MANAGER_PREFIX)
        # A value over the length limit is one of the row's problems: it must not reach
        # DX as the name of the team they lead (a blank one falls back to their name).
        row = {k: v if len(v) <= MAX_FIELD_CHARS else "" for k, v in person.values.items()}
        department = person.department
        if not department and restore_managers and person.row in emails:
            # No department on their row (a join that cannot say which row is theirs):
            # the unit DX had them in, as a broken manager reference keeps their lead.
            team = known.member_of.get(emails[person.row], "")
            if team.startswith(DEPARTMENT_PREFIX):
                department = team.removeprefix(DEPARTMENT_PREFIX)
        nodes.append(
            Person(
                employee_id=person.employee_id,
                email=placeholder(person),
                name=(person.name if len(person.name) <= MAX_FIELD_CHARS else "")
                or person.employee_id,
                manager_id=manager,
                department=department
                if department and len(department) <= MAX_FIELD_CHARS
                else None,
                status=None,
                at=person.location,
                row=row,
            )
        )
    return [*people, *nodes]


def place_held(team_map: TeamMap, held: Sequence[HeldPerson], known: KnownPlaces) -> HeldTeams:
    """The teams made with `graph_people`, each placeholder replaced by what DX had."""
    if not held:
        return HeldTeams(team_map, ())
    emails = dx_emails(held, known)
    by_placeholder = {placeholder(p): p for p in held}
    teams = list(team_map.teams)
    index = {team.key: i for i, team in enumerate(teams)}
    # Every e-mail the valid people placed: a held person's old e-mail now on a valid
    # row is that row's, not theirs to keep.
    placed = {e for t in teams for e in (t.lead_email, *t.contributors)}
    leads: dict[int, list[str]] = {}
    stood_in: dict[int, list[tuple[str, str]]] = {}
    problems: list[Problem] = []
    lead_of = {team.key: team.lead_email for team in teams}
    for i, team in enumerate(teams):
        contributors = [c for c in team.contributors if c not in by_placeholder]
        lead = team.lead_email
        person = by_placeholder.get(lead)
        if person is not None:
            if person.row in emails:
                lead = emails[person.row]
                leads.setdefault(person.row, []).append(team.name)
            else:
                above = _lead_above(team, teams, index, lead_of, by_placeholder, emails)
                if above is None:
                    problems.append(
                        Problem(
                            person.location,
                            "team lead",
                            person.shown,
                            f"cannot be held: {person.shown} leads the top team "
                            f"{team.name!r}, DX never took them, and nobody above can "
                            f"stand in (their row: {person.detail})",
                        )
                    )
                else:
                    lead = above
                    stood_in.setdefault(person.row, []).append((team.name, above))
        teams[i] = team._replace(lead_email=lead, contributors=tuple(contributors))
        lead_of[team.key] = lead
    team_of: dict[int, str] = {}
    for person in held:
        email = emails.get(person.row)
        key = known.member_of.get(email, "") if email else ""
        if email is None or email in placed or key not in index:
            continue
        at = index[key]
        team = teams[at]
        teams[at] = team._replace(contributors=(*team.contributors, email))
        team_of[person.row] = team.name
    finished = tuple(
        team._replace(contributors=SortedEmails(sorted(set(team.contributors)))) for team in teams
    )
    holds = tuple(
        Hold(
            person,
            emails.get(person.row) if _kept(person, emails, placed) else None,
            team_of.get(person.row),
            tuple(leads.get(person.row, ())),
            tuple(stood_in.get(person.row, ())),
        )
        for person in held
    )
    held_ids = {p.employee_id for p in held if p.employee_id}
    return HeldTeams(
        # Everything else the map says (who left, who stands in) stays as built.
        replace(
            team_map,
            teams=finished,
            problems=(*team_map.problems, *problems),
            unplaced=tuple(u for u in team_map.unplaced if u.email not in by_placeholder),
            leads_without_reports=tuple(
                w for w in team_map.leads_without_reports if w.employee_id not in held_ids
            ),
        ),
        holds,
    )


def _kept(person: HeldPerson, emails: Mapping[int, str], placed: set[str]) -> bool:
    email = emails.get(person.row)
    return email is not None and email not in placed


def _lead_above(
    team: DesiredTeam,
    teams: Sequence[DesiredTeam],
    index: Mapping[str, int],
    lead_of: Mapping[str, str],
    by_placeholder: Mapping[str, HeldPerson],
    emails: Mapping[int, str],
) -> str | None:
    """The nearest lead above `team` who is a real e-mail DX can take."""
    seen = {team.key}
    key = team.parent_key
    while key is not None and key in index and key not in seen:
        seen.add(key)
        lead = lead_of[key]
        person = by_placeholder.get(lead)
        if person is None:
            return lead
        if person.row in emails:
            return emails[person.row]
        key = teams[index[key]].parent_key
    return None


# The share guard counts from this many held people: in an org of a hundred or two, an
# ordinary day's typo beside one duplicate e-mail (two rows held) is three people, over
# 2%, and refusing the whole org for it is noise. A broken mapping holds far more.
SHARE_COUNTS_FROM = 5


@dataclass(frozen=True, slots=True)
class HeldOver:
    """The held guard tripped: which of its limits (`sync.max_held`, or
    `sync.max_held_fraction` as a number of people), and why, in a person's words."""

    setting: Literal["max_held", "max_held_fraction"]
    limit: int
    message: str


def held_over(held: int, people: int, max_held: int, max_fraction: float) -> HeldOver | None:
    """Whether holding `held` of `people` (the export's, held included) trips the held
    guard: so many problems of single rows say the export itself may be broken."""
    if held > max_held:
        return HeldOver(
            "max_held",
            max_held,
            f"{plural(held, 'person')} would be held, more than sync.max_held ({max_held})",
        )
    share = held / people if people else 1.0
    if held >= SHARE_COUNTS_FROM and share > max_fraction:
        return HeldOver(
            "max_held_fraction",
            max(SHARE_COUNTS_FROM - 1, math.floor(max_fraction * people)),
            f"{held} of the export's {people} people ({_share_above(share, max_fraction)}) "
            f"would be held, more than sync.max_held_fraction ({max_fraction:.1%})",
        )
    return None


def held_refusal(
    held: int, people: int, max_held: int, max_fraction: float, allowed: int | None = None
) -> str | None:
    """Why holding `held` of `people` (the export's, held included) refuses the run, or
    None. So many problems of single rows say the export itself is broken. `allowed`
    (`sync --allow-held N`, a manual run) replaces both limits."""
    if allowed is not None:
        if held <= allowed:
            return None
        return (
            f"{plural(held, 'person')} would be held, more than --allow-held {allowed} lets through"
        )
    over = held_over(held, people, max_held, max_fraction)
    return None if over is None else over.message


def _share_above(share: float, limit: float) -> str:
    """`share` as a percentage that reads as more than `limit` (2.01% is not "2.0%")."""
    for digits in range(1, 5):
        if f"{share:.{digits}%}" != f"{limit:.{digits}%}":
            return f"{share:.{digits}%}"
    return f"{share:.4%}"
