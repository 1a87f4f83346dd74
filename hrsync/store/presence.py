"""Whether a state store is there at all, asked without creating one.

Commands that only read the store (`status`, `history`, `approvals`, `approve`) must not
make an empty one: a mistyped `state.database_url` would then read as "nothing needs a
person". Opening a store runs migrations, which create its tables (and SQLite its file).
"""

from __future__ import annotations

from sqlalchemy import inspect

from hrsync.store.engine import make_engine
from hrsync.store.url import parse_database_url


def missing_store(url: str) -> str | None:
    """Why there is no store at `url` (its file, or its tables), or None when there is."""
    parsed = parse_database_url(url)
    if parsed.is_sqlite:
        path = parsed.sqlite_path
        if path is None or path.exists():  # in memory: nothing to look for
            return None
        return f"no state store at {path} (state.database_url)"
    engine = make_engine(url)
    try:
        if inspect(engine).has_table("alembic_version"):
            return None
    finally:
        engine.dispose()
    return f"no state store at {parsed.redacted()} (state.database_url): no hrsync tables there"
