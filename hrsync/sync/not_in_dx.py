"""People DX does not count yet: what a run learns of them, and when it sends again.

The rules are `hrsync.core.dx_users` (pure); this module gathers DX's evidence, keeps
the verdicts in the store (`dx_people`) and logs who is not in DX and who joined.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime

from hrsync import logs
from hrsync.core.dx_users import (
    changed,
    infer_counted,
    joined,
    not_in_dx,
    recheck_due,
)
from hrsync.core.identity import TeamRow
from hrsync.core.listing import capped
from hrsync.dx.models import DxTeam
from hrsync.store.repo import Store
from hrsync.sync.context import Planned, Run
from hrsync.sync.people_record import remember_people

log = logs.get_logger(__name__)


def learn_people(
    run: Run,
    planned: Planned,
    rows: Sequence[TeamRow],
    teams: Sequence[DxTeam],
    when: datetime,
    known: Mapping[str, bool | None],
) -> tuple[str, ...]:
    """After DX verifiably took `rows` (imported on `when`) and shows `teams`: keep the
    people sent and what DX's counts say of them; log who joined DX and who is not in
    DX. `known`: what the store held of each person before (`counted_by_email`), read
    once by the caller. Returns the people sent whom DX does not count."""
    verdicts = infer_counted(rows, teams, known, when=when.date().isoformat())
    remember_people(run, rows, planned.directory, planned.holds)
    run.store.set_counted(
        {e: (v.counted, v.evidence) for e, v in changed(known, verdicts).items()}, run.clock()
    )
    came = joined(known, verdicts)
    if came:
        log.info(
            "sync.joined_dx",
            count=len(came),
            people=capped(came),
            detail="DX counts them now: they joined DX",
        )
    missing = not_in_dx(rows, known, verdicts)
    if missing:
        log.info(
            "sync.not_in_dx",
            count=len(missing),
            people=capped(missing),
            detail="DX ignores these e-mails (not DX users yet): not a failure; they are "
            "placed once they join DX",
        )
    return tuple(missing)


def counted_by_email(store: Store) -> dict[str, bool | None]:
    """What the store holds of whether DX counts each person it took (one read)."""
    return {email: person.counted for email, person in store.dx_people().items()}


def recheck(
    run: Run, planned: Planned, known: Mapping[str, bool | None], last_sent: datetime | None
) -> bool:
    """True when a run with nothing else to send sends the hierarchy again, so that people
    DX does not count yet are placed once they joined DX (at most once per
    `sync.recheck_not_in_dx_hours`). `last_sent`: when the last verified submission was
    made. Only an operational run sends again."""
    waiting = not_in_dx(planned.assignment.teams, known, {})
    hours = run.settings.sync.recheck_not_in_dx_hours
    if not recheck_due(len(waiting), last_sent, run.clock(), hours):
        return False
    log.info(
        "sync.recheck_not_in_dx",
        count=len(waiting),
        people=capped(waiting),
        detail=f"sending the hierarchy again (at most every {hours:g} h, "
        "sync.recheck_not_in_dx_hours) in case they joined DX",
    )
    return True
