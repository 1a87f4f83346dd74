"""The `leads_left` table: teams of managers who left while people still name them, each
with the day it began (kept while unbroken) and what the webhook told of it."""

from __future__ import annotations

from collections.abc import Collection, Iterable
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import delete, func, insert, select, update

from hrsync.store import tables
from hrsync.store.sessions import StoreSessions

LATE = "late"  # `notified`: told that HR has not re-pointed the people in time


@dataclass(frozen=True, slots=True)
class LeadLeftRecord:
    team_key: str  # the team's HR key ("manager:<employee id of who left>")
    team: str  # its name ("" when not kept: nobody to stand in)
    lead: str  # the employee id of the manager who left
    lead_name: str
    stand_in: str  # the stand-in lead's e-mail; "" when nobody up the chain is kept
    people: int  # the people who still name them
    since: datetime | None = None  # set by the store: when it began
    notified: str = ""  # "" or LATE
    cleared_at: datetime | None = None  # HR re-pointed the people (kept until told)


class LeadLeftQueries(StoreSessions):
    def current(self) -> list[LeadLeftRecord]:
        """The teams of managers who left, as the last run found them, by key."""
        left = tables.leads_left
        with self._read() as s:
            rows = s.execute(
                select(left).where(left.c.cleared_at.is_(None)).order_by(left.c.team_key)
            )
            return [_record(r) for r in rows]

    def people_count(self) -> int:
        """How many people are in teams kept for managers who left (a gauge's count)."""
        left = tables.leads_left
        with self._read() as s:
            query = select(func.coalesce(func.sum(left.c.people), 0)).where(
                left.c.cleared_at.is_(None), left.c.stand_in != ""
            )
            return int(s.execute(query).scalar_one())

    def replace(self, current: Iterable[LeadLeftRecord], now: datetime) -> None:
        """The teams of managers who left now replace those before, each keeping the
        `since` of an unbroken stay. One told late whose people HR has re-pointed is kept
        as cleared until that is told too (`notices`)."""
        left = tables.leads_left
        with self._write() as s:
            rows = {r.team_key: r for r in s.execute(select(left))}
            before = {k: r for k, r in rows.items() if r.cleared_at is None}
            seen: set[str] = set()
            for record in current:
                seen.add(record.team_key)
                values: dict[str, object] = {
                    "team": record.team,
                    "lead": record.lead,
                    "lead_name": record.lead_name,
                    "stand_in": record.stand_in,
                    "people": record.people,
                }
                if record.team_key in rows:
                    if record.team_key not in before:
                        # Cleared but not yet told, and back again: as it was.
                        values["since"] = rows[record.team_key].since
                    s.execute(
                        update(left)
                        .where(left.c.team_key == record.team_key)
                        .values(**values, cleared_at=None)
                    )
                else:
                    s.execute(
                        insert(left).values(
                            team_key=record.team_key, since=now, notified="", **values
                        )
                    )
            ended = [k for k in before if k not in seen]
            told = [k for k in ended if rows[k].notified == LATE]
            untold = [k for k in ended if rows[k].notified != LATE]
            if told:
                s.execute(update(left).where(left.c.team_key.in_(told)).values(cleared_at=now))
            if untold:
                s.execute(delete(left).where(left.c.team_key.in_(untold)))

    def notices(self) -> list[LeadLeftRecord]:
        """Every row: those still kept and those cleared but not yet told."""
        left = tables.leads_left
        with self._read() as s:
            return [_record(r) for r in s.execute(select(left).order_by(left.c.team_key))]

    def told(self, late: Collection[str], cleared: Collection[str]) -> None:
        """The webhook told these teams late, and these cleared (then forgotten)."""
        left = tables.leads_left
        with self._write() as s:
            if late:
                s.execute(update(left).where(left.c.team_key.in_(late)).values(notified=LATE))
            if cleared:
                s.execute(
                    delete(left).where(left.c.team_key.in_(cleared), left.c.cleared_at.is_not(None))
                )


def _record(r: Any) -> LeadLeftRecord:
    # The record's fields are the table's columns.
    return LeadLeftRecord(**r._mapping)
