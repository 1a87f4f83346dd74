"""Compressed answers of an HR API and of its token endpoint, from a local fake: hrsync
decodes them itself within their cap, whatever their compression ratio, and refuses what
it does not decode by name (issue 27: a 1,827-byte `gzip, gzip` answer grew the process
to 2.1 GB with source.max_bytes at 10 MB; a token endpoint's answer had no cap at all)."""

from __future__ import annotations

import gzip
import tracemalloc
import zlib
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TypeVar

import pytest

from hrsync.core.settings import GoogleServiceAccountSettings, OAuth2Settings, SourceSettings
from hrsync.sources.base import SourceError
from hrsync.sources.oauth2 import MAX_TOKEN_ANSWER_BYTES
from hrsync.sources.open import open_export
from tests.fakes import FakeServer, Request, Response, serve
from tests.fakes.bombs import MIB, gzip_gzip_of_zeros, gzip_of_zeros
from tests.fakes.google_workspace import ServiceAccount

CSV = b"employee_id,email,name,manager_id\n" + b"".join(
    b"E%04d,p%d@example.com,Person %d,%s\n" % (i, i, i, b"E0000" if i else b"") for i in range(500)
)
SECRET = "cs-the-client-secret"
ENV = {"HR_ID": "hrsync", "HR_SECRET": SECRET}
# What a read of a bomb may allocate at its peak: far below what the bomb decodes to.
BOUNDED = 16 * MIB
T = TypeVar("T")


def raw_deflate(data: bytes) -> bytes:
    packer = zlib.compressobj(6, zlib.DEFLATED, -zlib.MAX_WBITS)
    return packer.compress(data) + packer.flush()


BODIES: dict[str, tuple[bytes, str]] = {
    "/plain.csv": (CSV, ""),
    "/gzip.csv": (gzip.compress(CSV), "gzip"),
    "/x-gzip.csv": (gzip.compress(CSV), "x-gzip"),
    "/deflate.csv": (zlib.compress(CSV), "deflate"),
    "/raw-deflate.csv": (raw_deflate(CSV), "deflate"),
    "/twice.csv": (gzip.compress(gzip.compress(CSV)), "gzip, gzip"),
    "/brotli.csv": (b"\x1b\x03\x00\xf8\xa5\x00", "br"),
    "/zstd.csv": (b"(\xb5/\xfd\x00X", "zstd"),
}


@pytest.fixture(scope="module")
def bombs() -> dict[str, bytes]:
    return {
        "/bomb.csv": gzip_of_zeros(64 * MIB),  # 64 KB on the wire
        "/double-bomb.csv": gzip_gzip_of_zeros(256 * MIB),
    }


@pytest.fixture
def hr(bombs: dict[str, bytes]) -> Iterator[FakeServer]:
    def answer(request: Request, base: str) -> Response:
        if request.path == "/token":
            # A token endpoint whose answer inflates to 64 MB of zeros.
            return Response(200, bombs["/bomb.csv"], {"Content-Encoding": "gzip"})
        if request.path in bombs:
            coding = "gzip, gzip" if "double" in request.path else "gzip"
            return Response(200, bombs[request.path], {"Content-Encoding": coding})
        if request.path not in BODIES:
            return Response(404, b"not here")
        body, coding = BODIES[request.path]
        headers = {"Content-Type": "text/csv"}
        if coding:
            headers["Content-Encoding"] = coding
        return Response(200, body, headers)

    with serve(answer) as server:
        yield server


def peak_of(read: Callable[[], T]) -> tuple[T | BaseException, int]:
    """What `read` returned or raised, and the most memory it held at once."""
    tracemalloc.start()
    try:
        outcome: T | BaseException = read()
    except BaseException as exc:
        outcome = exc
    finally:
        _, peak = tracemalloc.get_traced_memory()
        tracemalloc.stop()
    return outcome, peak


def rows(url: str, **settings: object) -> int:
    export = open_export(SourceSettings(url=url, format="csv", **settings), environ=ENV)  # type: ignore[arg-type]
    return len(list(export.rows()))


@pytest.mark.parametrize(
    "path", ["/plain.csv", "/gzip.csv", "/x-gzip.csv", "/deflate.csv", "/raw-deflate.csv"]
)
def test_a_plain_gzip_or_deflate_answer_is_read_whole(hr: FakeServer, path: str) -> None:
    assert rows(f"{hr.base_url}{path}") == 500


def test_hrsync_asks_only_for_the_codings_it_decodes(hr: FakeServer) -> None:
    rows(f"{hr.base_url}/plain.csv")
    assert hr.requests[-1].headers["accept-encoding"] == "gzip, deflate"


def test_an_answer_encoded_twice_is_refused_naming_url_and_codings(hr: FakeServer) -> None:
    url = f"http://user:pw@{hr.base_url.removeprefix('http://')}/twice.csv?api_key=k3y"
    with pytest.raises(SourceError) as refused:
        rows(url)
    message = str(refused.value)
    assert f"{hr.base_url}/twice.csv?api_key=***" in message
    assert "more than one content-coding (Content-Encoding: gzip, gzip)" in message
    assert "pw" not in message.replace("people", "") and "k3y" not in message


@pytest.mark.parametrize(("path", "coding"), [("/brotli.csv", "br"), ("/zstd.csv", "zstd")])
def test_an_unknown_coding_is_refused_by_name(hr: FakeServer, path: str, coding: str) -> None:
    with pytest.raises(SourceError, match=f"content-coding '{coding}'") as refused:
        rows(f"{hr.base_url}{path}")
    assert f"{hr.base_url}{path}" in str(refused.value)


def test_a_gzip_bomb_over_max_bytes_is_refused_holding_little(hr: FakeServer) -> None:
    outcome, peak = peak_of(lambda: rows(f"{hr.base_url}/bomb.csv", max_bytes=1_000_000))
    assert peak < BOUNDED, f"reading a 64 MB bomb held {peak / MIB:.0f} MiB"
    assert isinstance(outcome, SourceError), outcome
    message = str(outcome)
    assert f"{hr.base_url}/bomb.csv sent more than 1,000,000 bytes" in message
    assert "source.max_bytes" in message and "decoded" in message


def test_a_double_gzip_bomb_is_refused_before_a_byte_is_inflated(hr: FakeServer) -> None:
    outcome, peak = peak_of(lambda: rows(f"{hr.base_url}/double-bomb.csv"))
    assert peak < BOUNDED, f"reading a 256 MB double bomb held {peak / MIB:.0f} MiB"
    assert isinstance(outcome, SourceError), outcome
    assert "gzip, gzip" in str(outcome)


def test_the_oauth2_token_endpoints_bomb_is_refused_holding_little(hr: FakeServer) -> None:
    oauth2 = OAuth2Settings(
        token_url=f"{hr.base_url}/token",
        client_id_env="HR_ID",
        client_secret_env="HR_SECRET",
    )
    outcome, peak = peak_of(lambda: rows(f"{hr.base_url}/plain.csv", oauth2=oauth2))
    assert peak < BOUNDED, f"a 64 MB token answer held {peak / MIB:.0f} MiB"
    assert isinstance(outcome, SourceError), outcome
    message = str(outcome)
    assert f"the OAuth2 token endpoint {hr.base_url}/token sent more than" in message
    assert f"{MAX_TOKEN_ANSWER_BYTES:,} bytes" in message
    assert SECRET not in message


def test_a_google_token_endpoints_bomb_is_refused_holding_little(
    hr: FakeServer, tmp_path: Path
) -> None:
    key = ServiceAccount().write_key_file(tmp_path / "key.json", f"{hr.base_url}/token")
    google = GoogleServiceAccountSettings(
        key_file_env="KEY_FILE", subject="admin@example.com", scopes=("scope",)
    )
    outcome, peak = peak_of(
        lambda: open_export(
            SourceSettings(url=f"{hr.base_url}/plain.csv", google_service_account=google),
            environ={"KEY_FILE": str(key)},
        )
    )
    assert peak < BOUNDED, f"a 64 MB token answer held {peak / MIB:.0f} MiB"
    assert isinstance(outcome, SourceError), outcome
    assert f"the OAuth2 token endpoint {hr.base_url}/token sent more than" in str(outcome)
