"""Engine creation: SQLite in WAL mode, foreign keys on, busy timeout, BEGIN IMMEDIATE; its
file private to its owner (store/sqlite_file.py)."""

from __future__ import annotations

from typing import Any

from sqlalchemy import Engine, create_engine, event

from hrsync.store.sqlite_file import prepare_sqlite_file
from hrsync.store.url import parse_database_url

BUSY_TIMEOUT_MS = 30_000


def make_engine(url: str) -> Engine:
    parsed = parse_database_url(url)
    if not parsed.is_sqlite:
        return create_engine(url, pool_pre_ping=True)
    in_memory = parsed.in_memory
    if parsed.sqlite_path is not None:
        # Before SQLite opens it: an empty file refused, a new one (and its
        # directories) its owner's alone; SQLite gives -wal and -shm the file's mode.
        prepare_sqlite_file(parsed.sqlite_path)
    engine = create_engine(
        url, connect_args={"timeout": BUSY_TIMEOUT_MS / 1000, "check_same_thread": False}
    )

    @event.listens_for(engine, "connect")
    def _on_connect(dbapi_connection: Any, _record: Any) -> None:
        # The recipe in SQLAlchemy's docs reads `.autocommit`, which exists only
        # on Python 3.12+; isolation_level=None works on 3.11 too. It stops
        # pysqlite from issuing its own deferred BEGIN, so ours below is the one used.
        dbapi_connection.isolation_level = None
        cursor = dbapi_connection.cursor()
        cursor.execute("PRAGMA foreign_keys=ON")
        cursor.execute(f"PRAGMA busy_timeout={BUSY_TIMEOUT_MS}")
        if not in_memory:
            cursor.execute("PRAGMA journal_mode=WAL")
            cursor.execute("PRAGMA synchronous=NORMAL")
        cursor.close()

    @event.listens_for(engine, "begin")
    def _on_begin(connection: Any) -> None:
        # Take the write lock up front: a deferred transaction that later tries
        # to write can fail with "database is locked" despite the busy timeout.
        connection.exec_driver_sql("BEGIN IMMEDIATE")

    return engine
