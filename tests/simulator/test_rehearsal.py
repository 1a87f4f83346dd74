"""A rehearsal account: the export's people as DX users, a deterministic share, no teams."""

from __future__ import annotations

import random

import pytest

from hrsync.simulator.rehearsal import in_dx, rehearsal

EMAILS = [f"person{i}@corp.example" for i in range(40)]


def test_the_share_is_the_same_people_whatever_the_order() -> None:
    chosen = in_dx(EMAILS, 0.9)
    shuffled = EMAILS[:]
    random.Random(7).shuffle(shuffled)
    assert in_dx(shuffled, 0.9) == chosen
    assert len(chosen) == 36


@pytest.mark.parametrize(("share", "count"), [(1.0, 10), (0.9, 9), (0.5, 5), (0.01, 1)])
def test_the_share_rounds_up(share: float, count: int) -> None:
    assert len(in_dx(EMAILS[:10], share)) == count


def test_leads_are_always_dx_users() -> None:
    leads = EMAILS[:8]
    chosen = in_dx(EMAILS[:10], 0.5, always=leads)
    assert set(leads) <= chosen
    assert len(chosen) == 8


@pytest.mark.parametrize("share", [0.0, -0.1, 1.5])
def test_a_share_out_of_range_is_refused(share: float) -> None:
    with pytest.raises(ValueError, match="share"):
        in_dx(EMAILS, share)


def test_the_account_has_the_people_no_teams_and_one_token_that_may_import() -> None:
    people = [("Ana", "Ana@Corp.example"), ("Ben", "ben@corp.example"), ("", "ana@corp.example")]
    made = rehearsal(people, source="staff.csv", share=0.5, leads=["ben@corp.example"])
    scenario = made.scenario
    assert made.people == 2, "one person per e-mail, ignoring case"
    assert [u.email for u in scenario.users] == ["ben@corp.example"]
    assert made.left_out == ("Ana@Corp.example",)
    assert scenario.teams == () and scenario.snapshots == ()
    (token,) = scenario.tokens
    assert token.value == made.token and made.token.startswith("rehearse-")
    assert "snapshots:admin" in token.scopes and "users:write" in token.scopes
    assert rehearsal(people, source="staff.csv").token != made.token
