"""Plan ids and approvals bound to them (pure).

A plan a guard refuses gets a short id: a digest of exactly what would be sent (the
payload digest), the guards it trips, the DX teams it would archive and, when the held
guard trips, the people it holds. The archives are
in the digest because `process` archives whatever the payload leaves out: the same
payload archives one more team once somebody adds a team in DX's web app, and a person
who approved six archives has not approved seven. A person approves that id
(`hrsync approve`); a later run honours the approval only while the plan it computes has
the same id, so what is applied is exactly what was reviewed.

When the id differs, `difference` says how the new plan differs from the approved one,
in the terms a person reviewed: the teams to archive, the people in the export, the
guards tripped.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any, Literal

from hrsync.core.gate.plan import Plan
from hrsync.core.listing import capped
from hrsync.core.text import plural, quoted

# Hex digits of a plan id: short enough to type, and never trusted alone: an approval is
# honoured only when the stored plan's full payload digest equals the one computed now.
PLAN_ID_LENGTH = 8

ApprovalState = Literal["pending", "applied", "expired"]


def plan_id(
    payload_digest: str,
    guards: Iterable[str],
    archived_dx_ids: Iterable[str],
    held: Iterable[str] = (),
) -> str:
    """The id of a refused plan: equal inputs give equal ids whatever their order.
    `held`: the people the plan holds (their keys), when the held guard is among `guards`:
    a held person is kept where DX had them, so one more leaves the payload as it was,
    and a person who approved holding five has not approved holding six."""
    parts = [
        payload_digest,
        ",".join(sorted(set(guards))),
        ",".join(sorted(set(archived_dx_ids))),
    ]
    people = sorted(set(held))
    if people:  # the ids of plans holding nobody stay as they were
        parts.append(",".join(people))
    return hashlib.sha256("\n".join(parts).encode()).hexdigest()[:PLAN_ID_LENGTH]


def guard_setting(guard: str) -> str:
    """The setting a guard's limit is, as a person finds it in the configuration: the
    attribute step's in `[attributes]`, every other in `[sync]`."""
    return f"attributes.{guard}" if guard == "max_change_fraction" else f"sync.{guard}"


def normalise_plan_id(text: str) -> str | None:
    """A plan id as a person typed it (any case, spaces around), or None if it is not one."""
    value = text.strip().lower()
    if len(value) != PLAN_ID_LENGTH or any(c not in "0123456789abcdef" for c in value):
        return None
    return value


@dataclass(frozen=True, slots=True)
class PlanSummary:
    """What trips the guards of a refused plan, kept with it (`refused_plans.summary_json`)
    so a later plan can be compared with it in a person's terms."""

    guards: tuple[str, ...]
    archives: tuple[str, ...]  # the names of the teams it would archive, sorted
    people: int
    last_accepted_people: int | None
    current_teams: int
    counts: Mapping[str, int] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        return {
            "guards": list(self.guards),
            "archives": list(self.archives),
            "archive_count": len(self.archives),
            "people": self.people,
            "last_accepted_people": self.last_accepted_people,
            "current_teams": self.current_teams,
            "counts": dict(self.counts),
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> PlanSummary:
        return cls(
            guards=tuple(data.get("guards", ())),
            archives=tuple(data.get("archives", ())),
            people=int(data.get("people", 0)),
            last_accepted_people=data.get("last_accepted_people"),
            current_teams=int(data.get("current_teams", 0)),
            counts=dict(data.get("counts", {})),
        )


def summarize(
    plan: Plan,
    guards: Sequence[str],
    *,
    people: int,
    last_accepted_people: int | None,
    current_teams: int,
    held: int = 0,
) -> PlanSummary:
    """`held`: the people the plan holds for a problem of their own row (none: not kept)."""
    return PlanSummary(
        guards=tuple(guards),
        archives=tuple(sorted((a.name for a in plan.archives), key=str.casefold)),
        people=people,
        last_accepted_people=last_accepted_people,
        current_teams=current_teams,
        counts={**plan.counts, "held": held} if held else plan.counts,
    )


@dataclass(frozen=True, slots=True)
class Approval:
    """A person's approval of one plan id, as the store keeps it."""

    id: int
    plan_id: str
    approved_by: str
    approved_at: datetime
    expires_at: datetime
    note: str | None = None
    applied_run_id: str | None = None
    applied_at: datetime | None = None
    # "approve": `hrsync approve`; "sync": a manual `sync --allow-…` run, kept as audit.
    via: str = "approve"

    def state(self, now: datetime) -> ApprovalState:
        if self.applied_at is not None:
            return "applied"
        return "pending" if now < self.expires_at else "expired"


# How far ahead of the runner's clock an approval may be dated and still be honoured: the
# approver's machine and the daemon's are rarely a second apart, never minutes.
CLOCK_SKEW = timedelta(minutes=5)


def from_the_future(approval: Approval, now: datetime) -> bool:
    """Whether `approval` is dated later than `now` allows: a wrong clock where it was
    given, or a row written into the store. Counted from such a date, its time to live
    would run past an approval's time to live (`defaults.APPROVAL_TTL_HOURS`)."""
    return approval.approved_at > now + CLOCK_SKEW


def expires_at(approved_at: datetime, ttl_hours: float) -> datetime:
    return approved_at + timedelta(hours=ttl_hours)


def pending(approvals: Iterable[Approval], now: datetime) -> list[Approval]:
    """The approvals a run may still apply, newest first."""
    found = [a for a in approvals if a.state(now) == "pending"]
    return sorted(found, key=lambda a: a.approved_at, reverse=True)


def approval_for(approvals: Iterable[Approval], plan: str, now: datetime) -> Approval | None:
    """The newest pending approval of exactly `plan`, if any."""
    return next((a for a in pending(approvals, now) if a.plan_id == plan), None)


def when(value: datetime) -> str:
    """A moment as a person reads it in a message: UTC, to the minute."""
    return value.astimezone(UTC).strftime("%Y-%m-%d %H:%M UTC")


def approved_by_line(approval: Approval) -> str:
    at = when(approval.approved_at)
    return f"plan {approval.plan_id} approved by {approval.approved_by} at {at}"


# The changes a difference names besides archives, as a person says them.
_KINDS = {
    "create": ("team", " to create"),
    "rename": ("rename", ""),
    "move": ("move", ""),
    "lead_change": ("lead change", ""),
    "membership_change": ("membership change", ""),
    "held": ("person", " held"),
}


def _more(delta: int, noun: str) -> str:
    """`2 more teams`, `1 fewer person`: a signed difference in words."""
    word = "more" if delta > 0 else "fewer"
    count, noun_form = plural(abs(delta), noun).split(" ", 1)
    return f"{count} {word} {noun_form}"


def difference(now: PlanSummary, approved: PlanSummary) -> list[str]:
    """How the plan computed now differs from an approved one, in a person's terms; one
    clause each. Never empty: plans with different ids differ in what would be sent even
    when every figure below is the same."""
    clauses: list[str] = []
    more = len(now.archives) - len(approved.archives)
    if more:
        clauses.append(f"{_more(more, 'team')} to archive")
    added = sorted(set(now.archives) - set(approved.archives), key=str.casefold)
    gone = sorted(set(approved.archives) - set(now.archives), key=str.casefold)
    if added:
        clauses.append("also archives " + capped([quoted(n) for n in added]))
    if gone:
        clauses.append("no longer archives " + capped([quoted(n) for n in gone]))
    people = now.people - approved.people
    if people:
        clauses.append(f"{_more(people, 'person')} in the export")
    new_guards = [g for g in now.guards if g not in approved.guards]
    if new_guards:
        clauses.append("also trips " + ", ".join(map(guard_setting, new_guards)))
    cleared = [g for g in approved.guards if g not in now.guards]
    if cleared:
        clauses.append("no longer trips " + ", ".join(map(guard_setting, cleared)))
    for kind, (noun, tail) in _KINDS.items():
        delta = now.counts.get(kind, 0) - approved.counts.get(kind, 0)
        if delta:
            clauses.append(f"{_more(delta, noun)}{tail}")
    if not clauses:
        clauses.append("the same figures, but other teams, leads or members would be sent")
    return clauses


def difference_line(
    current_id: str,
    now: PlanSummary,
    approval: Approval,
    approved: PlanSummary | None,
    approve_command: str,
) -> str:
    """The sentence a refusal adds while an approval of another plan is pending: how this
    plan differs ("2 more teams to archive than plan 3f9c2a11 approved by ana@… at …"),
    and its own id to approve."""
    clauses = difference(now, approved) if approved is not None else []
    who = approved_by_line(approval)
    if clauses and clauses[0][:1].isdigit():
        # A comparative ("2 more teams to archive") reads on into "than plan …".
        head = f"{clauses[0]} than {who}"
        rest = clauses[1:]
    else:
        head = f"this is not {who}"
        rest = clauses or ["what would be sent differs"]
    said = "; ".join([head, *rest])
    return (
        f"Not the approved plan: {said}. This plan is {current_id}: review it, then approve "
        f"it with: {approve_command}"
    )
