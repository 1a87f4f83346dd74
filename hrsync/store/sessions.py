"""What every part of the Store shares: the engine and its transactions.

Every public query commits or rolls back before it returns, so a SIGKILL between two
calls leaves the store consistent: either a step is recorded whole or not at all.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from sqlalchemy import Connection, Engine


class StoreSessions:
    """The base of the Store's parts (store/runs.py, submissions.py, …)."""

    def __init__(self, engine: Engine) -> None:
        self.engine = engine

    @contextmanager
    def _write(self) -> Iterator[Connection]:
        """One transaction: committed when the block ends, rolled back when it raises."""
        with self.engine.begin() as connection:
            yield connection

    @contextmanager
    def _read(self) -> Iterator[Connection]:
        """A connection for reads; what it began is rolled back when the block ends."""
        with self.engine.connect() as connection:
            yield connection
