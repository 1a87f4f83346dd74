"""The team identities table: which reference_id each HR team has, kept across runs
(hrsync.core.teams.identity decides; this keeps its answer)."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Any

from sqlalchemy import Update, bindparam, func, insert, select, update

from hrsync.core.teams.identity import KnownIdentity
from hrsync.store import tables
from hrsync.store.sessions import StoreSessions


def member_digest(members: Sequence[str]) -> str:
    return hashlib.sha256("\n".join(sorted(members)).encode()).hexdigest()


class IdentityQueries(StoreSessions):
    def load(self) -> list[KnownIdentity]:
        ti = tables.team_identities
        with self._read() as s:
            rows = s.execute(
                select(
                    ti.c.hr_key,
                    ti.c.reference_id,
                    ti.c.name,
                    ti.c.parent_key,
                    ti.c.lead_email,
                    ti.c.members_json,
                    ti.c.retired_at,
                ).order_by(ti.c.id)
            )
            return [
                KnownIdentity(
                    key=r.hr_key,
                    reference_id=r.reference_id,
                    name=r.name,
                    parent_key=r.parent_key,
                    lead_email=r.lead_email,
                    members=tuple(sorted(set(json.loads(r.members_json)))),
                    retired=r.retired_at is not None,
                )
                for r in rows
            ]

    def save(self, identities: Sequence[KnownIdentity], now: datetime) -> None:
        """Upsert by reference_id in one transaction; rows are never deleted.

        Only rows whose content changed are written (a steady-state run of a large org
        would otherwise rewrite thousands of rows); `last_seen` of every active identity
        moves to `now` in one statement.
        """
        ti = tables.team_identities
        with self._write() as s:
            existing = {
                row.reference_id: row
                for row in s.execute(
                    select(
                        ti.c.id,
                        ti.c.reference_id,
                        ti.c.hr_key,
                        ti.c.name,
                        ti.c.parent_key,
                        ti.c.lead_email,
                        ti.c.member_digest,
                        ti.c.retired_at,
                    )
                )
            }
            changes: list[dict[str, Any]] = []
            inserts: list[dict[str, Any]] = []
            parked: list[dict[str, Any]] = []
            for ident in {i.reference_id: i for i in identities}.values():
                values = {
                    "hr_key": ident.key,
                    "name": ident.name,
                    "parent_key": ident.parent_key,
                    "lead_email": ident.lead_email,
                    "member_digest": member_digest(ident.members),
                }
                old = existing.get(ident.reference_id)
                if old is None:
                    inserts.append(
                        {
                            **values,
                            "reference_id": ident.reference_id,
                            "members_json": json.dumps(sorted(ident.members)),
                            "first_seen": now,
                            "last_seen": now,
                            "retired_at": now if ident.retired else None,
                        }
                    )
                    continue
                retired_at = (old.retired_at or now) if ident.retired else None
                unchanged = all(getattr(old, k) == v for k, v in values.items())
                if unchanged and (old.retired_at is None) == (retired_at is None):
                    continue
                if old.hr_key != ident.key:
                    # Keys move between rows (continuity re-keys a team): park them
                    # first so the unique constraint on hr_key holds at every statement.
                    parked.append({"row_id": old.id, "hr_key": f"~moving~{old.id}"})
                changes.append(
                    {
                        **values,
                        "row_id": old.id,
                        "members_json": json.dumps(sorted(ident.members)),
                        "retired_at": retired_at,
                    }
                )
            # UPDATE by primary key and INSERT, one executemany each.
            if parked:
                s.execute(_by_row_id(parked[0]), parked)
            if changes:
                s.execute(_by_row_id(changes[0]), changes)
            if inserts:
                s.execute(insert(ti), inserts)
            s.execute(update(ti).where(ti.c.retired_at.is_(None)).values(last_seen=now))

    def active_team_count(self) -> int:
        """Teams hrsync keeps in DX now (identities not retired)."""
        ti = tables.team_identities
        with self._read() as s:
            query = select(func.count()).select_from(ti).where(ti.c.retired_at.is_(None))
            return int(s.execute(query).scalar_one())


def _by_row_id(parameters: Mapping[str, Any]) -> Update:
    """UPDATE one row by its id (`row_id`) to the other values of `parameters`, for an
    executemany whose parameter sets all name the same columns."""
    ti = tables.team_identities
    # The WHERE's parameter may not share a column's name: SET claims those.
    return (
        update(ti)
        .where(ti.c.id == bindparam("row_id"))
        .values({name: bindparam(name) for name in parameters if name != "row_id"})
    )
