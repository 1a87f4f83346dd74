"""How things stand, read from the state store: what the daemon's state gauges show.

The store is the one truth every replica shares. A run by hand, an approval or the
other replica's run changes it without this process seeing the run, so the gauges are
read from it at start, after each run and at every heartbeat, never fed from a run's
result. `hrsync status` reads the same facts (the decisive run, the deferral, the next
snapshot) through the same store methods.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

from hrsync.core.gate.plan import COUNT_KEYS
from hrsync.core.gate.snapshot_ahead import NextSnapshot, Readiness, readiness
from hrsync.core.report.notify import SUCCESS
from hrsync.store.repo import RunRecord, Store


@dataclass(frozen=True, slots=True)
class StoreState:
    """The state gauges' values, as the store had them at one reading."""

    last_ends: Mapping[str, datetime]  # when the newest run of each outcome ended
    last_success: datetime | None
    # The newest run that needed a person or succeeded (its `waiting_on`: who is needed).
    decisive: RunRecord | None
    synced: int | None  # people in the last export DX accepted
    held: int
    not_in_dx: int
    lead_left: int  # people in teams kept for a manager who left, led by a stand-in
    no_team: int  # people in no team, not meant to be, as the newest run found them
    teams: int
    plan_changes: Mapping[str, int]
    deferred_until: datetime | None
    next_snapshot: NextSnapshot | None
    readiness: Readiness

    @property
    def waiting_on(self) -> str | None:
        """What a person must act on, as the decisive run left it; None when nothing."""
        return self.decisive.waiting_on if self.decisive is not None else None


def read_state(store: Store, config_path: Path | str | None = None) -> StoreState:
    """Every state gauge's value from the store (raises what the store raises)."""
    ends = store.runs.last_ends()
    success = [ends[o] for o in SUCCESS if o in ends]
    # The newest run that planned anything: a run another's lease turned away read
    # nothing (the other run decides), and dry runs say nothing of the daemon's work.
    last = store.snapshot_outlook.last_run_outlook()
    pending = store.deferrals.pending()
    seen = store.snapshot_outlook.next_snapshot()
    return StoreState(
        last_ends=ends,
        last_success=max(success) if success else None,
        decisive=store.runs.decisive(),
        synced=store.runs.last_accepted_people_count(),
        held=store.people.held_count(),
        not_in_dx=store.people.not_counted_count(),
        lead_left=store.leads_left.people_count(),
        no_team=last.counts.get("no_team", 0) if last else 0,
        teams=store.identities.active_team_count(),
        plan_changes={k: last.counts.get(k, 0) for k in COUNT_KEYS} if last else {},
        deferred_until=pending.resume_at if pending else None,
        next_snapshot=seen.snapshot if seen else None,
        readiness=readiness(last, config_path),
    )
