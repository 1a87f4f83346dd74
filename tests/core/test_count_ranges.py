"""Teams holding people whose DX status is not known: their count is verified by range
(known-counted <= count <= sent), and a shortfall no rule pins on anyone is told as "n of
these". Table tests, and properties holding the real functions to a plain brute-force
reference that tries every set of DX users consistent with what DX shows."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from itertools import product

import pytest
from hypothesis import given
from hypothesis import strategies as st

from hrsync.core.confirmation.dx_users import (
    Undecided,
    Verdict,
    contradicted,
    count_range,
    count_ranges,
    infer_counted,
    unawaited,
    undecided,
    undecided_evidence,
    undecided_from_evidence,
)
from hrsync.core.confirmation.verify import CountRange, Undercounted, check_convergence
from hrsync.core.gate.plan import make_plan
from hrsync.core.teams.identity import TeamRow
from hrsync.dx.models import DxTeam

NOW = datetime(2026, 11, 27, 6, 0, tzinfo=UTC)
BEFORE = NOW - timedelta(minutes=5)
WHEN = "2026-11-27"


def row(ref: str, *members: str, lead: str = "lead") -> TeamRow:
    return TeamRow(f"k-{ref}", ref, ref.title(), lead, None, None, tuple(members))


def dx(ref: str, count: int, changed_at: datetime = NOW) -> DxTeam:
    return DxTeam(f"id-{ref}", ref.title(), "LTE", ref, contributors=count,
                  last_changed_at=changed_at)  # fmt: skip


# ---------------------------------------------------------------- the range


@pytest.mark.parametrize(
    ("members", "known", "expected"),
    [
        (("a", "b"), {"a": True, "b": True}, CountRange(2, 2)),
        (("a", "u"), {"a": True}, CountRange(1, 2)),
        # one DX ignored before may have joined since: not known to be counted
        (("a", "x"), {"a": True, "x": False}, CountRange(1, 2)),
        (("u", "v"), {}, CountRange(0, 2)),
        ((), {}, CountRange(0, 0)),
        (("a", "a"), {"a": True}, CountRange(1, 1)),  # an e-mail counts once
    ],
)
def test_count_range(
    members: tuple[str, ...], known: dict[str, bool], expected: CountRange
) -> None:
    assert count_range(row("eng", *members), known) == expected


def test_ranges_are_given_to_awaited_teams_and_teams_holding_people_not_known() -> None:
    rows = [row("a", "a1"), row("b", "a1", "u"), row("c", "a1")]
    known = {"a1": True}
    assert count_ranges(rows, known, ["c"]) == {"b": CountRange(1, 2), "c": CountRange(1, 1)}


@pytest.mark.parametrize(
    ("count", "converged"),
    [(0, False), (1, True), (2, True), (3, False)],
)
def test_a_count_is_verified_by_range(count: int, converged: bool) -> None:
    rows = [row("eng", "a", "u")]
    seen = check_convergence(rows, [], [dx("eng", count)], count_ranges={"eng": CountRange(1, 2)})
    assert seen.converged is converged
    assert seen.undercounted == ((Undercounted("eng", "Eng", 1, 0),) if count == 0 else ())


def test_name_parent_and_missing_teams_are_still_checked_exactly_with_a_range() -> None:
    rows = [row("eng", "u"), row("ops", "v")]
    ranges = {"eng": CountRange(0, 1), "ops": CountRange(0, 1)}
    renamed = DxTeam("id-eng", "Old", "LTE", "eng", contributors=0, last_changed_at=NOW)
    seen = check_convergence(rows, [], [renamed], count_ranges=ranges)
    assert not seen.converged
    assert [m.reference_id for m in seen.missing] == ["ops"]
    assert [m.old_name for m in seen.wrong_names] == ["Old"]


def test_without_a_range_a_shortfall_does_not_hold_up_convergence() -> None:
    # A team no range is given for (nobody in it whose status matters): as before.
    assert check_convergence([row("eng", "a", "b")], [], [dx("eng", 1)]).converged


def test_summary_names_an_undercounted_team() -> None:
    seen = check_convergence([row("eng", "a")], [], [dx("eng", 0)],
                             count_ranges={"eng": CountRange(1, 1)})  # fmt: skip
    assert "Eng: 0 < 1" in seen.summary()


# ---------------------------------------------------------------- a count contradicting


def test_a_count_below_what_is_known_is_forgotten_only_when_nothing_else_differs() -> None:
    rows = [row("eng", "a", "b", "u"), row("ops", "c")]
    known = {"a": True, "b": True, "c": True}
    ranges = count_ranges(rows, known, ["ops"])
    # DX shows everything, but counts 1 in Eng where a and b are known to be counted.
    seen = check_convergence(rows, [], [dx("eng", 1), dx("ops", 1)], count_ranges=ranges)
    assert seen.only_undercounted
    forgotten = contradicted(rows, seen, known, when=WHEN)
    assert sorted(forgotten) == ["a", "b"]
    assert "fewer than the 2 known to be counted" in forgotten["a"]
    # A missing team may be DX not having taken the import yet: nothing is contradicted.
    early = check_convergence(rows, [], [dx("eng", 1)], count_ranges=ranges)
    assert not early.only_undercounted and contradicted(rows, early, known, when=WHEN) == {}
    # An awaited team DX has not changed yet: likewise.
    waiting = check_convergence(rows, [], [dx("eng", 1, BEFORE), dx("ops", 0, BEFORE)],
                                awaiting_change={"ops": BEFORE}, count_ranges=ranges)  # fmt: skip
    assert contradicted(rows, waiting, known, when=WHEN) == {}


# ---------------------------------------------------------------- what cannot be told yet


@pytest.mark.parametrize(
    ("members", "count", "known", "expected"),
    [
        # three not known, DX counts two: one of the three is not counted
        (("u", "v", "w"), 2, {}, (1, ("u", "v", "w"))),
        (("a", "u", "v"), 2, {"a": True}, (1, ("u", "v"))),
        # a person DX is known to ignore explains the shortfall: nothing to tell
        (("x", "u"), 1, {"x": False}, None),
        (("x", "u", "v"), 1, {"x": False}, (1, ("u", "v"))),
        # no shortfall, or nobody left to blame: nothing to tell
        (("u", "v"), 2, {}, None),
        (("a", "b"), 1, {"a": True, "b": True}, None),
    ],
)
def test_undecided(
    members: tuple[str, ...],
    count: int,
    known: dict[str, bool],
    expected: tuple[int, tuple[str, ...]] | None,
) -> None:
    found = undecided([row("eng", *members)], [dx("eng", count)], known, {})
    if expected is None:
        assert found == []
    else:
        (u,) = found
        assert (u.not_counted, u.candidates) == expected
        assert (u.team, u.sent, u.counted) == ("Eng", len(set(members)), count)


def test_undecided_uses_what_this_run_learned() -> None:
    verdicts = {"u": Verdict(False, "ignored"), "v": Verdict(True, "counted")}
    assert undecided([row("eng", "u", "v", "w")], [dx("eng", 1)], {}, verdicts) == [
        Undecided("Eng", 3, 1, 1, ("w",))
    ]


def test_undecided_evidence_reads_back_by_team() -> None:
    told = [
        Undecided("Platform's Core", 4, 3, 1, ("o", "y")),
        Undecided("Data", 3, 1, 2, ("p", "q", "r")),
    ]
    people = [(e, undecided_evidence(u, when=WHEN)) for u in told for e in u.candidates]
    people.append(("z", "DX ignored this e-mail in the import of 2026-11-27"))
    people.append(("w", None))
    assert undecided_from_evidence(people) == sorted(told, key=lambda u: u.team)


def test_sentence() -> None:
    u = Undecided("Eng", 3, 2, 1, ("u", "v"))
    assert (
        u.sentence()
        == "DX does not count 1 of 3 sent to 'Eng'; it cannot tell yet which of 2: u, v"
    )


# ---------------------------------------------------------------- properties

EMAILS = [f"p{i}" for i in range(7)]
World = tuple[list[TeamRow], set[str], dict[str, bool | None]]


@st.composite
def worlds(draw: st.DrawFn) -> World:
    users = set(draw(st.sets(st.sampled_from(EMAILS))))
    teams = draw(st.lists(st.sets(st.sampled_from(EMAILS)), min_size=1, max_size=4))
    rows = [row(f"t{i}", *sorted(m)) for i, m in enumerate(teams)]
    # What was learned before is true of DX, or not known.
    known = {e: draw(st.sampled_from([None, e in users])) for e in EMAILS}
    return rows, users, known


def consistent_worlds(
    rows: list[TeamRow], counts: dict[str, int], known: dict[str, bool | None]
) -> list[set[str]]:
    """Reference: every set of DX users that agrees with what was learned and gives the
    counts DX shows."""
    free = sorted({e for r in rows for e in r.contributors if known.get(e) is None})
    fixed = {e for e, c in known.items() if c is True}
    found = []
    for choice in product((False, True), repeat=len(free)):
        users = fixed | {e for e, on in zip(free, choice, strict=True) if on}
        if all(len(set(r.contributors) & users) == counts[r.reference_id] for r in rows):
            found.append(users)
    return found


@given(worlds())
def test_dx_exactly_right_is_always_within_range(world: World) -> None:
    rows, users, known = world
    current = [dx(r.reference_id, len(set(r.contributors) & users)) for r in rows]
    ranges = count_ranges(rows, known, [r.reference_id for r in rows])
    assert check_convergence(rows, [], current, count_ranges=ranges).converged


@given(worlds(), st.sets(st.sampled_from(EMAILS)))
def test_a_change_to_people_known_to_be_counted_is_waited_for_as_before(
    world: World, after: set[str]
) -> None:
    """Never weakened: a team whose change adds or removes someone known to be counted is
    waited for, and DX not having touched it keeps the reply from converging, whatever
    the range says."""
    rows, users, known = world
    old = rows[0]
    new = row(old.reference_id, *sorted(after))
    touched = set(old.contributors) ^ after
    plan = make_plan([new], [dx(old.reference_id, 0)], {old.reference_id: old})
    skipped = unawaited(plan, known)
    if any(known.get(e) is True for e in touched):
        assert old.reference_id not in skipped
        untouched = [dx(old.reference_id, len(set(old.contributors) & users), BEFORE)]
        seen = check_convergence(
            [new],
            [],
            untouched,
            awaiting_change={old.reference_id: BEFORE},
            count_ranges=count_ranges([new], known, [old.reference_id]),
        )
        assert not seen.converged
    elif touched:
        assert old.reference_id in skipped


@given(worlds())
def test_verdicts_and_what_is_told_agree_with_every_consistent_world(world: World) -> None:
    rows, users, known = world
    current = [dx(r.reference_id, len(set(r.contributors) & users)) for r in rows]
    counts = {t.reference_id or "": t.contributors for t in current}
    possible = consistent_worlds(rows, counts, known)
    assert users & {e for r in rows for e in r.contributors} in [
        w & {e for r in rows for e in r.contributors} for w in possible
    ]
    verdicts = infer_counted(rows, current, known, when=WHEN, leads_accepted=False)
    # A verdict holds in every world DX's counts allow.
    for email, verdict in verdicts.items():
        assert all((email in w) is verdict.counted for w in possible), (email, verdict)
    # What is told is exactly how many of the candidates are not counted, in every world.
    for u in undecided(rows, current, known, verdicts):
        assert 0 < u.not_counted <= len(u.candidates)
        for w in possible:
            assert sum(1 for e in u.candidates if e not in w) == u.not_counted
    # A team DX counts fewer in than sent is told, unless whom is known.
    told = {u.team for u in undecided(rows, current, known, verdicts)}
    for r, t in zip(rows, current, strict=True):
        status = {e: verdicts[e].counted if e in verdicts else known.get(e) for e in r.contributors}
        short = len(set(r.contributors)) - t.contributors
        ignored = sum(1 for c in status.values() if c is False)
        if short > ignored:
            assert r.name in told
