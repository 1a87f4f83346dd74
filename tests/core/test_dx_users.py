"""Who DX counts, learned from what it shows (hrsync.core.confirmation.dx_users): table tests, and a
property: against a DX that counts exactly its users, a verdict is never wrong."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from hypothesis import given
from hypothesis import strategies as st

from hrsync.core.confirmation.dx_users import (
    NotCounted,
    Verdict,
    changed,
    from_attribute_answers,
    import_visible,
    infer_counted,
    joined,
    not_in_dx,
    overdue,
    recheck_due,
    unawaited,
    unexplained,
    watched,
)
from hrsync.core.confirmation.verify import Uncounted, check_convergence
from hrsync.core.gate.plan import make_plan
from hrsync.core.teams.identity import TeamRow
from hrsync.dx.models import DxTeam

NOW = datetime(2026, 11, 27, 6, 0, tzinfo=UTC)
WHEN = "2026-11-27"


def row(ref: str, lead: str, *members: str) -> TeamRow:
    return TeamRow(f"k-{ref}", ref, ref.title(), lead, None, None, tuple(members))


def dx(ref: str, count: int, changed_at: datetime = NOW) -> DxTeam:
    return DxTeam(f"id-{ref}", ref.title(), "LTE", ref, contributors=count,
                  last_changed_at=changed_at)  # fmt: skip


# ---------------------------------------------------------------- inference, by rule


@pytest.mark.parametrize(
    ("members", "count", "known", "expected"),
    [
        # rule 2: the count equals the number sent: all counted
        (("a", "b", "n"), 3, {}, {"a": True, "b": True, "n": True}),
        # rule 3: the count equals those known to be counted: the rest are not
        (("a", "b", "n"), 2, {"a": True, "b": True}, {"n": False}),
        (("a", "b", "n"), 2, {"a": True, "b": True, "n": False}, {"n": False}),
        # a person DX ignored before is counted once the count reaches the number sent
        (("a", "n"), 2, {"a": True, "n": False}, {"a": True, "n": True}),
        # two unknowns, one counted: no rule says which
        (("a", "n", "m"), 2, {"a": True}, {}),
        # fewer than known to be counted (DX lost someone): no verdict
        (("a", "b", "n"), 1, {"a": True, "b": True}, {}),
        # nobody known, nobody counted: all ignored
        (("n", "m"), 0, {}, {"n": False, "m": False}),
    ],
)
def test_what_a_team_count_says(
    members: tuple[str, ...], count: int, known: dict[str, bool], expected: dict[str, bool]
) -> None:
    verdicts = infer_counted([row("eng", "lead", *members)], [dx("eng", count)], known, when=WHEN)
    assert {e: v.counted for e, v in verdicts.items() if e != "lead"} == expected


def test_a_lead_dx_accepted_is_counted_and_counts_for_rule_3() -> None:
    # The lead is also a contributor of their own team: counted, so the count of 1 is theirs.
    verdicts = infer_counted([row("eng", "lead", "lead", "n")], [dx("eng", 1)], {}, when=WHEN)
    assert verdicts["lead"] == Verdict(True, f"a team lead DX accepted on {WHEN}")
    assert verdicts["n"] == Verdict(False, f"DX ignored this e-mail in the import of {WHEN}")


def test_counted_in_one_team_wins_over_ignored_in_another() -> None:
    rows = [row("a", "l1", "p"), row("b", "l2", "p", "q")]
    verdicts = infer_counted(rows, [dx("a", 1), dx("b", 1)], {}, when=WHEN)
    assert verdicts["p"].counted is True
    assert verdicts["q"].counted is False


def test_a_team_dx_does_not_show_says_nothing() -> None:
    assert infer_counted([row("eng", "l", "n")], [], {}, when=WHEN) == {
        "l": Verdict(True, f"a team lead DX accepted on {WHEN}")
    }


def test_attribute_answers() -> None:
    verdicts = from_attribute_answers(["a"], ["n"], when=WHEN)
    assert verdicts["a"].counted is True and verdicts["n"].counted is False
    assert "user_not_found" in verdicts["n"].evidence


def test_changed_keeps_the_first_evidence_and_joined_names_who_came() -> None:
    known = {"a": True, "n": False, "m": False}
    verdicts = {
        "a": Verdict(True, "again"),
        "n": Verdict(False, "again"),
        "m": Verdict(True, "counted now"),
    }
    assert changed(known, verdicts) == {"m": Verdict(True, "counted now")}
    assert joined(known, verdicts) == ["m"]


def test_not_in_dx_lists_contributors_now_not_counted() -> None:
    rows = [row("eng", "l", "a", "n", "m")]
    assert not_in_dx(rows, {"n": False, "m": False}, {"m": Verdict(True, "joined")}) == ["n"]


# ---------------------------------------------------------------- what is waited for


def plan_for(after: TeamRow, before: TeamRow) -> tuple[list[str], set[str]]:
    plan = make_plan([after], [dx(after.reference_id, 2)], {before.reference_id: before})
    return [after.reference_id], unawaited(plan, KNOWN)


KNOWN = {"l": True, "a": True, "x": False, "u": None}


@pytest.mark.parametrize(
    ("before", "after", "waited"),
    [
        (("a",), ("a", "new"), False),  # a person sent for the first time
        (("a", "x"), ("a",), False),  # a person DX ignored, removed
        (("a",), ("a", "x"), False),  # a person DX ignored, added again
        (("a",), ("a", "new", "x"), False),
        (("a",), (), True),  # a person DX counted, removed
        ((), ("a",), True),  # ... added (moved here)
        (("a",), ("new",), True),  # a swap touches a counted person
        # sent before, nothing learned: DX may or may not show it; the count's range decides
        (("a", "u"), ("a",), False),
        (("a",), ("a", "u"), False),
        (("a", "u"), ("a", "x"), False),
    ],
)
def test_which_membership_changes_are_waited_for(
    before: tuple[str, ...], after: tuple[str, ...], waited: bool
) -> None:
    _, skipped = plan_for(row("eng", "l", *after), row("eng", "l", *before))
    assert ("eng" not in skipped) is waited


def test_a_lead_change_is_always_waited_for() -> None:
    _, skipped = plan_for(row("eng", "a", "new"), row("eng", "l"))
    assert skipped == set()


def test_teams_holding_people_not_known_to_be_counted_are_watched() -> None:
    rows = [row("a", "l", "a"), row("b", "l", "a", "x"), row("c", "l", "new")]
    assert watched(rows, KNOWN) == ["b", "c"]


def test_a_shortfall_explained_by_people_not_known_to_be_counted_is_not_reported() -> None:
    rows = [row("eng", "l", "a", "n"), row("ops", "l", "a", "b")]
    shortfalls = [Uncounted("eng", "Eng", 2, 1), Uncounted("ops", "Ops", 2, 1)]
    known = {"a": True, "b": True}
    assert unexplained(shortfalls, rows, known) == [shortfalls[1]]


def test_watched_teams_never_hold_up_convergence() -> None:
    before = NOW - timedelta(minutes=1)
    untouched = check_convergence([row("eng", "l", "a", "n")], [], [dx("eng", 1, before)],
                                  watching={"eng": before})  # fmt: skip
    assert untouched.converged and untouched.unsettled == ("Eng",)
    assert not untouched.import_shown
    touched = check_convergence([row("eng", "l", "a", "n")], [], [dx("eng", 2)],
                                watching={"eng": before})  # fmt: skip
    assert touched.converged and touched.unsettled == () and touched.import_shown


def test_an_awaited_team_that_changed_shows_the_import() -> None:
    before = NOW - timedelta(minutes=1)
    seen = check_convergence([row("eng", "l", "a")], [], [dx("eng", 1)],
                             awaiting_change={"eng": before})  # fmt: skip
    assert seen.import_shown


def test_import_visible() -> None:
    assert import_visible({"create": 1}) and import_visible({"archive": 2})
    assert not import_visible({"membership_change": 3, "lead_change": 1, "unchanged": 9})


# ---------------------------------------------------------------- recheck and alerts


def test_recheck_due() -> None:
    assert not recheck_due(0, None, NOW, 24)
    assert recheck_due(1, None, NOW, 24)
    assert not recheck_due(1, NOW - timedelta(hours=23), NOW, 24)
    assert recheck_due(1, NOW - timedelta(hours=24), NOW, 24)


def test_overdue_longest_first() -> None:
    people = [
        NotCounted("a", NOW - timedelta(days=15)),
        NotCounted("b", NOW - timedelta(days=3)),
        NotCounted("c", NOW - timedelta(days=20)),
    ]
    assert [p.email for p in overdue(people, NOW, alert_days=14)] == ["c", "a"]


# ---------------------------------------------------------------- property

EMAILS = [f"p{i}" for i in range(8)]


@st.composite
def worlds(draw: st.DrawFn) -> tuple[list[TeamRow], set[str], dict[str, bool | None]]:
    users = set(draw(st.sets(st.sampled_from(EMAILS))))
    teams = draw(st.lists(st.sets(st.sampled_from(EMAILS)), min_size=1, max_size=4))
    rows = [row(f"t{i}", "lead", *sorted(m)) for i, m in enumerate(teams)]
    # What was learned before is true of DX, or not known.
    known = {e: draw(st.sampled_from([None, e in users])) for e in EMAILS}
    return rows, users, known


@given(worlds())
def test_against_a_dx_counting_exactly_its_users_no_verdict_is_wrong(
    world: tuple[list[TeamRow], set[str], dict[str, bool | None]],
) -> None:
    rows, users, known = world
    current = [dx(r.reference_id, len(set(r.contributors) & users)) for r in rows]
    verdicts = infer_counted(rows, current, known, when=WHEN, leads_accepted=False)
    for email, verdict in verdicts.items():
        assert verdict.counted is (email in users), (email, verdict)
    # Every shortfall is explained by people not known to be counted.
    shortfalls = [
        Uncounted(r.reference_id, r.name, len(set(r.contributors)), t.contributors)
        for r, t in zip(rows, current, strict=True)
        if t.contributors < len(set(r.contributors))
    ]
    assert unexplained(shortfalls, rows, known) == []
