"""An HTTP answer's body, decoded by hrsync itself and counted against a cap as it arrives.

httpx decodes a compressed answer one network chunk at a time, each without a limit, before
its reader can count anything: a 2 KB answer sent as ``Content-Encoding: gzip, gzip``
became 2 GB in memory. Here the raw bytes are inflated at most `PIECE_BYTES` at a time and
never past the cap (plus one byte, to see it passed), so memory stays bounded whatever the
compression ratio. hrsync asks for what it decodes (`ACCEPT_ENCODING`): identity, gzip
(``x-gzip``) or deflate (zlib-wrapped or raw, as servers send both). An answer in any
other content-coding, or in more than one, is refused by name, never read as if plain.

The exceptions say what is wrong with the body, not whose body it is: each reader adds the
URL (without its credentials) and the key or constant that sets its cap.
"""

from __future__ import annotations

import io
import zlib
from collections.abc import Generator, Iterable, Iterator, Sequence
from typing import Final

import httpx

ACCEPT_ENCODING: Final = "gzip, deflate"
# The most bytes one step of inflating may produce; the cap may allow less.
PIECE_BYTES: Final = 64 * 1024
_GZIP_MAGIC: Final = b"\x1f\x8b"
_NAMES: Final = {"gzip": "gzip", "x-gzip": "gzip", "deflate": "deflate"}


class BodyRefused(Exception):
    """The body cannot be read within its cap; the message says why, for `{where} {exc}`."""


class TooLarge(BodyRefused):
    def __init__(self, limit: int) -> None:
        super().__init__(f"sent more than {limit:,} bytes (decoded)")
        self.limit = limit


class EncodingRefused(BodyRefused):
    """An unknown content-coding, or more than one."""


class Corrupt(BodyRefused):
    """A compressed body that does not inflate, or ends before its stream does."""


def codings(response: httpx.Response) -> list[str]:
    """The answer's content-codings, outermost last, as the server named them."""
    named = response.headers.get_list("content-encoding", split_commas=True)
    return [value.strip().lower() for value in named if value.strip()]


def iter_capped(response: httpx.Response, limit: int) -> Iterator[bytes]:
    """The decoded body of a streamed `response`, piece by piece; `BodyRefused` once it
    passes `limit` decoded bytes or cannot be decoded."""
    if response.is_stream_consumed:
        # Built whole by a transport (httpx's MockTransport does): no raw bytes are left,
        # and httpx decoded what it holds already.
        return _counted([response.content], limit)
    return decoded(response.iter_raw(), codings(response), limit)


def read_capped(response: httpx.Response, limit: int) -> bytes:
    """The whole decoded body of a streamed `response`, at most `limit` bytes."""
    body = io.BytesIO()  # grows in place and hands its buffer over: about 1x, not 2x
    for piece in iter_capped(response, limit):
        body.write(piece)
    return body.getvalue()


def decoded(raw: Iterable[bytes], content_codings: Sequence[str], limit: int) -> Iterator[bytes]:
    """`raw` bytes as sent in `content_codings`, decoded, at most `limit` bytes in all."""
    coding = _one_coding(content_codings)
    if coding == "identity":
        return _counted(raw, limit)
    return _Inflater(coding, limit).run(raw)


def _one_coding(content_codings: Sequence[str]) -> str:
    applied = [c for c in content_codings if c != "identity"]
    if not applied:
        return "identity"
    said = ", ".join(content_codings)
    if len(applied) > 1:
        raise EncodingRefused(
            f"answered in more than one content-coding (Content-Encoding: {said}); hrsync "
            f"decodes one of gzip or deflate"
        )
    name = _NAMES.get(applied[0])
    if name is None:
        raise EncodingRefused(
            f"answered in content-coding {applied[0]!r} (Content-Encoding: {said}), which "
            f"hrsync does not decode; it asks for {ACCEPT_ENCODING}"
        )
    return name


def _counted(raw: Iterable[bytes], limit: int) -> Iterator[bytes]:
    size = 0
    for chunk in raw:
        size += len(chunk)
        if size > limit:
            raise TooLarge(limit)
        if chunk:
            yield chunk


class _Inflater:
    """One gzip or deflate body: its members in turn (gzip allows several, one after the
    other), each inflated a piece at a time within what is left of the cap."""

    def __init__(self, coding: str, limit: int) -> None:
        self._coding = coding
        self._limit = limit
        self._room = limit
        self._stream: zlib._Decompress | None = None
        self._head = b""  # the first byte of a stream, until the second shows its kind
        self._members = 0

    def run(self, raw: Iterable[bytes]) -> Iterator[bytes]:
        for chunk in raw:
            yield from self._feed(chunk)
        if self._head or (self._stream is not None and not self._stream.eof):
            raise Corrupt(f"ended before its {self._coding} stream did")

    def _feed(self, data: bytes) -> Iterator[bytes]:
        while data:
            if self._stream is None:
                data = self._head + data
                if len(data) < 2:
                    self._head = data
                    return
                self._head = b""
                self._stream = self._start(data[:2])
            data = yield from self._inflate(self._stream, data)
            if self._stream.eof:
                self._stream = None

    def _start(self, first: bytes) -> zlib._Decompress:
        """A decompressor for the stream beginning with `first` (its first two bytes)."""
        self._members += 1
        if self._coding == "gzip":
            if self._members > 1 and first != _GZIP_MAGIC:
                raise Corrupt("sent data after the end of its gzip stream")
            return zlib.decompressobj(16 + zlib.MAX_WBITS)
        if self._members > 1:
            raise Corrupt("sent data after the end of its deflate stream")
        # RFC 9110 means zlib-wrapped deflate; some servers send it raw. A zlib header:
        # method 8 (deflate), a window of at most 32 KiB, no preset dictionary, a check.
        method, window, dictionary = first[0] & 0x0F, first[0] >> 4, first[1] & 0x20
        checked = int.from_bytes(first, "big") % 31 == 0
        wrapped = method == 8 and window <= 7 and not dictionary and checked
        return zlib.decompressobj(zlib.MAX_WBITS if wrapped else -zlib.MAX_WBITS)

    def _inflate(self, stream: zlib._Decompress, data: bytes) -> Generator[bytes, None, bytes]:
        """Inflate `data`, and what zlib still holds of it; returns the bytes after the end
        of the stream, if it ended."""
        while True:
            want = min(self._room + 1, PIECE_BYTES)
            try:
                out = stream.decompress(data, want)
            except zlib.error as exc:
                raise Corrupt(
                    f"sent a {self._coding} stream that does not inflate ({exc})"
                ) from None
            if len(out) > self._room:
                raise TooLarge(self._limit)
            self._room -= len(out)
            if out:
                yield out
            if stream.eof:
                return stream.unused_data
            data = stream.unconsumed_tail
            # Short of `want` with no input left: zlib holds nothing more of this chunk.
            if not data and len(out) < want:
                return b""
