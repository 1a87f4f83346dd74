"""The SQLite state store is its owner's alone (issue 27, finding 5): hrsync creates its
directory 0700 and the database 0600, and SQLite gives the -wal and -shm files the
database's mode, whatever the umask. An empty file where the database should be is
refused, not silently started afresh (the shrink guard's baseline would be lost)."""

from __future__ import annotations

import os
import stat
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

import pytest

from hrsync.cli import main
from hrsync.config.loading import ConfigError, load_settings
from hrsync.store.repo import Store

NOW = datetime(2030, 1, 1, tzinfo=UTC)


def mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


@pytest.fixture(params=[0o022, 0o000, 0o077], ids=["umask022", "umask000", "umask077"])
def umask(request: pytest.FixtureRequest) -> Iterator[int]:
    old = os.umask(request.param)
    try:
        yield request.param
    finally:
        os.umask(old)


def test_a_new_store_its_wal_and_shm_are_the_owners_alone(tmp_path: Path, umask: int) -> None:
    db = tmp_path / "state" / "nested" / "hrsync.db"
    store = Store.open(f"sqlite:///{db}")
    try:
        # A real write in WAL mode, the store still open: the -wal and -shm files exist.
        store.runs.start("r1", "manual", NOW, dry_run=False)
        wal, shm = db.with_name("hrsync.db-wal"), db.with_name("hrsync.db-shm")
        assert wal.exists() and shm.exists()
        assert {p.name: oct(mode(p)) for p in (db, wal, shm)} == {
            "hrsync.db": "0o600",
            "hrsync.db-wal": "0o600",
            "hrsync.db-shm": "0o600",
        }
    finally:
        store.close()
    # The directories hrsync created; nothing left over from creating the file.
    assert oct(mode(db.parent)) == "0o700" and oct(mode(db.parent.parent)) == "0o700"
    assert sorted(p.name for p in db.parent.iterdir()) == ["hrsync.db"]


def test_an_existing_directory_and_database_keep_their_modes(tmp_path: Path) -> None:
    # hrsync changes no mode it did not create: it warns instead (test_file_modes.py).
    folder = tmp_path / "shared"
    folder.mkdir()
    folder.chmod(0o755)
    db = folder / "state.db"
    Store.open(f"sqlite:///{db}").close()
    db.chmod(0o644)
    Store.open(f"sqlite:///{db}").close()
    assert oct(mode(folder)) == "0o755" and oct(mode(db)) == "0o644"


def test_a_database_created_again_after_a_close_is_the_same_store(tmp_path: Path) -> None:
    db = tmp_path / "state.db"
    store = Store.open(f"sqlite:///{db}")
    store.runs.start("r1", "manual", NOW, dry_run=False)
    store.close()
    again = Store.open(f"sqlite:///{db}")
    try:
        assert [r.id for r in again.runs.recent()] == ["r1"]
    finally:
        again.close()


# ------------------------------------------------------------------ an empty file


def assert_told(message: str, db: Path) -> None:
    assert str(db) in message
    assert "empty (0 bytes)" in message
    assert "shrink guard" in message and "reference ids" in message
    assert "restore" in message and "delete the file" in message


def test_an_empty_database_file_is_refused_not_started_afresh(tmp_path: Path) -> None:
    db = tmp_path / "state.db"
    db.write_bytes(b"")
    with pytest.raises(OSError) as caught:
        Store.open(f"sqlite:///{db}")
    assert_told(str(caught.value), db)
    assert db.stat().st_size == 0
    assert sorted(p.name for p in tmp_path.iterdir()) == ["state.db"]


def test_an_empty_database_file_is_a_config_problem(tmp_path: Path) -> None:
    db = tmp_path / "state.db"
    db.write_bytes(b"")
    config = tmp_path / "hrsync.toml"
    config.write_text(f'[state]\ndatabase_url = "sqlite:///{db}"\n')
    with pytest.raises(ConfigError) as caught:
        load_settings(config, {}, require_token=False, require_source=False, require_dx=False)
    (problem,) = caught.value.problems
    assert problem.startswith("state.database_url")
    assert_told(problem, db)


def test_every_command_refuses_an_empty_database_with_exit_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    for name in [n for n in os.environ if n.startswith("HRSYNC_")]:
        monkeypatch.delenv(name)
    db = tmp_path / "state.db"
    db.write_bytes(b"")
    config = tmp_path / "hrsync.toml"
    config.write_text(f'[state]\ndatabase_url = "sqlite:///{db}"\n')
    for command in (["status"], ["history"], ["db", "upgrade"]):
        assert main(["--config", str(config), *command]) == 2
        err = capsys.readouterr().err
        assert_told(err, db)
    assert db.stat().st_size == 0


@pytest.mark.parametrize("dangling", [True, False])
def test_a_symbolic_link_at_the_database_path_is_refused(tmp_path: Path, dangling: bool) -> None:
    # SQLite follows the link and creates the target (and its -wal, -shm) with the umask's
    # mode, where hrsync's 0600 never applies; the private-mode check, which stats what
    # exists, saw nothing at the first start.
    target = tmp_path / "elsewhere" / "real.db"
    target.parent.mkdir()
    if not dangling:
        Store.open(f"sqlite:///{target}").close()
    db = tmp_path / "state.db"
    db.symlink_to(target)
    with pytest.raises(OSError) as caught:
        Store.open(f"sqlite:///{db}")
    assert str(db) in str(caught.value) and "symbolic link" in str(caught.value)
    assert target.exists() is not dangling
    config = tmp_path / "hrsync.toml"
    config.write_text(f'[state]\ndatabase_url = "sqlite:///{db}"\n')
    with pytest.raises(ConfigError) as told:
        load_settings(config, {}, require_token=False, require_source=False, require_dx=False)
    (problem,) = told.value.problems
    assert problem.startswith("state.database_url") and "symbolic link" in problem
