"""The next snapshot, the sync before it, readiness and its one notice (pure)."""

from __future__ import annotations

from datetime import UTC, date, datetime, timedelta
from itertools import pairwise

import pytest
from hypothesis import given
from hypothesis import strategies as st

from hrsync.core.gate.guards import check_snapshots
from hrsync.core.gate.snapshot_ahead import (
    CHECK_EVERY,
    LAST_CHECK_BEFORE,
    SNAPSHOT_NOT_READY,
    SNAPSHOT_READY,
    LastRun,
    NextSnapshot,
    Readiness,
    Told,
    describe,
    next_snapshot,
    pre_snapshot_sync_at,
    readiness,
    readiness_lines,
    readiness_notice,
    waiting_text,
)
from hrsync.dx.models import Snapshot

NOW = datetime(2026, 11, 26, 9, 30, tzinfo=UTC)
H = timedelta(hours=1)


def snap(
    sid: str,
    day: str | None,
    *,
    completed: datetime | None = None,
    deleted: datetime | None = None,
) -> Snapshot:
    return Snapshot(id=sid, scheduled_for=day, completed_at=completed, deleted_at=deleted)


# ---------------------------------------------------------------- next_snapshot


@pytest.mark.parametrize(
    ("snapshots", "expected"),
    [
        ([], None),
        ([snap("a", "2026-12-07")], NextSnapshot("a", date(2026, 12, 7))),
        # the earliest of those ahead
        (
            [snap("late", "2027-03-01"), snap("soon", "2026-12-07")],
            NextSnapshot("soon", date(2026, 12, 7)),
        ),
        # today has started (it is live), not ahead
        ([snap("today", "2026-11-26")], None),
        ([snap("tomorrow", "2026-11-27")], NextSnapshot("tomorrow", date(2026, 11, 27))),
        # deleted, completed, without a day or with an unreadable one: not ahead
        ([snap("gone", "2026-12-07", deleted=NOW)], None),
        ([snap("done", "2026-12-07", completed=NOW)], None),
        ([snap("blank", None), snap("junk", "soon")], None),
        # a timestamp gives its date
        ([snap("ts", "2026-12-07T00:00:00Z")], NextSnapshot("ts", date(2026, 12, 7))),
    ],
)
def test_next_snapshot(snapshots: list[Snapshot], expected: NextSnapshot | None) -> None:
    assert next_snapshot(snapshots, NOW) == expected


@given(st.dates(min_value=date(2026, 10, 1), max_value=date(2027, 1, 31)))
def test_a_snapshot_is_either_ahead_or_holding_never_both(day: date) -> None:
    snapshots = [snap("s", day.isoformat())]
    ahead = next_snapshot(snapshots, NOW) is not None
    holding = check_snapshots(snapshots, NOW, 21) is not None
    assert ahead != holding


def test_it_starts_at_midnight_utc_of_its_day() -> None:
    assert NextSnapshot("s", date(2026, 12, 7)).starts_at == datetime(2026, 12, 7, tzinfo=UTC)


# ---------------------------------------------------------------- the sync before

SNAP = NextSnapshot("s", date(2026, 12, 7))  # starts 2026-12-07T00:00Z
FIRST = SNAP.starts_at - 48 * H  # 12-05 00:00
LAST = SNAP.starts_at - LAST_CHECK_BEFORE  # 12-06 21:00


@pytest.mark.parametrize(
    ("now", "last_run_at", "expected"),
    [
        (NOW, None, FIRST),  # well before: the first
        (NOW, NOW, FIRST),  # a run before the window does not count
        (FIRST, None, FIRST),  # at its time, nothing ran yet: now
        (FIRST + H, None, FIRST + H),  # passed while down: catch it up now
        (FIRST - H, FIRST - 2 * H, FIRST),  # ran just before the window: still the first
        (FIRST + H, FIRST, FIRST + CHECK_EVERY),  # whatever it ended: checked again
        (FIRST + 2 * H, FIRST + H, FIRST + H + CHECK_EVERY),  # a run by hand counts
        (FIRST + 9 * H, FIRST + H, FIRST + 9 * H),  # overdue (down): now
        (LAST - H, LAST - 2 * H, LAST),  # the last check is not put off past its time
        (LAST + H, LAST, None),  # the last check ran
        (LAST + H, LAST + H, None),  # a run after its time is as good
        (LAST + H, LAST - H, LAST + H),  # the last check was missed: now
        (SNAP.starts_at, None, None),  # started: nothing
    ],
)
def test_pre_snapshot_sync_at(
    now: datetime, last_run_at: datetime | None, expected: datetime | None
) -> None:
    assert pre_snapshot_sync_at(SNAP, now, hours=48, last_run_at=last_run_at) == expected


def test_with_fewer_hours_than_the_last_check_leaves_the_first_is_the_only_one() -> None:
    first = SNAP.starts_at - 2 * H
    assert pre_snapshot_sync_at(SNAP, NOW, hours=2, last_run_at=None) == first
    assert pre_snapshot_sync_at(SNAP, first + H, hours=2, last_run_at=first) is None


@given(
    st.floats(min_value=0.5, max_value=24 * 14),
    st.integers(min_value=0, max_value=20 * 24 * 60),
    st.none() | st.integers(min_value=0, max_value=20 * 24 * 60),
)
def test_a_pre_snapshot_sync_is_never_in_the_past_nor_after_the_start(
    hours: float, minutes_before: int, ran_minutes_before: int | None
) -> None:
    now = SNAP.starts_at - timedelta(minutes=minutes_before)
    ran = None if ran_minutes_before is None else now - timedelta(minutes=ran_minutes_before)
    at = pre_snapshot_sync_at(SNAP, now, hours=hours, last_run_at=ran)
    if at is not None:
        assert now <= at < SNAP.starts_at
        assert at >= SNAP.starts_at - timedelta(hours=hours)


# A timeline: runs by hand or by the cron (minutes after the start of the timeline, and
# whether the guard refuses them) and HR changes; the daemon checks when
# `pre_snapshot_sync_at` says. Each run syncs every change made before it, unless refused.
Happening = tuple[int, str]  # (minute, "change" | "run" | "refused run")


@st.composite
def timelines(draw: st.DrawFn) -> tuple[float, datetime, list[Happening], list[bool]]:
    hours = draw(st.sampled_from([2.0, 6.0, 12.0, 24.0, 48.0, 72.0]))
    start = SNAP.starts_at - timedelta(hours=hours + draw(st.integers(0, 24)))
    span = int((SNAP.starts_at - start).total_seconds() // 60)
    happenings = draw(
        st.lists(
            st.tuples(st.integers(0, span - 1), st.sampled_from(["change", "run", "refused run"])),
            max_size=12,
        )
    )
    # Whether each of the daemon's own checks is refused (a person approves, or not).
    refusals = draw(st.lists(st.booleans(), min_size=40, max_size=40))
    return hours, start, sorted(happenings), refusals


@given(timelines())
def test_a_change_in_the_window_is_synced_before_the_snapshot_unless_refused(
    timeline: tuple[float, datetime, list[Happening], list[bool]],
) -> None:
    hours, start, happenings, refusals = timeline
    last = max(SNAP.starts_at - timedelta(hours=hours), LAST)
    events = [(start + timedelta(minutes=m), kind) for m, kind in happenings]
    changes: list[datetime] = []  # HR changes not in DX yet
    synced: list[datetime] = []
    runs: list[tuple[datetime, bool]] = []  # (started at, refused)
    now, last_run = start, None
    checks = iter(refusals)
    while True:
        at = pre_snapshot_sync_at(SNAP, now, hours=hours, last_run_at=last_run)
        # What happens in HR at the very minute of a check is read by it: the export is
        # read as the check starts, after the change was written.
        if events and (at is None or events[0][0] <= at):
            now, kind = events.pop(0)
            refused = kind == "refused run"
        elif at is not None:
            now, kind, refused = at, "check", next(checks)
        else:
            break
        if kind == "change":
            changes.append(now)
            continue
        runs.append((now, refused))
        last_run = now
        if not refused:
            synced += changes
            changes = []
        # Readiness as the gauge shows it: ready only when this check left nothing
        # pending and was not refused.
        ready = readiness(LastRun("refused" if refused else "applied", {})).ready
        assert ready == (not refused)
        assert not (ready and changes)
    window = [r for r in runs if r[0] >= SNAP.starts_at - timedelta(hours=hours)]
    # The daemon never leaves more than CHECK_EVERY without a check in the window ...
    for (a, _), (b, _) in pairwise(window):
        assert b - a <= CHECK_EVERY
    # ... and a check at or after the last check's time.
    assert window and window[-1][0] >= last
    # Every change made before the last check is in DX when the snapshot starts, unless
    # the last run was refused (then DX is not ready, and a person is told).
    before_last = [c for c in changes if c <= window[-1][0]]
    assert not before_last or window[-1][1]


# ---------------------------------------------------------------- readiness


def counts(**kinds: int) -> dict[str, int]:
    return kinds


@pytest.mark.parametrize(
    ("last", "ready", "blockers", "command"),
    [
        (LastRun("applied", counts(create=2)), True, (), None),
        (LastRun("in_sync", counts()), True, (), None),
        (
            LastRun("in_sync", counts(held=4)),
            False,
            ("4 people held",),
            "hrsync status",
        ),
        (
            LastRun(
                "refused",
                counts(archive=6, held=4),
                reason="would archive 6 teams",
                action="hrsync sync --allow-archive 6",
                waiting_on="refused",
            ),
            False,
            ("6 teams to archive await approval", "4 people held"),
            "hrsync sync --allow-archive 6",
        ),
        (
            LastRun(
                "refused",
                counts(archive=6),
                reason="would archive 6 teams",
                action="hrsync sync --allow-archive 6",
                waiting_on="refused",
                plan_id="3f9c2a0b",
            ),
            False,
            ("6 teams to archive await approval (plan 3f9c2a0b)",),
            "hrsync approve 3f9c2a0b",
        ),
        (
            LastRun("refused", counts(), reason="export has 10 people", waiting_on="refused"),
            False,
            ("a refused plan awaits a person (export has 10 people)",),
            "hrsync plan",
        ),
        (
            LastRun("applied", counts(), waiting_on="refused", action="hrsync sync --allow-x"),
            False,
            ("attribute changes await approval",),
            "hrsync sync --allow-x",
        ),
        (
            LastRun("failed", counts(), reason="DX unreachable"),
            False,
            ("the last run failed (DX unreachable)",),
            "hrsync history",
        ),
        (
            LastRun("rejected", counts(), reason="invalid_rows"),
            False,
            ("DX rejected the last run (invalid_rows)",),
            "hrsync check",
        ),
        (
            LastRun("unverified", counts()),
            False,
            ("DX has not shown the last run's changes yet",),
            "hrsync sync",
        ),
        (
            LastRun(
                "deferred",
                counts(create=10, archive=4, unchanged=30),
                defer_kind="snapshot_window",
                resume_at=datetime(2026, 12, 28, 9, tzinfo=UTC),
            ),
            False,
            ("14 changes wait for the window to close on 2026-12-28",),
            "hrsync status",
        ),
        (None, False, ("no run yet",), "hrsync sync"),
    ],
)
def test_readiness(
    last: LastRun | None, ready: bool, blockers: tuple[str, ...], command: str | None
) -> None:
    assert readiness(last) == Readiness(ready, blockers, command)


def test_readiness_commands_carry_the_config() -> None:
    got = readiness(LastRun("in_sync", counts(held=1)), "/etc/hrsync/my config.toml")
    assert got.command == "hrsync --config '/etc/hrsync/my config.toml' status"


@pytest.mark.parametrize(
    ("last", "expected"),
    [
        (
            LastRun(
                "deferred",
                counts(move=1),
                defer_kind="snapshot_window",
                resume_at=datetime(2026, 12, 28, tzinfo=UTC),
            ),
            "1 change waits for the window to close on 2026-12-28",
        ),
        (
            LastRun("deferred", counts(rename=3), defer_kind="snapshot_live"),
            "3 changes wait for the live snapshot to complete",
        ),
        # an import running, or nothing held back: not a window's wait
        (LastRun("deferred", counts(rename=3), defer_kind="import_in_progress"), None),
        (LastRun("deferred", counts(unchanged=9), defer_kind="snapshot_window"), None),
        (LastRun("applied", counts(rename=3)), None),
    ],
)
def test_waiting_text(last: LastRun, expected: str | None) -> None:
    assert waiting_text(last) == expected


def test_describe_says_what_the_next_snapshot_means() -> None:
    snapshot = NextSnapshot("s", date(2026, 12, 7))
    now = datetime(2026, 11, 26, 6, tzinfo=UTC)
    assert (
        describe(snapshot, Readiness(True), now)
        == "next snapshot 2026-12-07 (in 10 days): DX matches HR as of the last run"
    )
    behind = readiness(
        LastRun("refused", counts(archive=6, held=4), action="hrsync sync --allow-archive 6")
    )
    assert describe(snapshot, behind, now) == (
        "next snapshot 2026-12-07 (in 10 days): DX is behind HR: "
        "6 teams to archive await approval, 4 people held"
    )
    assert describe(snapshot, Readiness(True), snapshot.starts_at - 30 * H).startswith(
        "next snapshot 2026-12-07 (in 30 hours)"
    )
    assert describe(None, Readiness(True), now) == "no snapshot scheduled"


# ---------------------------------------------------------------- the notice

NOT_READY = Readiness(False, ("4 people held",), "hrsync status")
READY = Readiness(True)
CLOSE = SNAP.starts_at - 47 * H  # within the 48 hours
FAR = SNAP.starts_at - 49 * H


@pytest.mark.parametrize(
    ("told", "snapshot", "ready", "now", "expected"),
    [
        (None, SNAP, NOT_READY, CLOSE, SNAPSHOT_NOT_READY),  # close and not ready: once
        (Told("s", SNAPSHOT_NOT_READY), SNAP, NOT_READY, CLOSE, None),  # not every run
        (None, SNAP, NOT_READY, FAR, None),  # far yet: the daemon's own sync comes first
        (Told("s", SNAPSHOT_NOT_READY), SNAP, READY, CLOSE, SNAPSHOT_READY),  # once more
        (Told("s", SNAPSHOT_READY), SNAP, READY, CLOSE, None),
        (None, SNAP, READY, CLOSE, None),  # ready all along: nothing to say
        (Told("s", SNAPSHOT_READY), SNAP, NOT_READY, CLOSE, SNAPSHOT_NOT_READY),  # again behind
        (Told("old", SNAPSHOT_NOT_READY), SNAP, NOT_READY, CLOSE, SNAPSHOT_NOT_READY),
        (Told("old", SNAPSHOT_NOT_READY), SNAP, READY, CLOSE, None),  # another snapshot's news
        (None, None, NOT_READY, CLOSE, None),
        (None, SNAP, NOT_READY, SNAP.starts_at, None),  # started: too late to say
    ],
)
def test_readiness_notice(
    told: Told | None,
    snapshot: NextSnapshot | None,
    ready: Readiness,
    now: datetime,
    expected: str | None,
) -> None:
    assert readiness_notice(told, snapshot, ready, now, hours=48) == expected


@pytest.mark.parametrize(
    ("told", "now", "expected"),
    [
        (None, CLOSE, SNAPSHOT_READY),  # ready, but teams DX leaves out: told once
        (Told("s", SNAPSHOT_READY), CLOSE, None),  # not again
        (None, FAR, None),  # far yet
        (Told("old", SNAPSHOT_READY), CLOSE, SNAPSHOT_READY),  # another snapshot's news
    ],
)
def test_a_ready_dx_with_teams_under_the_floor_is_told_once(
    told: Told | None, now: datetime, expected: str | None
) -> None:
    assert readiness_notice(told, SNAP, READY, now, hours=48, small_teams=True) == expected


def test_the_not_ready_notice_names_what_blocks_and_the_command() -> None:
    behind = Readiness(
        False,
        ("6 teams to archive await approval", "4 people held"),
        "hrsync sync --allow-archive 6",
    )
    lines = readiness_lines(SNAPSHOT_NOT_READY, SNAP, behind, CLOSE)
    text = "\n".join(lines)
    assert "snapshot s on 2026-12-07 (in 47 hours)" in text
    assert "Blocking: 6 teams to archive await approval; 4 people held." in text
    assert "To resolve it: hrsync sync --allow-archive 6" in text
    ready = "\n".join(readiness_lines(SNAPSHOT_READY, SNAP, READY, CLOSE))
    assert "DX is ready for snapshot s" in ready
