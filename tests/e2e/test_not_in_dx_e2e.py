"""People DX does not count (not DX users yet) are not a failure (issue 21 B).

DX silently ignores a contributor e-mail it does not know: its team's `last_changed_at`
does not move and its count stays below what was sent. A run whose only unconfirmed
changes are such people ends `applied` in the same verify window and names them."""

from __future__ import annotations

import pytest

from tests.e2e.conftest import Workspace

pytestmark = pytest.mark.slow

NINA = "nina.newhire@example.com"
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
