"""The HTTP face of the simulator: a standard-library threading server on a local port.

It only moves bytes between sockets and ``SimulatedDx.handle``; every decision is
made there.
"""

from __future__ import annotations

import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import TracebackType
from typing import Final
from urllib.parse import parse_qsl, urlsplit

import structlog

from hrsync.clock import Clock
from hrsync.dx.simulator_probe import SIMULATOR_HEADER
from hrsync.simulator.core import SimulatedDx
from hrsync.simulator.scenario import Scenario
from hrsync.simulator.wire import Response, failure

log = structlog.get_logger(__name__)

_MAX_BODY_BYTES: Final = 64 * 1024 * 1024


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    dx: SimulatedDx


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"  # keep-alive, as a long-lived httpx client expects
    disable_nagle_algorithm = True  # headers and body go out in separate writes
    server: _Server

    def do_GET(self) -> None:
        self._answer("GET")

    def do_POST(self) -> None:
        self._answer("POST")

    def do_PUT(self) -> None:
        self._answer("PUT")

    def do_DELETE(self) -> None:
        self._answer("DELETE")

    def _answer(self, verb: str) -> None:
        parts = urlsplit(self.path)
        body = self._read_body()
        if body is None:
            self._send(failure(413, "payload_too_large", "request body too large"))
            self.close_connection = True
            return
        try:
            response = self.server.dx.handle(
                verb,
                parts.path.removeprefix("/"),
                dict(self.headers.items()),
                dict(parse_qsl(parts.query, keep_blank_values=True)),
                body,
            )
        except Exception:
            # A bug in the simulator: say so loudly, and answer like a broken server would.
            log.exception("simulator.internal_error", path=parts.path)
            response = failure(500, "internal_error", "the simulator failed; see its log")
        if response.delay_s > 0:
            time.sleep(response.delay_s)
        if response.disconnect:
            # Close without a byte of answer: the client cannot tell whether we acted.
            self.close_connection = True
            return
        try:
            self._send(response)
        except (BrokenPipeError, ConnectionResetError):
            # The client gave up first (its read timeout is shorter than our latency).
            log.debug("simulator.client_gone", path=parts.path)
            self.close_connection = True

    def _read_body(self) -> bytes | None:
        """The request body, or None when it is beyond any sane size."""
        if self.headers.get("Transfer-Encoding", "").lower() == "chunked":
            return self._read_chunked()
        length = int(self.headers.get("Content-Length") or 0)
        if length > _MAX_BODY_BYTES:
            return None
        return self.rfile.read(length) if length > 0 else b""

    def _read_chunked(self) -> bytes | None:
        chunks: list[bytes] = []
        total = 0
        while True:
            size = int(self.rfile.readline().split(b";")[0].strip() or b"0", 16)
            if size == 0:
                while self.rfile.readline() not in (b"\r\n", b"\n", b""):
                    pass  # trailer fields, unused
                return b"".join(chunks)
            total += size
            if total > _MAX_BODY_BYTES:
                return None
            chunks.append(self.rfile.read(size))
            self.rfile.readline()

    def _send(self, response: Response) -> None:
        self.send_response(response.status)
        self.send_header("Content-Type", response.content_type)
        self.send_header("Content-Length", str(len(response.body)))
        # How `hrsync check` tells the bundled simulator from another local service.
        self.send_header(SIMULATOR_HEADER, "1")
        for name, value in response.headers:
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(response.body)

    def log_message(self, format: str, *args: object) -> None:
        # The core logs each request through structlog; stderr lines would only add noise.
        return


class RunningSimulator:
    """A simulator serving on a local port until ``stop()`` (or the end of a ``with``)."""

    def __init__(self, dx: SimulatedDx, host: str, port: int) -> None:
        self.dx = dx
        self._server = _Server((host, port), _Handler)
        self._server.dx = dx
        bound_host, bound_port = self._server.server_address[:2]
        shown_host = bound_host if isinstance(bound_host, str) else bound_host.decode()
        if ":" in shown_host:
            shown_host = f"[{shown_host}]"
        self.host = shown_host
        self.port = int(bound_port)
        self.base_url = f"http://{shown_host}:{self.port}"
        self._thread = threading.Thread(
            target=self._server.serve_forever,
            kwargs={"poll_interval": 0.02},  # how long stop() may wait
            name=f"dx-simulator-{self.port}",
            daemon=True,
        )
        self._thread.start()
        self._stopped = False

    def stop(self) -> None:
        if self._stopped:
            return
        self._stopped = True
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(timeout=5)

    def __enter__(self) -> RunningSimulator:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.stop()


def start_simulator(
    scenario: Scenario | None = None,
    host: str = "127.0.0.1",
    port: int = 0,
    clock: Clock | None = None,
    seed: int | None = None,
) -> RunningSimulator:
    """Start serving ``scenario`` (the default one when None); port 0 picks a free port.
    ``seed``: what the simulator varies (hrsync.simulator.variation); None: the
    scenario's, else one chosen now (``.dx.seed`` tells which)."""
    return RunningSimulator(SimulatedDx(scenario, clock, seed=seed), host, port)
