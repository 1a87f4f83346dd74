"""People DX does not count (not DX users yet) are not a failure (issue 21 B).

DX silently ignores a contributor e-mail it does not know: its team's `last_changed_at`
does not move and its count stays below what was sent. A run whose only unconfirmed
changes are such people ends `applied` in the same verify window and names them."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta

import httpx
import pytest
from sqlalchemy import select, update

from hrsync.core import defaults
from hrsync.simulator.faults import Fault
from hrsync.store import tables
from hrsync.store.repo import Store
from tests.e2e.conftest import TOKEN, Workspace, read_rows

pytestmark = pytest.mark.slow

NINA = "nina.newhire@example.com"
PROCESS = "orgfiles.teamHierarchy.process"
NINA_ROW = f"E900,Nina Newhire,{NINA},E002,Engineering,Active,Engineer\n"


def add_nina(workspace: Workspace) -> None:
    with workspace.export.open("a", encoding="utf-8") as fh:
        fh.write(NINA_ROW)


def test_a_new_person_dx_does_not_know_ends_applied_naming_them(workspace: Workspace) -> None:
    first = workspace.hrsync("sync")
    assert first.code == 0 and first.finished["outcome"] == "applied", first.stdout[-3000:]
    engineering = workspace.dx_teams()["Engineering"]["contributors"]

    add_nina(workspace)
    run = workspace.hrsync("sync")
    assert run.code == 0, run.stdout[-3000:]
    finished = run.finished
    assert finished["outcome"] == "applied"
    assert finished["counts"]["membership_change"] == 1
    assert finished["counts"]["not_in_dx"] == 1
    assert finished["not_in_dx"] == NINA
    # In the same window: not the whole of sync.verify_timeout_s (20 s in these tests).
    assert finished["duration_s"] < 15
    (named,) = run.named("sync.not_in_dx")
    assert named["count"] == 1 and named["people"] == NINA
    assert run.named("verify.contributors_unknown") == []
    # DX really ignored her: the team's count did not move.
    assert workspace.dx_teams()["Engineering"]["contributors"] == engineering


def join_dx(workspace: Workspace, name: str, email: str) -> None:
    """The person becomes a DX user, as DX's other integrations bring them in (over HTTP)."""
    reply = httpx.post(
        f"{workspace.sim.base_url}/simulator.users.add",
        headers={"Authorization": f"Bearer {TOKEN}"},
        json={"name": name, "email": email},
    )
    assert reply.json()["ok"] is True


def a_day_later(workspace: Workspace) -> None:
    """The store as a day later finds it: each submission made a day and an hour earlier."""
    store = Store.open(f"sqlite:///{workspace.db}")
    try:
        with store.engine.begin() as connection:
            rows = connection.execute(
                select(tables.submissions.c.id, tables.submissions.c.created_at)
            )
            for key, created_at in rows.all():
                connection.execute(
                    update(tables.submissions)
                    .where(tables.submissions.c.id == key)
                    .values(
                        created_at=created_at
                        - timedelta(hours=defaults.RECHECK_NOT_IN_DX_HOURS + 1)
                    )
                )
    finally:
        store.close()


def test_listed_until_they_join_then_placed_by_the_recheck(workspace: Workspace) -> None:
    assert workspace.hrsync("sync").code == 0
    add_nina(workspace)
    assert workspace.hrsync("sync").finished["outcome"] == "applied"
    engineering = workspace.dx_teams()["Engineering"]["contributors"]

    status = workspace.hrsync("status", "--format", "json")
    (listed,) = json.loads(status.stdout)["not_in_dx"]
    assert listed["email"] == NINA
    shown = workspace.hrsync("status").stdout
    assert f"Not in DX:   1 person DX does not count yet, placed once they join DX: {NINA}" in shown
    explained = workspace.hrsync("explain", NINA)
    today = datetime.now(UTC).date().isoformat()
    assert f"not a DX user yet: DX ignored this e-mail in the import of {today}" in explained.stdout

    # Nothing changed and the recheck is not due (24 h): nothing is sent, she is still named.
    imports = len(workspace.process_requests())
    quiet = workspace.hrsync("sync")
    assert quiet.finished["outcome"] == "in_sync"
    assert quiet.finished["not_in_dx"] == NINA
    assert len(workspace.process_requests()) == imports

    join_dx(workspace, "Nina Newhire", NINA)
    a_day_later(workspace)  # the recheck is due: the last hierarchy DX took is a day old
    recheck = workspace.hrsync("sync")
    assert recheck.code == 0, recheck.stdout[-3000:]
    assert recheck.finished["outcome"] == "applied"
    assert recheck.finished["counts"]["not_in_dx"] == 0
    assert "not_in_dx" not in recheck.finished
    (asked,) = recheck.named("sync.recheck_not_in_dx")
    assert asked["people"] == NINA
    (came,) = recheck.named("sync.joined_dx")
    assert came["people"] == NINA and came["count"] == 1
    assert len(workspace.process_requests()) == imports + 1
    assert workspace.dx_teams()["Engineering"]["contributors"] == engineering + 1
    assert json.loads(workspace.hrsync("status", "--format", "json").stdout)["not_in_dx"] == []
    assert "a DX user" in workspace.hrsync("explain", NINA).stdout

    # Nobody is listed any more: no recheck, however due.
    a_day_later(workspace)
    assert workspace.hrsync("sync").finished["outcome"] == "in_sync"
    assert len(workspace.process_requests()) == imports + 1


def test_a_counted_person_moving_beside_a_new_one_is_still_waited_for(
    workspace: Workspace,
) -> None:
    """Nina's arrival does not make the move of a person DX counts unverified-proof: the
    team is waited for as always, and DX taking the move ends the run applied."""
    assert workspace.hrsync("sync").code == 0
    rows = read_rows("sample-org.csv")
    for person in rows:
        if person["Employee ID"] == "E104":  # Carlos, a DX user, moves to Developer Experience
            person["Manager ID"], person["Department"] = "E021", "Developer Experience"
    workspace.write_export(rows)
    add_nina(workspace)
    run = workspace.hrsync("sync")
    assert run.code == 0 and run.finished["outcome"] == "applied", run.stdout[-3000:]
    assert run.finished["not_in_dx"] == NINA
    assert run.named("verify.watching") == [], "the move shows the import: no extra wait"
    assert workspace.dx_teams()["Developer Experience"]["contributors"] == 4


def test_a_move_dx_never_shows_is_unverified_even_with_a_new_person_beside_it(
    workspace: Workspace,
) -> None:
    assert workspace.hrsync("sync").code == 0
    rows = read_rows("sample-org.csv")
    for person in rows:
        if person["Employee ID"] == "E104":
            person["Manager ID"], person["Department"] = "E021", "Developer Experience"
    workspace.write_export(rows)
    add_nina(workspace)
    workspace.sim.dx.add_fault(Fault(method=PROCESS, kind="drop", count=10))
    run = workspace.hrsync(
        "sync", env={"HRSYNC_SYNC__VERIFY_TIMEOUT_S": "3", "HRSYNC_SYNC__MAX_RESENDS": "0"}
    )
    assert run.code == 5 and run.finished["outcome"] == "unverified", run.stdout[-3000:]
    # The reason says what DX lacks, not only that time ran out.
    reason = run.finished["reason"]
    assert "not yet changed" in reason and "Platform Infrastructure" in reason, reason
