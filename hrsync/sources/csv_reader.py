"""CSV exports: header, delimiter (configured or sniffed), rows streamed with their line numbers.

Refused, naming file and line (docs/reference/exports.md): a row with fewer or more
values than the header (only the header's own unnamed trailing columns may be left out or
blank), all such rows in one message at the end of the pass, a short last row without a
line end as a cut-off export; a value over `MAX_FIELD_CHARS`, naming its column; a line
longer than `line_limit` of the header's width, as soon as it gets that long.
"""

from __future__ import annotations

import csv
import itertools
import re
from collections.abc import Iterator
from operator import itemgetter

from hrsync.core.export.rows import MAX_FIELD_CHARS, LineLocations, RowTable, RowValues, SourceRow
from hrsync.core.listing import LIMIT, capped
from hrsync.sources.base import Export, Lines, LineTooLong, Payload, SourceError, decode

CANDIDATE_DELIMITERS = (",", ";", "\t", "|")
_NUMBER = re.compile(r"^[\d.,\s-]+$")

# The header is read before its width is known: a bound generous for 100,000 columns.
HEADER_MAX_CHARS = 16 * 1024 * 1024
# The csv module stops at its own limit (131,072 by default, for the whole process) with
# a message that names no column. Ours is lower and is checked on whole rows, where the
# column is known, so the module's is raised to 1 Mi: past every line a row of up to 7
# values may have (longer lines are refused before the module sees them, naming the
# column too), and still a bound on a quoted value spanning many short lines.
CSV_MODULE_FIELD_LIMIT = 1024 * 1024
if csv.field_size_limit() < CSV_MODULE_FIELD_LIMIT:
    csv.field_size_limit(CSV_MODULE_FIELD_LIMIT)


def line_limit(values: int) -> int:
    """The longest physical line a row of `values` values may be: each value at the limit,
    every quote in it doubled, plus its own quotes and delimiter."""
    return min(HEADER_MAX_CHARS, (2 * MAX_FIELD_CHARS + 3) * max(values, 1))


def open_csv(payload: Payload, *, encoding: str, delimiter: str) -> Export:
    """Read the header now (so a bad file fails at once); rows are read when asked for."""
    with _Reader(payload, encoding, delimiter) as reader:
        columns = reader.columns
        chosen = reader.delimiter

    def rows() -> Iterator[SourceRow]:
        with _Reader(payload, encoding, chosen) as reader:
            yield from reader.rows()

    def table() -> RowTable:
        with _Reader(payload, encoding, chosen) as reader:
            whole = reader.table()
        # Something the one-pass read cannot place (a blank line, a value over several
        # lines, a miscounted row, bad CSV): the row-by-row pass names its exact line.
        return whole if whole is not None else RowTable.of_rows(rows(), columns)

    return Export(name=payload.name, columns=columns, format="csv", _rows=rows, _table=table)


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
            self._lines = Lines(self._text, HEADER_MAX_CHARS)
            physical = iter(self._lines)
            try:
                first = next(physical, None)
            except LineTooLong:
                raise SourceError(
                    f"{payload.name} line 1 is longer than {HEADER_MAX_CHARS:,} characters: "
                    f"not the header of an HR export"
                ) from None
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
            # Values under the unnamed columns a spreadsheet leaves at the end of the header.
            self._spare = len(header) - len(self.columns)
            self._lines.max_chars = line_limit(len(header))
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
        widest = width + self._spare
        index = {column: i for i, column in enumerate(self.columns)}
        reader = self._csv
        join = "".join
        miscounted = _Miscounted(name, width)
        while True:
            # Inlined _next_record: this loop runs once per row of the export.
            start = reader.line_num + 1
            try:
                record = next(reader, None)
            except csv.Error as exc:
                raise self._invalid(start, exc) from None
            except LineTooLong as exc:
                raise self._too_long(reader.line_num + 1, exc) from None
            if record is None:
                break
            if not record or (not record[0].strip() and not join(record).strip()):
                continue  # blank line, or only delimiters
            if len(record) != width:
                # A short row would read blanks (a blank status filters the person out,
                # silently) and a long one shifts values: both are refused. Only the
                # header's own unnamed trailing columns may hold (blank) values.
                if width < len(record) <= widest and not join(record[width:]).strip():
                    record = record[:width]
                else:
                    miscounted.add(start, reader.line_num, len(record))
                    continue
            # The sum bounds every value: one cheap test per row, the search only past it.
            if len(join(record)) > MAX_FIELD_CHARS:
                self._check_fields(start, record)
            yield SourceRow(f"{name} line {start}", RowValues(index, tuple(record)))
        # A file without a final line end whose last record is short was cut inside it.
        miscounted.raise_if_any(cut_after=None if self._lines.ended else reader.line_num)

    def table(self) -> RowTable | None:
        """Every row in one run of the csv module, when the file is plain: each record one
        line of the header's width and no line longer than a value may be. None otherwise,
        and the caller reads row by row (`rows`), which refuses or skips exactly as needed.
        """
        reader = self._csv
        header_end = reader.line_num
        try:
            records = list(reader)
        except (csv.Error, LineTooLong):
            return None
        width = len(self.columns)
        if (
            reader.line_num - header_end != len(records)
            or set(map(len, records)) - {width}
            or self._lines.longest > MAX_FIELD_CHARS
            or _blank_rows(records)
        ):
            return None
        locations = LineLocations(self.payload.name, header_end + 1, len(records))
        index = {column: i for i, column in enumerate(self.columns)}
        # A value is no longer than the line it is on.
        return RowTable(index, records, locations, {}, longest=self._lines.longest)

    def _next_record(self) -> list[str] | None:
        start = self._csv.line_num + 1
        try:
            return next(self._csv, None)
        except csv.Error as exc:
            raise self._invalid(start, exc) from None

    def _check_fields(self, line: int, record: list[str]) -> None:
        for position, value in enumerate(record):
            if len(value) > MAX_FIELD_CHARS:
                raise SourceError(
                    f"{self.payload.name} line {line}: {self.columns[position]} has a value of "
                    f"{len(value):,} characters, over the limit of {MAX_FIELD_CHARS:,} "
                    f"characters per value (no name, e-mail or id is this long)"
                )

    def _too_long(self, line: int, exc: LineTooLong) -> SourceError:
        name, width = self.payload.name, len(self.columns)
        limit = self._lines.max_chars or 0
        try:
            values = next(csv.reader([exc.start], delimiter=self.delimiter), [])
        except csv.Error:
            values = []
        for position, value in enumerate(values):
            if len(value) > MAX_FIELD_CHARS:
                column = self.columns[position] if position < width else f"value {position + 1}"
                return SourceError(
                    f"{name} line {line}: {column} has a value longer than "
                    f"{MAX_FIELD_CHARS:,} characters, the limit per value (the line runs past "
                    f"{limit:,} characters)"
                )
        return SourceError(
            f"{name} line {line} is longer than {limit:,} characters, more than a row of "
            f"{width} values of at most {MAX_FIELD_CHARS:,} characters each can be "
            f"(at least {len(values):,} values on it)"
        )

    def _invalid(self, start: int, exc: csv.Error) -> SourceError:
        reached = self._csv.line_num
        if str(exc).startswith("field larger than field limit"):
            return SourceError(
                f"{self.payload.name} line {start} has a value longer than "
                f"{csv.field_size_limit():,} characters; the limit is {MAX_FIELD_CHARS:,} "
                f"characters per value (look for an unclosed quote)"
            )
        where = (
            f" (the record runs on to line {reached}: look for an unclosed quote)"
            if reached > start
            else ""
        )
        return SourceError(f"{self.payload.name} line {start} is not valid CSV: {exc}{where}")


def _blank_rows(records: list[list[str]]) -> bool:
    """Whether a record is blank (only delimiters): rows() skips those, so the caller must
    read row by row. Only a record whose first value is blank (empty, or only whitespace)
    can be one: two C passes over the first values rule that out, as they do in the usual
    export, before the exact test."""
    firsts = list(map(itemgetter(0), records))
    if all(firsts) and not any(map(str.isspace, firsts)):
        return False
    return any(not "".join(r).strip() for r in records if not r[0].strip())


class _Miscounted:
    """Rows whose number of values differs from the header's, reported together at the end."""

    def __init__(self, name: str, width: int) -> None:
        self.name = name
        self.width = width
        self.shown: list[tuple[int, int]] = []
        self.count = 0
        self.short = 0
        self.last_short_end = 0  # the line where the latest short row ends

    def add(self, line: int, end: int, found: int) -> None:
        self.count += 1
        if len(self.shown) < LIMIT:
            self.shown.append((line, found))
        if found < self.width:
            self.short += 1
            self.last_short_end = end

    def raise_if_any(self, *, cut_after: int | None) -> None:
        if not self.count:
            return
        width, shown = self.width, self.shown
        if self.count == 1:
            line, found = shown[0]
            head = f"{self.name} line {line} has {found} values, expected {width} like the header"
        else:
            listed = capped((f"line {line} has {found}" for line, found in shown), total=self.count)
            head = (
                f"{self.name}: {self.count} rows do not have the header's {width} values: {listed}"
            )
        if cut_after is not None and self.last_short_end == cut_after:
            raise SourceError(
                f"{head}: the export looks cut off inside its last row (the file ends "
                f"without a line break); export or fetch it again"
            )
        hints = []
        if self.short:
            hints.append("a short row is missing values (or was cut short)")
        if self.count > self.short:
            hints.append(
                "a long row usually has a value with an unquoted delimiter; quote that value"
            )
        raise SourceError(f"{head}; every row needs one value per column: {'; '.join(hints)}")


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
