"""The daemon's HTTP endpoints (`daemon.listen`): /healthz, /readyz and /metrics.

They only read what the daemon already knows (and one cheap store query for /readyz),
so a slow scrape never touches a run. The connections are the listener's
(`hrsync.monitor.listener`: bounded, never starved); here is what each request gets:
the standard library's HTTP parsing over the request head the listener read, GET and
HEAD, and a `Server` header that names hrsync and nothing of its Python.
"""

from __future__ import annotations

import dataclasses
import io
import threading
import time
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler

from hrsync.core.listen import parse_listen
from hrsync.logs import get_logger, scrub
from hrsync.monitor.listener import DEFAULT_LIMITS, Limits, Listener
from hrsync.monitor.metrics import CONTENT_TYPE

log = get_logger(__name__)

# (healthy or ready, one line saying why)
Probe = Callable[[], tuple[bool, str]]
# The path -> (status, body, content type).
Route = Callable[[str], tuple[int, bytes, str]]

TEXT = "text/plain; charset=utf-8"
SERVER = "hrsync"


class Endpoints:
    """Serves the three endpoints on `listen` ("HOST:PORT", "[::1]:PORT") until `stop`."""

    def __init__(
        self,
        listen: str,
        *,
        health: Probe,
        ready: Probe,
        metrics: Callable[[], bytes],
        limits: Limits = DEFAULT_LIMITS,
    ) -> None:
        address = parse_listen(listen)
        probes = {"/healthz": health, "/readyz": ready}
        errors = _Errors()

        def route(path: str) -> tuple[int, bytes, str]:
            try:
                if path == "/metrics":
                    return 200, metrics(), CONTENT_TYPE
                if path in probes:
                    ok, why = probes[path]()
                    return (200 if ok else 503), (why + "\n").encode(), TEXT
                return 404, b"not found: try /healthz, /readyz or /metrics\n", TEXT
            except Exception as exc:  # a probe that breaks says so, it never hangs
                error = scrub(f"{type(exc).__name__}: {exc}")
                errors.seen(path, error)
                return 503, f"error: {error}\n".encode(), TEXT

        try:
            self.listener = Listener(
                address,
                lambda head: _Exchange.answer(head, route),
                limits=limits,
                fast_paths=("/healthz",),
            )
        except OSError as exc:
            raise OSError(
                exc.errno,
                f"daemon.listen {listen!r}: cannot listen there: {exc.strerror or exc}",
            ) from None
        self.address = str(dataclasses.replace(address, port=self.listener.port))

    def start(self) -> None:
        self.listener.start()
        log.info("daemon.http_listening", listen=self.address)

    def stop(self) -> None:
        self.listener.stop()


class _Exchange(BaseHTTPRequestHandler):
    """One request, parsed and answered in memory: the listener did the socket work."""

    server_version = SERVER

    def __init__(self, head: bytes, route: Route) -> None:  # no socket: not super's
        self.rfile = io.BytesIO(head)
        self.written = io.BytesIO()
        self.wfile = self.written
        self.client_address = ("", 0)
        self._route = route

    @classmethod
    def answer(cls, head: bytes, route: Route) -> bytes:
        exchange = cls(head, route)
        exchange.handle_one_request()
        return exchange.written.getvalue()

    def version_string(self) -> str:
        return SERVER  # not "BaseHTTP/0.6 Python/3.x.y"

    def parse_request(self) -> bool:
        if not super().parse_request():
            return False
        if self.request_version == "HTTP/0.9":
            # No version on the request line: the answer would be the body alone, without
            # a status line or headers. Refused, in HTTP/1.0's words.
            self.request_version = "HTTP/1.0"
            self.send_error(400, "HTTP/0.9 is not served: send HTTP/1.0 or later")
            return False
        return True

    def do_GET(self) -> None:
        self._serve(body=True)

    def do_HEAD(self) -> None:
        self._serve(body=False)

    def _serve(self, *, body: bool) -> None:
        # The path as the request line wrote it: the standard library makes `//metrics`
        # `/metrics` (against open redirects), which would serve paths that are not ours.
        written = self.requestline.split(" ")[1] if self.requestline.count(" ") >= 1 else ""
        status, content, content_type = self._route(written.split("?", 1)[0])
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(content)))
        self.send_header("Connection", "close")
        self.end_headers()
        if body:
            self.wfile.write(content)

    def log_message(self, format: str, *args: object) -> None:
        pass  # a scrape every 15 s would bury the sync events; drops are the listener's


class _Errors:
    """Logs an endpoint's error once, and again when it changes or after `REPEAT_S`: a
    scrape every 15 s that keeps failing must be heard, not bury every other event."""

    REPEAT_S = 600.0

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._last: dict[str, tuple[str, float]] = {}

    def seen(self, path: str, error: str) -> None:
        now = time.monotonic()
        with self._lock:
            last = self._last.get(path)
            if last is not None and last[0] == error and now - last[1] < self.REPEAT_S:
                return
            self._last[path] = (error, now)
        log.warning("daemon.http_error", path=path, error=error)
