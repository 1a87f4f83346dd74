"""Alembic, driven from code: works from a checkout, an editable install and a wheel.

Alembic is imported only when the schema must change: importing it and scanning
migrations/ cost ~0.3 s of every start (issue 12), so a start compares the database's
`alembic_version` with HEAD_REVISION first (tests/store/test_migrations.py keeps the
constant equal to the scripts' real head).
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING

from sqlalchemy import Engine, String, column, func, inspect, select, table

from hrsync.resources import shipped_dir
from hrsync.store.lease import advisory_key

if TYPE_CHECKING:
    from alembic.config import Config

# The newest script in migrations/versions; bump it with every new migration.
HEAD_REVISION = "0011"


def script_location() -> Path:
    return shipped_dir("migrations")


def alembic_config(engine: Engine) -> Config:
    from alembic.config import Config

    config = Config()
    config.set_main_option("script_location", str(script_location()))
    config.attributes["engine"] = engine
    return config


def head_revision(engine: Engine) -> str | None:
    from alembic.script import ScriptDirectory

    return ScriptDirectory.from_config(alembic_config(engine)).get_current_head()


def current_revision(engine: Engine) -> str | None:
    from alembic.runtime.migration import MigrationContext

    with engine.connect() as connection:
        return MigrationContext.configure(connection).get_current_revision()


def upgrade(engine: Engine) -> tuple[str | None, str | None]:
    """Bring the database to the newest schema; returns (before, after) revisions."""
    from alembic import command

    with _one_migrator(engine):
        before = current_revision(engine)
        if before != head_revision(engine):
            command.upgrade(alembic_config(engine), "head")
        return before, current_revision(engine)


def ensure_current(engine: Engine) -> None:
    """What every start does: nothing when the database is at HEAD_REVISION, else the
    full `upgrade` (with Alembic, and on PostgreSQL the migrators' lock).

    Reading the version outside that lock is safe: a migration writes the new version
    in the same transaction as its schema change, so HEAD_REVISION seen means the
    schema is there. Anything else (no table, an older or a newer revision, several
    heads) goes the slow way, which decides or fails exactly as before."""
    if _stored_revisions(engine) != [HEAD_REVISION]:
        upgrade(engine)


_VERSION_TABLE = table("alembic_version", column("version_num", String))


def _stored_revisions(engine: Engine) -> list[str]:
    with engine.connect() as connection:
        if not inspect(connection).has_table(_VERSION_TABLE.name):
            return []
        return [str(v) for v in connection.execute(select(_VERSION_TABLE.c.version_num)).scalars()]


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
