"""Who DX counts: per person, whether DX knows their e-mail, learned from what DX shows
(pure).

DX silently ignores a contributor e-mail it does not know: nothing in `teams.list` moves,
the team's count stays below what was sent. hrsync never asks DX for its users; it reads
the evidence it already gets (docs/explanation/applied.md, "People not in DX yet"):

1. A lead DX accepted in an import is a DX user: counted.
2. After an import DX took, a team whose contributor count equals the number sent: all
   its members are counted.
3. A team whose count equals the number of its members already known to be counted: the
   rest are not counted (DX ignored them). Only from a settled read (`settled`): DX may
   show a team's new count some time after the import itself (a new team still counting
   0), and a count read too early would say "not counted" of people DX counts; such a
   verdict takes them out of what verification waits for, which is silent. So right
   after an import only rules 1 and 2 are drawn (a wrong "counted" is loud: the count
   falls short of the range); rule 3 waits for the next run's read of the same teams.
4. `users.attributes.update`: an answer for the person, a DX user; `user_not_found`, not.

`known` maps an e-mail to what was learned before: True counted, False not counted, None
(or absent) not known yet. Only a person known to be counted holds up verification: a
change touching them is waited for as always. Anyone else may or may not be counted (one
DX ignored may have joined since), so the team's count is checked by range instead
(`count_ranges`): at least the members known to be counted, at most everyone sent.
When DX counts fewer than were sent and no rule says whom, `undecided` says how many of
which people.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta

from hrsync.core.confirmation.verify import Convergence, CountRange, Uncounted
from hrsync.core.gate.compare import index_dx
from hrsync.core.gate.plan import LeadChange, MembershipChange, Plan, awaited_refs
from hrsync.core.listing import capped
from hrsync.core.teams.identity import TeamRow
from hrsync.dx.models import DxTeam

Known = Mapping[str, bool | None]


@dataclass(frozen=True, slots=True)
class Verdict:
    counted: bool
    evidence: str  # how it was learned, in words


# Changes teams.list shows by itself: once DX shows them, it took the import.
VISIBLE_KINDS = ("create", "rename", "move", "archive")


def import_visible(counts: Mapping[str, int]) -> bool:
    """The submission (its change counts) holds a change DX shows by itself, so a reply
    showing all of it shows that DX took the import."""
    return any(counts.get(kind, 0) for kind in VISIBLE_KINDS)


def counted_before(known: Known, email: str) -> bool:
    """Known to be counted by DX (a DX user it counted before)."""
    return known.get(email) is True


def emails_of(rows: Iterable[TeamRow]) -> set[str]:
    """Every e-mail `rows` send: leads and contributors."""
    found: set[str] = set()
    for row in rows:
        found.add(row.lead_email)
        found.update(row.contributors)
    return found


def unawaited(plan: Plan, known: Known) -> set[str]:
    """Of the teams verification would wait for, those whose only lead or member change
    adds or removes people not known to be counted: DX shows nothing when it ignores
    them, so they are not waited for; their team's count is checked by range. A lead
    change, or a member known to be counted (moved, removed or added), keeps the team
    waited for exactly as before."""
    waiting = set(awaited_refs(plan))
    touched: dict[str, list[str]] = {}
    leads: set[str] = set()
    for change in plan.changes:
        if change.reference_id not in waiting:
            continue
        if isinstance(change, LeadChange):
            leads.add(change.reference_id)
        elif isinstance(change, MembershipChange):
            touched.setdefault(change.reference_id, []).extend((*change.added, *change.removed))
    return {
        ref
        for ref, people in touched.items()
        if ref not in leads and people and not any(counted_before(known, e) for e in people)
    }


def count_range(row: TeamRow, known: Known) -> CountRange:
    """DX counts at least the members known to be counted, at most everyone sent."""
    sent = set(row.contributors)
    return CountRange(sum(1 for e in sent if counted_before(known, e)), len(sent))


def count_ranges(
    rows: Sequence[TeamRow], known: Known, awaited: Iterable[str]
) -> dict[str, CountRange]:
    """The count range of each team awaited or holding people not known to be counted:
    DX's count says the import is not taken yet when it is below the range."""
    refs = set(awaited).union(watched(rows, known))
    return {row.reference_id: count_range(row, known) for row in rows if row.reference_id in refs}


def contradicted(
    rows: Sequence[TeamRow], convergence: Convergence, known: Known, *, when: str
) -> dict[str, str]:
    """What was learned of whom DX counts, where DX contradicts it: a reply showing
    everything else but counting fewer in a team than its members known to be counted
    (they left DX, or a count read too early taught it). Those members are not known
    again (e-mail -> why), so the next run checks the team by range instead of failing
    on the same count for ever. Anything else still differing may be DX not having taken
    the import yet: then nothing is contradicted."""
    if not convergence.only_undercounted:
        return {}
    by_ref = {row.reference_id: row for row in rows}
    found: dict[str, str] = {}
    for u in convergence.undercounted:
        row = by_ref.get(u.reference_id)
        if row is None:
            continue
        why = (
            f"DX counted {u.counted} in {row.name!r} on {when}, fewer than the "
            f"{u.known_counted} known to be counted: not known again"
        )
        for email in set(row.contributors):
            if counted_before(known, email):
                found[email] = why
    return found


def watched(rows: Sequence[TeamRow], known: Known) -> list[str]:
    """Teams holding a contributor not known to be counted: once DX takes the import, their
    count tells who DX counts (a person who joined DX since is counted then)."""
    return [
        row.reference_id
        for row in rows
        if any(not counted_before(known, e) for e in row.contributors)
    ]


def unexplained(
    uncounted: Sequence[Uncounted], rows: Sequence[TeamRow], known: Known
) -> list[Uncounted]:
    """The shortfalls (DX counts fewer than sent) that people not known to be counted do
    not explain: DX lacks someone it counted before."""
    by_ref = {row.reference_id: row for row in rows}
    found: list[Uncounted] = []
    for u in uncounted:
        row = by_ref.get(u.reference_id)
        doubtful = (
            sum(1 for e in set(row.contributors) if not counted_before(known, e)) if row else 0
        )
        if u.sent - u.counted > doubtful:
            found.append(u)
    return found


def infer_counted(
    rows: Sequence[TeamRow],
    current: Sequence[DxTeam],
    known: Known,
    *,
    when: str,
    leads_accepted: bool = True,
    settled: bool = True,
) -> dict[str, Verdict]:
    """What DX's teams (`current`, showing the import of `rows` made on `when`, a date)
    say of each person sent: rules 1 to 3 of the module (3 only when `settled`: `current`
    was read in a later run, not right after the import). A person no rule decides is
    left out (still not known). Counted wins over not counted: a person in two teams whom
    one team counts is a DX user."""
    dx = index_dx(current).by_ref
    verdicts: dict[str, Verdict] = {}
    counted = {email for email, c in known.items() if c is True}
    if leads_accepted:
        for row in rows:
            verdicts[row.lead_email] = Verdict(True, f"a team lead DX accepted on {when}")
            counted.add(row.lead_email)
    shown = [(row, dx[row.reference_id]) for row in rows if row.reference_id in dx]
    for row, team in shown:
        sent = set(row.contributors)
        if sent and team.contributors == len(sent):
            for email in sorted(sent):
                verdicts.setdefault(
                    email, Verdict(True, f"counted in {row.name!r} after the import of {when}")
                )
            counted |= sent
    if not settled:
        return verdicts
    for row, team in shown:
        sent = set(row.contributors)
        known_counted = sent & counted
        if len(known_counted) < len(sent) and team.contributors == len(known_counted):
            for email in sorted(sent - known_counted):
                verdicts.setdefault(
                    email, Verdict(False, f"DX ignored this e-mail in the import of {when}")
                )
    return verdicts


# How long after DX shows an import hrsync reads its counts again before taking a count
# short of what was sent as "these people are not counted" (rule 3). DX may show a team's
# new count a moment after the import itself; a count read too early would take people DX
# counts out of what verification waits for. A lag longer than this is still caught:
# verification judges such people by range, and a later count showing them counted
# undoes the verdict (`joined`).
COUNTS_SETTLE_S = 2.0


def counts_short(rows: Sequence[TeamRow], current: Sequence[DxTeam]) -> bool:
    """Some team DX shows counts fewer contributors than `rows` sent it: rule 3 may name
    people, so its counts are read again once settled."""
    dx = index_dx(current).by_ref
    return any(
        (team := dx.get(row.reference_id)) is not None
        and team.contributors < len(set(row.contributors))
        for row in rows
    )


def from_attribute_answers(
    found: Iterable[str], not_found: Iterable[str], *, when: str
) -> dict[str, Verdict]:
    """`users.attributes.update` answers: DX answered for these users, or said
    `user_not_found` (rule 4)."""
    verdicts = {
        email: Verdict(False, f"users.attributes.update: user_not_found on {when}")
        for email in not_found
    }
    for email in found:
        verdicts[email] = Verdict(True, f"users.attributes.update found this user on {when}")
    return verdicts


def changed(known: Known, verdicts: Mapping[str, Verdict]) -> dict[str, Verdict]:
    """The verdicts that say something new: an unchanged verdict keeps its first
    evidence (the import DX first ignored the person in)."""
    return {e: v for e, v in verdicts.items() if known.get(e) is not v.counted}


def joined(known: Known, verdicts: Mapping[str, Verdict]) -> list[str]:
    """People not counted before whom DX counts now: they joined DX."""
    return sorted(e for e, v in verdicts.items() if v.counted and known.get(e) is False)


def not_in_dx(rows: Sequence[TeamRow], known: Known, verdicts: Mapping[str, Verdict]) -> list[str]:
    """The contributors of `rows` DX does not count, as now known."""
    people = {e for row in rows for e in row.contributors}
    return sorted(
        e for e in people if (verdicts[e].counted if e in verdicts else known.get(e)) is False
    )


@dataclass(frozen=True, slots=True)
class Undecided:
    """A team DX counts fewer contributors in than were sent, where no rule says whom:
    `not_counted` of the `candidates` (members not known either way) are not counted."""

    team: str
    sent: int
    counted: int
    not_counted: int
    candidates: tuple[str, ...]

    def fields(self) -> dict[str, object]:
        return {
            "team": self.team,
            "sent": self.sent,
            "counted": self.counted,
            "not_counted": self.not_counted,
            "candidates": list(self.candidates),
        }

    def sentence(self) -> str:
        return (
            f"DX does not count {self.not_counted} of {self.sent} sent to {self.team!r}; "
            f"it cannot tell yet which of {len(self.candidates)}: {capped(self.candidates)}"
        )


def undecided(
    rows: Sequence[TeamRow],
    current: Sequence[DxTeam],
    known: Known,
    verdicts: Mapping[str, Verdict],
) -> list[Undecided]:
    """The teams whose shortfall (DX counts fewer than sent) people DX is known to ignore
    do not explain and no rule pins on anyone: how many of which members not known either
    way (after `verdicts`) are not counted."""
    dx = index_dx(current).by_ref
    found: list[Undecided] = []
    for row in rows:
        team = dx.get(row.reference_id)
        if team is None:
            continue
        sent = set(row.contributors)
        status = {e: verdicts[e].counted if e in verdicts else known.get(e) for e in sent}
        ignored = sum(1 for c in status.values() if c is False)
        candidates = tuple(sorted(e for e, c in status.items() if c is None))
        missing = len(sent) - team.contributors - ignored
        if missing > 0 and candidates:
            found.append(
                Undecided(
                    row.name,
                    len(sent),
                    team.contributors,
                    min(missing, len(candidates)),
                    candidates,
                )
            )
    return sorted(found, key=lambda u: u.team)


# How an undecided person's store record says it (`dx_people.evidence`), so that `status`
# can group them by team again without DX.
_UNDECIDED = re.compile(
    r"^DX counted (?P<counted>\d+) of (?P<sent>\d+) sent to '(?P<team>.*)' on \S+: "
    r"(?P<missing>\d+) of "
)


def undecided_evidence(u: Undecided, *, when: str) -> str:
    return (
        f"DX counted {u.counted} of {u.sent} sent to '{u.team}' on {when}: {u.not_counted} of "
        f"{len(u.candidates)} people not known either way are not counted; which, DX does "
        "not show yet"
    )


def undecided_from_evidence(people: Iterable[tuple[str, str | None]]) -> list[Undecided]:
    """The teams `undecided_evidence` named, from (e-mail, evidence) of people not known
    either way; evidence of another kind is skipped."""
    groups: dict[str, tuple[re.Match[str], list[str]]] = {}
    for email, evidence in people:
        said = _UNDECIDED.match(evidence) if evidence is not None else None
        if said is not None:
            groups.setdefault(said.string, (said, []))[1].append(email)
    found = [
        Undecided(
            said["team"],
            int(said["sent"]),
            int(said["counted"]),
            int(said["missing"]),
            tuple(sorted(emails)),
        )
        for said, emails in groups.values()
    ]
    return sorted(found, key=lambda u: u.team)


@dataclass(frozen=True, slots=True)
class NotCounted:
    """A person DX does not count, since when (as far as hrsync knows)."""

    email: str
    since: datetime


def overdue(people: Iterable[NotCounted], now: datetime, *, alert_days: float) -> list[NotCounted]:
    """Those not counted for longer than `alert_days`, longest first: what fixes itself
    (they join DX and the next run places them) is told only when it persists."""
    limit = timedelta(days=alert_days)
    return sorted((p for p in people if now - p.since > limit), key=lambda p: (p.since, p.email))


def recheck_due(waiting: int, last_sent: datetime | None, now: datetime, hours: float) -> bool:
    """Send the unchanged hierarchy again: people DX does not count are listed (`waiting`)
    and the last hierarchy DX took was sent `hours` or more ago."""
    if waiting == 0:
        return False
    return last_sent is None or now - last_sent >= timedelta(hours=hours)
