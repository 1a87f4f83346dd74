"""When to retry a DX call, and how long to wait first (pure functions).

Backoff is exponential with "full jitter": the wait before attempt n+1 is a
uniform draw from [0, min(max_delay, base * 2**(n-1))), which spreads clients
out after a shared failure. A server's ``Retry-After`` replaces the draw. Every
wait is capped by what is left of the total deadline, and there is no wait at
all once the attempts or the deadline are used up.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from email.utils import parsedate_to_datetime

from hrsync.clock import utcnow

# Past this the doubling only overflows; max_delay_s caps it long before.
_MAX_EXPONENT = 60


@dataclass(frozen=True)
class RetryPolicy:
    max_attempts: int = 6
    base_delay_s: float = 0.5
    max_delay_s: float = 30.0
    deadline_s: float = 120.0
    # Returns a float in [0, 1); injectable so tests get predictable delays.
    jitter: Callable[[], float] = field(default=random.random, compare=False)

    def __post_init__(self) -> None:
        if self.max_attempts < 1:
            raise ValueError(f"max_attempts must be at least 1, got {self.max_attempts}")
        if self.base_delay_s < 0 or self.max_delay_s < 0 or self.deadline_s < 0:
            raise ValueError("base_delay_s, max_delay_s and deadline_s must not be negative")


def backoff_ceiling(policy: RetryPolicy, attempt: int) -> float:
    """The largest jittered wait after the ``attempt``-th failed attempt (1-based)."""
    exponent = min(max(attempt - 1, 0), _MAX_EXPONENT)
    return float(min(policy.max_delay_s, policy.base_delay_s * 2.0**exponent))


def next_delay(
    policy: RetryPolicy,
    attempt: int,
    *,
    elapsed_s: float,
    retry_after_s: float | None = None,
) -> float | None:
    """Seconds to wait before the next attempt, or None to give up.

    ``attempt`` is how many attempts have been made so far (1 after the first
    failure); ``elapsed_s`` is the time since the first attempt started.
    """
    if attempt >= policy.max_attempts:
        return None
    remaining = policy.deadline_s - elapsed_s
    if remaining <= 0:
        return None
    if retry_after_s is not None:
        delay = max(0.0, retry_after_s)
    else:
        draw = min(max(policy.jitter(), 0.0), 1.0)
        delay = draw * backoff_ceiling(policy, attempt)
    return min(delay, remaining)


def parse_retry_after(value: str | None, *, now: datetime | None = None) -> float | None:
    """Seconds named by a ``Retry-After`` header (delta seconds or an HTTP date).

    Returns None when the header is absent or unreadable, so the caller falls
    back to its own backoff rather than trusting garbage.
    """
    if value is None:
        return None
    text = value.strip()
    if not text:
        return None
    try:
        seconds = float(text)
    except ValueError:
        pass
    else:
        if seconds != seconds or seconds in (float("inf"), float("-inf")):
            return None
        return max(0.0, seconds)
    try:
        when = parsedate_to_datetime(text)
    except (TypeError, ValueError, IndexError):
        return None
    if when.tzinfo is None:
        when = when.replace(tzinfo=UTC)
    reference = now if now is not None else utcnow()
    return max(0.0, (when - reference).total_seconds())


def is_retryable_status(status: int) -> bool:
    """HTTP statuses that mean "try again later" rather than "this request is wrong"."""
    return status == 429 or 500 <= status <= 599
