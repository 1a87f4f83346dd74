"""What every reader shares: the error type, the Export handle, bytes and their decoding."""

from __future__ import annotations

import codecs
import contextlib
import io
import itertools
import os
import stat
import tempfile
import weakref
from collections.abc import Callable, Generator, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO

from hrsync.config.small_files import kind_of
from hrsync.core.export.rows import RowTable, SourceRow
from hrsync.secret import (
    header_value_problem,
    is_variable_name,
    line_break_problem,
    not_a_name,
)

CHUNK_BYTES = 64 * 1024


class SourceError(Exception):
    """The export cannot be read. The message names the file or URL and what is wrong."""


class SourceUnavailable(SourceError):
    """The export's server did not deliver it this time (timeout, network, HTTP 5xx or
    429): worth trying again later, unlike an export that is wrong."""


@dataclass(frozen=True)
class Export:
    """An opened export: its name for messages, its columns, and its rows.

    `rows()` streams them and `table()` reads them all at once (what a run does: it holds
    every person anyway); each starts a fresh pass, and two passes must not run at once.
    Reading may still raise `SourceError` part-way (a bad byte deep in the file).
    """

    name: str
    columns: tuple[str, ...]
    format: str
    _rows: Callable[[], Iterator[SourceRow]]
    pages: int = 1  # HTTP pages read (`hrsync check` reports them)
    # Worth a look, not a refusal: e.g. an answer of exactly a common page size.
    notes: tuple[str, ...] = ()
    # An HTTP answer read whole without paging that held exactly a common page size of
    # records (its count; 0 for none): a first run refuses it (`source.single_page`).
    page_sized: int = 0
    # A reader's own whole-file pass, when it has one faster than rows() (CSV).
    _table: Callable[[], RowTable] | None = None
    # The rows are a sample of this many records (`hrsync init` on a large file); 0: all.
    sampled_from: int = 0

    def rows(self) -> Iterator[SourceRow]:
        return self._rows()

    def table(self) -> RowTable:
        if self._table is not None:
            return self._table()
        return RowTable.of_rows(self._rows(), self.columns)


class Payload:
    """The raw bytes of an export, which can be read from the start more than once."""

    def __init__(
        self,
        name: str,
        opener: Callable[[], contextlib.AbstractContextManager[BinaryIO]],
        release: Callable[[], None] = lambda: None,
        max_bytes: int | None = None,
    ):
        self.name = name
        self._opener = opener
        self.release = release  # frees a downloaded body; files need nothing
        # source.max_bytes, enforced while reading: a file can grow after it was measured.
        self.max_bytes = max_bytes

    def open(self) -> contextlib.AbstractContextManager[BinaryIO]:
        return self._opener()

    @classmethod
    def from_path(cls, path: Path, max_bytes: int | None = None) -> Payload:
        try:
            if path.is_dir():
                raise SourceError(f"source file {path} is a directory, not an export file")
            mode = path.stat().st_mode
            if not stat.S_ISREG(mode):
                # A FIFO would block the run for ever, a device (/dev/zero) never end.
                raise SourceError(
                    f"source file {path} is not a regular file but {kind_of(mode)}: name the "
                    "export file itself"
                )
            with path.open("rb") as fh:
                size = os.fstat(fh.fileno()).st_size
            if max_bytes is not None and size > max_bytes:
                raise SourceError(too_large(path.name, max_bytes, f"is {size:,} bytes, over"))
        except FileNotFoundError:
            raise SourceError(f"source file {path} does not exist (source.path)") from None
        except PermissionError:
            raise SourceError(f"source file {path} cannot be read: permission denied") from None
        except OSError as exc:
            raise SourceError(f"source file {path} cannot be read: {exc.strerror}") from None
        return cls(path.name, lambda: path.open("rb"), max_bytes=max_bytes)

    @classmethod
    def from_spool(cls, name: str, spool: tempfile.SpooledTemporaryFile[bytes]) -> Payload:
        @contextlib.contextmanager
        def rewind() -> Iterator[BinaryIO]:
            spool.seek(0)
            yield spool  # type: ignore[misc]  # SpooledTemporaryFile is a binary file

        return cls(name, rewind, spool.close)


def export_over(payload: Payload, read: Callable[[], Export]) -> Export:
    """The Export `read()` opens over `payload`, which then lives as long as the Export
    (its rows are read later): released at once if opening fails, else when the Export
    is collected."""
    try:
        export = read()
    except BaseException:
        payload.release()
        raise
    weakref.finalize(export, payload.release)
    return export


def first_bytes(payload: Payload, size: int = 512) -> bytes:
    with payload.open() as fh:
        return fh.read(size)


def decode(payload: Payload, encoding: str) -> Generator[str, None, None]:
    """Decode the payload in chunks, failing with the byte offset and line of a bad byte.

    A UTF-8 BOM is skipped when the encoding is ``utf-8-sig`` (the default) or ``utf-8``.
    """
    codec = _lookup(encoding, payload.name)
    skip_bom = codec.name in ("utf-8-sig", "utf-8")
    decoder = codecs.getincrementaldecoder("utf-8" if skip_bom else codec.name)("strict")
    fed = 0  # bytes handed to the decoder so far
    newlines = 0
    limit = payload.max_bytes
    with payload.open() as fh:
        first = True
        while True:
            block = fh.read(CHUNK_BYTES)
            if limit is not None and fed + len(block) > limit:
                raise SourceError(too_large(payload.name, limit, "holds more than"))
            if first and skip_bom and block.startswith(codecs.BOM_UTF8):
                block = block[len(codecs.BOM_UTF8) :]
                fed += len(codecs.BOM_UTF8)
            first = False
            held = len(decoder.getstate()[0])
            try:
                text = decoder.decode(block, final=not block)
            except UnicodeDecodeError as exc:
                offset = fed - held + exc.start
                before = exc.object[: exc.start].decode(codec.name, errors="replace")
                line = newlines + before.count("\n") + 1
                raise SourceError(
                    f"{payload.name} is not valid {_display(encoding)} at byte {offset} "
                    f"(line {line}): {exc.reason}. If the export uses another encoding, set "
                    f"source.encoding, e.g. 'cp1252' or 'latin-1'"
                ) from None
            fed += len(block)
            if text:
                newlines += text.count("\n")
                yield text
            if not block:
                return


def lines(chunks: Iterator[str]) -> Iterator[str]:
    """Split text into physical lines, keeping their endings (``\\r\\n``, ``\\n`` or ``\\r``).

    Unlike str.splitlines, form feeds and Unicode separators inside values are not line ends.
    """
    return iter(Lines(chunks))


class LineTooLong(Exception):
    """A physical line ran past `Lines.max_chars`; `start` holds its first characters."""

    def __init__(self, start: str) -> None:
        super().__init__(f"a line longer than {len(start):,} characters")
        self.start = start


class Lines:
    """The physical lines of decoded text (see `lines`), in time linear in their length.

    `max_chars` (changeable between lines) bounds one line: past it, `LineTooLong` is raised
    before more of the line is held. `ended` tells, once the text is used up, whether its
    last line had a line end (a file cut off mid-row usually has none); `longest` is the
    length of the longest line yielded so far (no value on a line is longer).
    """

    def __init__(self, chunks: Iterator[str], max_chars: int | None = None) -> None:
        self._chunks = chunks
        self.max_chars = max_chars
        self.ended = True
        self.longest = 0

    def __iter__(self) -> Iterator[str]:
        # The lines come in batches, one per chunk, flattened in C: a generator resumed
        # once per line cost a tenth of a CSV pass.
        return itertools.chain.from_iterable(self._batches())

    def _batches(self) -> Iterator[list[str]]:
        # The unfinished end of a line is held as a list of pieces and joined once, when
        # its line end arrives: gluing each chunk onto the held text would copy the line
        # again per chunk, quadratic in its length (a 16 MB value took 17 s that way).
        held: list[str] = []
        size = 0
        for chunk in self._chunks:
            if held:
                if "\n" not in chunk and "\r" not in chunk:
                    if held[-1].endswith("\r"):
                        # A lone \r ended that line after all: no \n follows.
                        self.longest = max(self.longest, len(held[-1]))
                        yield [held.pop()]
                        size = 0
                    held.append(chunk)
                    size += len(chunk)
                    self._check(size, held)
                    continue
                held.append(chunk)
                chunk = "".join(held)
                held.clear()
            # StringIO with newline="" ends lines at \r\n, \n and \r only, and keeps the
            # endings: the rule above, in C (a regex over each line costs a third of a CSV pass).
            split = io.StringIO(chunk, newline="").readlines()
            # The last piece may be unfinished: no line end yet, or a \r whose \n comes next.
            if split and not split[-1].endswith("\n"):
                held.append(split.pop())
            if split:
                self.longest = max(self.longest, max(map(len, split)))
            if split and self.max_chars is not None:
                # Only the first line can be longer than the chunk: it may carry held text.
                if self.max_chars < len(chunk):
                    # Any line may be too long: one at a time, so that the line refused is
                    # the one the reader asks for next.
                    for line in split:
                        self._check(len(line), [line])
                        yield [line]
                    split = []
                else:
                    self._check(len(split[0]), split[:1])
            if split:
                yield split
            size = len(held[0]) if held else 0
            self._check(size, held)
        if held:
            self.ended = held[-1].endswith(("\n", "\r"))
            last = "".join(held)
            self.longest = max(self.longest, len(last))
            yield [last]

    def _check(self, size: int, pieces: list[str]) -> None:
        if self.max_chars is not None and size > self.max_chars:
            raise LineTooLong("".join(pieces)[: self.max_chars + 1])


def too_large(name: str, limit: int, what: str, *, decoded: bool = False) -> str:
    # An HTTP answer is counted once decoded (gunzipped): the size of the export itself.
    unit = "bytes (decoded)" if decoded else "bytes"
    return (
        f"{name} {what} {limit:,} {unit}, the limit set by source.max_bytes; raise it if the "
        f"export really is this large"
    )


def _lookup(encoding: str, name: str) -> codecs.CodecInfo:
    try:
        codec = codecs.lookup(encoding or "utf-8-sig")
    except LookupError:
        codec = None
    # Codecs such as base64 or rot13 exist but do not turn bytes into text.
    if codec is None or not getattr(codec, "_is_text_encoding", True):
        raise SourceError(
            f"cannot read {name}: source.encoding {encoding!r} is not a known text encoding"
        )
    return codec


def _display(encoding: str) -> str:
    name = codecs.lookup(encoding or "utf-8-sig").name
    return "UTF-8" if name in ("utf-8", "utf-8-sig") else name


def redact(text: str, hidden: list[str]) -> str:
    """`text` with each of `hidden` (credentials, a URL carrying them) masked, longest first
    so a secret inside another is not half-masked; empty values are skipped."""
    for secret in sorted(hidden, key=len, reverse=True):
        if secret:
            text = text.replace(secret, "***")
    return text


def required_env(
    environ: Mapping[str, str], name: str, key: str, doing: str, *, header: bool = False
) -> str:
    """The value of the variable `name` that the setting `key` names, for `doing` (e.g.
    "fetch the export"): a SourceError when `key` holds no variable's name, the variable
    is unset or blank, or its value cannot be sent: as a header's value (`header`), or
    at all (a line break; basic auth and a form body encode any other character)."""
    if not is_variable_name(name):
        raise SourceError(f"cannot {doing}: {not_a_name(key)}")
    value = environ.get(name, "").strip()
    if not value:
        raise SourceError(f"cannot {doing}: ${name} (named by {key}) is not set or empty")
    problem = header_value_problem(value) if header else line_break_problem(value)
    if problem is not None:
        raise SourceError(
            f"cannot {doing}: ${name} (named by {key}) {problem}, which cannot be sent "
            "(the value is not shown)"
        )
    return value
