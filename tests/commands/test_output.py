"""A command's report or document reaches the terminal, or the file `--out` names, as
text only: escape sequences from DX or HR show as escapes, JSON stays the same JSON."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from hrsync.commands.output import show, write_output

NAME = "Ops \x1b[2J\x1b]8;;https://evil.test\x07x \u202eevil \x9b"
SHOWN = "Ops \\x1b[2J\\x1b]8;;https://evil.test\\x07x \\u202eevil \\u009b"


def test_a_report_on_stdout_shows_escapes(capsys: pytest.CaptureFixture[str]) -> None:
    write_output(f"archive {NAME}\nnext line", None)
    assert capsys.readouterr().out == f"archive {SHOWN}\nnext line\n"


def test_a_report_written_to_a_file_shows_escapes_too(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "report.txt"
    write_output(f"archive {NAME}", out)
    assert out.read_text(encoding="utf-8") == f"archive {SHOWN}\n"
    assert capsys.readouterr().err == f"hrsync: written to {out}\n"


def test_a_json_document_stays_the_same_document(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    document = {"team": NAME, "names": [NAME, "Chloé"]}
    text = json.dumps(document, indent=2, ensure_ascii=False)  # as documents.dumps writes
    write_output(text, None)
    printed = capsys.readouterr().out
    assert "\x1b" not in printed and "\u202e" not in printed and "\x9b" not in printed
    assert json.loads(printed) == document
    out = tmp_path / "plan.json"
    write_output(text, out)
    assert json.loads(out.read_text(encoding="utf-8")) == document


def test_show_is_print_for_a_person(capsys: pytest.CaptureFixture[str]) -> None:
    import sys

    show(NAME, sys.stderr, end="")
    show("tab\tkept")
    captured = capsys.readouterr()
    assert captured.err == SHOWN and captured.out == "tab\tkept\n"
