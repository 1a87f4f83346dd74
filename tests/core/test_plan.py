from __future__ import annotations

import dataclasses
import json
import random
from collections.abc import Sequence
from datetime import UTC, datetime, timedelta

import pytest
from hypothesis import given
from hypothesis import strategies as st

from hrsync.core.gate.plan import (
    COUNT_KEYS,
    Archive,
    Change,
    Create,
    LeadChange,
    MembershipChange,
    Move,
    Rename,
    SeenTeam,
    Unchanged,
    awaited_refs,
    make_plan,
    payload_digest,
    payload_size,
)
from hrsync.core.report.render import describe
from hrsync.core.teams.identity import TeamRow
from hrsync.dx.models import DxTeam

SENTINEL = "LTE"  # DX's root sentinel id: parent of root teams, first of every ancestors list


def row(
    ref: str,
    name: str | None = None,
    parent: TeamRow | None = None,
    lead: str | None = None,
    members: Sequence[str] = (),
) -> TeamRow:
    return TeamRow(
        key=f"manager:{ref}",
        reference_id=ref,
        name=name or f"Team {ref}",
        lead_email=lead or f"lead-{ref}@example.com",
        parent_reference_id=parent.reference_id if parent else None,
        parent_name=parent.name if parent else None,
        contributors=tuple(sorted(members)),
    )


def dx(
    ref: str | None,
    name: str,
    parent_id: str | None = SENTINEL,
    team_id: str | None = None,
    contributors: int = 0,
) -> DxTeam:
    tid = team_id or f"id-{ref}"
    return DxTeam(
        id=tid,
        name=name,
        parent_id=parent_id,
        reference_id=ref,
        contributors=contributors,
        ancestors=(SENTINEL, tid),
    )


def mirror(rows: Sequence[TeamRow]) -> list[DxTeam]:
    """DX teams exactly as DX would show `rows` after a successful import."""
    return [
        dx(
            r.reference_id,
            r.name,
            parent_id=f"id-{r.parent_reference_id}" if r.parent_reference_id else SENTINEL,
            contributors=len(r.contributors),
        )
        for r in rows
    ]


def by_ref(rows: Sequence[TeamRow]) -> dict[str, TeamRow]:
    return {r.reference_id: r for r in rows}


ENG = row("eng", "Engineering", members=["a@x.com", "b@x.com"])
PLAT = row("plat", "Platform", parent=ENG, members=["c@x.com"])
DATA = row("data", "Data", parent=ENG)
ORG = [ENG, PLAT, DATA]


def kinds(changes: Sequence[Change]) -> list[str]:
    return [c.kind for c in changes]


def test_identical_org_is_all_unchanged() -> None:
    plan = make_plan(ORG, mirror(ORG), by_ref(ORG))
    assert not plan.has_changes
    assert plan.changes == tuple(Unchanged(r.reference_id, r.name) for r in ORG)
    assert plan.counts == dict.fromkeys(COUNT_KEYS, 0) | {"unchanged": 3}
    assert plan.archives == []
    assert plan.drift == ()


def test_counts_have_exactly_the_log_contract_keys() -> None:
    plan = make_plan(ORG, [], {})
    assert list(plan.counts) == [
        "create",
        "rename",
        "move",
        "lead_change",
        "membership_change",
        "archive",
        "unchanged",
    ]
    assert plan.counts["create"] == 3
    assert sum(plan.counts.values()) == 3


def test_first_sync_creates_every_team_with_its_parent() -> None:
    plan = make_plan(ORG, [], {})
    assert plan.has_changes
    assert plan.changes[1] == Create(
        reference_id="plat",
        name="Platform",
        parent_reference_id="eng",
        parent_name="Engineering",
        lead_email="lead-plat@example.com",
        contributors=1,
        members=("c@x.com",),
    )
    assert all(isinstance(c, Create) for c in plan.changes)


@pytest.mark.parametrize(
    ("desired", "current", "expected"),
    [
        pytest.param(
            [ENG, row("plat", "Platform Eng", parent=ENG, members=["c@x.com"]), DATA],
            mirror(ORG),
            [Rename("plat", "Platform", "Platform Eng")],
            id="rename",
        ),
        pytest.param(
            [ENG, row("plat", "Platform", parent=DATA, members=["c@x.com"]), DATA],
            mirror(ORG),
            [Move("plat", "Platform", "Engineering", "Data", "eng", "data")],
            id="move-to-sibling",
        ),
        pytest.param(
            [ENG, row("plat", "Platform", members=["c@x.com"]), DATA],
            mirror(ORG),
            [Move("plat", "Platform", "Engineering", None, "eng", None)],
            id="move-to-root",
        ),
        pytest.param(
            [ENG, row("plat", "Platform Eng", parent=DATA, members=["c@x.com"]), DATA],
            mirror(ORG),
            [
                Rename("plat", "Platform", "Platform Eng"),
                Move("plat", "Platform Eng", "Engineering", "Data", "eng", "data"),
            ],
            id="rename-and-move",
        ),
    ],
)
def test_name_and_parent_changes(
    desired: list[TeamRow], current: list[DxTeam], expected: list[object]
) -> None:
    plan = make_plan(desired, current, by_ref(ORG))
    changed = [c for c in plan.changes if not isinstance(c, Unchanged)]
    assert changed == expected


def test_root_teams_match_whatever_sentinel_dx_uses() -> None:
    rows = [row("a", "A"), row("b", "B"), row("c", "C")]
    current = [
        dx("a", "A", parent_id=None),
        dx("b", "B", parent_id="LTE"),
        dx("c", "C", parent_id="some-id-dx-does-not-list"),
    ]
    plan = make_plan(rows, current, by_ref(rows))
    assert not plan.has_changes


def test_parent_is_compared_by_reference_id_not_dx_id_or_name() -> None:
    # DX ids are arbitrary; the child's parent is the team whose reference_id is "eng",
    # even though the parent is listed after the child and its name differs in DX.
    current = [
        DxTeam(id="NTA4Nzc", name="Platform", parent_id="NTA2MTk", reference_id="plat",
               ancestors=("LTE", "NTA2MTk", "NTA4Nzc"), contributors=1),
        DxTeam(id="NTA2MTk", name="Eng (old name)", parent_id="LTE", reference_id="eng",
               ancestors=("LTE", "NTA2MTk"), contributors=2),
    ]  # fmt: skip
    plan = make_plan([ENG, PLAT], current, by_ref([ENG, PLAT]))
    assert kinds(plan.changes) == ["rename", "unchanged"]  # only the parent's own rename


def test_ancestors_including_the_team_itself_do_not_make_a_move() -> None:
    current = [
        DxTeam(id="1", name="Engineering", parent_id="0", reference_id="eng", ancestors=("0", "1")),
        DxTeam(id="2", name="Platform", parent_id="1", reference_id="plat",
               ancestors=("0", "1", "2"), contributors=1),
    ]  # fmt: skip
    plan = make_plan([ENG, PLAT], current, by_ref([ENG, PLAT]))
    assert not plan.has_changes


def test_parent_without_reference_id_is_not_our_parent() -> None:
    current = [
        dx(None, "Web app team", team_id="w1"),
        dx("eng", "Engineering"),
        dx("plat", "Platform", parent_id="w1", contributors=1),
    ]
    plan = make_plan([ENG, PLAT], current, by_ref([ENG, PLAT]))
    moves = [c for c in plan.changes if isinstance(c, Move)]
    assert moves == [Move("plat", "Platform", "Web app team", "Engineering", None, "eng")]


def test_lead_change_is_judged_against_the_last_verified_submission() -> None:
    new = row("plat", "Platform", parent=ENG, lead="new@x.com", members=["c@x.com"])
    plan = make_plan([ENG, new], mirror([ENG, PLAT]), by_ref([ENG, PLAT]))
    assert [c for c in plan.changes if not isinstance(c, Unchanged)] == [
        LeadChange("plat", "Platform", "lead-plat@example.com", "new@x.com", 1)
    ]


def test_team_without_a_verified_submission_has_an_unknown_lead() -> None:
    plan = make_plan([ENG, PLAT], mirror([ENG, PLAT]), {"eng": ENG})
    change = plan.changes[1]
    assert change == LeadChange("plat", "Platform", None, "lead-plat@example.com", 1)
    assert isinstance(change, LeadChange) and not change.old_lead_known
    assert "unknown" in describe(change)
    assert "->" not in describe(change)  # says it is unknown, does not claim a from -> to
    # Membership is unknown too: it is not claimed as a separate change.
    assert plan.counts["membership_change"] == 0


def test_membership_change_lists_added_and_removed() -> None:
    new = row("eng", "Engineering", members=["b@x.com", "d@x.com", "e@x.com"])
    plan = make_plan([new], mirror([ENG]), by_ref([ENG]))
    assert plan.changes == (
        MembershipChange(
            reference_id="eng",
            name="Engineering",
            added=("d@x.com", "e@x.com"),
            removed=("a@x.com",),
            old_count=2,
            new_count=3,
        ),
    )
    assert "+2 -1" in describe(plan.changes[0])


def test_contributor_order_is_not_a_membership_change() -> None:
    last = TeamRow("k", "r", "R", "l@x.com", None, None, ("b@x.com", "a@x.com"))
    now = TeamRow("k", "r", "R", "l@x.com", None, None, ("a@x.com", "b@x.com"))
    plan = make_plan([now], [dx("r", "R")], {"r": last})
    assert not plan.has_changes
    assert payload_digest([now]) == payload_digest([last])


def test_every_kind_at_once() -> None:
    desired = [
        row("eng", "Engineering", lead="boss@x.com", members=["a@x.com"]),  # lead + members
        row("plat", "Platform Eng", members=["c@x.com"]),  # rename + move to root
        row("new", "New", parent=ENG),  # create
    ]
    current = [*mirror(ORG), dx(None, "Hand made", team_id="h1")]
    plan = make_plan(desired, current, by_ref(ORG))
    assert plan.counts == {
        "create": 1,
        "rename": 1,
        "move": 1,
        "lead_change": 1,
        "membership_change": 1,
        "archive": 2,
        "unchanged": 0,
    }
    assert [(a.name, a.reference_id) for a in plan.archives] == [
        ("Data", "data"),
        ("Hand made", None),
    ]


def test_archive_of_team_without_reference_id_is_flagged() -> None:
    plan = make_plan([ENG], [*mirror([ENG]), dx(None, "Skunkworks", team_id="s", contributors=4)],
                     by_ref([ENG]))  # fmt: skip
    assert plan.archives == [
        Archive(None, "Skunkworks", "s", 4, "no reference_id: created in the web app?")
    ]
    assert "created in the web app?" in describe(plan.archives[0])


def test_unreferenced_dx_teams_are_archived_and_usable_as_parents() -> None:
    hand = dx(None, "Hand made", team_id="h1")
    current = [dx("eng", "Engineering", parent_id="h1", contributors=2)]
    plan = make_plan([ENG], current, by_ref([ENG]), unreferenced_dx=[hand])
    assert kinds(plan.changes) == ["move", "archive"]
    assert plan.archives[0].dx_id == "h1"
    # Listed in both places: still one archive.
    plan = make_plan([ENG], [*current, hand], by_ref([ENG]), unreferenced_dx=[hand])
    assert len(plan.archives) == 1


def test_two_dx_teams_with_one_reference_id_archive_the_extra() -> None:
    current = [dx("eng", "Engineering", team_id="a"), dx("eng", "Engineering copy", team_id="b")]
    plan = make_plan([row("eng", "Engineering")], current, {})
    assert [a.dx_id for a in plan.archives] == ["b"]
    assert plan.archives[0].note == "another DX team has the same reference_id"


def test_duplicate_desired_reference_ids_are_a_bug_not_a_plan() -> None:
    with pytest.raises(ValueError, match="share reference_ids: eng"):
        make_plan([ENG, row("eng", "Other")], [], {})


# ---------------------------------------------------------------- drift


def test_drift_when_dx_was_renamed_by_hand() -> None:
    current = mirror(ORG)
    current[1] = dx("plat", "Renamed by hand", parent_id="id-eng", contributors=1)
    plan = make_plan(ORG, current, by_ref(ORG))
    assert [(d.reference_id, d.details) for d in plan.drift] == [
        ("plat", ('name in DX is "Renamed by hand", last submitted "Platform"',))
    ]
    assert Rename("plat", "Renamed by hand", "Platform") in plan.changes


def test_drift_when_dx_moved_or_lost_a_team_by_hand() -> None:
    current = [dx("eng", "Engineering"), dx("plat", "Platform", parent_id=SENTINEL)]
    plan = make_plan(ORG, current, by_ref(ORG))
    details = {d.reference_id: d.details for d in plan.drift}
    assert details == {
        "plat": ('parent in DX is (root), last submitted "Engineering"',),
        "data": ("missing from DX (archived or deleted by hand?)",),
    }
    assert plan.counts["create"] == 1 and plan.counts["move"] == 1


def test_an_export_change_is_not_drift() -> None:
    renamed = [ENG, row("plat", "Platform Eng", parent=ENG, members=["c@x.com"]), DATA]
    plan = make_plan(renamed, mirror(ORG), by_ref(ORG))
    assert plan.counts["rename"] == 1
    assert plan.drift == ()


def _seen(rows: Sequence[TeamRow], at: datetime) -> dict[str, SeenTeam]:
    return {r.reference_id: SeenTeam(f"u-{r.lead_email}", at) for r in rows}


def _dx_as_seen(rows: Sequence[TeamRow], at: datetime) -> list[DxTeam]:
    return [
        dataclasses.replace(t, manager_id=f"u-{r.lead_email}", last_changed_at=at)
        for t, r in zip(mirror(rows), rows, strict=True)
    ]


AFTER_US = datetime(2026, 3, 1, 12, 0, tzinfo=UTC)


def test_a_lead_changed_by_hand_is_drift_and_set_back_awaited() -> None:
    current = _dx_as_seen(ORG, AFTER_US)
    current[1] = dataclasses.replace(
        current[1], manager_id="u-someone-else", last_changed_at=AFTER_US + timedelta(days=1)
    )
    plan = make_plan(ORG, current, by_ref(ORG), last_seen=_seen(ORG, AFTER_US))
    (drift,) = plan.drift
    assert drift.reference_id == "plat"
    assert "lead in DX is user u-someone-else" in drift.details[0]
    assert "changed in DX at 2026-03-02" in drift.details[1]
    (change,) = [c for c in plan.changes if c.kind != "unchanged"]
    assert change == LeadChange("plat", "Platform", None, PLAT.lead_email, 1, drift=True)
    assert plan.has_changes
    assert awaited_refs(plan) == ["plat"]
    assert "was changed in DX by hand" in describe(change)


def test_a_team_changed_by_hand_after_us_is_sent_again_not_awaited() -> None:
    current = _dx_as_seen(ORG, AFTER_US)
    current[0] = dataclasses.replace(current[0], last_changed_at=AFTER_US + timedelta(hours=1))
    plan = make_plan(ORG, current, by_ref(ORG), last_seen=_seen(ORG, AFTER_US))
    assert [d.reference_id for d in plan.drift] == ["eng"]
    (change,) = [c for c in plan.changes if c.kind != "unchanged"]
    assert isinstance(change, MembershipChange) and change.drift
    assert change.added == change.removed == ()
    # DX may already hold exactly these members: nothing would show, so nothing awaited.
    assert awaited_refs(plan) == []


def test_no_drift_when_dx_shows_what_it_showed_after_us() -> None:
    plan = make_plan(ORG, _dx_as_seen(ORG, AFTER_US), by_ref(ORG), last_seen=_seen(ORG, AFTER_US))
    assert plan.drift == () and not plan.has_changes


def test_hr_changes_on_a_team_edited_by_hand_are_sent_but_not_awaited() -> None:
    # DX's lead was changed by hand, and HR now names a new lead too: DX may already
    # have it, so waiting for DX to change would wait forever.
    current = _dx_as_seen(ORG, AFTER_US)
    current[1] = dataclasses.replace(current[1], manager_id="u-x")
    moved = [ENG, row("plat", "Platform", parent=ENG, lead="new@x.com", members=["d@x.com"]), DATA]
    plan = make_plan(moved, current, by_ref(ORG), last_seen=_seen(ORG, AFTER_US))
    lead = next(c for c in plan.changes if isinstance(c, LeadChange))
    members = next(c for c in plan.changes if isinstance(c, MembershipChange))
    assert lead.old_lead is None and not lead.drift
    assert members.drift and members.added == ("d@x.com",)
    assert awaited_refs(plan) == []
    without_drift = make_plan(moved, _dx_as_seen(ORG, AFTER_US), by_ref(ORG))
    assert awaited_refs(without_drift) == ["plat"]


def test_no_drift_without_a_verified_submission() -> None:
    plan = make_plan(ORG, [], {})
    assert plan.drift == ()


# ---------------------------------------------------------------- payload identity


def test_payload_digest_ignores_row_order_and_sees_every_field() -> None:
    assert payload_digest(ORG) == payload_digest(list(reversed(ORG)))
    assert make_plan(ORG, [], {}).payload_digest == payload_digest(ORG)
    changed = [ENG, PLAT, row("data", "Data", parent=ENG, members=["z@x.com"])]
    assert payload_digest(changed) != payload_digest(ORG)
    assert len(payload_digest(ORG)) == 64


def test_payload_size_counts_utf8_bytes_of_the_teams_value() -> None:
    rows = [row("r", "Ünïcode")]
    expected = json.dumps([rows[0].to_payload()], separators=(",", ":"), ensure_ascii=False)
    assert payload_size(rows) == len(expected.encode("utf-8"))
    assert payload_size(rows) > len(expected)  # non-ASCII characters take more than a byte


# ---------------------------------------------------------------- properties

_names = st.text(alphabet="abcXYZ Ü-'0", min_size=1, max_size=10)
_emails = st.builds("{}@{}.com".format, st.text("abcdef", min_size=1, max_size=4),
                    st.sampled_from(["x", "example"]))  # fmt: skip


@st.composite
def forests(draw: st.DrawFn) -> list[TeamRow]:
    """Random team trees: every team's parent is an earlier team or none."""
    count = draw(st.integers(min_value=0, max_value=25))
    rows: list[TeamRow] = []
    for i in range(count):
        parent = draw(st.one_of(st.none(), st.sampled_from(rows))) if rows else None
        members = draw(st.lists(_emails, max_size=5, unique=True))
        rows.append(row(f"ref-{i}", draw(_names), parent=parent, lead=draw(_emails),
                        members=members))  # fmt: skip
    return draw(st.permutations(rows))


@given(forests(), st.randoms(use_true_random=False))
def test_dx_built_from_the_desired_rows_has_no_changes(
    rows: list[TeamRow], rnd: random.Random
) -> None:
    current = mirror(rows)
    rnd.shuffle(current)  # teams.list order carries no meaning
    plan = make_plan(rows, current, by_ref(rows))
    assert not plan.has_changes
    assert plan.counts == dict.fromkeys(COUNT_KEYS, 0) | {"unchanged": len(rows)}
    assert plan.drift == ()


@given(forests(), st.sets(st.integers(min_value=0, max_value=24)))
def test_teams_left_out_of_the_export_are_exactly_the_archives(
    rows: list[TeamRow], dropped_indexes: set[int]
) -> None:
    dropped = {f"ref-{i}" for i in dropped_indexes}
    kept = [r for r in rows if r.reference_id not in dropped]
    plan = make_plan(kept, mirror(rows), by_ref(rows))
    assert {a.reference_id for a in plan.archives} == {r.reference_id for r in rows} & dropped
    assert plan.counts["create"] == 0
    assert plan.counts["archive"] + len(kept) == len(rows)


@given(forests())
def test_the_plan_carries_the_payload_size_the_5mb_guard_needs(rows: list[TeamRow]) -> None:
    # Encoded once with the digest (issue 12: the 50k plan encoded every team twice).
    assert make_plan(rows, [], {}).payload_bytes == payload_size(rows)


@given(forests(), st.randoms(use_true_random=False))
def test_a_team_equals_its_last_submission_whatever_the_member_order(
    rows: list[TeamRow], rnd: random.Random
) -> None:
    # DX's order of contributors carries no meaning; any field that differs is a change.
    last = {}
    for r in rows:
        members = list(r.contributors)
        rnd.shuffle(members)
        last[r.reference_id] = r._replace(contributors=tuple(members))
    assert not make_plan(rows, mirror(rows), last).has_changes
    for r in rows:
        changed = r._replace(contributors=(*r.contributors, "new@x.com"))
        assert make_plan(rows, mirror(rows), {**last, r.reference_id: changed}).has_changes
