"""Reading CSV exports from files: encodings, delimiters, quoting, line numbers, bad files."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from hrsync.core.export.rows import MAX_FIELD_CHARS, LineLocations
from hrsync.core.people import read_people
from hrsync.core.settings import FieldSettings, FilterSettings, SourceSettings
from hrsync.sources.base import CHUNK_BYTES, Export, Lines, LineTooLong, SourceError, lines
from hrsync.sources.csv_reader import line_limit, sniff_delimiter
from hrsync.sources.open import open_export

BOM = b"\xef\xbb\xbf"


def write(tmp_path: Path, data: bytes, name: str = "people.csv") -> Path:
    path = tmp_path / name
    path.write_bytes(data)
    return path


def export_of(path: Path, **settings: object) -> Export:
    return open_export(SourceSettings(path=path, **settings))  # type: ignore[arg-type]


def table(export: Export) -> list[tuple[str, dict[str, str]]]:
    return [(row.location, dict(row.values)) for row in export.rows()]


def test_bom_and_semicolon_are_recognised_without_configuration(tmp_path: Path) -> None:
    path = write(tmp_path, BOM + "id;name;email\n1;Zoë Ångström;zoe@x.com\n".encode())
    export = export_of(path)
    assert export.name == "people.csv"
    assert export.format == "csv"
    assert export.columns == ("id", "name", "email")
    assert table(export) == [
        ("people.csv line 2", {"id": "1", "name": "Zoë Ångström", "email": "zoe@x.com"})
    ]


@pytest.mark.parametrize("delimiter", [",", ";", "\t", "|"])
def test_each_candidate_delimiter_is_sniffed(tmp_path: Path, delimiter: str) -> None:
    text = delimiter.join(["id", "name", "email"]) + "\n" + delimiter.join(["7", "Al", "a@x.io"])
    export = export_of(write(tmp_path, text.encode()))
    assert table(export) == [("people.csv line 2", {"id": "7", "name": "Al", "email": "a@x.io"})]


def test_configured_delimiter_wins_over_sniffing(tmp_path: Path) -> None:
    # The header has more commas than semicolons, but the config says ';'.
    path = write(tmp_path, b"id;name, full;notes, a, b\n1;Al;x\n")
    export = export_of(path, delimiter=";")
    assert export.columns == ("id", "name, full", "notes, a, b")


def test_sniffing_ignores_delimiters_inside_quoted_header_names() -> None:
    assert sniff_delimiter('"a;b;c";"d;e";f,g\n') == ";"
    assert sniff_delimiter('"Last, First",id\n') == ","
    assert sniff_delimiter("onlyonecolumn\n") == ","


def test_quoted_fields_keep_newlines_and_delimiters_and_lines_count_physically(
    tmp_path: Path,
) -> None:
    data = (
        b"id,name,notes\r\n"
        b'1,"Smith, Jane","line one\r\nline two\r\nline three"\r\n'
        b"2,Bob,plain\r\n"
        b"\r\n"
        b'3,"Quote ""Q"" Person","a,b"\r\n'
    )
    export = export_of(write(tmp_path, data))
    assert table(export) == [
        (
            "people.csv line 2",
            {"id": "1", "name": "Smith, Jane", "notes": "line one\r\nline two\r\nline three"},
        ),
        ("people.csv line 5", {"id": "2", "name": "Bob", "notes": "plain"}),
        ("people.csv line 7", {"id": "3", "name": 'Quote "Q" Person', "notes": "a,b"}),
    ]


def test_latin1_export_reads_when_configured(tmp_path: Path) -> None:
    path = write(tmp_path, "id;name\n1;José Müller\n".encode("latin-1"))
    export = export_of(path, encoding="latin-1")
    assert table(export) == [("people.csv line 2", {"id": "1", "name": "José Müller"})]


def test_not_utf8_names_file_byte_line_and_the_encoding_setting(tmp_path: Path) -> None:
    path = write(tmp_path, "id;name\n1;Al\n2;José\n".encode("latin-1"))
    with pytest.raises(SourceError) as caught:
        list(export_of(path).rows())
    message = str(caught.value)
    offset = "id;name\n1;Al\n2;Jos".__len__()
    assert f"people.csv is not valid UTF-8 at byte {offset} (line 3)" in message
    assert "source.encoding" in message


def test_bad_byte_offset_is_exact_far_into_the_file_after_a_bom(tmp_path: Path) -> None:
    head = b"id,name\n" + b"".join(b"%d,name%d\n" % (i, i) for i in range(20000))
    assert len(head) > 2 * CHUNK_BYTES
    path = write(tmp_path, BOM + head + b"x,\xff\n")
    with pytest.raises(SourceError, match=rf"at byte {len(BOM) + len(head) + 2} \(line 20002\)"):
        list(export_of(path).rows())


def test_multibyte_characters_split_across_chunks_decode(tmp_path: Path) -> None:
    filler = "a" * (CHUNK_BYTES - 9)  # puts "é" across the first chunk boundary
    path = write(tmp_path, f"id,name\n1,{filler}é\n".encode())
    [(_, values)] = table(export_of(path))
    assert values["name"].endswith("aé")


@pytest.mark.parametrize(
    ("data", "expected"),
    [
        (b"", "people.csv is empty"),
        (BOM, "people.csv is empty"),
        (b"\n1,2,3\n", "people.csv has no header: line 1 is blank"),
        (b"1,al@x.com,Al\n2,b@x.com,B\n", "people.csv has no header: line 1 looks like data"),
        (b"id,,email\n1,2,3\n", "column 2 of line 1 has no name"),
        (b"id,email,id\n", "names the column 'id' twice"),
        (b'id,"name\n', "people.csv line 1 is not valid CSV"),
        (b'id,name\n1,"Al"x\n2,Bo\n', "people.csv line 2 is not valid CSV"),
        (b'id,name\n1,"Al\n2,Bo\n3,Cy\n', "line 2 is not valid CSV.*runs on to line 4"),
    ],
)
def test_unusable_files_fail_with_a_message_naming_the_file(
    tmp_path: Path, data: bytes, expected: str
) -> None:
    path = write(tmp_path, data)
    with pytest.raises(SourceError, match=expected):
        list(export_of(path).rows())


def test_missing_file_and_directory_are_source_errors(tmp_path: Path) -> None:
    with pytest.raises(SourceError, match=r"people\.csv does not exist \(source\.path\)"):
        export_of(tmp_path / "people.csv")
    with pytest.raises(SourceError, match="is a directory"):
        export_of(tmp_path)


def test_the_headers_unnamed_trailing_columns_may_hold_blanks(tmp_path: Path) -> None:
    # Spreadsheets write "id,name,email," and a trailing delimiter on every row.
    path = write(tmp_path, b"id,name,email,\n1,Al,a@x.com,\n2,Bo,b@x.com\n")
    export = export_of(path)
    assert export.columns == ("id", "name", "email")  # the trailing empty column is dropped
    assert [values for _, values in table(export)] == [
        {"id": "1", "name": "Al", "email": "a@x.com"},
        {"id": "2", "name": "Bo", "email": "b@x.com"},
    ]


@pytest.mark.parametrize(
    ("body", "expected"),
    [
        # A short row used to read blanks: a blank status then dropped the person silently.
        (b"1,Al,a@x.com,Active\n2,Bo,b@x.com\n", "line 3 has 3 values, expected 4"),
        (b"1,Al\n", "line 2 has 2 values, expected 4"),
        # A long row: a name with an unquoted comma shifts every later value.
        (b"1,Smith, Al,a@x.com,Active\n", "line 2 has 5 values, expected 4"),
        # Surplus blanks beyond the header are no better: the same shift can leave them.
        (b"1,Smith, Al,a@x.com,\n2,Bo,b@x.com,Active,\n", "2 rows do not have the header's 4"),
    ],
)
def test_rows_without_one_value_per_column_are_refused(
    tmp_path: Path, body: bytes, expected: str
) -> None:
    path = write(tmp_path, b"id,name,email,status\n" + body)
    with pytest.raises(SourceError, match=expected) as caught:
        list(export_of(path).rows())
    assert str(caught.value).startswith("people.csv")
    assert "cut off" not in str(caught.value)


def test_every_miscounted_row_is_named_in_one_short_message(tmp_path: Path) -> None:
    good = b"".join(b"%d,P%d,p%d@x.com\n" % (i, i, i) for i in range(100))
    bad = b"".join(b"%d,P%d\n" % (i, i) for i in range(1000, 1500))
    path = write(tmp_path, b"id,name,email\n" + good + bad + b"9,Z,z@x.com,extra\n")
    with pytest.raises(SourceError) as caught:
        list(export_of(path).rows())
    message = str(caught.value)
    assert message.startswith("people.csv: 501 rows do not have the header's 3 values: ")
    assert "line 102 has 2, line 103 has 2" in message
    assert "and 481 more" in message
    assert "line 602" not in message  # beyond the first 20
    assert "short row" in message and "unquoted delimiter" in message
    assert len(message) < 1000


def test_a_last_row_cut_off_without_its_line_end_is_refused(tmp_path: Path) -> None:
    path = write(tmp_path, b"id,name,email,status\r\n1,Al,a@x.com,Active\r\n2,Bo,b@x.co")
    with pytest.raises(SourceError) as caught:
        list(export_of(path).rows())
    message = str(caught.value)
    assert "people.csv line 3 has 3 values, expected 4 like the header" in message
    assert "the export looks cut off inside its last row" in message


def test_a_short_row_before_a_complete_last_row_is_no_cut(tmp_path: Path) -> None:
    path = write(tmp_path, b"id,name,email\n1,Al\n2,Bo,b@x.com")
    with pytest.raises(SourceError, match="line 2 has 2 values, expected 3") as caught:
        list(export_of(path).rows())
    assert "cut off" not in str(caught.value)


def test_a_complete_last_row_without_a_line_end_reads(tmp_path: Path) -> None:
    path = write(tmp_path, b"id,name\r1,Al\r2,Bo")
    assert [values["name"] for _, values in table(export_of(path))] == ["Al", "Bo"]


def test_a_value_over_the_limit_is_refused_naming_line_and_column(tmp_path: Path) -> None:
    huge = b"a" * (MAX_FIELD_CHARS + 1)
    path = write(tmp_path, b"id,name,email\n1,Al,a@x.com\n2," + huge + b",b@x.com\n")
    with pytest.raises(SourceError) as caught:
        list(export_of(path).rows())
    message = str(caught.value)
    assert message.startswith("people.csv line 3: name has a value of 65,537 characters")
    assert "limit of 65,536 characters per value" in message
    assert len(message) < 300


def test_a_value_at_the_limit_reads(tmp_path: Path) -> None:
    value = "é" * MAX_FIELD_CHARS
    path = write(tmp_path, f'id,notes\n1,"{value}"\n'.encode())
    [(_, values)] = table(export_of(path))
    assert values["notes"] == value


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        # Past the csv module's own default limit (131,072), which named no column.
        (b"b" * 200_000, "people.csv line 2: email has a value of 200,000 characters"),
        # Quoted, over many physical lines: still one value, still named.
        (b'"' + b"line\n" * 20_000 + b'"', "people.csv line 2: email has a value of 100,000"),
        # A whole export's worth of one value: refused once the line is past any real row.
        (b"c" * 5_000_000, "people.csv line 2: email has a value longer than 65,536"),
    ],
)
def test_absurd_values_are_refused_naming_the_column(
    tmp_path: Path, value: bytes, expected: str
) -> None:
    path = write(tmp_path, b"id,name,email\n1,Al," + value + b"\n2,Bo,b@x.com\n")
    with pytest.raises(SourceError, match=expected):
        list(export_of(path).rows())


def test_a_quoted_value_over_many_lines_is_bounded_by_the_csv_module(tmp_path: Path) -> None:
    # Short lines, each fine, make up one value: the csv module's own (raised) limit stops
    # it, and the message still names the line and our limit.
    value = b'"' + b"line\n" * 300_000 + b'"'
    path = write(tmp_path, b"id,name,email\n1,Al," + value + b"\n")
    with pytest.raises(SourceError) as caught:
        list(export_of(path).rows())
    assert str(caught.value).startswith(
        "people.csv line 2 has a value longer than 1,048,576 characters; the limit is 65,536"
    )


def test_a_line_far_longer_than_any_row_is_refused_early(tmp_path: Path) -> None:
    # Millions of short values on one line: refused long before they are all parsed.
    path = write(tmp_path, b"id,name,email\n" + b"1,b,c," * 1_000_000 + b"\n")
    with pytest.raises(SourceError) as caught:
        list(export_of(path).rows())
    message = str(caught.value)
    assert message.startswith(f"people.csv line 2 is longer than {line_limit(3):,} characters")
    assert "expected" not in message or "3" in message


def test_a_file_over_max_bytes_is_refused_before_reading(tmp_path: Path) -> None:
    path = write(tmp_path, b"id,name\n" + b"1,Al\n" * 100)
    with pytest.raises(SourceError) as caught:
        export_of(path, max_bytes=100)
    message = str(caught.value)
    assert message.startswith("people.csv is 508 bytes, over 100 bytes, the limit set by")
    assert "source.max_bytes" in message
    assert len(list(export_of(path, max_bytes=508).rows())) == 100


def test_a_file_that_grows_past_max_bytes_while_read_is_refused(tmp_path: Path) -> None:
    path = write(tmp_path, b"id,name\n1,Al\n")
    export = export_of(path, max_bytes=CHUNK_BYTES * 3)
    with path.open("ab") as fh:
        fh.write(b"2,Bo\n" * CHUNK_BYTES)
    with pytest.raises(SourceError, match=r"people.csv holds more than 196,608 bytes, the limit"):
        list(export.rows())


def test_rows_can_be_read_twice(tmp_path: Path) -> None:
    export = export_of(write(tmp_path, b"id\n1\n2\n"))
    assert table(export) == table(export)


def test_rows_are_streamed_not_read_ahead(tmp_path: Path) -> None:
    # A bad byte far into the file is only met when reading gets there: earlier rows arrive
    # first, and opening the export does not read it all.
    body = b"".join(b"%d\n" % i for i in range(40000))
    path = write(tmp_path, b"id\n" + body + b"\xff\n")
    export = export_of(path)
    rows = export.rows()
    assert next(rows).values["id"] == "0"
    assert next(rows).values["id"] == "1"
    with pytest.raises(SourceError, match="line 40002"):
        list(rows)


@given(
    st.lists(st.text(alphabet='ab,\r\n"é\f\u2028', max_size=12), max_size=8),
    st.lists(st.integers(min_value=1, max_value=7), min_size=1, max_size=6),
)
def test_line_splitting_does_not_depend_on_chunking(parts: list[str], cuts: list[int]) -> None:
    text = "".join(parts)
    chunks: list[str] = []
    rest = text
    for cut in cuts * (len(text) + 1):
        if not rest:
            break
        chunks.append(rest[:cut])
        rest = rest[cut:]
    split = list(lines(iter(chunks)))
    assert "".join(split) == text
    assert split == list(lines(iter([text])))
    for line in split[:-1]:
        assert line.endswith(("\n", "\r"))
        assert "\n" not in line[:-1] and "\r" not in line[:-2]


@pytest.mark.parametrize("encoding", ["no-such-encoding", "base64"])
def test_an_unusable_encoding_setting_is_named(tmp_path: Path, encoding: str) -> None:
    path = write(tmp_path, b"id\n1\n")
    with pytest.raises(SourceError, match=f"source.encoding '{encoding}' is not a known text"):
        export_of(path, encoding=encoding)


@given(
    st.lists(st.text(alphabet='ab,\r\n"é', max_size=12), max_size=8),
    st.lists(st.integers(min_value=1, max_value=7), min_size=1, max_size=6),
)
def test_lines_tells_whether_the_text_ends_with_a_line_end(
    parts: list[str], cuts: list[int]
) -> None:
    text = "".join(parts)
    chunks = [text[i : i + cuts[0]] for i in range(0, len(text), cuts[0])]
    split = Lines(iter(chunks))
    assert "".join(split) == text
    assert split.ended == (not text or text.endswith(("\n", "\r")))


@pytest.mark.parametrize("chunk", [1, 3, 1000])
def test_lines_refuses_a_line_past_its_limit_holding_no_more_than_it(chunk: int) -> None:
    text = "short\n" + "x" * 5000 + "\nafter\n"
    chunks = iter([text[i : i + chunk] for i in range(0, len(text), chunk)])
    split = Lines(chunks, max_chars=100)
    got = iter(split)
    assert next(got) == "short\n"
    with pytest.raises(LineTooLong) as caught:
        next(got)
    assert caught.value.start == "x" * 101


def test_lines_of_a_lone_cr_file_are_not_held_back() -> None:
    split = Lines(iter(["a\r", "bbbb", "bbbb", "\rc"]), max_chars=9)
    assert list(split) == ["a\r", "bbbbbbbb\r", "c"]
    assert not split.ended


# ---------------------------------------------------------------- the whole-file pass

cell = st.text(alphabet='ab ,;"\n\r\t|é', max_size=6)


def rows_as_read(export: Export) -> tuple[list[str], list[list[str]], list[str]]:
    """What the row-by-row pass yields, as a table's parts."""
    locations, cells = [], []
    for row in export.rows():
        locations.append(row.location)
        cells.append([row.values[c] for c in export.columns])
    return list(export.columns), cells, locations


@given(
    st.lists(st.lists(cell, min_size=3, max_size=3), max_size=8),
    st.sampled_from(["\n", "\r\n", "\r"]),
    st.booleans(),
)
def test_the_whole_file_pass_reads_what_the_row_by_row_pass_reads(
    records: list[list[str]], newline: str, blank_line: bool
) -> None:
    import csv
    import io
    import tempfile

    text = io.StringIO()
    csv.writer(text, lineterminator=newline).writerows([["id", "name", "email"], *records])
    body = text.getvalue() + (newline if blank_line else "")
    with tempfile.TemporaryDirectory() as tmp:
        path = write(Path(tmp), body.encode())
        export = export_of(path, delimiter=",")
        try:
            expected = rows_as_read(export)
        except SourceError as exc:
            with pytest.raises(SourceError) as caught:
                export.table()
            assert str(caught.value) == str(exc)
            return
        whole = export.table()
    assert list(whole.index) == expected[0]
    assert [[row[i] for i in range(len(whole.index))] for row in whole.cells] == expected[1]
    assert list(whole.locations) == expected[2]


@pytest.mark.parametrize(
    ("body", "expected"),
    [
        (b"1,Al,a@x.com,Active\n2,Bo,b@x.com\n", "line 3 has 3 values, expected 4"),
        (b"1,Al,a@x.com,Active\r\n2,Bo,b@x.co", "cut off inside its last row"),
        (b'1,"Al,a@x.com,Active\n', "not valid CSV"),
        (b"1,Al,%s,Active\n" % (b"x" * (MAX_FIELD_CHARS + 1)), "email has a value of"),
    ],
)
def test_the_whole_file_pass_refuses_what_the_row_by_row_pass_refuses(
    tmp_path: Path, body: bytes, expected: str
) -> None:
    export = export_of(write(tmp_path, b"id,name,email,status\n" + body))
    with pytest.raises(SourceError, match=expected) as by_row:
        list(export.rows())
    with pytest.raises(SourceError) as whole:
        export.table()
    assert str(whole.value) == str(by_row.value)


def test_the_whole_file_pass_skips_blank_lines_and_counts_them(tmp_path: Path) -> None:
    path = write(tmp_path, b"id,name\n1,Al\n\n,\n2,Bo\n")
    whole = export_of(path).table()
    assert [list(row) for row in whole.cells] == [["1", "Al"], ["2", "Bo"]]
    assert list(whole.locations) == ["people.csv line 2", "people.csv line 5"]


def test_line_locations_are_written_when_asked_as_a_list_would_hold_them() -> None:
    locations = LineLocations("100% people.csv", 2, 4)
    held = [f"100% people.csv line {n}" for n in range(2, 6)]
    assert list(locations) == held and len(locations) == 4
    assert [locations[i] for i in range(-4, 4)] == held + held
    assert locations[1:3] == held[1:3] and locations[::-2] == held[::-2]
    assert "100% people.csv line 5" in locations and locations.index(held[2]) == 2
    with pytest.raises(IndexError):
        locations[4]


def test_people_read_in_one_pass_know_their_lines(tmp_path: Path) -> None:
    path = write(
        tmp_path, b"id,name,email,manager\n1,Al,al@x.com,\n2,Bo,bo@x.com,1\n3,,cy@x.com,9\n"
    )
    export = export_of(path)
    table = export.table()
    assert isinstance(table.locations, LineLocations)
    fields = FieldSettings(employee_id="id", name="name", email="email", manager_id="manager")
    directory = read_people(export.name, export.columns, table, fields, FilterSettings())
    assert [p.location for p in directory.people] == [
        "people.csv line 2",
        "people.csv line 3",
        "people.csv line 4",
    ]
    assert [p.location for p in directory.problems] == ["people.csv line 4"]
    assert "at='people.csv line 3'" in repr(directory.people[1])
