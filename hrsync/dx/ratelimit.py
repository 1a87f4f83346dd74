"""A client-side sliding-window limiter that keeps us under DX's request rate.

DX counts requests per account over a sliding minute and answers 429 above the
limit. Staying under it ourselves is cheaper than being told to back off.
"""

from __future__ import annotations

import threading
import time
from collections import deque
from collections.abc import Callable

_MIN_WAIT_S = 0.001


class SlidingWindowLimiter:
    """At most ``max_requests`` acquisitions in any ``window_s`` seconds.

    ``clock`` returns seconds on a steady scale (``time.monotonic`` by default);
    ``sleep`` waits. Both are injectable so tests run on a fake clock.
    """

    def __init__(
        self,
        max_requests: int,
        window_s: float = 60.0,
        *,
        clock: Callable[[], float] = time.monotonic,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        if max_requests < 1:
            raise ValueError(f"max_requests must be at least 1, got {max_requests}")
        if window_s <= 0:
            raise ValueError(f"window_s must be positive, got {window_s}")
        self.max_requests = max_requests
        self.window_s = window_s
        self._clock = clock
        self._sleep = sleep
        self._sent: deque[float] = deque()
        self._lock = threading.Lock()

    def try_acquire(self) -> float:
        """Take a slot if one is free and return 0; else return the (positive) seconds to wait."""
        with self._lock:
            now = self._clock()
            horizon = now - self.window_s
            while self._sent and self._sent[0] <= horizon:
                self._sent.popleft()
            if len(self._sent) < self.max_requests:
                self._sent.append(now)
                return 0.0
            # Never report 0 for a refused slot: float rounding at the window's edge
            # would otherwise read as "granted".
            return max(self._sent[0] + self.window_s - now, _MIN_WAIT_S)

    def acquire(self) -> float:
        """Block until a slot is free, take it, and return the seconds waited."""
        waited = 0.0
        while True:
            wait = self.try_acquire()
            if wait <= 0:
                return waited
            # Sleep outside the lock so other threads can still see the window.
            self._sleep(wait)
            waited += wait
