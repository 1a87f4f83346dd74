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
from hrsync.store import models
from hrsync.store.engine import session_factory
from hrsync.store.repo import Store


class AttributeStore:
    def __init__(self, store: Store) -> None:
        self._sessions = session_factory(store.engine)

    def confirmed(self) -> dict[str, dict[str, str]]:
        """Per e-mail, the value DX last confirmed for each attribute."""
        out: dict[str, dict[str, str]] = {}
        with self._sessions() as s:
            rows = s.execute(
                select(
                    models.AttributeValue.email,
                    models.AttributeValue.name,
                    models.AttributeValue.value,
                )
            )
            for email, name, value in rows:
                out.setdefault(email, {})[name] = value
        return out

    def failures(self) -> dict[str, Failure]:
        with self._sessions() as s:
            rows = s.scalars(select(models.AttributeFailure))
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
        with self._sessions() as s, s.begin():
            if confirmed:
                existing = {
                    row.name: row
                    for row in s.scalars(
                        select(models.AttributeValue).where(
                            models.AttributeValue.email == email,
                            models.AttributeValue.name.in_(list(confirmed)),
                        )
                    )
                }
                for name, value in confirmed.items():
                    row = existing.get(name)
                    if row is None:
                        s.add(
                            models.AttributeValue(
                                email=email, name=name, value=value, confirmed_at=now
                            )
                        )
                    else:
                        row.value, row.confirmed_at = value, now
            stored = s.get(models.AttributeFailure, email)
            if failure is None:
                if stored is not None:
                    s.delete(stored)
            elif stored is None:
                s.add(
                    models.AttributeFailure(
                        email=email,
                        error=failure.error,
                        failed_at=failure.failed_at,
                        values_digest=failure.digest,
                    )
                )
            else:
                stored.error, stored.failed_at = failure.error, failure.failed_at
                stored.values_digest = failure.digest

    def forget(self) -> None:
        """Drop every confirmed value and failure: the next run sends everyone again."""
        with self._sessions() as s, s.begin():
            s.execute(delete(models.AttributeValue))
            s.execute(delete(models.AttributeFailure))
