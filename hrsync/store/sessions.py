"""What every part of the Store shares: the engine and its sessions.

Every public query commits or rolls back before it returns, so a SIGKILL between two
calls leaves the store consistent: either a step is recorded whole or not at all.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from sqlalchemy import Engine
from sqlalchemy.orm import Session

from hrsync.store.engine import session_factory


class StoreSessions:
    """The base of the Store's parts (store/runs.py, submissions.py, …)."""

    def __init__(self, engine: Engine) -> None:
        self.engine = engine
        self._sessions = session_factory(engine)

    @contextmanager
    def _write(self) -> Iterator[Session]:
        with self._sessions() as session, session.begin():
            yield session
