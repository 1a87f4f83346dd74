"""The next snapshot, the sync before it, readiness and its one notice (pure)."""

from __future__ import annotations

from datetime import UTC, date, datetime, timedelta

import pytest
from hypothesis import given
from hypothesis import strategies as st

from hrsync.core.guards import check_snapshots
from hrsync.core.snapshot_ahead import (
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
RETRY = SNAP.starts_at - 12 * H  # 12-06 12:00


@pytest.mark.parametrize(
    ("now", "outcome", "ran_since_retry", "expected"),
    [
        (NOW, None, False, FIRST),  # well before: the first
        (FIRST, None, False, FIRST),  # at its time, nothing ran yet: now
        (FIRST + H, None, False, FIRST + H),  # passed while down: catch it up now
        (FIRST + H, "applied", False, None),  # it succeeded: nothing more
        (FIRST + H, "in_sync", False, None),
        (FIRST + H, "refused", False, RETRY),  # it did not: again 12 h before
        (FIRST + H, "failed", False, RETRY),
        (RETRY, "refused", False, RETRY),  # the retry's time, not run yet
        (RETRY + H, "refused", True, None),  # the retry ran: that is all
        (RETRY + H, "applied", True, None),
        (SNAP.starts_at, None, False, None),  # started: nothing
    ],
)
def test_pre_snapshot_sync_at(
    now: datetime, outcome: str | None, ran_since_retry: bool, expected: datetime | None
) -> None:
    got = pre_snapshot_sync_at(
        SNAP, now, hours=48, outcome_since_first=outcome, ran_since_retry=ran_since_retry
    )
    assert got == expected


def test_no_retry_when_the_first_is_already_within_twelve_hours() -> None:
    at = SNAP.starts_at - 6 * H
    assert (
        pre_snapshot_sync_at(SNAP, NOW, hours=6, outcome_since_first=None, ran_since_retry=False)
        == at
    )
    assert (
        pre_snapshot_sync_at(
            SNAP, at + H, hours=6, outcome_since_first="refused", ran_since_retry=False
        )
        is None
    )


@given(
    st.floats(min_value=0.5, max_value=24 * 14),
    st.integers(min_value=0, max_value=20 * 24 * 60),
    st.sampled_from([None, "applied", "in_sync", "refused", "failed", "deferred"]),
    st.booleans(),
)
def test_a_pre_snapshot_sync_is_never_in_the_past_nor_after_the_start(
    hours: float, minutes_before: int, outcome: str | None, ran: bool
) -> None:
    now = SNAP.starts_at - timedelta(minutes=minutes_before)
    at = pre_snapshot_sync_at(
        SNAP, now, hours=hours, outcome_since_first=outcome, ran_since_retry=ran
    )
    if at is not None:
        assert now <= at < SNAP.starts_at
        assert at >= SNAP.starts_at - timedelta(hours=hours)


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
