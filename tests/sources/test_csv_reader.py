"""Reading CSV exports from files: encodings, delimiters, quoting, line numbers, bad files."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from hrsync.config import SourceSettings
from hrsync.people import EXTRA_VALUES
from hrsync.sources import Export, SourceError, open_export
from hrsync.sources.base import CHUNK_BYTES, lines
from hrsync.sources.csv_reader import sniff_delimiter

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


def test_short_rows_read_blank_and_long_rows_keep_the_surplus(tmp_path: Path) -> None:
    path = write(tmp_path, b"id,name,email,\n1,Al\n2,Bo,b@x.com,,\n3,Cy,c@x.com,oops,more\n")
    export = export_of(path)
    assert export.columns == ("id", "name", "email")  # the trailing empty column is dropped
    rows = table(export)
    assert rows[0][1] == {"id": "1", "name": "Al", "email": ""}
    assert rows[1][1] == {"id": "2", "name": "Bo", "email": "b@x.com"}
    assert rows[2][1][EXTRA_VALUES] == "oops,more"


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
