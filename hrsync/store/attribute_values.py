"""The attribute step's part of the state store: confirmed values and per-person failures.

Each person's outcome is written in its own transaction, as soon as DX has answered
for them: a crash or SIGTERM loses nothing, and the next run sends only what is still
unconfirmed.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime

from sqlalchemy import delete, select

from hrsync.core.attributes import Failure
from hrsync.store import tables
from hrsync.store.repo import Store
from hrsync.store.sessions import StoreSessions
from hrsync.store.upsert import upsert


class AttributeStore(StoreSessions):
    def __init__(self, store: Store) -> None:
        super().__init__(store.engine)

    def confirmed(self) -> dict[str, dict[str, str]]:
        """Per e-mail, the value DX last confirmed for each attribute."""
        values = tables.attribute_values
        out: dict[str, dict[str, str]] = {}
        with self._read() as s:
            rows = s.execute(select(values.c.email, values.c.name, values.c.value))
            for email, name, value in rows:
                out.setdefault(email, {})[name] = value
        return out

    def failures(self) -> dict[str, Failure]:
        with self._read() as s:
            rows = s.execute(select(tables.attribute_failures))
            return {r.email: Failure(r.error, r.failed_at, r.values_digest) for r in rows}

    def record(
        self,
        email: str,
        confirmed: Mapping[str, str],
        now: datetime,
        *,
        failure: Failure | None = None,
    ) -> None:
        """One person's answer: the values DX confirmed, and their failure or its end."""
        values, failures = tables.attribute_values, tables.attribute_failures
        with self._write() as s:
            for name, value in confirmed.items():
                key = {"email": email, "name": name}
                s.execute(upsert(self.engine, values, key, {"value": value, "confirmed_at": now}))
            if failure is None:
                s.execute(delete(failures).where(failures.c.email == email))
                return
            failed = {
                "error": failure.error,
                "failed_at": failure.failed_at,
                "values_digest": failure.digest,
            }
            s.execute(upsert(self.engine, failures, {"email": email}, failed))

    def forget(self) -> None:
        """Drop every confirmed value and failure: the next run sends everyone again."""
        with self._write() as s:
            s.execute(delete(tables.attribute_values))
            s.execute(delete(tables.attribute_failures))
