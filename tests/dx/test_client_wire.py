"""What the client puts on the wire, seen by a bare HTTP server that records raw requests."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from hrsync.dx.client import DxClient
from hrsync.dx.errors import DxAuthError
from hrsync.secret import Secret
from tests.dx.conftest import default_hierarchy

TOKEN = "wire-token-123"


@dataclass
class Seen:
    method: str
    path: str
    headers: dict[str, str]
    body: bytes


class Recorder(ThreadingHTTPServer):
    daemon_threads = True
    seen: list[Seen]
    reply: bytes


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: Recorder

    def _record(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(length) if length else b""
        self.server.seen.append(
            Seen(self.command, self.path, {k.lower(): v for k, v in self.headers.items()}, body)
        )
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(self.server.reply)))
        self.end_headers()
        self.wfile.write(self.server.reply)

    do_GET = _record
    do_POST = _record

    def log_message(self, format: str, *args: object) -> None:
        return


@pytest.fixture
def recorder() -> Iterator[Recorder]:
    server = Recorder(("127.0.0.1", 0), _Handler)
    server.seen = []
    server.reply = b'{"ok":true,"import_id":"i1","events":[],"teams":[]}'
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05})
    thread.start()
    yield server
    server.shutdown()
    server.server_close()
    thread.join()


def client_for(server: Recorder) -> DxClient:
    host, port = server.server_address[:2]
    return DxClient(f"http://{host!s}:{port}/", Secret(TOKEN))


def test_get_sends_accept_bearer_and_query_arguments(recorder: Recorder) -> None:
    with client_for(recorder) as client:
        client.teams()
        recorder.reply = b'{"events":[],"response_metadata":{"next_cursor":"c 2/="}}'
        list(client.audit_trail(max_pages=2))
    teams, first_page, second_page = recorder.seen
    assert (teams.method, teams.path) == ("GET", "/teams.list")
    assert teams.headers["accept"] == "application/json"
    assert teams.headers["authorization"] == f"Bearer {TOKEN}"
    assert teams.body == b"" and "content-type" not in teams.headers
    assert first_page.path == "/teams.auditTrail"
    # The cursor travels in the query string, encoded.
    assert second_page.path == "/teams.auditTrail?cursor=c+2%2F%3D"


def test_post_sends_compact_json_with_content_type(recorder: Recorder) -> None:
    teams = default_hierarchy(platform_name="Plattform – Zürich")
    with client_for(recorder) as client:
        client.process(teams, email="ops@acme.example")
    (seen,) = recorder.seen
    assert (seen.method, seen.path) == ("POST", "/orgfiles.teamHierarchy.process")
    assert seen.headers["content-type"] == "application/json"
    assert seen.headers["accept"] == "application/json"
    assert seen.headers["authorization"] == f"Bearer {TOKEN}"
    assert json.loads(seen.body) == {"teams": teams, "email": "ops@acme.example"}
    assert b'":' in seen.body and b'": ' not in seen.body and b", " not in seen.body
    assert "Zürich".encode() in seen.body
    assert int(seen.headers["content-length"]) == len(seen.body)


def test_one_connection_is_reused(recorder: Recorder) -> None:
    ports: set[int] = set()

    class PortRecorder(_Handler):
        def _record(self) -> None:
            ports.add(self.client_address[1])
            super()._record()

        do_GET = _record

    recorder.RequestHandlerClass = PortRecorder
    with client_for(recorder) as client:
        for _ in range(3):
            client.teams()
    assert len(ports) == 1


def test_audit_trail_stops_when_dx_repeats_a_cursor(recorder: Recorder) -> None:
    recorder.reply = b'{"events":[],"response_metadata":{"next_cursor":"same"}}'
    with client_for(recorder) as client:
        assert list(client.audit_trail(max_pages=50)) == []
    assert len(recorder.seen) == 2


@pytest.mark.parametrize(
    "reply",
    [
        b'{"ok":false,"error":"invalid_auth","events":[]}',
        b'{"error":"invalid_auth"}',
    ],
)
def test_audit_trail_failure_body_is_an_error_even_without_ok(
    recorder: Recorder, reply: bytes
) -> None:
    recorder.reply = reply
    with client_for(recorder) as client, pytest.raises(DxAuthError) as caught:
        list(client.audit_trail())
    assert caught.value.status == 200 and caught.value.error == "invalid_auth"
