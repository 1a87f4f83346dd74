"""The people tables: each person as DX last verifiably took them (`dx_people`), and the
people held for a problem with their own row (`held_people`)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, replace
from datetime import datetime
from typing import Any

from sqlalchemy import delete, func, insert, select, update

from hrsync.store import tables
from hrsync.store.sessions import StoreSessions


@dataclass(frozen=True, slots=True)
class DxPerson:
    email: str  # as DX took it
    employee_id: str | None
    first_sent_at: datetime
    counted: bool | None  # whether DX counts them as a user; None: not known yet
    evidence: str | None  # how `counted` was learned
    counted_at: datetime | None  # when `counted` last changed

    @property
    def since(self) -> datetime:
        """Since when `counted` holds (first sent, when it never changed)."""
        return self.counted_at or self.first_sent_at


@dataclass(frozen=True, slots=True)
class HeldRecord:
    person: str  # employee id, else e-mail, else the row's location: one record each
    location: str  # the row; every row, comma-separated, when several name the person
    detail: str  # what is wrong with the row (each row's, "; "-separated), in words
    since: datetime | None = None  # set by the store: when they were first held
    name: str = ""  # as their row gives it ("" when it gives none)


@dataclass(frozen=True, slots=True)
class HeldChanges:
    held: tuple[HeldRecord, ...]  # everyone held now, each with `since`
    started: tuple[HeldRecord, ...]  # held now, not before
    cleared: tuple[HeldRecord, ...]  # held before, not now


class PeopleQueries(StoreSessions):
    def dx_people(self) -> dict[str, DxPerson]:
        """Every person of the last hierarchy DX verifiably took, by e-mail."""
        people = tables.dx_people
        with self._read() as s:
            return {
                r.email: DxPerson(
                    r.email,
                    r.employee_id,
                    r.first_sent_at,
                    None if r.counted is None else bool(r.counted),
                    r.evidence,
                    r.counted_at,
                )
                for r in s.execute(select(people))
            }

    def emails_of(self, employee_ids: Iterable[str]) -> dict[str, str]:
        """The e-mail DX last verifiably took for each of these employee ids (the newest
        first sent, when the id went by several), for those it took one for."""
        people = tables.dx_people
        found: dict[str, str] = {}
        with self._read() as s:
            for chunk in _chunks(sorted(set(employee_ids))):
                rows = s.execute(
                    select(people.c.employee_id, people.c.email)
                    .where(people.c.employee_id.in_(chunk))
                    .order_by(people.c.first_sent_at, people.c.email)
                )
                found.update({r.employee_id: r.email for r in rows})
        return found

    def not_counted(self) -> list[DxPerson]:
        """The people DX does not count (it ignored their e-mails), by e-mail."""
        people = tables.dx_people
        with self._read() as s:
            rows = s.execute(select(people).where(people.c.counted == 0).order_by(people.c.email))
            return [
                DxPerson(r.email, r.employee_id, r.first_sent_at, False, r.evidence, r.counted_at)
                for r in rows
            ]

    def not_counted_count(self) -> int:
        """How many people DX does not count (the heartbeat's gauge: a count, not rows)."""
        people = tables.dx_people
        with self._read() as s:
            query = select(func.count()).select_from(people).where(people.c.counted == 0)
            return int(s.execute(query).scalar_one())

    def record_sent_people(self, sent: Mapping[str, str | None], now: datetime) -> None:
        """The people of a hierarchy DX verifiably took (e-mail -> employee id): new ones
        added, changed ids kept, and those no longer sent forgotten. What DX counts of
        each stays as it was learned."""
        people = tables.dx_people
        with self._write() as s:
            known = {
                r.email: r.employee_id
                for r in s.execute(select(people.c.email, people.c.employee_id))
            }
            gone = [email for email in known if email not in sent]
            for chunk in _chunks(gone):
                s.execute(delete(people).where(people.c.email.in_(chunk)))
            new = [
                {"email": email, "employee_id": eid, "first_sent_at": now}
                for email, eid in sent.items()
                if email not in known
            ]
            if new:
                s.execute(insert(people), new)
            for email, eid in sent.items():
                if email in known and known[email] != eid:
                    s.execute(update(people).where(people.c.email == email).values(employee_id=eid))

    def set_counted(self, verdicts: Mapping[str, tuple[bool, str]], now: datetime) -> None:
        """What DX showed of these people (e-mail -> (counted, evidence)); `counted_at`
        moves only when the verdict changes. E-mails not in the table are ignored."""
        if not verdicts:
            return  # the usual run: nothing new learned, no table to read
        people = tables.dx_people
        with self._write() as s:
            known = {
                r.email: r.counted
                for r in s.execute(select(people.c.email, people.c.counted))
                if r.email in verdicts
            }
            for email, (counted, evidence) in verdicts.items():
                if email not in known:
                    continue
                values: dict[str, object] = {"counted": int(counted), "evidence": evidence}
                if known[email] is None or bool(known[email]) != counted:
                    values["counted_at"] = now
                s.execute(update(people).where(people.c.email == email).values(**values))

    def forget_counted(self, why: Mapping[str, str]) -> None:
        """These people are not known to be counted any more (e-mail -> why): DX's count
        contradicted it. `counted_at` stays: `since` is about not being counted."""
        people = tables.dx_people
        with self._write() as s:
            for email, text in why.items():
                s.execute(
                    update(people)
                    .where(people.c.email == email)
                    .values(counted=None, evidence=text)
                )

    def set_undecided(self, evidence: Mapping[str, str]) -> None:
        """People not known either way whom DX's count says something of (e-mail -> what it
        says, `dx_users.undecided_evidence`); what earlier counts said of the others not
        known either way is cleared. Known verdicts are never touched."""
        people = tables.dx_people
        unknown = people.c.counted.is_(None)
        by_text: dict[str, list[str]] = {}
        for email, text in evidence.items():
            by_text.setdefault(text, []).append(email)
        with self._write() as s:
            s.execute(
                update(people).where(unknown, people.c.evidence.is_not(None)).values(evidence=None)
            )
            for text, emails in by_text.items():
                for chunk in _chunks(emails):
                    s.execute(
                        update(people)
                        .where(unknown, people.c.email.in_(chunk))
                        .values(evidence=text)
                    )

    def undecided(self) -> list[tuple[str, str]]:
        """(e-mail, evidence) of the people not known either way whom a count said
        something of (`set_undecided`), by e-mail."""
        people = tables.dx_people
        with self._read() as s:
            query = (
                select(people.c.email, people.c.evidence)
                .where(people.c.counted.is_(None), people.c.evidence.is_not(None))
                .order_by(people.c.email)
            )
            return [(r.email, r.evidence) for r in s.execute(query)]

    def held_people(self) -> dict[str, HeldRecord]:
        """Everyone held now, by `HeldRecord.person`."""
        held = tables.held_people
        with self._read() as s:
            rows = s.execute(select(held).where(held.c.cleared_at.is_(None)))
            return {r.person: _held(r) for r in rows}

    def held_count(self) -> int:
        """How many people are held now (the heartbeat's gauge: a count, not rows)."""
        held = tables.held_people
        with self._read() as s:
            query = select(func.count()).select_from(held).where(held.c.cleared_at.is_(None))
            return int(s.execute(query).scalar_one())

    def replace_held(self, current: Iterable[HeldRecord], now: datetime) -> HeldChanges:
        """The people held now replace those held before, each keeping the `since` of an
        unbroken hold. One whose hold was told and now ends is kept as cleared until
        that is told too (`held_notices`)."""
        held = tables.held_people
        with self._write() as s:
            rows = {r.person: r for r in s.execute(select(held))}
            before = {p: r for p, r in rows.items() if r.cleared_at is None}
            now_held: dict[str, HeldRecord] = {}
            for record in current:
                old = before.get(record.person)
                since = old.since if old is not None else now
                now_held[record.person] = replace(record, since=since)
                values: dict[str, object] = {
                    "location": record.location,
                    "detail": record.detail,
                    "name": record.name,
                }
                if record.person in rows:
                    if old is None:  # cleared but not yet told: held again, as it was
                        values["since"] = since
                    s.execute(
                        update(held)
                        .where(held.c.person == record.person)
                        .values(**values, cleared_at=None)
                    )
                else:
                    s.execute(
                        insert(held).values(person=record.person, since=now, **values, notified="")
                    )
            ended = [p for p in before if p not in now_held]
            told = [p for p in ended if rows[p].notified == "held"]
            untold = [p for p in ended if rows[p].notified != "held"]
            for chunk in _chunks(told):
                s.execute(update(held).where(held.c.person.in_(chunk)).values(cleared_at=now))
            for chunk in _chunks(untold):
                s.execute(delete(held).where(held.c.person.in_(chunk)))
        return HeldChanges(
            held=tuple(now_held.values()),
            started=tuple(r for p, r in now_held.items() if p not in before),
            cleared=tuple(_held(before[p]) for p in ended),
        )

    def held_notices(self) -> HeldChanges:
        """What the webhook has yet to tell: people held and not told so, and people told
        held whose hold has ended."""
        held = tables.held_people
        with self._read() as s:
            rows = list(s.execute(select(held)))
        return HeldChanges(
            held=tuple(_held(r) for r in rows if r.cleared_at is None),
            started=tuple(_held(r) for r in rows if r.cleared_at is None and r.notified != "held"),
            cleared=tuple(_held(r) for r in rows if r.cleared_at is not None),
        )

    def held_told(self, changes: HeldChanges) -> None:
        """The webhook told `changes`: the started are told held, the cleared forgotten."""
        held = tables.held_people
        with self._write() as s:
            for chunk in _chunks([r.person for r in changes.started]):
                s.execute(update(held).where(held.c.person.in_(chunk)).values(notified="held"))
            for chunk in _chunks([r.person for r in changes.cleared]):
                s.execute(
                    delete(held).where(held.c.person.in_(chunk), held.c.cleared_at.is_not(None))
                )


def _held(row: Any) -> HeldRecord:
    return HeldRecord(row.person, row.location, row.detail, row.since, row.name)


def _chunks(values: list[str], size: int = 500) -> Iterable[list[str]]:
    for start in range(0, len(values), size):
        yield values[start : start + size]
