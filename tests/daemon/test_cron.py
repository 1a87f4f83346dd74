"""Cron maths and the quarantine back-off, with explicit datetimes (no clocks)."""

from __future__ import annotations

import itertools
from datetime import UTC, datetime, timedelta
from zoneinfo import ZoneInfo

import pytest
from hypothesis import given
from hypothesis import strategies as st

from hrsync.daemon.cron import (
    QUARANTINE_MAX_PAUSE,
    FailedRun,
    cron_trigger,
    crontab_weekdays,
    next_cron_fire,
    quarantine_delay,
    quarantine_from_streak,
)

BERLIN = ZoneInfo("Europe/Berlin")
H = timedelta(hours=1)


def utc(
    year: int, month: int, day: int, hour: int = 0, minute: int = 0, second: int = 0, us: int = 0
) -> datetime:
    return datetime(year, month, day, hour, minute, second, us, tzinfo=UTC)


# ------------------------------------------------------------- next_cron_fire


@pytest.mark.parametrize(
    ("expr", "tz", "after", "expected"),
    [
        # The default schedule, plain UTC.
        ("0 6 * * *", "UTC", utc(2026, 1, 10, 5, 59), utc(2026, 1, 10, 6, 0)),
        # Strictly after: a fire exactly at `after` is not returned again.
        ("0 6 * * *", "UTC", utc(2026, 1, 10, 6, 0), utc(2026, 1, 11, 6, 0)),
        ("0 6 * * *", "UTC", utc(2026, 1, 10, 6, 0, 0, 500), utc(2026, 1, 11, 6, 0)),
        # Berlin winter (CET, +01:00) and summer (CEST, +02:00).
        ("0 6 * * *", "Europe/Berlin", utc(2026, 1, 10, 12), utc(2026, 1, 11, 5, 0)),
        ("0 6 * * *", "Europe/Berlin", utc(2026, 7, 10, 12), utc(2026, 7, 11, 4, 0)),
        # Spring forward (2026-03-29 02:00 CET -> 03:00 CEST): 06:00 local moves by an hour.
        ("0 6 * * *", "Europe/Berlin", utc(2026, 3, 28, 12), utc(2026, 3, 29, 4, 0)),
        # 02:30 does not exist that night: it fires at 03:30 CEST (01:30 UTC), not lost.
        ("30 2 * * *", "Europe/Berlin", utc(2026, 3, 28, 12), utc(2026, 3, 29, 1, 30)),
        ("30 2 * * *", "Europe/Berlin", utc(2026, 3, 29, 1, 30), utc(2026, 3, 30, 0, 30)),
        # Fall back (2026-10-25 03:00 CEST -> 02:00 CET): 06:00 local is 05:00 UTC again.
        ("0 6 * * *", "Europe/Berlin", utc(2026, 10, 24, 12), utc(2026, 10, 25, 5, 0)),
        # 02:30 happens twice that night; both passes fire (APScheduler 3 behaviour).
        ("30 2 * * *", "Europe/Berlin", utc(2026, 10, 24, 12), utc(2026, 10, 25, 0, 30)),
        ("30 2 * * *", "Europe/Berlin", utc(2026, 10, 25, 0, 30), utc(2026, 10, 25, 1, 30)),
        ("30 2 * * *", "Europe/Berlin", utc(2026, 10, 25, 1, 30), utc(2026, 10, 26, 1, 30)),
        # Weekdays only, in the operator's zone: Friday evening -> Monday 06:00 CET.
        ("0 6 * * 1-5", "Europe/Berlin", utc(2026, 1, 9, 18), utc(2026, 1, 12, 5, 0)),
        # Crontab weekday numbers: 0 and 7 are Sunday (2026-01-11 is a Sunday).
        ("0 6 * * 0", "UTC", utc(2026, 1, 9, 18), utc(2026, 1, 11, 6, 0)),
        ("0 6 * * 7", "UTC", utc(2026, 1, 9, 18), utc(2026, 1, 11, 6, 0)),
        ("0 6 * * sun", "UTC", utc(2026, 1, 9, 18), utc(2026, 1, 11, 6, 0)),
        ("0 6 * * 1", "UTC", utc(2026, 1, 9, 18), utc(2026, 1, 12, 6, 0)),
        # Day of month and day of week both restricted: either one matching runs (cron).
        ("0 6 1 * 1", "UTC", utc(2026, 1, 2, 12), utc(2026, 1, 5, 6, 0)),  # Monday the 5th
        ("0 6 1 * 1", "UTC", utc(2026, 1, 26, 12), utc(2026, 2, 1, 6, 0)),  # Sunday the 1st
        # ...unless one starts with "*": then both must match (Mondays on odd days).
        ("0 6 */2 * 1", "UTC", utc(2026, 1, 5, 6, 0), utc(2026, 1, 19, 6, 0)),
        # Every 15 minutes.
        ("*/15 * * * *", "UTC", utc(2026, 1, 10, 6, 7), utc(2026, 1, 10, 6, 15)),
        # A non-UTC `after` means the same instant.
        (
            "0 6 * * *",
            "UTC",
            datetime(2026, 1, 10, 6, 59, tzinfo=BERLIN),  # 05:59 UTC
            utc(2026, 1, 10, 6, 0),
        ),
    ],
)
def test_next_cron_fire(expr: str, tz: str, after: datetime, expected: datetime) -> None:
    fire = next_cron_fire(expr, tz, after)
    assert fire == expected
    assert fire.tzinfo is UTC


def test_hourly_schedule_keeps_one_hour_steps_in_real_time_across_both_dst_changes() -> None:
    for start in (utc(2026, 3, 28, 22), utc(2026, 10, 24, 22)):
        fires = [start]
        for _ in range(8):
            fires.append(next_cron_fire("0 * * * *", "Europe/Berlin", fires[-1]))
        assert [b - a for a, b in itertools.pairwise(fires)] == [H] * 8


@pytest.mark.parametrize(
    ("field", "names"),
    [
        ("*", "*"),
        ("1-5", "mon,tue,wed,thu,fri"),
        ("mon-fri", "mon,tue,wed,thu,fri"),
        ("0", "sun"),
        ("7", "sun"),
        ("5-7", "sun,fri,sat"),
        ("fri-sun", "sun,fri,sat"),
        ("*/2", "sun,tue,thu,sat"),
        ("1-5/2", "mon,wed,fri"),
        ("1/2", "sun,mon,wed,fri"),
        ("sun,3", "sun,wed"),
        ("0-6", "sun,mon,tue,wed,thu,fri,sat"),
    ],
)
def test_crontab_weekdays_become_unambiguous_names(field: str, names: str) -> None:
    assert crontab_weekdays(field) == names


@pytest.mark.parametrize(
    ("field", "message"),
    [
        ("8", "must be 0-7"),
        ("funday", "must be 0-7"),
        ("5-1", "runs backwards"),
        ("1-5/0", "step"),
    ],
)
def test_bad_weekday_fields_are_explained(field: str, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        crontab_weekdays(field)


def test_wrong_number_of_fields_is_refused() -> None:
    with pytest.raises(ValueError, match=r"expected 5 cron fields \(or 6 with seconds\), got 7"):
        next_cron_fire("0 0 6 * * * 2026", "UTC", utc(2026, 1, 1))


def test_six_fields_put_seconds_first() -> None:
    after = utc(2026, 1, 1, 6, 0, 1)
    assert next_cron_fire("*/5 * * * * *", "UTC", after) == utc(2026, 1, 1, 6, 0, 5)
    assert next_cron_fire("30 0 6 * * *", "UTC", utc(2026, 1, 1)) == utc(2026, 1, 1, 6, 0, 30)


@pytest.mark.parametrize("before_s", [1, 60, 17 * 60])
def test_a_time_skipped_by_the_spring_jump_is_found_from_just_before_its_shifted_fire(
    before_s: int,
) -> None:
    # 02:17 Berlin does not exist on 2030-03-31; it fires at 03:17 CEST (01:17 UTC).
    # Asked from after the jump but before that fire, APScheduler alone skipped to the
    # next day (hypothesis found it at 1 s before a fire at 02:00).
    shifted = utc(2030, 3, 31, 1, 17)
    assert next_cron_fire("17 2 * * *", "Europe/Berlin", utc(2030, 3, 30, 12)) == shifted
    assert next_cron_fire("17 2 * * *", "Europe/Berlin", shifted - before_s * H / 3600) == shifted


def test_naive_after_is_refused() -> None:
    with pytest.raises(ValueError, match="naive"):
        next_cron_fire("0 6 * * *", "UTC", datetime(2026, 1, 1))


@pytest.mark.parametrize(
    ("after", "expected"),
    [
        # 01:00 CET on the day clocks jump at 02:00: the next midnight is 00:00 CEST on
        # 1 April (22:00 UTC on 31 March). APScheduler 3.11 alone answers a day later.
        (datetime(2024, 3, 31, 0, 0, tzinfo=UTC), datetime(2024, 3, 31, 22, 0, tzinfo=UTC)),
        # Asked at the daemon's own fire (00:00 CET), as its job asks for the next one.
        (datetime(2024, 3, 30, 23, 0, tzinfo=UTC), datetime(2024, 3, 31, 22, 0, tzinfo=UTC)),
    ],
)
def test_midnight_after_the_spring_jump_is_not_skipped(after: datetime, expected: datetime) -> None:
    """Found by the property below: a daily run lost on the day after DST begins."""
    assert next_cron_fire("0 0 * * *", "Europe/Berlin", after) == expected
    trigger = cron_trigger("0 0 * * *", "Europe/Berlin")
    # The daemon's job: the next fire counted from the previous one.
    previous = after.astimezone(BERLIN)
    job_next = trigger.get_next_fire_time(previous, previous + timedelta(seconds=1))
    assert job_next is not None and job_next.astimezone(UTC) == expected


@given(
    after=st.datetimes(
        min_value=datetime(2020, 1, 1), max_value=datetime(2035, 12, 31), timezones=st.just(UTC)
    ),
    hour=st.integers(0, 23),
    minute=st.integers(0, 59),
)
def test_daily_fire_is_the_next_matching_wall_time(after: datetime, hour: int, minute: int) -> None:
    fire = next_cron_fire(f"{minute} {hour} * * *", "Europe/Berlin", after)
    assert after < fire <= after + timedelta(hours=25)
    local = fire.astimezone(BERLIN)
    if local.utcoffset() == (fire - timedelta(hours=3)).astimezone(BERLIN).utcoffset():
        # Away from a DST jump the fire lands exactly on the configured wall time.
        assert (local.hour, local.minute) == (hour, minute)
    # Asking again from just before the fire finds the same fire: nothing was skipped.
    assert next_cron_fire(f"{minute} {hour} * * *", "Europe/Berlin", fire - H / 3600) == fire


# ------------------------------------------------------------ quarantine_delay


@pytest.mark.parametrize(
    ("failures", "threshold", "expected"),
    [
        (0, 5, None),
        (4, 5, None),
        (5, 5, 1 * H),
        (6, 5, 2 * H),
        (7, 5, 4 * H),
        (8, 5, 8 * H),
        (9, 5, 16 * H),
        (10, 5, 24 * H),  # 32 h would exceed once a day
        (50, 5, 24 * H),
        (10**6, 5, 24 * H),
        (1, 1, 1 * H),
        (3, 1, 4 * H),
    ],
)
def test_quarantine_delay(failures: int, threshold: int, expected: timedelta | None) -> None:
    assert quarantine_delay(failures, threshold) == expected


def test_quarantine_threshold_must_be_positive() -> None:
    with pytest.raises(ValueError, match="at least 1"):
        quarantine_delay(3, 0)


@given(failures=st.integers(0, 10_000), threshold=st.integers(1, 20))
def test_quarantine_delay_grows_and_is_capped_at_a_day(failures: int, threshold: int) -> None:
    delay = quarantine_delay(failures, threshold)
    following = quarantine_delay(failures + 1, threshold)
    if delay is None:
        assert failures < threshold
        return
    assert H <= delay <= QUARANTINE_MAX_PAUSE
    assert following is not None and following >= delay


# ------------------------------------------------------------ Quarantine.skips

LAST = utc(2026, 5, 4, 6, 0)


@pytest.mark.parametrize(
    ("now", "failures", "skip"),
    [
        (LAST + timedelta(minutes=5), 4, False),  # below the threshold
        (LAST + timedelta(minutes=5), 5, True),  # 1 h pause
        (LAST + 1 * H, 5, False),  # the pause is over exactly then
        (LAST + 90 * timedelta(minutes=1), 6, True),  # 2 h pause
        (LAST + 2 * H, 6, False),
        (LAST + 23 * H, 20, True),  # capped at a day...
        (LAST + 24 * H, 20, False),  # ...so it still runs once a day
    ],
)
def test_a_quarantine_skips_runs_inside_its_pause(now: datetime, failures: int, skip: bool) -> None:
    quarantine = quarantine_from_streak(streak(failures), 5)
    assert (quarantine is not None and quarantine.skips(now)) is skip


# ----------------------------------------------------- quarantine_from_streak


def streak(count: int, last: datetime = LAST) -> list[FailedRun]:
    """`count` failures one hour apart, newest first, reasons numbered oldest = 1."""
    return [FailedRun(at=last - i * H, reason=f"DX unreachable #{count - i}") for i in range(count)]


def test_no_quarantine_below_threshold() -> None:
    assert quarantine_from_streak(streak(4), 5) is None
    assert quarantine_from_streak([], 5) is None


def test_quarantine_starts_at_the_run_that_reached_the_threshold() -> None:
    q = quarantine_from_streak(streak(7), 5)
    assert q is not None
    assert q.failures == 7
    # Oldest failure at LAST-6h; the fifth one ended at LAST-2h.
    assert q.since == LAST - 2 * H
    assert q.last_failure_at == LAST
    assert q.next_attempt_at == LAST + 4 * H
    assert q.reasons == tuple(f"DX unreachable #{n}" for n in (7, 6, 5, 4, 3))
    assert q.skips(LAST + 3 * H) and not q.skips(LAST + 4 * H)


def test_missing_reason_is_named() -> None:
    q = quarantine_from_streak([FailedRun(LAST, None)], 1)
    assert q is not None and q.reasons == ("no reason recorded",)


def test_missed_fire_only_within_a_day_and_only_after_a_run() -> None:
    from hrsync.daemon.cron import missed_fire

    now = utc(2026, 5, 10, 9, 0)
    assert missed_fire("0 6 * * *", "UTC", None, now) is None
    assert missed_fire("0 6 * * *", "UTC", utc(2026, 5, 10, 6, 0, 1), now) is None
    assert missed_fire("0 6 * * *", "UTC", utc(2026, 5, 9, 6, 0), now) == utc(2026, 5, 10, 6)
    # Down for a week: one catch-up, for the latest day only.
    assert missed_fire("0 6 * * *", "UTC", utc(2026, 5, 1, 6, 0), now) == utc(2026, 5, 10, 6)
