"""When the daemon runs: cron maths and the quarantine back-off (pure, clock passed in).

Quarantine: after `threshold` failed runs in a row the daemon stops hammering a
broken setup. Each further failure doubles the pause before the next attempt
(1 h, 2 h, 4 h, …) up to once a day; scheduled runs that fall inside the pause
are skipped. Any run that does not fail ends the streak and so the quarantine.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta, tzinfo
from zoneinfo import ZoneInfo

from apscheduler.triggers.base import BaseTrigger
from apscheduler.triggers.combining import OrTrigger
from apscheduler.triggers.cron import CronTrigger

QUARANTINE_FIRST_PAUSE = timedelta(hours=1)
QUARANTINE_MAX_PAUSE = timedelta(hours=24)
# Reasons quoted in the `sync.quarantined` event: enough to see a pattern, short enough to read.
QUARANTINE_REASONS_SHOWN = 5


# Crontab numbers days of the week from Sunday (0, and 7 again); APScheduler 3 from
# Monday (its own docs call this a historical mistake). Names mean the same in both.
_CRONTAB_WEEKDAYS = ("sun", "mon", "tue", "wed", "thu", "fri", "sat")


def cron_trigger(expr: str, timezone: str | tzinfo) -> BaseTrigger:
    """The APScheduler trigger that fires as crontab(5) would for `expr` in `timezone`.

    `CronTrigger.from_crontab` differs from cron in two ways an operator would not
    expect, both corrected here: day-of-week numbers (cron's `1-5` is Monday to
    Friday; APScheduler 3 would read Tuesday to Saturday), and a restricted day of
    month together with a restricted day of week (cron runs when either matches,
    APScheduler only when both do).

    Six fields put a seconds field first (`*/5 * * * * *`): crontab cannot run more
    often than once a minute, which end-to-end tests and demos of the daemon need.
    """
    fields = expr.split()
    if len(fields) not in (5, 6):
        raise ValueError(f"expected 5 cron fields (or 6 with seconds), got {len(fields)}")
    second = fields.pop(0) if len(fields) == 6 else "0"
    minute, hour, day, month, weekday = fields
    zone = ZoneInfo(timezone) if isinstance(timezone, str) else timezone
    weekdays = crontab_weekdays(weekday)

    def make(day_field: str, weekday_field: str) -> CronTrigger:
        return _AcrossTheJump(
            second=second,
            minute=minute,
            hour=hour,
            day=day_field,
            month=month,
            day_of_week=weekday_field,
            timezone=zone,
        )

    # Vixie cron: when neither field starts with "*", a day matching either one runs.
    if not day.startswith("*") and not weekday.startswith("*"):
        return OrTrigger([make(day, "*"), make("*", weekdays)])
    return make(day, weekdays)


class _AcrossTheJump(CronTrigger):  # type: ignore[misc]  # APScheduler 3 ships no types
    """APScheduler 3.11's CronTrigger, with a slip across the spring jump mended: asked
    from before the jump for a fire after it, it can answer a day late (a 00:00
    Europe/Berlin schedule asked at 00:00 or 01:00 on the day clocks go forward answers
    00:00 on the day after next, so the daemon's job lost a day's run).

    When the UTC offset differs between `now` and the fire found, the trigger is asked
    again from each hour in between (from a point after the jump it answers right), and
    the earliest fire wins. Without an offset change nothing more is asked.
    """

    def get_next_fire_time(
        self, previous_fire_time: datetime | None, now: datetime
    ) -> datetime | None:
        fire: datetime | None = super().get_next_fire_time(previous_fire_time, now)
        zone = self.timezone
        if fire is None or now.astimezone(zone).utcoffset() == fire.astimezone(zone).utcoffset():
            return fire
        # Asked again as from `probe` alone: with a previous fire APScheduler counts from it.
        start = now if previous_fire_time is None else min(now, previous_fire_time)
        probe = start + _PROBE_STEP
        while probe < fire:
            again: datetime | None = super().get_next_fire_time(None, probe)
            if again is not None and start < again < fire:
                fire = again
            probe += _PROBE_STEP
        return fire


_PROBE_STEP = timedelta(hours=1)


def crontab_weekdays(field: str) -> str:
    """A crontab day-of-week field as APScheduler weekday names (`1-5` -> `mon,...,fri`)."""
    if field == "*":
        return "*"
    days: set[int] = set()
    for item in field.split(","):
        base, _, step_text = item.partition("/")
        step = _weekday_step(step_text, field)
        if base == "*":
            first, last = 0, 6
        elif "-" in base:
            start, _, end = base.partition("-")
            first, last = _weekday_number(start, field), _weekday_number(end, field)
            if last == 0 and end.strip() != "0" and first > 0:
                last = 7  # `5-7` or `fri-sun`: Sunday at the end of the range
            if first > last:
                raise ValueError(f"day-of-week range {base!r} runs backwards in {field!r}")
        else:
            first = last = _weekday_number(base, field)
            if step_text:
                last = 7  # `1/2`: from Monday to the end of the week (as cronie reads it)
        days.update(n % 7 for n in range(first, last + 1, step))
    return ",".join(_CRONTAB_WEEKDAYS[n] for n in sorted(days))


def _weekday_number(text: str, field: str) -> int:
    token = text.strip().lower()
    if token.isdigit() and 0 <= int(token) <= 7:
        return int(token)
    if token in _CRONTAB_WEEKDAYS:
        return _CRONTAB_WEEKDAYS.index(token)
    raise ValueError(
        f"day of week {text!r} in {field!r} must be 0-7 (0 and 7 are Sunday) or sun..sat"
    )


def _weekday_step(text: str, field: str) -> int:
    if not text:
        return 1
    if text.isdigit() and int(text) >= 1:
        return int(text)
    raise ValueError(f"day-of-week step {text!r} in {field!r} must be a whole number >= 1")


def next_cron_fire(expr: str, timezone: str | tzinfo, after: datetime) -> datetime:
    """The first time strictly after `after` that the schedule fires, in UTC.

    The cron fields are read as wall-clock time in `timezone`. Around DST changes
    this follows APScheduler 3: a time inside the skipped spring hour fires at the
    same offset after the jump (02:30 becomes 03:30 local), so a daily run is never
    lost; a fixed time inside the repeated autumn hour fires in both passes (the
    second run finds DX in sync and submits nothing).
    """
    if after.tzinfo is None:
        raise ValueError(f"naive datetime {after!r}: pass a timezone-aware time")
    trigger = cron_trigger(expr, timezone)
    # APScheduler returns the first fire at or after `now`, rounded up to the second;
    # nudging by a microsecond makes it strictly after.
    fire = trigger.get_next_fire_time(None, after + timedelta(microseconds=1))
    if fire is None:
        raise ValueError(f"cron expression {expr!r} never fires after {after.isoformat()}")
    # APScheduler shifts a time skipped by the spring jump only when asked from before
    # the jump; asked from inside the shift it skips to the next day. Asking again from
    # before any jump (none is longer than an hour) finds the shifted fire, as the
    # daemon's job, which counts from its previous fire, does.
    early = trigger.get_next_fire_time(None, after - _BEFORE_A_JUMP)
    if early is not None and after < early < fire:
        fire = early
    result: datetime = fire.astimezone(UTC)
    return result


_BEFORE_A_JUMP = timedelta(hours=2)


CATCH_UP_WINDOW = timedelta(hours=24)


def missed_fire(
    expr: str, timezone: str | tzinfo, last_run: datetime | None, now: datetime
) -> datetime | None:
    """The scheduled time missed while the daemon was down, if any.

    A fire after the last run and at or before `now` was missed (the container was
    restarted or stopped across it). Only the last day counts: a daemon down for a
    week runs once at start, not for every missed day. With no run ever, nothing was
    missed: a fresh install waits for its schedule (or `--now`).
    """
    if last_run is None:
        return None
    fire = next_cron_fire(expr, timezone, max(last_run, now - CATCH_UP_WINDOW))
    return fire if fire <= now else None


def quarantine_delay(
    failures: int,
    threshold: int,
    *,
    first: timedelta = QUARANTINE_FIRST_PAUSE,
    cap: timedelta = QUARANTINE_MAX_PAUSE,
) -> timedelta | None:
    """The pause after the latest failure, or None when not quarantined.

    `failures` is the length of the unbroken streak of failed runs. Reaching the
    threshold pauses for `first`; each failure beyond it doubles the pause, up to `cap`.
    """
    if threshold < 1:
        raise ValueError(f"quarantine threshold must be at least 1, got {threshold}")
    if failures < threshold:
        return None
    delay = first
    # Doubling step by step stops at the cap after a few rounds, however long the streak
    # (a closed form would overflow timedelta for long streaks).
    for _ in range(failures - threshold):
        if delay >= cap:
            break
        delay *= 2
    return min(delay, cap)


@dataclass(frozen=True, slots=True)
class FailedRun:
    """One failed run of the streak: when it ended and why."""

    at: datetime
    reason: str | None


@dataclass(frozen=True, slots=True)
class Quarantine:
    failures: int
    since: datetime  # when the run that reached the threshold ended
    last_failure_at: datetime
    next_attempt_at: datetime
    reasons: tuple[str, ...]  # newest first, at most QUARANTINE_REASONS_SHOWN

    def skips(self, now: datetime) -> bool:
        return now < self.next_attempt_at


def quarantine_from_streak(streak: Sequence[FailedRun], threshold: int) -> Quarantine | None:
    """The quarantine implied by the streak of failed runs (newest first), if any."""
    delay = quarantine_delay(len(streak), threshold)
    if delay is None:
        return None
    newest = streak[0]
    # The streak is newest first, so the run that reached the threshold is `threshold`
    # places from the oldest end.
    tripped = streak[len(streak) - threshold]
    reasons = tuple(run.reason or "no reason recorded" for run in streak[:QUARANTINE_REASONS_SHOWN])
    return Quarantine(
        failures=len(streak),
        since=tripped.at,
        last_failure_at=newest.at,
        next_attempt_at=newest.at + delay,
        reasons=reasons,
    )
