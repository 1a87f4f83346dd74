"""The daemon's HTTP endpoints (`daemon.listen`): /healthz, /readyz and /metrics.

A small threaded server on a daemon thread: it only reads what the daemon already
knows (and one cheap store query for /readyz), so a slow scrape never touches a run.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from hrsync.logs import get_logger, scrub
from hrsync.monitor.metrics import CONTENT_TYPE

log = get_logger(__name__)

# (healthy or ready, one line saying why)
Probe = Callable[[], tuple[bool, str]]


class Endpoints:
    """Serves the three endpoints on `host:port` until `stop`."""

    def __init__(
        self, listen: str, *, health: Probe, ready: Probe, metrics: Callable[[], bytes]
    ) -> None:
        host, _, port = listen.rpartition(":")
        probes = {"/healthz": health, "/readyz": ready}
        errors = _Errors()

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                path = self.path.split("?", 1)[0]
                try:
                    if path == "/metrics":
                        self._answer(200, metrics(), CONTENT_TYPE)
                    elif path in probes:
                        ok, why = probes[path]()
                        self._answer(200 if ok else 503, (why + "\n").encode())
                    else:
                        self._answer(404, b"not found: try /healthz, /readyz or /metrics\n")
                except Exception as exc:  # a probe that breaks says so, it never hangs
                    error = scrub(f"{type(exc).__name__}: {exc}")
                    self._answer(503, f"error: {error}\n".encode())
                    errors.seen(path, error)

            def _answer(
                self, status: int, body: bytes, content_type: str = "text/plain; charset=utf-8"
            ) -> None:
                self.send_response(status)
                self.send_header("Content-Type", content_type)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, format: str, *args: object) -> None:
                pass  # a scrape every 15 s would bury the sync events

        self.server = ThreadingHTTPServer((host.strip("[]"), int(port)), Handler)
        self.server.daemon_threads = True
        self.address = f"{host}:{self.server.server_address[1]}"
        self._thread = threading.Thread(
            target=self.server.serve_forever, name="hrsync-http", daemon=True
        )

    def start(self) -> None:
        self._thread.start()
        log.info("daemon.http_listening", listen=self.address)

    def stop(self) -> None:
        self.server.shutdown()
        self.server.server_close()


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
