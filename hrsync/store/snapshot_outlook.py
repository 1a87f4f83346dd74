"""The next_snapshot table: the next DX snapshot not started, as the last run that read
`snapshots.list` saw it; the last run as readiness reads it (core.snapshot_ahead); and
the teams the last run planned that DX will leave out of it (core.reporting_floor)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime

from sqlalchemy import Engine, select

from hrsync.core.gate.reporting_floor import Team, UnderFloor, under_floor
from hrsync.core.gate.snapshot_ahead import LastRun, NextSnapshot
from hrsync.outcome import OUTCOMES, Outcome
from hrsync.store import tables
from hrsync.store.deferrals import DeferralQueries
from hrsync.store.identities import IdentityQueries
from hrsync.store.people import PeopleQueries
from hrsync.store.runs import RunQueries
from hrsync.store.sessions import StoreSessions
from hrsync.store.upsert import upsert

_ROW = "next"  # the table's one row


@dataclass(frozen=True, slots=True)
class SnapshotOutlook:
    """What the last read of `snapshots.list` found ahead (`snapshot` None: nothing)."""

    snapshot: NextSnapshot | None
    read_at: datetime
    run_id: str | None


class SnapshotOutlookQueries(StoreSessions):
    """The snapshot ahead, and what readiness reads of the runs, deferrals, identities
    and people the Store's other parts keep (handed in, not queried twice)."""

    def __init__(
        self,
        engine: Engine,
        *,
        runs: RunQueries,
        deferrals: DeferralQueries,
        identities: IdentityQueries,
        people: PeopleQueries,
    ) -> None:
        super().__init__(engine)
        self._runs = runs
        self._deferrals = deferrals
        self._identities = identities
        self._people = people

    def save_next_snapshot(
        self, snapshot: NextSnapshot | None, read_at: datetime, run_id: str | None
    ) -> None:
        values = {
            "snapshot_id": snapshot.snapshot_id if snapshot else None,
            "scheduled_for": snapshot.starts_at if snapshot else None,
            "read_at": read_at,
            "run_id": run_id,
        }
        with self._write() as s:
            s.execute(upsert(self.engine, tables.next_snapshot, {"name": _ROW}, values))

    def next_snapshot(self) -> SnapshotOutlook | None:
        """None when no run has read `snapshots.list` yet."""
        table = tables.next_snapshot
        with self._read() as s:
            row = s.execute(select(table).where(table.c.name == _ROW)).first()
        if row is None:
            return None
        snapshot = (
            NextSnapshot(row.snapshot_id, row.scheduled_for.date())
            if row.snapshot_id is not None and row.scheduled_for is not None
            else None
        )
        return SnapshotOutlook(snapshot, row.read_at, row.run_id)

    def window_deferral_end(self) -> datetime | None:
        """When the snapshot window that defers the daemon's runs ends (the pending
        deferral's resume_at, when a snapshot deferred that run), past or not."""
        pending = self._deferrals.pending()
        if pending is None or pending.run_id is None:
            return None
        run = self._runs.get(pending.run_id)
        if run is None or not (run.defer_kind or "").startswith("snapshot"):
            return None
        return pending.resume_at

    def last_run_outlook(self) -> LastRun | None:
        """The newest finished operational run, as readiness reads it: a deferred run with
        the end of the deferral it left (what its changes wait for). A run another run's
        lease turned away is not it: it read nothing, and that run decides."""
        run = self._runs.newest(OUTCOMES, skip_turned_away=True)
        if run is None or run.outcome is None:
            return None
        resume_at = None
        if run.outcome == Outcome.DEFERRED.value:
            pending = self._deferrals.pending()
            if pending is not None and pending.run_id == run.id:
                resume_at = pending.resume_at
        return LastRun(
            outcome=run.outcome,
            counts=run.counts,
            reason=run.reason,
            action=run.action,
            waiting_on=run.waiting_on,
            defer_kind=run.defer_kind,
            resume_at=resume_at,
            plan_id=run.plan_id,
        )

    def teams_under_floor(self, teams: Sequence[Team] | None = None) -> UnderFloor | None:
        """Of `teams` (a plan's rows), or else of the teams as the last operational run
        planned them (the identities kept), those DX will leave out of the next
        snapshot's results, counted as DX counts (people known not to be DX users left
        out); None when no snapshot is ahead."""
        seen = self.next_snapshot()
        if seen is None or seen.snapshot is None:
            return None
        known = {email: person.counted for email, person in self._people.dx_people().items()}
        if teams is None:
            teams = [
                (i.name, i.reference_id, i.members)
                for i in self._identities.load()
                if not i.retired
            ]
        return under_floor(seen.snapshot, teams, known)
