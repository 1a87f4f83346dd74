"""Teams DX will leave out of the next snapshot's results (core.reporting_floor), for the
commands that show them: of a plan's rows (`plan`, `check`), or of the teams the last
run planned (`status`); and as the text those commands print."""

from __future__ import annotations

from hrsync.core.gate.reporting_floor import UnderFloor, floor_lines
from hrsync.store.repo import Store
from hrsync.sync.results import SyncResult


def floor_of(result: SyncResult, store: Store) -> UnderFloor | None:
    """The plan's teams under the floor at the snapshot the run saw ahead; None when the
    run planned no teams (it ended before) or no snapshot is ahead."""
    if not result.rows:
        return None
    return store.snapshot_outlook.teams_under_floor(
        [(r.name, r.reference_id, r.contributors) for r in result.rows]
    )


def floor_text(floor: UnderFloor | None) -> str:
    """The section a report ends with; "" when no team is under the floor."""
    lines = floor_lines(floor)
    return "\n".join(lines) + "\n" if lines else ""
