"""The run's held people: where DX last verifiably had them (read from the store), told
in the log, and kept in the store with the day each hold began (`status`, `explain`, the
webhook's notices)."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

from hrsync import logs
from hrsync.core.people import Directory
from hrsync.core.teams.held import NOTHING_KNOWN, Hold, KnownPlaces
from hrsync.logcap import log_each
from hrsync.store.repo import HeldRecord, Store

log = logs.get_logger(__name__)


def known_places(store: Store, directory: Directory) -> KnownPlaces:
    """Where DX last verifiably had each person: nothing to read when nobody is held."""
    if not directory.held:
        return NOTHING_KNOWN
    last = store.submissions.last_verified()
    rows = last.plan.rows if last is not None else ()
    email_by_id = {
        person.employee_id: email
        for email, person in store.people.dx_people().items()
        if person.employee_id
    }
    member_of = {email: row.key for row in rows for email in row.contributors}
    return KnownPlaces(email_by_id, member_of)


def log_held(holds: Sequence[Hold]) -> None:
    """The total at warning, then each held person through the log's cap."""
    if not holds:
        return
    log.warning("sync.held", total=len(holds), see="hrsync plan")
    log_each(
        log,
        "sync.person_held",
        holds,
        lambda h: {
            "person": h.person.key,
            "name": h.person.name,
            "location": h.person.location,
            "detail": h.person.detail,
            "kept": h.kept,
        },
        "warning",
        see="hrsync plan",
    )


def remember_held(store: Store, holds: Sequence[Hold], now: datetime) -> None:
    """The people held now, each with the day their hold began (kept while unbroken)."""
    store.people.replace_held(held_records(holds), now)


def held_records(holds: Sequence[Hold]) -> list[HeldRecord]:
    """One record per person held: rows naming the same person (two rows with one
    employee id, or one e-mail and no id) are one hold, every row and what is wrong with
    it kept, so the person is told once and their hold begins and ends once."""
    by_person: dict[str, list[Hold]] = {}
    for hold in holds:
        by_person.setdefault(hold.person.key, []).append(hold)
    return [
        HeldRecord(
            person,
            ", ".join(dict.fromkeys(h.person.location for h in rows)),
            "; ".join(dict.fromkeys(h.person.detail for h in rows)),
            name=next((h.person.name for h in rows if h.person.name), ""),
        )
        for person, rows in by_person.items()
    ]
