"""The people in no team, and why (pure), found from the finished teams.

People in no team
    Whoever is neither a lead nor a contributor of a finished team is in
    `TeamMap.unplaced`, with why (no manager and no reports; a manager not among the
    people kept; no department), in export order. Only "no manager and no reports" is
    meant (someone outside every team: a board member, a contractor); everyone else in
    no team needs a person (`Unplaced.needs_person`).
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence

from hrsync.core.people import Person
from hrsync.core.settings import FieldSettings
from hrsync.core.teams.by_department import cleaned
from hrsync.core.teams.team_map import NO_MANAGER_NO_REPORTS, LeadLeft, Unplaced
from hrsync.core.text import name_and_id, natural_key


def unplaced_people(
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
                f"their manager {name_and_id(gone.name, gone.employee_id)} left ({gone.how}) "
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
        if not cleaned(person.department):
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
