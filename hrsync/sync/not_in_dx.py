"""People DX does not count yet: what a run learns of them, and when it sends again.

The rules are `hrsync.core.confirmation.dx_users` (pure); this module gathers DX's evidence, keeps
the verdicts in the store (`dx_people`) and logs who is not in DX and who joined.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime

from hrsync import logs
from hrsync.core import defaults
from hrsync.core.confirmation.dx_users import (
    Undecided,
    changed,
    contradicted,
    infer_counted,
    joined,
    not_in_dx,
    recheck_due,
    undecided,
    undecided_evidence,
)
from hrsync.core.confirmation.verify import Convergence
from hrsync.core.listing import capped as capped_list
from hrsync.core.teams.identity import TeamRow
from hrsync.dx.models import DxTeam
from hrsync.logcap import log_each
from hrsync.store.repo import Store
from hrsync.sync.context import Run
from hrsync.sync.people_record import remember_people
from hrsync.sync.results import Planned

log = logs.get_logger(__name__)


def learn_people(
    run: Run,
    planned: Planned,
    rows: Sequence[TeamRow],
    teams: Sequence[DxTeam],
    when: datetime,
    known: Mapping[str, bool | None],
    *,
    settled: bool,
) -> tuple[tuple[str, ...], tuple[Undecided, ...]]:
    """After DX verifiably took `rows` (imported on `when`) and shows `teams`: keep the
    people sent and what DX's counts say of them; log who joined DX, who is not in DX,
    and per team how many of whom DX does not count when it cannot be told yet.
    `known`: what the store held of each person before (`counted_by_email`), read once
    by the caller. `settled`: `teams` were read in a run after the import, not right
    after it (`dx_users.infer_counted`). Returns the people sent whom DX does not count,
    and those teams."""
    day = when.date().isoformat()
    verdicts = infer_counted(rows, teams, known, when=day, settled=settled)
    remember_people(run, rows, planned.directory, planned.holds)
    run.store.people.set_counted(
        {e: (v.counted, v.evidence) for e, v in changed(known, verdicts).items()}, run.clock()
    )
    unclear = tuple(undecided(rows, teams, known, verdicts))
    run.store.people.set_undecided(
        {e: undecided_evidence(u, when=day) for u in unclear for e in u.candidates}
    )
    log_each(
        log,
        "sync.not_in_dx_undecided",
        unclear,
        lambda u: {
            "team": u.team,
            "sent": u.sent,
            "counted": u.counted,
            "not_counted": u.not_counted,
            "candidates": capped_list(u.candidates),
        },
        see="hrsync status",
    )
    came = joined(known, verdicts)
    if came:
        log.info(
            "sync.joined_dx",
            count=len(came),
            people=capped_list(came),
            detail="DX counts them now: they joined DX",
        )
    missing = not_in_dx(rows, known, verdicts)
    if missing:
        log.info(
            "sync.not_in_dx",
            count=len(missing),
            people=capped_list(missing),
            detail="DX ignores these e-mails (not DX users yet): not a failure; they are "
            "placed once they join DX",
        )
    return tuple(missing), unclear


def learn_settled(run: Run, teams: Sequence[DxTeam]) -> None:
    """At the start of a run: what DX's counts, read now, say of the people of the last
    hierarchy DX verifiably took, when nothing was sent since that may have reached DX.
    Only teams DX shows unchanged since then are read (a hand edit changes the count)."""
    last = run.store.submissions.last_verified()
    if last is None or run.store.submissions.after(last.id):
        return
    unchanged = {
        t.reference_id
        for t in teams
        if t.reference_id is not None
        and (seen := last.dx_seen.get(t.reference_id)) is not None
        and seen.last_changed_at == t.last_changed_at
    }
    rows = [r for r in last.plan.rows if r.reference_id in unchanged]
    known = counted_by_email(run.store)
    day = last.created_at.date().isoformat()
    verdicts = infer_counted(rows, teams, known, when=day, leads_accepted=False)
    learned = changed(known, verdicts)
    if learned:
        run.store.people.set_counted(
            {e: (v.counted, v.evidence) for e, v in learned.items()}, run.clock()
        )


def forget_contradicted(
    run: Run, rows: Sequence[TeamRow], last: Convergence, known: Mapping[str, bool | None]
) -> None:
    """An unverified run whose last reply differed only in counts below what DX is known
    to count: those people are not known again, so the next run is not held up by the
    same count (`dx_users.contradicted`)."""
    forgotten = contradicted(rows, last, known, when=run.clock().date().isoformat())
    if not forgotten:
        return
    run.store.people.forget_counted(forgotten)
    log.warning(
        "verify.counted_forgotten",
        count=len(forgotten),
        people=capped_list(sorted(forgotten)),
        teams=capped_list(u.name for u in last.undercounted),
        detail="DX counts fewer in these teams than the members it was known to count: "
        "they are not known again, and the next run checks the teams by range",
    )


def counted_by_email(store: Store) -> dict[str, bool | None]:
    """What the store holds of whether DX counts each person it took (one read)."""
    return {email: person.counted for email, person in store.people.dx_people().items()}


def recheck(
    run: Run, planned: Planned, known: Mapping[str, bool | None], last_sent: datetime | None
) -> bool:
    """True when a run with nothing else to send sends the hierarchy again, so that people
    DX does not count yet are placed once they joined DX (at most once per
    `defaults.RECHECK_NOT_IN_DX_HOURS`). `last_sent`: when the last verified submission was
    made. Only an operational run sends again."""
    waiting = not_in_dx(planned.assignment.teams, known, {})
    hours = defaults.RECHECK_NOT_IN_DX_HOURS
    if not recheck_due(len(waiting), last_sent, run.clock(), hours):
        return False
    log.info(
        "sync.recheck_not_in_dx",
        count=len(waiting),
        people=capped_list(waiting),
        detail=f"sending the hierarchy again (at most every {hours:g} h) in case they joined DX",
    )
    return True
