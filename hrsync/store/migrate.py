"""Alembic, driven from code: works from a checkout, an editable install and a wheel."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from alembic import command
from alembic.config import Config
from alembic.runtime.migration import MigrationContext
from alembic.script import ScriptDirectory
from sqlalchemy import Engine, func, select

from hrsync.resources import shipped_dir
from hrsync.store.lease import advisory_key


def script_location() -> Path:
    return shipped_dir("migrations")


def alembic_config(engine: Engine) -> Config:
    config = Config()
    config.set_main_option("script_location", str(script_location()))
    config.attributes["engine"] = engine
    return config


def head_revision(engine: Engine) -> str | None:
    return ScriptDirectory.from_config(alembic_config(engine)).get_current_head()


def current_revision(engine: Engine) -> str | None:
    with engine.connect() as connection:
        return MigrationContext.configure(connection).get_current_revision()


def upgrade(engine: Engine) -> tuple[str | None, str | None]:
    """Bring the database to the newest schema; returns (before, after) revisions."""
    with _one_migrator(engine):
        before = current_revision(engine)
        if before != head_revision(engine):
            command.upgrade(alembic_config(engine), "head")
        return before, current_revision(engine)


@contextmanager
def _one_migrator(engine: Engine) -> Iterator[None]:
    """On PostgreSQL, one process migrates at a time: replicas starting together on a
    new database would otherwise both create the tables, and one would crash. The others
    wait here, then find the schema current."""
    if engine.dialect.name != "postgresql":
        yield
        return
    key = advisory_key("migrate")
    with engine.connect().execution_options(isolation_level="AUTOCOMMIT") as conn:
        conn.execute(select(func.pg_advisory_lock(key)))
        try:
            yield
        finally:
            conn.execute(select(func.pg_advisory_unlock(key)))
