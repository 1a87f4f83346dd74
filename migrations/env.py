"""Alembic environment: hrsync passes its engine in `config.attributes["engine"]`."""

from __future__ import annotations

from alembic import context
from sqlalchemy import Engine

from hrsync.store.engine import make_engine
from hrsync.store.tables import metadata

config = context.config
engine = config.attributes.get("engine")
if engine is None:
    # Plain `alembic` CLI use: the URL comes from alembic.ini or -x url=...
    url = context.get_x_argument(as_dictionary=True).get("url") or config.get_main_option(
        "sqlalchemy.url"
    )
    if not url:
        raise SystemExit("pass the database with -x url=sqlite:///hrsync.db")
    engine = make_engine(url)
assert isinstance(engine, Engine)

with engine.connect() as connection:
    context.configure(
        connection=connection,
        target_metadata=metadata,
        render_as_batch=connection.dialect.name == "sqlite",
        compare_type=True,
    )
    with context.begin_transaction():
        context.run_migrations()
