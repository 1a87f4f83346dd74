"""Whether a plan is safe to send: the guards (pure).

`process` archives every team missing from the request, so a broken export would
archive the org. Every guard is checked before anything is sent; each that trips gives a
`GuardTrip` (the numbers, the setting behind the limit and the `hrsync sync` flag that
lets it through once), all of them reported together. The gate (`core.gate.guards`) turns
them into one refusal with a plan id a person can approve.

Threshold convention (inclusive limits): a limit is the largest value still allowed.
`max_archive = 10` allows 10 archives and refuses 11; `max_archive_fraction = 0.2` of 50
current teams allows 10 and refuses 11, and never fewer than one team (the floor:
0.2 of 3 teams allows 1); `min_people_fraction = 0.8` of 80 people allows
64 and refuses 63; the same 0.8 of a join that matched 100 of 100 rows last time allows
80 of 100 and refuses 79; a payload of exactly 5,000,000 bytes is allowed,
one byte more is refused; `max_held = 25` holds 25 people and refuses 26.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from decimal import ROUND_HALF_UP, Decimal
from typing import Literal

from hrsync.core.gate.plan import Archive, Plan
from hrsync.core.people.second_tables import JOIN, TableCount
from hrsync.core.settings import SyncSettings
from hrsync.core.teams.held import held_over
from hrsync.core.text import plural
from hrsync.dx.payload import MAX_PAYLOAD_BYTES

# `sync.max_archive_fraction` never forbids archiving this many teams.
ARCHIVE_FLOOR = 1
# Absorbs float noise such as 0.29 * 100 == 28.999999999999996.
_EPSILON = 1e-9

GuardName = Literal[
    "empty_export",
    "payload_too_large",
    "max_archive",
    "max_archive_fraction",
    "min_people_fraction",
    "min_join_fraction",
    "max_held",
    "max_held_fraction",
    # The attribute step's (`core.attributes`): its calls, not the hierarchy's payload.
    "max_change_fraction",
]


# The guards nothing lets through: no flag, no approval (an empty export, an oversized
# payload are never what a person meant to send).
NEVER_OVERRIDDEN: tuple[GuardName, ...] = ("empty_export", "payload_too_large")
HELD_GUARDS: tuple[GuardName, ...] = ("max_held", "max_held_fraction")
# The attribute step's guards: their plans are calls of `users.attributes.update`, of
# which DX shows no preview.
ATTRIBUTE_GUARDS: tuple[GuardName, ...] = ("max_change_fraction",)


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
    joins: Sequence[TableCount] = (),
    last_joins: Mapping[str, TableCount] | None = None,
    sources: Sequence[TableCount] = (),
    last_sources: Mapping[str, TableCount] | None = None,
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
        trips.extend(table_trips(sources, last_sources or {}, settings))
        trips.extend(table_trips(joins, last_joins or {}, settings))
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


def table_trips(
    counts: Sequence[TableCount], last: Mapping[str, TableCount], settings: SyncSettings
) -> list[GuardTrip]:
    """The second tables that fell far below the last accepted run (`last`, by name): a
    join matching a smaller share of the export's rows than `sync.min_people_fraction` of
    the share it matched then; a source of `[[source.union]]` (the primary among them)
    whose people fell below `sync.min_people_fraction` of its people then: the people
    guard, per source, so that a source gone small is not hidden by the others. A table
    without a count there (new, renamed, or counting nothing then) has nothing to fall
    from."""
    trips: list[GuardTrip] = []
    for count in counts:
        before = last.get(count.name)
        if before is None or before.kind != count.kind or not before.kept:
            continue
        trip = (
            _fell(count, before, settings)
            if count.kind == JOIN
            else _shrunk(count.label, count.kept, before.kept, settings.min_people_fraction)
        )
        if trip is not None:
            trips.append(trip)
    return trips


def _fell(join: TableCount, before: TableCount, settings: SyncSettings) -> GuardTrip | None:
    """The join guard: tripped when a join's share of the export's rows fell below the
    fraction of its share in the last accepted run."""
    if not before.rows:
        return None
    fraction = settings.min_people_fraction
    minimum = math.ceil(fraction * before.kept * join.rows / before.rows - _EPSILON)
    if join.kept >= minimum and join.rows:
        return None
    share = _percent(join.kept, join.rows) if join.rows else "0%"
    return GuardTrip(
        guard="min_join_fraction",
        message=(
            f"{join.label} matched {join.kept} of {join.rows} rows ({share}); "
            f"the last accepted run matched {before.kept} of {before.rows} "
            f"({_percent(before.kept, before.rows)}), minimum "
            f"{_fraction(fraction)} of that = {plural(minimum, 'row')} "
            "(sync.min_people_fraction)"
        ),
        actual=join.kept,
        limit=minimum,
        setting="sync.min_people_fraction",
        override="--allow-shrink",
    )


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
