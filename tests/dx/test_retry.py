"""The retry delays: full-jitter backoff, Retry-After, attempt and deadline bounds."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from hypothesis import given
from hypothesis import strategies as st

from hrsync.dx.retry import (
    RetryPolicy,
    backoff_ceiling,
    is_retryable_status,
    next_delay,
    parse_retry_after,
)


def fixed(draw: float) -> RetryPolicy:
    return RetryPolicy(
        max_attempts=6, base_delay_s=0.5, max_delay_s=30.0, deadline_s=120.0, jitter=lambda: draw
    )


@pytest.mark.parametrize(
    ("attempt", "ceiling"),
    [(1, 0.5), (2, 1.0), (3, 2.0), (4, 4.0), (5, 8.0), (7, 30.0), (500, 30.0)],
)
def test_backoff_ceiling_doubles_up_to_max_delay(attempt: int, ceiling: float) -> None:
    assert backoff_ceiling(fixed(0.5), attempt) == ceiling


@pytest.mark.parametrize(
    ("draw", "attempt", "expected"),
    [(0.0, 1, 0.0), (0.5, 1, 0.25), (0.999, 3, 1.998), (0.5, 5, 4.0)],
)
def test_delay_is_jitter_times_ceiling(draw: float, attempt: int, expected: float) -> None:
    assert next_delay(fixed(draw), attempt, elapsed_s=0.0) == pytest.approx(expected)


def test_no_delay_once_attempts_are_used_up() -> None:
    policy = fixed(0.5)
    assert next_delay(policy, 5, elapsed_s=0.0) is not None
    assert next_delay(policy, 6, elapsed_s=0.0) is None


def test_no_delay_past_the_deadline() -> None:
    assert next_delay(fixed(0.5), 1, elapsed_s=120.0) is None
    assert next_delay(fixed(0.5), 1, elapsed_s=500.0) is None


def test_retry_after_replaces_the_backoff_draw() -> None:
    assert next_delay(fixed(0.0), 1, elapsed_s=0.0, retry_after_s=7.0) == 7.0
    # The server's wait is honoured even above max_delay_s ...
    assert next_delay(fixed(0.0), 1, elapsed_s=0.0, retry_after_s=45.0) == 45.0


def test_retry_after_is_capped_by_what_is_left_of_the_deadline() -> None:
    assert next_delay(fixed(0.0), 1, elapsed_s=100.0, retry_after_s=60.0) == pytest.approx(20.0)


def test_single_attempt_policy_never_retries() -> None:
    assert next_delay(RetryPolicy(max_attempts=1), 1, elapsed_s=0.0) is None


def test_policy_rejects_nonsense() -> None:
    with pytest.raises(ValueError, match="max_attempts"):
        RetryPolicy(max_attempts=0)
    with pytest.raises(ValueError, match="negative"):
        RetryPolicy(deadline_s=-1)


@given(
    draw=st.floats(min_value=0.0, max_value=1.0, exclude_max=True),
    attempt=st.integers(min_value=1, max_value=10_000),
    elapsed=st.floats(min_value=0.0, max_value=1_000.0),
    retry_after=st.none() | st.floats(min_value=0.0, max_value=10_000.0),
    max_attempts=st.integers(min_value=1, max_value=20),
    deadline=st.floats(min_value=0.0, max_value=600.0),
)
def test_delay_stays_within_bounds(
    draw: float,
    attempt: int,
    elapsed: float,
    retry_after: float | None,
    max_attempts: int,
    deadline: float,
) -> None:
    policy = RetryPolicy(
        max_attempts=max_attempts,
        base_delay_s=0.5,
        max_delay_s=30.0,
        deadline_s=deadline,
        jitter=lambda: draw,
    )
    delay = next_delay(policy, attempt, elapsed_s=elapsed, retry_after_s=retry_after)
    if attempt >= max_attempts or elapsed >= deadline:
        assert delay is None
        return
    assert delay is not None
    assert 0.0 <= delay <= deadline - elapsed + 1e-9
    if retry_after is None:
        assert delay <= 30.0
    else:
        assert delay == pytest.approx(min(retry_after, deadline - elapsed))


@given(st.lists(st.floats(min_value=0.0, max_value=1.0, exclude_max=True), min_size=20))
def test_total_wait_never_exceeds_the_deadline(draws: list[float]) -> None:
    it = iter(draws)
    policy = RetryPolicy(max_attempts=20, deadline_s=10.0, jitter=lambda: next(it))
    elapsed, attempt = 0.0, 1
    while (delay := next_delay(policy, attempt, elapsed_s=elapsed)) is not None:
        elapsed += delay
        attempt += 1
    assert elapsed <= 10.0 + 1e-9
    assert attempt <= 20


NOW = datetime(2026, 11, 22, 12, 0, 0, tzinfo=UTC)


@pytest.mark.parametrize(
    ("header", "expected"),
    [
        (None, None),
        ("", None),
        ("   ", None),
        ("3", 3.0),
        (" 2.5 ", 2.5),
        ("0", 0.0),
        ("-4", 0.0),
        ("nan", None),
        ("soon", None),
        ("Sun, 22 Nov 2026 12:00:30 GMT", 30.0),
        ("Sun, 22 Nov 2026 11:59:00 GMT", 0.0),
    ],
)
def test_parse_retry_after(header: str | None, expected: float | None) -> None:
    assert parse_retry_after(header, now=NOW) == expected


def test_parse_retry_after_http_date_uses_the_given_clock() -> None:
    later = NOW + timedelta(seconds=10)
    assert parse_retry_after("Sun, 22 Nov 2026 12:00:30 GMT", now=later) == 20.0


@pytest.mark.parametrize(
    ("status", "retryable"),
    [
        *[(status, False) for status in (200, 201, 400, 401, 403, 404, 409, 413)],
        *[(status, True) for status in (429, 500, 502, 503, 504, 599)],
    ],
)
def test_retryable_statuses(status: int, retryable: bool) -> None:
    assert is_retryable_status(status) is retryable
