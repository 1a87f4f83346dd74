"""The bounded decoder every HTTP reader shares: what it decodes, what it refuses, and
that no answer, whatever its compression ratio, makes it hold more than a piece at a time."""

from __future__ import annotations

import gzip
import zlib
from collections.abc import Iterator

import pytest
from hypothesis import given
from hypothesis import strategies as st

from hrsync.capped_body import (
    PIECE_BYTES,
    Corrupt,
    EncodingRefused,
    TooLarge,
    decoded,
)

TEXT = b"Employee ID,Full Name\n" + b"".join(b"E%05d,Person %d\n" % (i, i) for i in range(3000))


def raw_deflate(data: bytes) -> bytes:
    packer = zlib.compressobj(6, zlib.DEFLATED, -zlib.MAX_WBITS)
    return packer.compress(data) + packer.flush()


def chunks(data: bytes, size: int) -> Iterator[bytes]:
    for start in range(0, len(data), size):
        yield data[start : start + size]


def read(body: bytes, codings: list[str], limit: int = 10**9, size: int = 1000) -> bytes:
    return b"".join(decoded(chunks(body, size), codings, limit))


@pytest.mark.parametrize(
    ("codings", "body"),
    [
        ([], TEXT),
        (["identity"], TEXT),
        (["gzip"], gzip.compress(TEXT)),
        (["x-gzip"], gzip.compress(TEXT)),
        (["deflate"], zlib.compress(TEXT)),  # zlib-wrapped, as RFC 9110 means it
        (["deflate"], raw_deflate(TEXT)),  # raw, as some servers send it
        (["gzip"], gzip.compress(TEXT[:5000]) + gzip.compress(TEXT[5000:])),  # two members
        (["gzip"], b""),  # an empty answer said to be compressed: nothing to decode
    ],
    ids=["none", "identity", "gzip", "x-gzip", "zlib", "raw-deflate", "members", "empty"],
)
def test_what_it_decodes(codings: list[str], body: bytes) -> None:
    expected = b"" if not body and codings else TEXT
    assert read(body, codings) == expected
    assert read(body, codings, size=1) == expected  # split anywhere, even in a header


@pytest.mark.parametrize(
    ("codings", "body", "refused", "said"),
    [
        (["gzip", "gzip"], gzip.compress(gzip.compress(TEXT)), EncodingRefused, "gzip, gzip"),
        (["deflate", "gzip"], b"", EncodingRefused, "more than one content-coding"),
        (["br"], b"\x0b\x02\x80hello\x03", EncodingRefused, "'br'"),
        (["zstd"], b"(\xb5/\xfd", EncodingRefused, "'zstd'"),
        (["compress"], b"\x1f\x9d", EncodingRefused, "'compress'"),
        (["gzip"], TEXT, Corrupt, "does not inflate"),
        (["gzip"], gzip.compress(TEXT)[:-20], Corrupt, "ended before its gzip stream did"),
        (["deflate"], zlib.compress(TEXT)[:100], Corrupt, "ended before"),
        (["gzip"], gzip.compress(TEXT) + b"\0\0\0\0", Corrupt, "after the end"),
        (["deflate"], zlib.compress(TEXT) + b"junk", Corrupt, "after the end"),
        ([], TEXT, TooLarge, "more than 100 bytes"),
        (["gzip"], gzip.compress(TEXT), TooLarge, "more than 100 bytes (decoded)"),
        (["deflate"], raw_deflate(TEXT), TooLarge, "more than 100 bytes"),
    ],
)
def test_what_it_refuses_and_says_so(
    codings: list[str], body: bytes, refused: type[Exception], said: str
) -> None:
    limit = 100 if refused is TooLarge else 10**9
    with pytest.raises(refused, match=None) as caught:
        read(body, codings, limit=limit)
    assert said in str(caught.value)


def test_exactly_the_limit_is_read_and_one_byte_more_is_not() -> None:
    body = gzip.compress(TEXT)
    assert read(body, ["gzip"], limit=len(TEXT)) == TEXT
    with pytest.raises(TooLarge):
        read(body, ["gzip"], limit=len(TEXT) - 1)


def test_a_bomb_is_stopped_a_piece_at_a_time() -> None:
    # 64 MB of zeros in 64 KB: one network chunk would have inflated to it whole.
    bomb = gzip.compress(bytes(64 * 1024 * 1024), compresslevel=9)
    seen: list[int] = []
    with pytest.raises(TooLarge):
        for piece in decoded([bomb], ["gzip"], 10 * 1024 * 1024):
            seen.append(len(piece))
    assert max(seen) <= PIECE_BYTES
    assert sum(seen) <= 10 * 1024 * 1024


@given(
    data=st.binary(max_size=3000),
    coding=st.sampled_from(["gzip", "deflate", "raw", ""]),
    size=st.integers(min_value=1, max_value=700),
    limit=st.integers(min_value=0, max_value=4000),
)
def test_any_split_and_any_limit_give_the_body_or_a_refusal(
    data: bytes, coding: str, size: int, limit: int
) -> None:
    body = {
        "gzip": gzip.compress,
        "deflate": zlib.compress,
        "raw": raw_deflate,
        "": lambda b: b,
    }[coding](data)
    codings = {"raw": ["deflate"], "": []}.get(coding, [coding])
    pieces: list[bytes] = []
    try:
        for piece in decoded(chunks(body, size), codings, limit):
            pieces.append(piece)
    except TooLarge:
        assert len(data) > limit
        assert sum(map(len, pieces)) <= limit
    else:
        assert len(data) <= limit
        assert b"".join(pieces) == data
    assert all(0 < len(piece) <= max(PIECE_BYTES, size) for piece in pieces)
