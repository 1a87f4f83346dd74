"""`source.deadline_s`: one read of an HTTP source, every page, retry and token included,
ends within it.

`source.timeout_s` bounds each step (connecting, each read), so a server sending a byte
now and then keeps every step short and the read going for ever. The deadline is checked
before each request (a page, a retry, a redirect, a token) and as each chunk of an answer
arrives, through hooks on the session's HTTP client: past it, the read fails at once, so
it overshoots by at most one `source.timeout_s` step. A wait before a retry that would
end past it is not waited.

A response's head arrives before any hook sees the response: a server sending its status
line and headers a byte at a time would hold the read for as long as it likes. So a
watchdog also closes the connections of the session's own transport when the deadline
passes; the read blocked on the head then fails at its next byte or timeout.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator

import httpx

from hrsync.sources.base import SourceUnavailable


class DeadlinePassed(SourceUnavailable):
    """The read took longer than `source.deadline_s`: a failed run, tried again later."""


class ReadDeadline:
    """The deadline of one read, from its start (`clock`: monotonic seconds)."""

    def __init__(self, shown_url: str, limit_s: float, clock: Callable[[], float]) -> None:
        self.shown_url = shown_url
        self.limit_s = limit_s
        self._clock = clock
        self._ends_at = clock() + limit_s
        self._watchdog: threading.Timer | None = None
        self._guarded: httpx.BaseTransport | None = None
        self._lock = threading.Lock()

    @property
    def expired(self) -> bool:
        return self._clock() >= self._ends_at

    def check(self) -> None:
        """Raise DeadlinePassed once the deadline has passed."""
        if self.expired:
            raise self.passed()

    def allows_wait(self, seconds: float) -> bool:
        return self._clock() + seconds < self._ends_at

    def passed(self, detail: str = "") -> DeadlinePassed:
        why = f" ({detail})" if detail else ""
        return DeadlinePassed(
            f"{self.shown_url} was not read within {self.limit_s:g} s, the limit "
            f"source.deadline_s sets for every page, retry and token of one read{why}: the "
            f"server answers too slowly; the next run tries again"
        )

    # ------------------------------------------------- the watchdog

    def guard(self, transport: httpx.BaseTransport) -> None:
        """Close `transport`'s connections when the deadline passes (a head sent slowly)."""
        self._guarded = transport
        self._arm()

    def _arm(self) -> None:
        with self._lock:
            if self._guarded is None:
                return
            # The clock may be a test's: the watchdog asks it, and looks again until then.
            wait = max(self._ends_at - self._clock(), 0.05)
            self._watchdog = threading.Timer(wait, self._bark)
            self._watchdog.daemon = True
            self._watchdog.start()

    def _bark(self) -> None:
        if not self.expired:
            self._arm()
            return
        with self._lock:
            transport, self._guarded = self._guarded, None
        if transport is not None:
            transport.close()

    def stand_down(self) -> None:
        with self._lock:
            self._guarded = None
            if self._watchdog is not None:
                self._watchdog.cancel()

    # ------------------------------------------------- the client's hooks

    def install(self, client: httpx.Client) -> None:
        client.event_hooks["request"].append(self._before_request)
        client.event_hooks["response"].append(self._watch_body)

    def uninstall(self, client: httpx.Client) -> None:
        for kind, hook in (("request", self._before_request), ("response", self._watch_body)):
            hooks = client.event_hooks[kind]
            if hook in hooks:
                hooks.remove(hook)

    def _before_request(self, _request: httpx.Request) -> None:
        self.check()

    def _watch_body(self, response: httpx.Response) -> None:
        self.check()  # the head may have come slowly too
        if isinstance(response.stream, httpx.SyncByteStream):
            response.stream = _Watched(response.stream, self.check)


class _Watched(httpx.SyncByteStream):
    """An answer's body, the deadline checked as each chunk arrives."""

    def __init__(self, stream: httpx.SyncByteStream, check: Callable[[], None]) -> None:
        self._stream = stream
        self._check = check

    def __iter__(self) -> Iterator[bytes]:
        for chunk in self._stream:
            self._check()
            yield chunk

    def close(self) -> None:
        self._stream.close()
