"""The one gate: whether a run may send its plan (pure).

Deferral first (`core.gate.deferral`: a snapshot window, a running import), then every
guard (`core.gate.safety` for the hierarchy; the attribute step's guard is
`core.attributes`): each gives the same kind of `GuardTrip`, and `judge` turns them into
one decision. A refused plan gets an id (`core.gate.plan_ids`: a digest of exactly what
would be sent and the guards it trips); a person's approval of that id lets exactly that
plan through, and so do a manual run's own `--allow-*` flags.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta

from hrsync.core.gate.deferral import (
    DEFAULT_RECHECK,
    IMPORT_BACKOFF_CAP,
    IMPORT_BACKOFF_START,
    STOPPED_VERIFYING,
    TURNED_AWAY,
    ApiDeferralKind,
    Deferral,
    DeferralKind,
    check_snapshots,
    deferral_for_api_error,
    import_backoff,
    scheduled_day,
    waits_for_snapshot,
)
from hrsync.core.gate.plan import Plan
from hrsync.core.gate.plan_ids import plan_id
from hrsync.core.gate.safety import (
    ARCHIVE_FLOOR,
    ATTRIBUTE_GUARDS,
    HELD_GUARDS,
    NEVER_OVERRIDDEN,
    GuardName,
    GuardTrip,
    Refusal,
    check_safety,
    held_trips,
    table_trips,
)
from hrsync.core.people.second_tables import TableCount
from hrsync.core.settings import SyncSettings
from hrsync.dx.models import Snapshot
from hrsync.dx.payload import MAX_PAYLOAD_BYTES

# What the gate's callers import from here: the deferral's and the guards' vocabulary
# comes with the gate.
__all__ = [
    "ARCHIVE_FLOOR",
    "ATTRIBUTE_GUARDS",
    "DEFAULT_RECHECK",
    "HELD_GUARDS",
    "IMPORT_BACKOFF_CAP",
    "IMPORT_BACKOFF_START",
    "MAX_PAYLOAD_BYTES",
    "NEVER_OVERRIDDEN",
    "STOPPED_VERIFYING",
    "TURNED_AWAY",
    "ApiDeferralKind",
    "Decision",
    "Defer",
    "Deferral",
    "DeferralKind",
    "Go",
    "GuardName",
    "GuardTrip",
    "Refusal",
    "Refuse",
    "Verdict",
    "check_safety",
    "check_snapshots",
    "deferral_for_api_error",
    "gate",
    "held_trips",
    "import_backoff",
    "judge",
    "scheduled_day",
    "table_trips",
    "waits_for_snapshot",
]


@dataclass(frozen=True, slots=True)
class Go:
    plan: Plan
    # The id of the plan the guards would refuse, when a person's approval or the run's
    # override flags let it through (both are audited); None when no guard tripped.
    plan_id: str | None = None
    approved: bool = False  # let through by an approval of exactly `plan_id`


@dataclass(frozen=True, slots=True)
class Defer:
    deferral: Deferral


@dataclass(frozen=True, slots=True)
class Refuse:
    refusal: Refusal
    # Every guard the plan trips without the run's override flags: what its id names.
    tripped: tuple[GuardName, ...] = ()


Decision = Go | Defer | Refuse


@dataclass(frozen=True, slots=True)
class Verdict:
    """What the guards decided of one plan, hierarchy or attributes alike."""

    # The plan's id when a guard tripped (refused, or let past); None when none did.
    plan_id: str | None = None
    approved: bool = False  # let past by a person's approval of exactly `plan_id`
    # What refuses it, with `plan_id` set; None: it may be sent.
    refusal: Refusal | None = None
    # Every guard it trips without the run's override flags: what its id names.
    tripped: tuple[GuardName, ...] = ()


def judge(
    strict: Refusal | None,
    flagged: Callable[[], Refusal | None],
    *,
    payload_digest: str,
    approved: Collection[str] = (),
    held: Iterable[str] = (),
) -> Verdict:
    """The one decision every guard's trips come to. `strict`: every trip of the plan as
    it is; `flagged`: the trips left once the run's own `--allow-*` flags let theirs
    through (called only when an approval does not already decide). The plan's id
    names what would be sent (`payload_digest`), the guards it trips, the teams it
    archives and, when the held guard trips, the people it holds (`held`, their keys): a
    plan has one id however it is let through. An approved id lets it past unless a
    guard that nothing overrides tripped."""
    if strict is None:
        return Verdict()
    held_guard = any(g in HELD_GUARDS for g in strict.guards)
    refused_id = plan_id(
        payload_digest,
        strict.guards,
        (a.dx_id for a in strict.archives),
        held if held_guard else (),
    )
    if strict.overridable and refused_id in approved:
        return Verdict(refused_id, approved=True, tripped=strict.guards)
    refusal = flagged()
    if refusal is None:
        return Verdict(refused_id, tripped=strict.guards)
    refused = dataclasses.replace(refusal, plan_id=refused_id)
    return Verdict(refused_id, refusal=refused, tripped=strict.guards)


def gate(
    plan: Plan,
    *,
    snapshots: Sequence[Snapshot],
    now: datetime,
    settings: SyncSettings,
    people_count: int,
    last_accepted_people: int | None,
    current_team_count: int,
    payload_bytes: int,
    allow_archive: int = 0,
    allow_shrink: bool = False,
    approved: Collection[str] = (),
    recheck: timedelta = DEFAULT_RECHECK,
    joins: Sequence[TableCount] = (),
    last_joins: Mapping[str, TableCount] | None = None,
    sources: Sequence[TableCount] = (),
    last_sources: Mapping[str, TableCount] | None = None,
    held: Collection[str] = (),
    allow_held: int | None = None,
) -> Decision:
    """Deferral first (a run in a snapshot window sends nothing and judges nothing, and
    an approval never bypasses a window: it waits), then safety. Call it for a plan that
    has something to send: a no-op run is `in_sync` whatever the snapshot window says.

    `approved` holds the plan ids a person approved (pending, unexpired): a plan whose
    id is among them goes ahead as if the guards it trips were allowed. The guards that
    can never be overridden stay, approved or not. The id is computed without the run's
    override flags, so a plan has one id however it was let through. `held`: the keys of
    the people the plan holds for a problem of their own row (`people_count` counts the
    others); when the held guard trips they are part of the id.
    """
    deferral = check_snapshots(snapshots, now, settings.retro_window_days, recheck=recheck)
    if deferral is not None:
        return Defer(deferral)

    def safety(archive: int, shrink: bool, held_allowed: int | None) -> Refusal | None:
        return check_safety(
            plan,
            people_count=people_count,
            last_accepted_people=last_accepted_people,
            current_team_count=current_team_count,
            payload_bytes=payload_bytes,
            settings=settings,
            allow_archive=archive,
            allow_shrink=shrink,
            joins=joins,
            last_joins=last_joins,
            sources=sources,
            last_sources=last_sources,
            held=len(held),
            allow_held=held_allowed,
        )

    strict = safety(0, False, None)
    flagged = allow_archive or allow_shrink or allow_held is not None
    verdict = judge(
        strict,
        lambda: safety(allow_archive, allow_shrink, allow_held) if flagged else strict,
        payload_digest=plan.payload_digest,
        approved=approved,
        held=held,
    )
    if verdict.refusal is not None:
        return Refuse(verdict.refusal, tripped=verdict.tripped)
    return Go(plan, plan_id=verdict.plan_id, approved=verdict.approved)
