"""DX's answers, from a small local fake: decoded by hrsync within its limit for one answer,
whatever their compression ratio; one that is over it, or in a coding hrsync does not
decode, is a bad response naming the URL and the cap, never the token (issue 27: DX's
answers had no cap at all)."""

from __future__ import annotations

import gzip
import json
import tracemalloc
from collections.abc import Iterator
from pathlib import Path

import pytest

from hrsync.config.loading import load_settings
from hrsync.core import defaults
from hrsync.dx.client import DxClient
from hrsync.dx.errors import DxBadResponse, DxOutcomeUnknown
from hrsync.dx.retry import RetryPolicy
from hrsync.secret import Secret
from tests.dx.conftest import default_hierarchy
from tests.fakes import FakeServer, Request, Response, serve
from tests.fakes.bombs import MIB, gzip_of_zeros

TOKEN = "dx-answers-token-0123456789"
TEAM = {"id": "t1", "name": "Platform", "parent_id": None, "reference_id": "r1"}


@pytest.fixture(scope="module")
def bomb() -> bytes:
    return gzip_of_zeros(64 * MIB)


@pytest.fixture
def dx(bomb: bytes) -> Iterator[FakeServer]:
    def answer(request: Request, base: str) -> Response:
        mode = request.headers.get("x-test-answer", "")
        if mode == "bomb":
            return Response(200, bomb, {"Content-Encoding": "gzip"})
        if mode == "brotli":
            return Response(200, b"\x1b\x03\x00\xf8", {"Content-Encoding": "br"})
        if request.path == "/orgfiles.teamHierarchy.process":
            reply = {"ok": True, "import_id": "i1"}
        else:
            reply = {"ok": True, "teams": [TEAM]}
        body = gzip.compress(json.dumps(reply).encode())
        return Response(200, body, {"Content-Type": "application/json", "Content-Encoding": "gzip"})

    with serve(answer) as server:
        yield server


def client(server: FakeServer, answer: str = "", **options: int) -> DxClient:
    made = DxClient(server.base_url, Secret(TOKEN), retry=RetryPolicy(max_attempts=1), **options)
    if answer:
        made._transport._http.headers["X-Test-Answer"] = answer
    return made


def test_a_gzip_answer_is_read_and_only_gzip_or_deflate_is_asked_for(dx: FakeServer) -> None:
    with client(dx) as c:
        [team] = c.teams()
    assert team.name == "Platform"
    assert dx.requests[-1].headers["accept-encoding"] == "gzip, deflate"


def test_a_bomb_is_a_bad_response_naming_url_and_cap_holding_little(dx: FakeServer) -> None:
    with client(dx, "bomb", max_response_bytes=MIB) as c:
        tracemalloc.start()
        try:
            with pytest.raises(DxBadResponse) as refused:
                c.teams()
            _, peak = tracemalloc.get_traced_memory()
        finally:
            tracemalloc.stop()
    assert peak < 16 * MIB, f"a 64 MB answer held {peak / MIB:.0f} MiB"
    message = str(refused.value)
    assert f"{dx.base_url}/teams.list sent more than 1,048,576 bytes (decoded)" in message
    assert "hrsync's limit for one DX answer" in message
    assert TOKEN not in message


def test_a_bomb_answering_process_leaves_the_outcome_unknown(dx: FakeServer) -> None:
    # DX may have taken the write before its answer went wrong: verify, never resend.
    with (
        client(dx, "bomb", max_response_bytes=MIB) as c,
        pytest.raises(DxOutcomeUnknown) as unknown,
    ):
        c.process(default_hierarchy())
    assert "sent more than 1,048,576 bytes" in str(unknown.value)


def test_an_unknown_coding_is_a_bad_response_by_name(dx: FakeServer) -> None:
    with client(dx, "brotli") as c, pytest.raises(DxBadResponse, match="content-coding 'br'"):
        c.teams()


def test_the_default_cap_is_generous() -> None:
    # teams.list of a 100,000-person org: at most one team per person, ~1 KB each.
    assert defaults.DX_MAX_RESPONSE_BYTES == 256 * MIB
    assert defaults.DX_MAX_RESPONSE_BYTES > 100_000 * 1024 * 2


def test_the_cap_is_fixed_and_the_old_key_only_warns(dx: FakeServer, tmp_path: Path) -> None:
    config = tmp_path / "hrsync.toml"
    config.write_text(f'[dx]\nbase_url = "{dx.base_url}"\n[source]\npath = "people.csv"\n')
    env = {"HRSYNC_DX_TOKEN": TOKEN, "HRSYNC_DX__MAX_RESPONSE_BYTES": "2000000"}
    settings = load_settings(config, env)
    assert settings.deprecations[0].startswith("HRSYNC_DX__MAX_RESPONSE_BYTES")
    with DxClient.from_settings(settings) as c:
        assert c._transport._max_response_bytes == defaults.DX_MAX_RESPONSE_BYTES
