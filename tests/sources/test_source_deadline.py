"""`source.deadline_s`: one read of an HTTP source ends within it, every page, retry and
token included (issue 27, finding 3). Real local servers: one that trickles its answer a
byte at a time, and the Graph fake of tests/fakes with a clock the test moves."""

from __future__ import annotations

import contextlib
import dataclasses
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
from structlog.testing import capture_logs

from hrsync.commands.demo import CONFIG
from hrsync.config.loading import load_settings
from hrsync.core.settings import OAuth2Settings, PaginationSettings, SourceSettings
from hrsync.daemon.service import Daemon
from hrsync.outcome import Outcome
from hrsync.resources import shipped_dir
from hrsync.simulator.scenario import load_scenario
from hrsync.sources.base import SourceUnavailable
from hrsync.sources.http_fetch import HttpSession
from hrsync.sources.open import _format, open_export
from hrsync.sources.pages import open_url
from hrsync.sources.pagination import first_request
from hrsync.store.repo import Store
from hrsync.sync.results import SyncRequest, SyncResult
from hrsync.sync.story import run_sync
from tests.fakes import Request, Response, serve
from tests.fakes.hr_apis import GraphApi
from tests.simulating import start_simulator

SLACK_S = 2.0  # a loaded test machine's delays
HEADER = b"Employee ID,Full Name,Work Email,Manager ID,Department,Status\n"


class Trickle(BaseHTTPRequestHandler):
    """Answers a CSV of a thousand bytes, one byte every 50 ms (or a token, as slowly)."""

    def log_message(self, format: str, *args: object) -> None:
        pass

    def do_GET(self) -> None:
        self._trickle(b"text/csv", HEADER + b"x" * 1000)

    def do_POST(self) -> None:  # the token endpoint
        self.rfile.read(int(self.headers.get("Content-Length") or 0))
        self._trickle(b"application/json", b'{"access_token": "' + b"t" * 1000 + b'"}')

    def _trickle(self, content_type: bytes, body: bytes) -> None:
        with contextlib.suppress(OSError):  # the reader hangs up at its deadline
            self.send_response(200)
            self.send_header("Content-Type", content_type.decode())
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            for byte in body:
                self.wfile.write(bytes([byte]))
                self.wfile.flush()
                time.sleep(0.05)


class TrickleHead(Trickle):
    """Sends its status line and headers one byte every 50 ms: all of it before httpx
    hands over a response, where the deadline's hooks look."""

    def do_GET(self) -> None:
        head = b"HTTP/1.1 200 OK\r\nContent-Type: text/csv\r\n" + b"X-Pad: " + b"p" * 1000
        with contextlib.suppress(OSError):
            for byte in head:
                self.wfile.write(bytes([byte]))
                self.wfile.flush()
                time.sleep(0.05)


@pytest.fixture
def trickle_head() -> Iterator[str]:
    yield from _serving(TrickleHead)


@pytest.fixture
def trickle() -> Iterator[str]:
    yield from _serving(Trickle)


def _serving(handler: type[BaseHTTPRequestHandler]) -> Iterator[str]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, args=(0.05,), daemon=True).start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def test_a_server_trickling_its_answer_is_cut_off_at_the_deadline(trickle: str) -> None:
    settings = SourceSettings(url=f"{trickle}/people.csv?api_key=k3y", deadline_s=0.5, timeout_s=1)
    began = time.monotonic()
    with pytest.raises(SourceUnavailable) as info:
        open_export(settings, environ={})
    took = time.monotonic() - began
    # Each byte comes well within source.timeout_s: only the whole read's deadline ends it,
    # at most one timeout_s step late (with room for a loaded test machine); the whole
    # answer would take 50 s.
    assert 0.45 < took < 0.5 + 1 + SLACK_S
    message = str(info.value)
    assert f"{trickle}/people.csv?api_key=***" in message and "k3y" not in message
    assert "0.5 s" in message and "source.deadline_s" in message


def test_a_server_trickling_its_response_head_is_cut_off_at_the_deadline(
    trickle_head: str,
) -> None:
    # The head (a minute of it, a byte every 50 ms) was outside the deadline's reach.
    settings = SourceSettings(url=f"{trickle_head}/people.csv", deadline_s=0.5, timeout_s=1)
    began = time.monotonic()
    with pytest.raises(SourceUnavailable) as info:
        open_export(settings, environ={})
    assert time.monotonic() - began < 0.5 + 1 + SLACK_S
    assert "source.deadline_s" in str(info.value)


def test_a_token_endpoint_trickling_its_token_is_cut_off_too(trickle: str) -> None:
    settings = SourceSettings(
        url=f"{trickle}/people.csv",
        deadline_s=0.5,
        timeout_s=1,
        oauth2=OAuth2Settings(
            token_url=f"{trickle}/token", client_id_env="ID", client_secret_env="SECRET"
        ),
    )
    began = time.monotonic()
    with pytest.raises(SourceUnavailable, match=r"source\.deadline_s"):
        open_export(settings, environ={"ID": "client", "SECRET": "s3cret"})
    assert time.monotonic() - began < 0.5 + 1 + SLACK_S


def graph(base: str, **source: object) -> SourceSettings:
    return SourceSettings(
        url=f"{base}/v1.0/users",
        records_path="value",
        pagination=PaginationSettings(style="odata"),
        oauth2=OAuth2Settings(
            token_url=f"{base}/tenant/oauth2/v2.0/token",
            client_id_env="GRAPH_CLIENT_ID",
            client_secret_env="GRAPH_CLIENT_SECRET",
        ),
        **source,  # type: ignore[arg-type]
    )


def test_the_deadline_spans_every_page_and_the_token() -> None:
    api = GraphApi(page_size=4)  # the sample org: several pages
    clock = Clock()

    def slow(request: Request, base: str) -> Response:
        clock.now += 0.4  # each answer, token included, takes 0.4 s of the clock
        return api(request, base)

    env = {"GRAPH_CLIENT_ID": api.oauth.client_id, "GRAPH_CLIENT_SECRET": api.oauth.client_secret}
    with serve(slow) as server:
        settings = graph(server.base_url, deadline_s=1.0)
        session = HttpSession(settings, env, clock=clock)
        with pytest.raises(SourceUnavailable) as info:
            open_url(settings, env, None, _format, session=session)
        session.close()
    # token (0.4), page 1 (0.8), page 2 (1.2): cut off as page 2's body came, past 1 s;
    # no page 3 was asked for.
    assert [r.path.rsplit("/", 1)[-1] for r in server.requests] == ["token", "users", "users"]
    assert "within 1 s" in str(info.value) and "source.deadline_s" in str(info.value)


def test_no_retry_is_sent_past_the_deadline_nor_waited_for() -> None:
    clock = Clock()
    waits: list[float] = []

    def unavailable(request: Request, base: str) -> Response:
        clock.now += 0.4
        return Response.of_json({"error": "busy"}, 503, {"Retry-After": "0"})

    def sleep(seconds: float) -> None:
        waits.append(seconds)
        clock.now += seconds

    with serve(unavailable) as server:
        settings = SourceSettings(url=f"{server.base_url}/people", retries=10, deadline_s=1.0)
        session = HttpSession(settings, {}, sleep=sleep, clock=clock)
        with pytest.raises(SourceUnavailable, match=r"source\.deadline_s"):
            session.page(first_request(settings), 1)
        session.close()
    # Tries at 0, 0.4 and 0.8 (plus waits); the fourth would start past 1 s: not sent.
    assert len(server.requests) == 3

    def later(request: Request, base: str) -> Response:
        return Response.of_json({"error": "busy"}, 503, {"Retry-After": "30"})

    waits.clear()
    with serve(later) as server:
        settings = SourceSettings(url=f"{server.base_url}/people", retries=10, deadline_s=5.0)
        session = HttpSession(settings, {}, sleep=sleep, clock=Clock())
        with pytest.raises(SourceUnavailable) as info:
            session.page(first_request(settings), 1)
        session.close()
    assert waits == [] and len(server.requests) == 1  # a 30 s wait would pass 5 s: none
    assert "source.deadline_s" in str(info.value) and "503" in str(info.value)


def test_a_read_past_its_deadline_fails_the_run_sends_nothing_and_counts_to_quarantine(
    tmp_path: Path, trickle: str
) -> None:
    scenario = load_scenario(shipped_dir("config") / "demo-scenario.json")
    with start_simulator(scenario) as sim:
        config = tmp_path / "hrsync.toml"
        config.write_text(
            CONFIG.format(base_url=sim.base_url, export="people.csv", db=tmp_path / "state.db")
        )
        settings = load_settings(config, {"HRSYNC_DX_TOKEN": "demo-org-token"})
        source = dataclasses.replace(
            settings.source, path=None, url=f"{trickle}/people.csv", deadline_s=0.3, timeout_s=1
        )
        settings = dataclasses.replace(
            settings, source=source, sync=dataclasses.replace(settings.sync, quarantine_after=1)
        )
        store = Store.open(settings.state.database_url)
        try:

            def one_run(request: SyncRequest) -> SyncResult:
                return run_sync(settings, request, store=store)

            daemon = Daemon(settings, store=store, run_sync=one_run)
            daemon.start(paused=True)
            try:
                with capture_logs() as logs:
                    result = daemon.execute("schedule")
            finally:
                daemon.stop(grace_s=1)
            failures = store.runs.consecutive_failures()
        finally:
            store.close()
    assert result is not None and result.outcome is Outcome.FAILED
    assert result.reason is not None and "source.deadline_s" in result.reason
    assert not any(r.method_name == "orgfiles.teamHierarchy.process" for r in sim.dx.requests)
    assert [f.id for f in failures] == [result.run_id]
    (quarantined,) = [e for e in logs if e["event"] == "sync.quarantined"]
    assert "source.deadline_s" in quarantined["reasons"][0]
