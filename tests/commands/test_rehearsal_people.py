"""Who `hrsync simulator --users-from EXPORT` makes DX users: every person with a usable
e-mail, those hrsync holds for a problem of their row too (DX knows people by e-mail,
whatever HR's row says of their manager)."""

from __future__ import annotations

from hrsync.commands.simulator import rehearsal_people
from hrsync.core.people import read_people
from hrsync.core.settings import FilterSettings
from tests.core.test_people import COLUMNS, FIELDS, row, source


def test_people_held_for_their_row_are_dx_users_when_their_email_is_usable() -> None:
    rows = [
        row("E1"),
        row("E2", "E1"),
        row("E3", "E9"),  # held: a manager nobody is
        row("E4", "E4"),  # held: their own manager
        row("E5", "E1", email="e5@"),  # held: no usable e-mail, so no DX user either
        row("E6", "E1", email="E2@example.com"),  # held with E2: an e-mail two rows share
        row("E7", "E1", status="Terminated"),  # left out by the filters
    ]
    directory = read_people(
        "people.csv",
        COLUMNS,
        source(rows),
        FIELDS,
        FilterSettings(active_status=("Active",)),
        hold_people=True,
    )
    assert {h.employee_id for h in directory.held} >= {"E3", "E4", "E5"}
    # The people kept, then those held; the simulator makes one user of an e-mail.
    assert rehearsal_people(directory) == [
        ("Person E1", "e1@example.com"),
        ("Person E2", "e2@example.com"),
        ("Person E3", "e3@example.com"),
        ("Person E4", "e4@example.com"),
        ("Person E6", "e2@example.com"),
    ]
