"""`hrsync db upgrade`: apply the state store's migrations (also done on every start)."""

from __future__ import annotations

import argparse

from hrsync import logs
from hrsync.commands.startup import load_local, store_setting
from hrsync.outcome import EXIT_OK
from hrsync.store.engine import make_engine
from hrsync.store.migrate import upgrade
from hrsync.store.url import redact


def db(args: argparse.Namespace) -> int:
    # One action today (`upgrade`): the parser accepts no other.
    url = load_local(args).state.database_url
    with store_setting(url):
        engine = make_engine(url)
        try:
            before, after = upgrade(engine)
        finally:
            engine.dispose()
    logs.get_logger(__name__).info(
        "db.upgraded" if before != after else "db.up_to_date",
        before=before,
        after=after,
        database=redact(url),
    )
    return EXIT_OK
