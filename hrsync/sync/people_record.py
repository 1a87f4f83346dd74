"""The people of a hierarchy DX verifiably took, kept in the store (`dx_people`).

The one place a run records them: after a verified `applied` or `in_sync` run, every
e-mail it sent (the contributors and leads of the submission's rows), with their
employee id from the export where known.
"""

from __future__ import annotations

from collections.abc import Sequence

from hrsync.core.confirmation.dx_users import emails_of
from hrsync.core.people import Directory
from hrsync.core.teams.held import Hold
from hrsync.core.teams.identity import TeamRow
from hrsync.sync.context import Run


def remember_people(
    run: Run, rows: Sequence[TeamRow], directory: Directory | None, holds: Sequence[Hold] = ()
) -> None:
    """Record every e-mail `rows` send (e-mail -> employee id, None when the export does
    not name them); people no longer sent are forgotten. A held person sent under the
    e-mail DX took keeps their employee id, so they are found again while still held."""
    ids = {p.email: p.employee_id for p in directory.people} if directory is not None else {}
    for hold in holds:
        if hold.dx_email is not None and hold.person.employee_id:
            ids.setdefault(hold.dx_email, hold.person.employee_id)
    run.store.people.record_sent_people({e: ids.get(e) for e in emails_of(rows)}, run.clock())
