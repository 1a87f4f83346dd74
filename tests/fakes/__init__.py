"""Small local fakes of HR and identity APIs, for tests and benchmarks.

Each fake is a function from a `Request` to a `Response`, served by `FakeServer`: a
threaded http.server on 127.0.0.1 (an ephemeral port), in this process, stopped by the
test. They copy the paging and auth shapes of the real APIs, not their every field.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager, suppress
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qsl, urlsplit


@dataclass(frozen=True)
class Request:
    method: str
    path: str
    query: dict[str, str]
    headers: dict[str, str]  # lower-case names
    body: bytes

    def json(self) -> Any:
        return json.loads(self.body or b"null")

    def form(self) -> dict[str, str]:
        return dict(parse_qsl(self.body.decode()))


@dataclass
class Response:
    status: int = 200
    body: bytes = b""
    headers: dict[str, str] = field(default_factory=dict)

    @classmethod
    def of_json(
        cls, value: Any, status: int = 200, headers: dict[str, str] | None = None
    ) -> Response:
        return cls(
            status,
            json.dumps(value).encode(),
            {"Content-Type": "application/json", **(headers or {})},
        )


Handler = Callable[[Request, str], Response]  # (request, the server's base URL)


@dataclass
class FakeServer:
    base_url: str
    requests: list[Request]
    busy_s: list[float]  # time spent reading, answering and sending, per request


@contextmanager
def serve(handler: Handler) -> Iterator[FakeServer]:
    requests: list[Request] = []
    busy: list[float] = []
    holder: dict[str, str] = {}

    class _Http(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, format: str, *args: object) -> None:
            pass

        def _handle(self) -> None:
            started = time.perf_counter()
            length = int(self.headers.get("Content-Length") or 0)
            parts = urlsplit(self.path)
            request = Request(
                self.command,
                parts.path,
                dict(parse_qsl(parts.query, keep_blank_values=True)),
                {k.lower(): v for k, v in self.headers.items()},
                self.rfile.read(length) if length else b"",
            )
            requests.append(request)
            response = handler(request, holder["base"])
            with suppress(BrokenPipeError, ConnectionResetError):
                self.send_response(response.status)
                for name, value in response.headers.items():
                    self.send_header(name, value)
                self.send_header("Content-Length", str(len(response.body)))
                self.end_headers()
                self.wfile.write(response.body)
            busy.append(time.perf_counter() - started)

        do_GET = _handle
        do_POST = _handle

    httpd = ThreadingHTTPServer(("127.0.0.1", 0), _Http)
    httpd.daemon_threads = True
    holder["base"] = f"http://127.0.0.1:{httpd.server_address[1]}"
    thread = threading.Thread(target=httpd.serve_forever, args=(0.05,), daemon=True)
    thread.start()
    try:
        yield FakeServer(holder["base"], requests, busy)
    finally:
        httpd.shutdown()
        httpd.server_close()
        thread.join(timeout=5)
