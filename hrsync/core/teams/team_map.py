"""What a mapping makes (pure): the desired teams and what it says of the people it
could not place.

CONTRACT: `DesiredTeam` is what identity assignment consumes; hrsync.core.teams.mapping's
`build_teams` makes them, in a `TeamMap` with its notes, problems, the people in no team,
the leads without reports and the managers who left.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import NamedTuple

from hrsync.core.listing import capped
from hrsync.core.people import NOT_IN_EXPORT, Problem
from hrsync.core.text import name_and_id, plural

MANAGER_PREFIX = "manager:"
DEPARTMENT_PREFIX = "department:"


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
        who = name_and_id(self.name, self.employee_id)
        count = plural(len(self.reports), "person")
        # Whom HR must re-point: the rows that still name them.
        whom = capped(self.reports)
        if self.stand_in_id is None:
            return (
                f"lead left: {who} is {self.how} and nobody up their chain is "
                f"kept to stand in; {count} who still name them are in no team: {whom}"
            )
        return (
            f"lead left: {self.stand_in_name} ({self.stand_in_id}) stands in for {who} "
            f"({self.how}) as lead of {self.team!r} until HR re-points its "
            f"{count}: {whom}"
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
