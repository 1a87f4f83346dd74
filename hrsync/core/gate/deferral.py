"""Whether a run must wait before it sends anything (pure).

DX refuses hierarchy imports while a snapshot is live or inside its retroactive window,
and while another import runs. We read the snapshot list ourselves so a run waits
without sending anything; DX's own `snapshot_in_progress` / `import_in_progress`
answers defer too. An approved plan waits as any other: no approval bypasses a window.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta
from typing import Final, Literal

from hrsync.core.text import plural
from hrsync.dx.models import Snapshot

# A live snapshot has no end we can compute: look again after this long.
DEFAULT_RECHECK = timedelta(hours=6)
IMPORT_BACKOFF_START = timedelta(minutes=1)
IMPORT_BACKOFF_CAP = timedelta(minutes=30)
# How a deferral for a running import begins. The back-off counts such runs by their
# stored kind (`runs.defer_kind`), not by these words, which are free to change.
_IMPORT_RUNNING = "DX says a team hierarchy import is running"

DeferralKind = Literal[
    "snapshot_live", "snapshot_window", "snapshot_in_progress", "import_in_progress"
]
ApiDeferralKind = Literal["snapshot_in_progress", "import_in_progress"]
# Not a deferral of the gate's: a run another run's lease turned away (nothing read,
# nothing decided), kept in `runs.defer_kind` so what reads "the last run" skips it.
TURNED_AWAY: Final = "lease_held"
# Not the gate's either: a run that submitted, then stopped (SIGTERM) while verifying. It
# is resumed at the next start, which verifies what DX took; unlike every other deferral,
# something was sent.
STOPPED_VERIFYING: Final = "stopped_verifying"


def waits_for_snapshot(kind: str | None) -> bool:
    """Whether a run deferred so (`runs.defer_kind`) waits for a snapshot: live, in its
    window, or DX busy with it. Not a stop, an import or another run's lease."""
    return kind in ("snapshot_live", "snapshot_window", "snapshot_in_progress")


@dataclass(frozen=True, slots=True)
class Deferral:
    kind: DeferralKind
    resume_at: datetime
    reason: str
    snapshot_id: str | None = None


def _require_aware(value: datetime, what: str) -> None:
    if value.tzinfo is None or value.utcoffset() is None:
        raise ValueError(f"{what} must be a timezone-aware datetime, got naive {value!r}")


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
