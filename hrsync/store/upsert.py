"""INSERT … ON CONFLICT for the two databases hrsync supports, and the compare-and-swap
UPDATE.

Rows that several processes create on first use (the lease, the heartbeat) are written
this way: two replicas starting in the same second must not turn "already there" into
a unique-key crash. Rows that several processes replace (the lease, the notify state)
are replaced only while they hold what the writer judged: of two racing, one wins.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from sqlalchemy import Engine, Update, update


def _insert(engine: Engine, model: Any, values: Mapping[str, Any]) -> Any:
    # Each dialect imported only when used: SQLAlchemy's PostgreSQL package loads all its
    # drivers' modules (~20 ms of every start on SQLite, issue 12).
    if engine.dialect.name == "postgresql":
        from sqlalchemy.dialects import postgresql

        return postgresql.insert(model).values(**values)
    if engine.dialect.name == "sqlite":
        from sqlalchemy.dialects import sqlite

        return sqlite.insert(model).values(**values)
    raise ValueError(f"hrsync does not support the database {engine.dialect.name!r}")


def insert_or_nothing(
    engine: Engine, model: Any, key: Mapping[str, Any], values: Mapping[str, Any]
) -> Any:
    """Insert the row; leave an existing one with the same `key` as it is."""
    stmt = _insert(engine, model, {**key, **values})
    return stmt.on_conflict_do_nothing(index_elements=list(key))


def upsert(engine: Engine, model: Any, key: Mapping[str, Any], values: Mapping[str, Any]) -> Any:
    """Insert the row, or update the one with the same `key` to `values`."""
    stmt = _insert(engine, model, {**key, **values})
    return stmt.on_conflict_do_update(index_elements=list(key), set_=dict(values))


def swap(
    model: Any, key: Mapping[str, Any], expected: Mapping[str, Any], values: Mapping[str, Any]
) -> Update:
    """Update the row with `key` to `values` only while its columns still hold `expected`
    (None: NULL): one row changed when the caller won, none when a rival changed it first.
    Atomic on PostgreSQL (the loser's UPDATE waits for the winner's row lock, then finds
    the row changed) and on SQLite (one writer at a time)."""
    columns = model.c
    judged = [columns[name] == value for name, value in {**key, **expected}.items()]
    return update(model).where(*judged).values(**values)
