"""Whether a run may send its plan: deferral and safety decisions (pure).

Deferral: DX refuses hierarchy imports while a snapshot is live or inside its
retroactive window, and while another import runs. We read the snapshot list ourselves
so a run waits without sending anything; DX's own `snapshot_in_progress` /
`import_in_progress` answers defer too.

Safety: `process` archives every team missing from the request, so a broken export
would archive the org. Every guard is checked before anything is sent; all that trip are
reported together, with the numbers and the override an operator can use.

Threshold convention (inclusive limits): a limit is the largest value still allowed.
`max_archive = 10` allows 10 archives and refuses 11; `max_archive_fraction = 0.2` of 50
current teams allows 10 and refuses 11, and never fewer than one team (the floor:
0.2 of 3 teams allows 1); `min_people_fraction = 0.8` of 80 people allows
64 and refuses 63; `min_join_fraction = 0.9` of a join that matched 100 of 100 rows last
time allows 90 of 100 and refuses 89; a payload of exactly 5,000,000 bytes is allowed,
one byte more is refused.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta
from decimal import ROUND_HALF_UP, Decimal
from typing import Final, Literal

from hrsync.core.gate.plan import Archive, Plan
from hrsync.core.gate.plan_ids import plan_id
from hrsync.core.people.joins import JoinCount
from hrsync.core.people.union import PRIMARY, SourceCount
from hrsync.core.settings import SyncSettings
from hrsync.core.teams.held import held_over
from hrsync.core.text import plural
from hrsync.dx.models import Snapshot
from hrsync.dx.payload import MAX_PAYLOAD_BYTES

# A live snapshot has no end we can compute: look again after this long.
DEFAULT_RECHECK = timedelta(hours=6)
IMPORT_BACKOFF_START = timedelta(minutes=1)
IMPORT_BACKOFF_CAP = timedelta(minutes=30)
# How a deferral for a running import begins. The back-off counts such runs by their
# stored kind (`runs.defer_kind`), not by these words, which are free to change.
_IMPORT_RUNNING = "DX says a team hierarchy import is running"
# `sync.max_archive_fraction` never forbids archiving this many teams.
ARCHIVE_FLOOR = 1
# Absorbs float noise such as 0.29 * 100 == 28.999999999999996.
_EPSILON = 1e-9

DeferralKind = Literal[
    "snapshot_live", "snapshot_window", "snapshot_in_progress", "import_in_progress"
]
ApiDeferralKind = Literal["snapshot_in_progress", "import_in_progress"]
# Not a deferral of the gate's: a run another run's lease turned away (nothing read,
# nothing decided), kept in `runs.defer_kind` so what reads "the last run" skips it.
TURNED_AWAY: Final = "lease_held"


@dataclass(frozen=True, slots=True)
class Deferral:
    kind: DeferralKind
    resume_at: datetime
    reason: str
    snapshot_id: str | None = None


def _require_aware(value: datetime, what: str) -> None:
    if value.tzinfo is None or value.utcoffset() is None:
        raise ValueError(f"{what} must be a timezone-aware datetime, got naive {value!r}")


# ---------------------------------------------------------------- deferral


def check_snapshots(
    snapshots: Sequence[Snapshot],
    now: datetime,
    retro_window_days: int,
    *,
    recheck: timedelta = DEFAULT_RECHECK,
) -> Deferral | None:
    """Defer while any snapshot is live or within `retro_window_days` of completion.

    Deleted snapshots are ignored. One not completed whose `scheduled_for` day (UTC) is
    after today has not started: it does not hold (DX recommends updating the hierarchy
    before a snapshot, so these are the weeks a sync matters most). Once its day has
    come, or when the day is missing or unreadable (nothing proves it has not started),
    it is live and gives `now + recheck`; a completed one holds until
    `completed_at + window` (at that exact instant it no longer holds). When several
    hold, the latest `resume_at` wins.
    """
    _require_aware(now, "now")
    window = timedelta(days=retro_window_days)
    today = now.astimezone(UTC).date()
    latest: Deferral | None = None
    for snap in snapshots:
        if snap.deleted_at is not None:
            continue
        if snap.completed_at is None:
            day = scheduled_day(snap.scheduled_for)
            if day is not None and day > today:
                continue
            candidate = Deferral(
                kind="snapshot_live",
                resume_at=now + recheck,
                reason=(
                    f"snapshot {snap.id} is live (not completed); "
                    f"checking again in {_duration(recheck)}"
                ),
                snapshot_id=snap.id,
            )
        else:
            _require_aware(snap.completed_at, f"snapshot {snap.id} completed_at")
            ends = snap.completed_at + window
            if ends <= now:
                continue
            candidate = Deferral(
                kind="snapshot_window",
                resume_at=ends,
                reason=(
                    f"snapshot {snap.id} completed {snap.completed_at.isoformat()} and is in its "
                    f"{retro_window_days}-day retroactive window until {ends.isoformat()} "
                    f"(sync.retro_window_days)"
                ),
                snapshot_id=snap.id,
            )
        if latest is None or candidate.resume_at > latest.resume_at:
            latest = candidate
    return latest


def scheduled_day(value: str | None) -> date | None:
    """The day of `scheduled_for` (documented as YYYY-MM-DD; a timestamp gives its date),
    or None when absent or unreadable."""
    if not value:
        return None
    try:
        return date.fromisoformat(value.strip()[:10])
    except ValueError:
        return None


def import_backoff(attempt: int) -> timedelta:
    """1, 2, 4, 8, 16 minutes, then 30 minutes for every later attempt (attempt 1 is the
    first `import_in_progress` answer in a row)."""
    exponent = min(max(attempt, 1) - 1, 16)  # the cap is reached long before 2**16
    wait: timedelta = IMPORT_BACKOFF_START * (2**exponent)
    return min(wait, IMPORT_BACKOFF_CAP)


def deferral_for_api_error(
    kind: ApiDeferralKind,
    now: datetime,
    attempt: int,
    our_snapshot_view: Deferral | None,
    *,
    recheck: timedelta = DEFAULT_RECHECK,
) -> Deferral:
    """Turn DX's own "not now" answer into a deferral.

    `attempt` counts consecutive `import_in_progress` answers, this one included.
    `our_snapshot_view` is what `check_snapshots` said for the same moment: when it also
    sees a snapshot holding, its end is used; when it sees none, DX knows something we
    do not (a longer window, a snapshot hidden from us), so we look again after `recheck`.
    """
    _require_aware(now, "now")
    if kind == "import_in_progress":
        wait = import_backoff(attempt)
        return Deferral(
            kind="import_in_progress",
            resume_at=now + wait,
            reason=(
                f"{_IMPORT_RUNNING} (attempt {max(attempt, 1)}); trying again in {_duration(wait)}"
            ),
        )
    if our_snapshot_view is not None and our_snapshot_view.resume_at > now:
        return Deferral(
            kind="snapshot_in_progress",
            resume_at=our_snapshot_view.resume_at,
            reason=f"DX says a snapshot is in progress; {our_snapshot_view.reason}",
            snapshot_id=our_snapshot_view.snapshot_id,
        )
    return Deferral(
        kind="snapshot_in_progress",
        resume_at=now + recheck,
        reason=(
            "DX says a snapshot is in progress, but snapshots.list shows none live or in its "
            "window (is DX's window longer than sync.retro_window_days?); "
            f"checking again in {_duration(recheck)}"
        ),
    )


def _duration(delta: timedelta) -> str:
    minutes = int(delta.total_seconds() // 60)
    if minutes >= 60 and minutes % 60 == 0:
        return plural(minutes // 60, "hour")
    if minutes >= 1:
        return plural(minutes, "minute")
    return f"{int(delta.total_seconds())} seconds"


# ---------------------------------------------------------------- safety

GuardName = Literal[
    "empty_export",
    "payload_too_large",
    "max_archive",
    "max_archive_fraction",
    "min_people_fraction",
    "min_join_fraction",
    "max_held",
    "max_held_fraction",
]


# The guards nothing lets through: no flag, no approval (an empty export, an oversized
# payload are never what a person meant to send).
NEVER_OVERRIDDEN: tuple[GuardName, ...] = ("empty_export", "payload_too_large")
HELD_GUARDS: tuple[GuardName, ...] = ("max_held", "max_held_fraction")


@dataclass(frozen=True, slots=True)
class GuardTrip:
    guard: GuardName
    message: str
    actual: float
    limit: float
    setting: str | None  # the config key behind the limit
    override: str | None  # the `hrsync sync` flag that lets it through; None: never


@dataclass(frozen=True, slots=True)
class Refusal:
    trips: tuple[GuardTrip, ...]
    archives: tuple[Archive, ...]  # every team the plan would have archived
    # The refused plan's id (`core.plan_ids`), set by `gate`: what a person approves.
    plan_id: str | None = None

    @property
    def guards(self) -> tuple[GuardName, ...]:
        return tuple(t.guard for t in self.trips)

    @property
    def overridable(self) -> bool:
        return all(t.override is not None for t in self.trips)

    @property
    def override_flags(self) -> tuple[str, ...] | None:
        """The `hrsync sync` arguments that would apply the plan anyway, each once; None
        when a guard that can never be overridden tripped. The whole command, with the
        `--config` of this run, is `render.approval_command`."""
        if not self.overridable:
            return None
        overrides: list[str] = []
        for trip in self.trips:
            if trip.override is not None and trip.override not in overrides:
                overrides.append(trip.override)
        return tuple(arg for override in overrides for arg in override.split())

    @property
    def reason(self) -> str:
        """One line for `sync.finished.reason` and the run history."""
        return "; ".join(t.message for t in self.trips)


def check_safety(
    plan: Plan,
    *,
    people_count: int,
    last_accepted_people: int | None,
    current_team_count: int,
    payload_bytes: int,
    settings: SyncSettings,
    allow_archive: int = 0,
    allow_shrink: bool = False,
    joins: Sequence[JoinCount] = (),
    last_joins: Mapping[str, JoinCount] | None = None,
    sources: Sequence[SourceCount] = (),
    last_sources: Mapping[str, SourceCount] | None = None,
    held: int = 0,
    allow_held: int | None = None,
) -> Refusal | None:
    """Every guard, in a fixed order; all that trip are reported.

    `allow_archive = N` lets up to N archives through both archive guards (a manual,
    one-off decision); `allow_shrink` lets a shrunken export through, and a join that
    matched less (`joins` against `last_joins`, the last accepted run's), and a source of
    `[[source.union]]` that shrank (`sources` against `last_sources`); `allow_held = N`
    lets up to `held` = N people be held (`people_count` counts the others). The
    empty-export and payload guards cannot be overridden.
    """
    if allow_archive < 0:
        raise ValueError(f"allow_archive must be 0 or more, got {allow_archive}")
    trips: list[GuardTrip] = []
    if people_count <= 0:
        trips.append(
            GuardTrip(
                guard="empty_export",
                message=(
                    f"export has {people_count} people: an empty export is never applied "
                    "(it would archive every team); check the source and its filters"
                ),
                actual=people_count,
                limit=1,
                setting=None,
                override=None,
            )
        )
    if payload_bytes > MAX_PAYLOAD_BYTES:
        trips.append(
            GuardTrip(
                guard="payload_too_large",
                message=(
                    f"payload is {payload_bytes:,} bytes ({payload_bytes / 1024 / 1024:.2f} MB), "
                    f"DX accepts at most {MAX_PAYLOAD_BYTES:,} bytes (5 MB)"
                ),
                actual=payload_bytes,
                limit=MAX_PAYLOAD_BYTES,
                setting=None,
                override=None,
            )
        )
    archives = len(plan.archives)
    archive_override = f"--allow-archive {archives}"
    covered = archives <= allow_archive
    not_enough = (
        f"; --allow-archive {allow_archive} was given, {archives} needed"
        if allow_archive and not covered
        else ""
    )
    if archives > settings.max_archive and not covered:
        trips.append(
            GuardTrip(
                guard="max_archive",
                message=(
                    f"would archive {plural(archives, 'team')}, limit {settings.max_archive} "
                    f"(sync.max_archive){not_enough}"
                ),
                actual=archives,
                limit=settings.max_archive,
                setting="sync.max_archive",
                override=archive_override,
            )
        )
    share_limit = math.floor(settings.max_archive_fraction * current_team_count + _EPSILON)
    # The floor: a share of a small org rounds down to 0 teams, which would make every
    # departed manager's team need a person; `sync.max_archive` still caps it.
    fraction_limit = max(ARCHIVE_FLOOR, share_limit)
    if archives > fraction_limit and not covered:
        floor_note = (
            "" if share_limit >= ARCHIVE_FLOOR else f", at least {plural(ARCHIVE_FLOOR, 'team')}"
        )
        share = f" ({_percent(archives, current_team_count)})" if current_team_count else ""
        trips.append(
            GuardTrip(
                guard="max_archive_fraction",
                message=(
                    f"would archive {archives} of {current_team_count} current teams{share}, "
                    f"limit {_fraction(settings.max_archive_fraction)} = "
                    f"{plural(share_limit, 'team')}{floor_note} "
                    f"(sync.max_archive_fraction){not_enough}"
                ),
                actual=archives,
                limit=fraction_limit,
                setting="sync.max_archive_fraction",
                override=archive_override,
            )
        )
    if last_accepted_people and not allow_shrink:
        fraction = settings.min_people_fraction
        shrunk = _shrunk("export", people_count, last_accepted_people, fraction)
        if shrunk is not None:
            trips.append(shrunk)
    if not allow_shrink:
        trips.extend(source_trips(sources, last_sources or {}, settings.min_people_fraction))
        trips.extend(join_trips(joins, last_joins or {}, settings.min_join_fraction))
    trips.extend(held_trips(held, people_count + held, settings, allow_held))
    if not trips:
        return None
    return Refusal(trips=tuple(trips), archives=tuple(plan.archives))


def held_trips(
    held: int, people: int, settings: SyncSettings, allowed: int | None = None
) -> list[GuardTrip]:
    """The held guard: so many people held for a problem of their own row (of `people`,
    the export's, held included) may say the export itself is broken. `allowed`
    (`sync --allow-held N`) lets up to N through."""
    if not held or (allowed is not None and held <= allowed):
        return []
    over = held_over(held, people, settings.max_held, settings.max_held_fraction)
    if over is None:
        return []
    not_enough = f"; --allow-held {allowed} was given, {held} needed" if allowed is not None else ""
    return [
        GuardTrip(
            guard=over.setting,
            message=(
                f"{over.message}{not_enough}: so many rows with problems say the export itself "
                f"is broken; fix them, or run `hrsync sync --allow-held {held}` to hold them "
                "and sync everyone else"
            ),
            actual=held,
            limit=over.limit,
            setting=f"sync.{over.setting}",
            override=f"--allow-held {held}",
        )
    ]


def join_trips(
    joins: Sequence[JoinCount], last: Mapping[str, JoinCount], fraction: float
) -> list[GuardTrip]:
    """The joins matching a smaller share of the export's rows than `fraction` of the
    share they matched in the last accepted run (`last`, by name). A join without one
    there (new, renamed, or matching nothing then) has nothing to fall from."""
    trips: list[GuardTrip] = []
    for join in joins:
        before = last.get(join.name)
        if before is None or not before.rows or not before.matched:
            continue
        minimum = math.ceil(fraction * before.matched * join.rows / before.rows - _EPSILON)
        if join.matched >= minimum and join.rows:
            continue
        share = _percent(join.matched, join.rows) if join.rows else "0%"
        trips.append(
            GuardTrip(
                guard="min_join_fraction",
                message=(
                    f"join {join.name!r} matched {join.matched} of {join.rows} rows ({share}); "
                    f"the last accepted run matched {before.matched} of {before.rows} "
                    f"({_percent(before.matched, before.rows)}), minimum "
                    f"{_fraction(fraction)} of that = {plural(minimum, 'row')} "
                    "(sync.min_join_fraction)"
                ),
                actual=join.matched,
                limit=minimum,
                setting="sync.min_join_fraction",
                override="--allow-shrink",
            )
        )
    return trips


def source_trips(
    sources: Sequence[SourceCount], last: Mapping[str, SourceCount], fraction: float
) -> list[GuardTrip]:
    """The sources of `[[source.union]]` (the primary among them) whose people fell below
    `fraction` of their people in the last accepted run (`last`, by name): the people
    guard, per source, so that a source gone small is not hidden by the others. A source
    without one there (new, renamed) has nothing to fall from."""
    trips: list[GuardTrip] = []
    for source in sources:
        before = last.get(source.name)
        if before is None or not before.people:
            continue
        where = PRIMARY if source.name == PRIMARY else f"source.union[{source.name}]"
        shrunk = _shrunk(where, source.people, before.people, fraction)
        if shrunk is not None:
            trips.append(shrunk)
    return trips


def _shrunk(what: str, people: int, before: int, fraction: float) -> GuardTrip | None:
    """The people guard for `what` (the export, or one source): tripped when its people
    fell below `fraction` of `before`, the last accepted run's."""
    minimum = math.ceil(fraction * before - _EPSILON)
    if people >= minimum:
        return None
    return GuardTrip(
        guard="min_people_fraction",
        message=(
            f"{what} has {people} people, {_percent(people, before)} of the last accepted "
            f"{before}, minimum {_fraction(fraction)} = {minimum} people "
            "(sync.min_people_fraction)"
        ),
        actual=people,
        limit=minimum,
        setting="sync.min_people_fraction",
        override="--allow-shrink",
    )


def _percent(part: int, whole: int) -> str:
    """Rounded to the nearest tenth (half up, in decimal: no float rounds it twice). A
    value that is not a whole percent never prints as one (79.96% is not "80%", which
    could read as the limit it is under): it gets as many decimals as that takes."""
    value = Decimal(part * 100) / Decimal(whole)
    exact = (part * 100) % whole == 0
    for digits in range(1, 7):
        shown = value.quantize(Decimal(1).scaleb(-digits), rounding=ROUND_HALF_UP)
        if exact or shown != shown.to_integral_value():
            break
    text = f"{shown:f}".rstrip("0").rstrip(".") if exact else f"{shown:f}"
    return f"{text}%"


def _fraction(value: float) -> str:
    text = f"{value * 100:.1f}".removesuffix(".0")
    return f"{text}%"


# ---------------------------------------------------------------- the gate


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
    joins: Sequence[JoinCount] = (),
    last_joins: Mapping[str, JoinCount] | None = None,
    sources: Sequence[SourceCount] = (),
    last_sources: Mapping[str, SourceCount] | None = None,
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
    if strict is None:
        return Go(plan)
    held_guard = any(g in HELD_GUARDS for g in strict.guards)
    refused_id = plan_id(
        plan.payload_digest,
        strict.guards,
        (a.dx_id for a in strict.archives),
        held if held_guard else (),
    )
    if strict.overridable and refused_id in approved:
        return Go(plan, plan_id=refused_id, approved=True)
    flagged = allow_archive or allow_shrink or allow_held is not None
    refusal = safety(allow_archive, allow_shrink, allow_held) if flagged else strict
    if refusal is None:
        return Go(plan, plan_id=refused_id)
    return Refuse(dataclasses.replace(refusal, plan_id=refused_id), tripped=strict.guards)
