"""The SQLite store's file, kept to its owner: what hrsync does before SQLite opens it.

The store holds e-mails, attribute values and every hierarchy sent, so hrsync creates
the directories it needs 0700 and the database 0600 itself; SQLite then creates the
-wal, -shm and -journal files with the database's mode, whatever the umask
(tests/store/test_private_store.py holds it to that). Modes hrsync did not create are
left alone: `file_modes` warns about them instead.

A symbolic link where the database should be is refused: SQLite would follow it and
create whatever it points at with the umask's mode. An empty file (0 bytes) where the
database should be is refused: SQLite would take it
for a new store and start afresh, silently losing the shrink guard's baseline and the
teams' reference ids. A new database is written whole under a temporary name and then
linked into place, so no other process ever sees it empty.
"""

from __future__ import annotations

import contextlib
import os
import sqlite3
from pathlib import Path

PRIVATE_FILE = 0o600
PRIVATE_DIRECTORY = 0o700


class EmptyStoreError(OSError):
    """An empty file where the SQLite store should be."""


class LinkedStoreError(OSError):
    """A symbolic link where the SQLite store should be."""


def linked_store_problem(path: Path) -> str | None:
    """What to tell of a symbolic link at `path`; None when it is not one. SQLite would
    follow it and create the target, its -wal and -shm with the umask's mode, out of reach
    of the 0600 hrsync gives a store it creates (and of the check of modes at start, which
    found nothing there yet)."""
    if not path.is_symlink():
        return None
    return (
        f"{str(path)!r} is a symbolic link (to {os.readlink(path)!r}); name the database "
        "file itself, so that hrsync creates it and its -wal and -shm files private"
    )


def empty_store_problem(path: Path) -> str | None:
    """What to tell of an empty file at `path`; None when it is not one."""
    try:
        if not path.is_file() or path.stat().st_size != 0:
            return None
    except OSError:
        return None  # unreadable: the checks that open it say so
    return (
        f"the file {str(path)!r} is empty (0 bytes), not a state store: hrsync will not "
        "start afresh on its own, because the shrink guard's baseline (the last accepted "
        "export's size) and the teams' reference ids would be lost without a word; "
        "restore the store from a backup, or delete the file to start afresh on purpose"
    )


def prepare_sqlite_file(path: Path) -> None:
    """Refuse an empty database file; create a missing one (and its directories)
    readable and writable by this user only."""
    linked = linked_store_problem(path)
    if linked is not None:
        raise LinkedStoreError(linked)
    problem = empty_store_problem(path)
    if problem is not None:
        raise EmptyStoreError(problem)
    if path.exists():
        return
    _make_directories(path.parent)
    _create_database(path)


def _make_directories(folder: Path) -> None:
    missing: list[Path] = []
    while not folder.exists() and folder != folder.parent:
        missing.append(folder)
        folder = folder.parent
    for created in reversed(missing):
        with contextlib.suppress(FileExistsError):  # another process made it meanwhile
            created.mkdir(mode=PRIVATE_DIRECTORY)
            created.chmod(PRIVATE_DIRECTORY)  # the umask may have taken bits away


def _create_database(path: Path) -> None:
    temporary = path.with_name(f".{path.name}.{os.getpid()}.new")
    _new_private_database(temporary)
    try:
        try:
            os.link(temporary, path)  # fails when the path exists: never replaces a store
        except FileExistsError:
            pass  # another process created it first: theirs is the store
        except OSError:
            # A file system without hard links: created in place, empty for an instant.
            _create_in_place(path)
    finally:
        temporary.unlink(missing_ok=True)


def _create_in_place(path: Path) -> None:
    with contextlib.suppress(FileExistsError):  # another process created it first
        _new_private_database(path)


def _new_private_database(path: Path) -> None:
    """A new SQLite database at `path`, private from its first byte; FileExistsError when
    something is there already."""
    fd = os.open(path, os.O_CREAT | os.O_EXCL | os.O_WRONLY, PRIVATE_FILE)
    try:
        os.fchmod(fd, PRIVATE_FILE)  # the umask may have taken bits away
    finally:
        os.close(fd)
    # SQLite writes the database's header: the file is a store, not 0 bytes.
    with contextlib.closing(sqlite3.connect(path)) as connection:
        connection.execute("PRAGMA user_version = 0")
        connection.commit()
