"""Telling the bundled simulator from another local service at its address."""

from __future__ import annotations

import socket
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, HTTPServer

import pytest

from hrsync.dx.simulator_probe import at_simulator_address, not_the_simulator
from tests.simulating import start_simulator


@pytest.mark.parametrize(
    ("url", "expected"),
    [
        ("http://127.0.0.1:8765", True),
        ("http://localhost:8765/", True),
        ("http://127.0.0.1:8766", False),
        ("https://127.0.0.1:8765", False),
        ("https://api.getdx.com", False),
    ],
)
def test_the_simulator_s_default_address(url: str, expected: bool) -> None:
    assert at_simulator_address(url) is expected


def test_the_simulator_answers_as_itself() -> None:
    with start_simulator() as sim:
        assert not_the_simulator(sim.base_url) is None


class _Other(BaseHTTPRequestHandler):
    server_version = "other-app/2.1"

    def do_GET(self) -> None:
        self.send_response(401)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def log_message(self, format: str, *args: object) -> None:
        return


@pytest.fixture
def other_service() -> Iterator[str]:
    server = HTTPServer(("127.0.0.1", 0), _Other)
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.02})
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=5)


def test_another_service_is_named_with_its_answer(other_service: str) -> None:
    found = not_the_simulator(other_service)
    assert found is not None
    assert "HTTP 401" in found and "'other-app/2.1" in found
    assert "not hrsync's simulator" in found


def test_nothing_listening_is_said() -> None:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    assert not_the_simulator(f"http://127.0.0.1:{port}") == (
        "nothing listens there (connection refused)"
    )


def test_check_fails_naming_what_answers_instead_of_the_simulator(other_service: str) -> None:
    from hrsync.commands.readiness import render, simulator_check

    with start_simulator() as sim:
        assert simulator_check(sim.base_url) is None
    wrong = simulator_check(other_service)
    assert wrong is not None and not wrong.ok
    shown = render([wrong])
    assert f"dx.base_url {other_service} is the bundled simulator's address, but another " in shown
    assert "HTTP 401" in shown and "hrsync simulator --rehearse" in shown
