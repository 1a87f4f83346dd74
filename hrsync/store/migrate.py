"""Alembic, driven from code: works from a checkout, an editable install and a wheel."""

from __future__ import annotations

from pathlib import Path

from alembic import command
from alembic.config import Config
from alembic.runtime.migration import MigrationContext
from alembic.script import ScriptDirectory
from sqlalchemy import Engine


def script_location() -> Path:
    package = Path(__file__).resolve().parent.parent
    # A wheel carries the scripts inside the package (see pyproject's force-include);
    # a checkout or an editable install finds them at the top of the repository.
    for candidate in (package / "_migrations", package.parent / "migrations"):
        if (candidate / "env.py").is_file():
            return candidate
    raise RuntimeError(f"hrsync's migration scripts are missing (looked beside {package})")


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
    before = current_revision(engine)
    if before != head_revision(engine):
        command.upgrade(alembic_config(engine), "head")
    return before, current_revision(engine)
