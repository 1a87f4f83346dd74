"""The sliding-window limiter, on a fake clock."""

from __future__ import annotations

import threading

import pytest
from hypothesis import given
from hypothesis import strategies as st

from hrsync.dx.ratelimit import SlidingWindowLimiter


class FakeTime:
    def __init__(self) -> None:
        self.now = 1_000.0
        self.slept: list[float] = []

    def clock(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        self.slept.append(seconds)
        self.now += seconds


def test_under_the_limit_nothing_waits() -> None:
    t = FakeTime()
    limiter = SlidingWindowLimiter(3, 60.0, clock=t.clock, sleep=t.sleep)
    assert [limiter.acquire() for _ in range(3)] == [0.0, 0.0, 0.0]
    assert t.slept == []
    # The window holds all three: a fourth would wait the whole minute.
    assert limiter.try_acquire() == pytest.approx(60.0)


def test_the_next_request_waits_until_the_oldest_leaves_the_window() -> None:
    t = FakeTime()
    limiter = SlidingWindowLimiter(2, 60.0, clock=t.clock, sleep=t.sleep)
    limiter.acquire()
    t.now += 10
    limiter.acquire()
    t.now += 5
    assert limiter.acquire() == pytest.approx(45.0)
    assert t.slept == [pytest.approx(45.0)]
    # The second request (at +10) is still inside the window, so the next waits for it.
    assert limiter.try_acquire() == pytest.approx(10.0)


def test_window_slides_rather_than_resetting() -> None:
    t = FakeTime()
    limiter = SlidingWindowLimiter(2, 60.0, clock=t.clock, sleep=t.sleep)
    limiter.acquire()
    t.now += 59
    limiter.acquire()
    t.now += 2  # the first left the window; the second has not
    assert limiter.try_acquire() == 0.0
    assert limiter.try_acquire() == pytest.approx(58.0)  # 1059 + 60 - 1061


def test_rejects_nonsense_limits() -> None:
    with pytest.raises(ValueError, match="max_requests"):
        SlidingWindowLimiter(0)
    with pytest.raises(ValueError, match="window_s"):
        SlidingWindowLimiter(5, 0)


@given(
    limit=st.integers(min_value=1, max_value=20),
    gaps=st.lists(st.floats(min_value=0.0, max_value=30.0), min_size=1, max_size=120),
)
def test_no_window_ever_holds_more_than_the_limit(limit: int, gaps: list[float]) -> None:
    t = FakeTime()
    limiter = SlidingWindowLimiter(limit, 60.0, clock=t.clock, sleep=t.sleep)
    granted: list[float] = []
    for gap in gaps:
        t.now += gap
        limiter.acquire()
        granted.append(t.now)
    for i, start in enumerate(granted):
        # Half-open window: a grant exactly 60 s later is outside (allow float rounding).
        in_window = [g for g in granted[i:] if g < start + 60.0 - 1e-6]
        assert len(in_window) <= limit


def test_threads_share_one_window() -> None:
    lock = threading.Lock()
    t = FakeTime()

    def sleep(seconds: float) -> None:
        with lock:
            t.now += seconds

    limiter = SlidingWindowLimiter(5, 60.0, clock=t.clock, sleep=sleep)
    results: list[float] = []

    def worker() -> None:
        wait = limiter.try_acquire()
        with lock:
            results.append(wait)

    threads = [threading.Thread(target=worker) for _ in range(20)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert sum(1 for wait in results if wait == 0.0) == 5
    assert all(wait == pytest.approx(60.0) for wait in results if wait != 0.0)
