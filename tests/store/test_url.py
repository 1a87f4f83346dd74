"""The state store URL's one owner: parsing, memory, redaction, the start check."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from hrsync.store.url import (
    anchor_sqlite,
    check_database_url,
    parse_database_url,
    redact,
)


@pytest.mark.parametrize(
    ("url", "in_memory", "path"),
    [
        ("sqlite://", True, None),
        ("sqlite:///:memory:", True, None),
        ("sqlite:///file::memory:?cache=shared&uri=true", True, None),
        ("sqlite:///file:state?mode=memory&cache=shared&uri=true", True, None),
        ("sqlite:///file:/var/lib/hrsync.db?uri=true", False, "/var/lib/hrsync.db"),
        ("sqlite:///hrsync.db", False, "hrsync.db"),
        ("sqlite:////data/hrsync.db", False, "/data/hrsync.db"),
        ("postgresql+psycopg://u:p@db/hrsync", False, None),
    ],
)
def test_memory_and_file_are_told_apart_in_one_place(
    url: str, in_memory: bool, path: str | None
) -> None:
    parsed = parse_database_url(url)
    assert parsed.in_memory is in_memory
    assert parsed.sqlite_path == (None if path is None else Path(path))


@pytest.mark.parametrize(
    ("url", "shown"),
    [
        (
            "postgresql+psycopg://hr:s3cret@db:5432/hrsync",
            "postgresql+psycopg://hr:***@db:5432/hrsync",
        ),
        ("http://hr:s3cret@example.test/x", "http://hr:***@example.test/x"),
        ("://hr:s3cret@nowhere", "://hr:***@nowhere"),  # does not parse: still hidden
        ("sqlite:///:memory:", "sqlite:///:memory:"),  # shown as written, not %3A-escaped
    ],
)
def test_passwords_never_shown(url: str, shown: str) -> None:
    assert redact(url) == shown


def test_relative_sqlite_paths_are_anchored_and_nothing_else(tmp_path: Path) -> None:
    assert anchor_sqlite("sqlite:///state/h.db", tmp_path) == f"sqlite:///{tmp_path}/state/h.db"
    for url in (
        "sqlite:////abs/h.db",
        "sqlite://",
        "sqlite:///:memory:",
        "sqlite:///file:h.db?uri=true",
        "postgresql+psycopg://u:p@db/h",
        "not a url",
    ):
        assert anchor_sqlite(url, tmp_path) == url


def test_a_usable_url_passes(tmp_path: Path) -> None:
    assert check_database_url(f"sqlite:///{tmp_path}/new/dir/h.db") is None
    assert check_database_url("sqlite://") is None


def test_postgres_with_its_driver_passes() -> None:
    pytest.importorskip("psycopg", reason="the postgres extra is not installed")
    assert check_database_url("postgresql+psycopg://hr:pw@db/hrsync") is None


def test_a_directory_is_refused(tmp_path: Path) -> None:
    assert check_database_url(f"sqlite:///{tmp_path}") == (
        f"state.database_url 'sqlite:///{tmp_path}' names the directory '{tmp_path}'; "
        "expected an SQLite file in it"
    )


def test_a_path_under_a_file_is_refused(tmp_path: Path) -> None:
    blocker = tmp_path / "plain-file"
    blocker.write_text("")
    problem = check_database_url(f"sqlite:///{blocker}/state/h.db")
    assert problem == (
        f"state.database_url 'sqlite:///{blocker}/state/h.db': cannot create "
        f"'{blocker}/state/h.db' because '{blocker}' is a file, not a directory"
    )


def test_an_unknown_dialect_is_refused_naming_key_value_and_expectation() -> None:
    problem = check_database_url("http://hr:s3cret@db.example.test/hrsync")
    assert problem == (
        "state.database_url 'http://hr:***@db.example.test/hrsync' names a database "
        "SQLAlchemy does not know ('http'); expected one such as sqlite:///hrsync.db, or "
        "postgresql+psycopg://USER:PASSWORD@HOST/DATABASE"
    )


def test_text_that_is_no_url_is_refused() -> None:
    assert check_database_url("hrsync.db") == (
        "state.database_url 'hrsync.db' is not a database URL; expected one such as "
        "sqlite:///hrsync.db, or postgresql+psycopg://USER:PASSWORD@HOST/DATABASE"
    )


def test_a_missing_postgres_driver_names_the_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    # psycopg not installed: None in sys.modules makes its import fail like a missing one.
    monkeypatch.setitem(sys.modules, "psycopg", None)
    problem = check_database_url("postgresql+psycopg://hr:s3cret@db/hrsync")
    assert problem == (
        "state.database_url 'postgresql+psycopg://hr:***@db/hrsync' needs the PostgreSQL "
        "driver psycopg, which is not installed: pip install 'hrsync[postgres]'"
    )
    assert "s3cret" not in (problem or "")


def test_another_missing_driver_is_named() -> None:
    problem = check_database_url("mysql+nosuchdriverxyz://a:b@c/d")
    assert problem is not None and problem.startswith("state.database_url 'mysql+")
    assert "b@" not in problem


@pytest.mark.parametrize(
    "url",
    [
        "postgresql+psycopg://hr:Db@AtOnlySECRET@db:5432/hrsync",
        "postgresql+psycopg://hr:Db@At@OnlySECRET@db/hrsync",
        "postgresql+psycopg://hr:Db/SlashSECRET@db/hrsync",
        "postgresql+psycopg://hr:Db@At/SlashSECRET@db/hrsync",
        "://hr:Db@AtOnlySECRET@nowhere",  # does not parse
    ],
)
def test_a_password_holding_unencoded_at_signs_or_slashes_is_hidden_whole(url: str) -> None:
    shown = redact(url)
    assert "SECRET" not in shown and "Db" not in shown, shown
    assert "hr:***@" in shown, shown


@given(st.text(alphabet=st.characters(min_codepoint=0x21, max_codepoint=0x7E), min_size=1))
def test_no_password_is_shown_whatever_characters_it_holds(password: str) -> None:
    url = f"postgresql+psycopg://hr:{password}@db.example.test/hrsync"
    assert redact(url) == "postgresql+psycopg://hr:***@db.example.test/hrsync"
