"""The next DX snapshot and whether DX will be ready for it (pure).

DX attributes a snapshot's survey results to the teams as they stand when it starts, and
then refuses imports for weeks: what DX has at that moment is what a month of results
lands on. So hrsync looks ahead: it keeps the next snapshot that has not started, checks
for pending changes every few hours before it (and syncs them) whatever the cron schedule
says, and says, once, when DX will not be ready.

Everything here is over plain data with the time passed in: which snapshot is next
(`next_snapshot`), when the daemon checks before it (`pre_snapshot_sync_at`), whether the
last run leaves DX ready (`readiness`), what that means in words (`describe`), and when
the change of readiness is worth one message (`readiness_notice`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, date, datetime, time, timedelta
from pathlib import Path
from typing import Final, Literal

from hrsync.core.command_lines import approve_command, hrsync_command
from hrsync.core.gate.guards import scheduled_day, waits_for_snapshot
from hrsync.core.gate.plan import COUNT_KEYS
from hrsync.core.text import plural
from hrsync.dx.models import Snapshot

SUCCESS = ("applied", "in_sync")
# Within `pre_snapshot_hours` before a snapshot the daemon checks at least this often: HR
# may change after any run (by hand, the cron's, its own), and a check that finds
# nothing pending sends nothing, so a few hours' staleness is all that is risked.
CHECK_EVERY = timedelta(hours=4)
# The last check, this long before the snapshot's day starts: late enough to catch the
# day's HR changes, early enough for a person to act on a refusal it meets.
LAST_CHECK_BEFORE = timedelta(hours=3)
# The changes a plan counts (`unchanged` is not one).
CHANGE_KEYS = tuple(k for k in COUNT_KEYS if k != "unchanged")


@dataclass(frozen=True, slots=True)
class NextSnapshot:
    """A snapshot that has not started: its id and its day (UTC)."""

    snapshot_id: str
    day: date

    @property
    def starts_at(self) -> datetime:
        """The start of its day, UTC: DX takes the teams as they are on that day."""
        return datetime.combine(self.day, time(0, 0), tzinfo=UTC)


def next_snapshot(snapshots: Sequence[Snapshot], now: datetime) -> NextSnapshot | None:
    """The earliest snapshot not deleted, not completed, with `scheduled_for` after today
    (UTC); None when there is none. The same rule as `guards.check_snapshots` uses for
    "not started", so a snapshot is either ahead here or holding there, never both."""
    today = now.astimezone(UTC).date()
    ahead = []
    for snap in snapshots:
        if snap.deleted_at is not None or snap.completed_at is not None:
            continue
        day = scheduled_day(snap.scheduled_for)
        if day is not None and day > today:
            ahead.append(NextSnapshot(snap.id, day))
    return min(ahead, key=lambda s: (s.day, s.snapshot_id), default=None)


# ---------------------------------------------------------------- the checks before


def pre_snapshot_sync_at(
    snapshot: NextSnapshot,
    now: datetime,
    *,
    hours: float,
    last_run_at: datetime | None,
) -> datetime | None:
    """When the daemon next checks for `snapshot` (a sync: it plans, and sends only what
    is pending), whatever the cron says; None: no more checks for it.

    The first check is `hours` before the snapshot's day starts; then one at most
    `CHECK_EVERY` after the last run, whoever made it (`last_run_at`: when the newest
    finished run started, None when none), and a last one `LAST_CHECK_BEFORE` before the
    day starts. A run's outcome does not stop the checks: HR may change after a run that
    succeeded, and a refused or failed run is met again at the next. A time already
    passed is now (the daemon was down at that time)."""
    starts = snapshot.starts_at
    if now >= starts:
        return None
    first = starts - timedelta(hours=hours)
    last = max(first, starts - LAST_CHECK_BEFORE)
    if last_run_at is None or last_run_at < first:
        due = first
    elif last_run_at >= last:
        return None  # the last check has been made
    else:
        due = min(last_run_at + CHECK_EVERY, last)
    return max(due, now)


# ---------------------------------------------------------------- readiness


@dataclass(frozen=True, slots=True)
class LastRun:
    """What readiness reads of the last run (from the store's run record)."""

    outcome: str
    counts: Mapping[str, int]
    reason: str | None = None
    action: str | None = None  # the command that resolves it (a refusal's approval)
    waiting_on: str | None = None  # what a person must act on (hierarchy or attributes)
    defer_kind: str | None = None
    resume_at: datetime | None = None  # a deferral's end, when the run was deferred
    plan_id: str | None = None  # a refused plan's id: what `hrsync approve` names


@dataclass(frozen=True, slots=True)
class Readiness:
    ready: bool
    blockers: tuple[str, ...] = ()  # what keeps DX behind HR, as a person reads it
    command: str | None = None  # the command that resolves the first blocker

    @property
    def meaning(self) -> str:
        if self.ready:
            return "DX matches HR as of the last run"
        return "DX is behind HR: " + ", ".join(self.blockers)


def changes(counts: Mapping[str, int]) -> int:
    """How many changes a plan held (every kind but `unchanged`)."""
    return sum(counts.get(k, 0) for k in CHANGE_KEYS)


def waiting_text(last: LastRun) -> str | None:
    """ "14 changes wait for the window to close on 2026-12-28": what a deferred run's plan
    holds back; None when the run was not deferred by a snapshot or planned no change."""
    if last.outcome != "deferred" or not waits_for_snapshot(last.defer_kind):
        return None
    count = changes(last.counts)
    if not count:
        return None
    verb = "waits" if count == 1 else "wait"
    if last.defer_kind == "snapshot_window" and last.resume_at is not None:
        until = f"the window to close on {last.resume_at.astimezone(UTC).date().isoformat()}"
    else:
        until = "the live snapshot to complete"
    return f"{plural(count, 'change')} {verb} for {until}"


def readiness(last: LastRun | None, config_path: Path | str | None = None) -> Readiness:
    """Ready when the last run ended applied/in_sync with no held people and nothing a
    person must act on; otherwise what blocks it and the command that resolves it."""
    if last is None:
        return Readiness(False, ("no run yet",), hrsync_command(config_path, "sync"))
    blockers: list[str] = []
    commands: list[str] = []
    held = last.counts.get("held", 0)
    archives = last.counts.get("archive", 0)
    outcome = last.outcome
    if outcome == "refused":
        plan = f" (plan {last.plan_id})" if last.plan_id else ""
        if archives:
            verb = "awaits" if archives == 1 else "await"
            blockers.append(f"{plural(archives, 'team')} to archive {verb} approval{plan}")
        else:
            blockers.append(f"a refused plan{plan} awaits a person ({last.reason or 'refused'})")
        # Approving the plan by its id is what the daemon applies; --allow-* needs a shell.
        approve = approve_command(last.plan_id, config_path) if last.plan_id else None
        commands.append(approve or last.action or hrsync_command(config_path, "plan"))
    elif outcome == "deferred":
        blockers.append(waiting_text(last) or f"the last run was deferred ({last.reason})")
        commands.append(hrsync_command(config_path, "status"))
    elif outcome == "failed":
        blockers.append(f"the last run failed ({last.reason})")
        commands.append(hrsync_command(config_path, "history"))
    elif outcome == "rejected":
        blockers.append(f"DX rejected the last run ({last.reason})")
        commands.append(hrsync_command(config_path, "check"))
    elif outcome == "unverified":
        blockers.append("DX has not shown the last run's changes yet")
        commands.append(hrsync_command(config_path, "sync"))
    elif outcome not in SUCCESS:
        blockers.append(f"the last run ended {outcome}")
        commands.append(hrsync_command(config_path, "sync"))
    elif last.waiting_on == "refused":  # the hierarchy went through, its attributes did not
        blockers.append("attribute changes await approval")
        commands.append(last.action or hrsync_command(config_path, "plan"))
    if held:
        blockers.append(f"{plural(held, 'person')} held")
        commands.append(hrsync_command(config_path, "status"))
    if not blockers:
        return Readiness(True)
    return Readiness(False, tuple(blockers), commands[0])


def describe(snapshot: NextSnapshot | None, ready: Readiness, now: datetime) -> str:
    """ "next snapshot 2026-12-07 (in 11 days): DX matches HR as of the last run"."""
    if snapshot is None:
        return "no snapshot scheduled"
    return f"next snapshot {snapshot.day.isoformat()} ({_in(snapshot, now)}): {ready.meaning}"


def _in(snapshot: NextSnapshot, now: datetime) -> str:
    left = snapshot.starts_at - now
    if left >= timedelta(days=2):
        return f"in {left.days} days"
    hours = max(int(left.total_seconds() // 3600), 0)
    return f"in {plural(hours, 'hour')}"


# ---------------------------------------------------------------- the notice

SNAPSHOT_NOT_READY: Final = "snapshot_not_ready"  # `notify.on` events
SNAPSHOT_READY: Final = "snapshot_ready"
SNAPSHOT_NOTICE = "snapshot"  # the name of its notify_state row
NoticeKind = Literal["snapshot_not_ready", "snapshot_ready"]


@dataclass(frozen=True, slots=True)
class Told:
    """The last readiness message sent: about which snapshot, and which kind."""

    snapshot_id: str
    kind: str


def readiness_notice(
    told: Told | None,
    snapshot: NextSnapshot | None,
    ready: Readiness,
    now: datetime,
    *,
    hours: float,
    small_teams: bool = False,
) -> NoticeKind | None:
    """One message when the snapshot is less than `hours` away and DX is not ready; one
    more when it becomes ready; none per run (the same news about the same snapshot is
    not told twice). With `small_teams` (teams DX will leave out of the snapshot's
    results), a ready DX is told once too, so that a person hears of them before the
    snapshot rather than from an empty dashboard after it. Outside those hours nothing is
    told: the daemon still has its checks before the snapshot to fix things by itself."""
    if snapshot is None or now >= snapshot.starts_at:
        return None
    last = told.kind if told is not None and told.snapshot_id == snapshot.snapshot_id else None
    near = snapshot.starts_at - now <= timedelta(hours=hours)
    if not ready.ready:
        if not near:
            return None
        return None if last == SNAPSHOT_NOT_READY else SNAPSHOT_NOT_READY
    if last == SNAPSHOT_NOT_READY or (last is None and near and small_teams):
        return SNAPSHOT_READY
    return None


def readiness_lines(
    kind: NoticeKind, snapshot: NextSnapshot, ready: Readiness, now: datetime
) -> list[str]:
    """The notice's words: what blocks DX and the command that resolves it, or that it is
    ready now."""
    when = f"{snapshot.day.isoformat()} ({_in(snapshot, now)})"
    if kind == SNAPSHOT_READY:
        return [f"DX is ready for snapshot {snapshot.snapshot_id} on {when}: {ready.meaning}."]
    lines = [
        f"DX will not be ready for snapshot {snapshot.snapshot_id} on {when}: survey results "
        "are attributed to the teams DX has when it starts.",
        "Blocking: " + "; ".join(ready.blockers) + ".",
    ]
    if ready.command:
        lines.append(f"To resolve it: {ready.command}")
    return lines
