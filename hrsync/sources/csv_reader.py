"""CSV exports: header, delimiter (configured or sniffed), rows streamed with their line numbers."""

from __future__ import annotations

import csv
import itertools
import re
from collections.abc import Iterator

from hrsync.people import EXTRA_VALUES, RowValues, SourceRow
from hrsync.sources.base import Export, Payload, SourceError, decode, lines

CANDIDATE_DELIMITERS = (",", ";", "\t", "|")
_NUMBER = re.compile(r"^[\d.,\s-]+$")


def open_csv(payload: Payload, *, encoding: str, delimiter: str) -> Export:
    """Read the header now (so a bad file fails at once); rows are read when asked for."""
    with _Reader(payload, encoding, delimiter) as reader:
        columns = reader.columns
        chosen = reader.delimiter

    def rows() -> Iterator[SourceRow]:
        with _Reader(payload, encoding, chosen) as reader:
            yield from reader.rows()

    return Export(name=payload.name, columns=columns, format="csv", _rows=rows)


def sniff_delimiter(header_line: str) -> str:
    """The candidate that occurs most often in the header line, outside quotes (ties: `,` first).

    Header names rarely contain delimiters, so the header alone is a good witness; a
    single-column file has none of them and reads as `,`.
    """
    unquoted = re.sub(r'"[^"]*"', "", header_line)
    counts = [(unquoted.count(d), -i, d) for i, d in enumerate(CANDIDATE_DELIMITERS)]
    best = max(counts)
    return best[2] if best[0] > 0 else ","


class _Reader:
    """One pass over the file: physical lines → csv records → SourceRows."""

    def __init__(self, payload: Payload, encoding: str, delimiter: str) -> None:
        self.payload = payload
        self._text = decode(payload, encoding)
        try:
            physical = lines(self._text)
            first = next(physical, None)
            if first is None or not first.strip():
                raise SourceError(_empty_message(payload.name, first))
            self.delimiter = delimiter or sniff_delimiter(first)
            # strict: a stray quote fails loudly instead of silently merging rows.
            self._csv = csv.reader(
                itertools.chain([first], physical), delimiter=self.delimiter, strict=True
            )
            header = self._next_record()
            assert header is not None  # the first line is not blank
            self.columns = _check_header(payload.name, header, self.delimiter)
        except BaseException:
            self._text.close()  # release the file now, not at garbage collection
            raise

    def __enter__(self) -> _Reader:
        return self

    def __exit__(self, *exc: object) -> None:
        self._text.close()  # closes the file at once, even after a partial pass

    def rows(self) -> Iterator[SourceRow]:
        name = self.payload.name
        width = len(self.columns)
        index = {column: i for i, column in enumerate(self.columns)}
        blanks = ("",) * width
        reader = self._csv
        while True:
            # Inlined _next_record: this loop runs once per row of the export.
            start = reader.line_num + 1
            try:
                record = next(reader, None)
            except csv.Error as exc:
                raise self._invalid(start, exc) from None
            if record is None:
                return
            if not record or (not record[0].strip() and not "".join(record).strip()):
                continue  # blank line, or only delimiters
            location = f"{name} line {start}"
            if len(record) == width:
                yield SourceRow(location, RowValues(index, tuple(record)))
            elif len(record) < width:
                yield SourceRow(location, RowValues(index, (*record, *blanks[len(record) :])))
            elif not "".join(record[width:]).strip():
                yield SourceRow(location, RowValues(index, tuple(record[:width])))
            else:
                values = dict(zip(self.columns, record, strict=False))
                values[EXTRA_VALUES] = self.delimiter.join(record[width:])
                yield SourceRow(location, values)

    def _next_record(self) -> list[str] | None:
        start = self._csv.line_num + 1
        try:
            return next(self._csv, None)
        except csv.Error as exc:
            raise self._invalid(start, exc) from None

    def _invalid(self, start: int, exc: csv.Error) -> SourceError:
        reached = self._csv.line_num
        where = (
            f" (the record runs on to line {reached}: look for an unclosed quote)"
            if reached > start
            else ""
        )
        return SourceError(f"{self.payload.name} line {start} is not valid CSV: {exc}{where}")


def _empty_message(name: str, first: str | None) -> str:
    if first is None:
        return f"{name} is empty: expected a header line and one row per person"
    return f"{name} has no header: line 1 is blank, expected the column names there"


def _check_header(name: str, header: list[str], delimiter: str) -> tuple[str, ...]:
    columns = [column.strip() for column in header]
    # Spreadsheets often leave empty columns at the end of the header; they carry nothing.
    while columns and not columns[-1]:
        columns.pop()
    shown = delimiter.join(header).strip()
    if any(not column for column in columns):
        position = columns.index("") + 1
        raise SourceError(
            f"{name} has no usable header: column {position} of line 1 has no name "
            f"(line 1 is {shown[:200]!r})"
        )
    if any("@" in column or _NUMBER.match(column) for column in columns):
        raise SourceError(
            f"{name} has no header: line 1 looks like data ({shown[:200]!r}); "
            f"expected column names such as employee_id, email, name"
        )
    seen: set[str] = set()
    for column in columns:
        if column in seen:
            raise SourceError(f"{name} header names the column {column!r} twice")
        seen.add(column)
    return tuple(columns)
