from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from hrsync.core.confirmation.verify import (
    Overcounted,
    Uncounted,
    awaiting_since,
    check_convergence,
    match_audit,
)
from hrsync.core.gate.plan import Create, LeadChange, Move, Plan, Rename, make_plan
from hrsync.core.teams.identity import TeamRow
from hrsync.dx.models import AuditEvent, DxTeam
from hrsync.dx.parse import parse_audit_events

SUBMITTED = datetime(2026, 3, 10, 12, 0, tzinfo=UTC)

ENG = TeamRow("k1", "eng", "Engineering", "boss@x.com", None, None, ("a@x.com", "b@x.com"))
PLAT = TeamRow("k2", "plat", "Platform", "pl@x.com", "eng", "Engineering", ("c@x.com",))


def team(ref: str | None, name: str, parent_id: str | None = "LTE", contributors: int = 0,
         tid: str | None = None) -> DxTeam:  # fmt: skip
    return DxTeam(id=tid or f"id-{ref}", name=name, parent_id=parent_id, reference_id=ref,
                  contributors=contributors)  # fmt: skip


GOOD = [team("eng", "Engineering", contributors=2), team("plat", "Platform", "id-eng", 1)]


# ---------------------------------------------------------------- convergence


def test_converged_when_every_team_is_right_and_archives_are_gone() -> None:
    result = check_convergence([ENG, PLAT], ["gone"], GOOD)
    assert result.converged
    assert result.summary() == "DX matches the submission"


def test_missing_team() -> None:
    result = check_convergence([ENG, PLAT], [], GOOD[:1])
    assert not result.converged
    assert result.missing == (PLAT,)
    assert "1 missing (Platform)" in result.summary()


def test_the_summary_names_five_teams_then_how_many_more() -> None:
    rows = [TeamRow(f"k{i}", f"r{i}", f"Team {i}", "x@x.com", None, None, ()) for i in range(7)]
    summary = check_convergence(rows, [], []).summary()
    assert "7 missing (Team 0, Team 1, Team 2, Team 3, Team 4 and 2 more)" in summary


def test_wrong_name() -> None:
    result = check_convergence([ENG, PLAT], [], [GOOD[0], team("plat", "Plat", "id-eng", 1)])
    assert not result.converged
    assert result.wrong_names == (Rename("plat", "Plat", "Platform"),)


def test_wrong_parent_is_judged_by_reference_id() -> None:
    current = [GOOD[0], team("plat", "Platform", "LTE", 1)]
    result = check_convergence([ENG, PLAT], [], current)
    assert result.wrong_parents == (Move("plat", "Platform", None, "Engineering", None, "eng"),)
    # A root sentinel DX does not list, and DX ids that are not ours, still converge.
    current = [team("eng", "Engineering", "XYZ", 2, tid="Q1"), team("plat", "Platform", "Q1", 1)]
    assert check_convergence([ENG, PLAT], [], current).converged


def test_archived_team_still_present() -> None:
    leftover = team("gone", "Old team")
    hand_made = team(None, "Web app team", tid="w1")
    result = check_convergence([ENG, PLAT], ["gone"], [*GOOD, leftover, hand_made],
                               archived_dx_ids=["w1"])  # fmt: skip
    assert not result.converged
    assert result.still_present == (leftover, hand_made)
    assert "2 not yet archived" in result.summary()


def test_contributors_dx_did_not_count_are_reported_not_fatal() -> None:
    current = [team("eng", "Engineering", contributors=1), team("plat", "Platform", "id-eng", 1)]
    result = check_convergence([ENG, PLAT], [], current)
    assert result.converged
    assert result.contributors_uncounted == (Uncounted("eng", "Engineering", 2, 1),)
    assert "1 contributors in 1 teams not counted by DX" in result.summary()


BEFORE = SUBMITTED - timedelta(days=3)


@pytest.mark.parametrize(
    ("last_changed_at", "converged"),
    [
        (BEFORE, False),  # DX has not applied the new lead yet
        (BEFORE - timedelta(seconds=1), False),
        (BEFORE + timedelta(seconds=1), True),
        (SUBMITTED, True),
        (None, True),  # no timestamp from DX: nothing to wait for
    ],
)
def test_a_new_lead_needs_evidence_that_dx_touched_the_team(
    last_changed_at: datetime | None, converged: bool
) -> None:
    plat = DxTeam(id="id-plat", name="Platform", parent_id="id-eng", reference_id="plat",
                  contributors=1, last_changed_at=last_changed_at)  # fmt: skip
    result = check_convergence([ENG, PLAT], [], [GOOD[0], plat], awaiting_change={"plat": BEFORE})
    assert result.converged is converged
    if not converged:
        assert result.not_yet_changed == ("Platform",)
        assert "1 with a new lead or members not yet changed (Platform)" in result.summary()


def test_dx_counting_more_contributors_than_sent_has_not_taken_the_members() -> None:
    # A person moved out of Platform: until DX imports, it still counts them.
    current = [GOOD[0], team("plat", "Platform", "id-eng", 2)]
    result = check_convergence([ENG, PLAT], [], current)
    assert not result.converged
    assert result.overcounted == (Overcounted("plat", "Platform", 1, 2),)
    assert "1 with more contributors than sent (Platform: 2 > 1)" in result.summary()


def test_a_membership_change_waits_for_evidence_like_a_lead_change() -> None:
    # A person moved between teams of equal size: names, parents and counts all match
    # before DX imported anything; only last_changed_at tells.
    stale = [
        DxTeam(id="id-eng", name="Engineering", parent_id="LTE", reference_id="eng",
               contributors=2, last_changed_at=BEFORE),
        DxTeam(id="id-plat", name="Platform", parent_id="id-eng", reference_id="plat",
               contributors=1, last_changed_at=BEFORE),
    ]  # fmt: skip
    awaiting = {"eng": BEFORE, "plat": BEFORE}
    result = check_convergence([ENG, PLAT], [], stale, awaiting_change=awaiting)
    assert not result.converged
    assert result.not_yet_changed == ("Engineering", "Platform")
    applied = [t.__class__(**{**_fields(t), "last_changed_at": SUBMITTED}) for t in stale]
    assert check_convergence([ENG, PLAT], [], applied, awaiting_change=awaiting).converged


def _fields(t: DxTeam) -> dict[str, Any]:
    return {f: getattr(t, f) for f in t.__slots__}  # type: ignore[attr-defined]


def test_awaiting_since_takes_dx_now_or_an_earlier_identical_request() -> None:
    now = BEFORE + timedelta(hours=1)
    current = [
        DxTeam(id="1", name="A", parent_id=None, reference_id="a", last_changed_at=now),
        DxTeam(id="2", name="B", parent_id=None, reference_id="b", last_changed_at=now),
        DxTeam(id="3", name="C", parent_id=None, reference_id="c"),
    ]
    rows = {"a": {"name": "A", "x": 1}, "b": {"name": "B", "x": 1}, "c": {"name": "C"}}
    earlier_rows = {"a": {"name": "A", "x": 1}, "b": {"name": "B", "x": 2}}
    earlier = [(earlier_rows, {"a": BEFORE, "b": BEFORE})]
    found = awaiting_since(["a", "b", "c"], rows, current, earlier)
    # a: the same row was asked for earlier, so DX applying that one counts for both;
    # b: the earlier request differs; c: DX gives no timestamp, nothing to wait for.
    assert found == {"a": BEFORE, "b": now}
    assert awaiting_since(["a"], rows, current) == {"a": now}


def test_a_shared_reference_id_waits_on_the_team_convergence_checks() -> None:
    # Two DX teams share "eng"; the smallest id holds it (the plan archives the other).
    # Waiting on the other's older time would count the holder as changed at once.
    now = BEFORE + timedelta(hours=1)
    holder = DxTeam(id="1", name="Engineering", parent_id=None, reference_id="eng",
                    contributors=2, last_changed_at=now)  # fmt: skip
    extra = DxTeam(id="2", name="Engineering copy", parent_id=None, reference_id="eng",
                   last_changed_at=BEFORE)  # fmt: skip
    for listed in ([holder, extra], [extra, holder]):
        awaiting = awaiting_since(["eng"], {"eng": {"name": "Engineering"}}, listed)
        assert awaiting == {"eng": now}
        # DX has not imported yet: the holder still shows its time from before the submission.
        result = check_convergence([ENG], [], [holder], awaiting_change=awaiting)
        assert result.not_yet_changed == ("Engineering",)


def test_archiving_the_extra_team_of_a_shared_reference_id_converges() -> None:
    # The plan archives the extra team with its reference_id "eng", which the holder keeps:
    # once DX archived the extra one, the desired holder is not "not yet archived".
    holder = team("eng", "Engineering", contributors=2, tid="1")
    extra = team("eng", "Engineering copy", tid="2")
    plan = make_plan([ENG], [holder, extra], {})
    archived = [a.reference_id for a in plan.archives if a.reference_id]
    dx_ids = [a.dx_id for a in plan.archives]
    assert archived == ["eng"] and dx_ids == ["2"]
    result = check_convergence([ENG], archived, [holder], archived_dx_ids=dx_ids)
    assert result.still_present == ()
    assert result.converged
    pending = check_convergence([ENG], archived, [holder, extra], archived_dx_ids=dx_ids)
    assert pending.still_present == (extra,)


# ---------------------------------------------------------------- audit trail


def event(action: str, team_name: str, metadata: Any, *, minutes: int = 1,
          eid: str = "e") -> AuditEvent:  # fmt: skip
    """An event as DX sends it, read by the client's own parser (which decodes metadata)."""
    created = SUBMITTED + timedelta(minutes=minutes)
    item = {"id": eid, "actor": "admin@x.com", "team": team_name, "action": action,
            "created": created.isoformat(), "metadata": metadata}  # fmt: skip
    (parsed,) = parse_audit_events("teams.auditTrail", {"ok": True, "events": [item]})
    return parsed


def manager(email: str) -> dict[str, str]:
    return {"id": "u1", "name": "Someone", "email": email}


OLD = [ENG, PLAT]
NEW = [
    TeamRow("k1", "eng", "Engineering", "newboss@x.com", None, None, ENG.contributors),
    TeamRow("k2", "plat", "Platform Eng", "pl@x.com", "eng", "Engineering", ("c@x.com",)),
]
PLAN = make_plan(NEW, GOOD, {r.reference_id: r for r in OLD})
RENAME = Rename("plat", "Platform", "Platform Eng")
LEAD = LeadChange("eng", "Engineering", "boss@x.com", "newboss@x.com", 2)


def test_plan_under_audit_has_one_rename_and_one_lead_change() -> None:
    assert [c for c in PLAN.changes if c.kind != "unchanged"] == [LEAD, RENAME]


def test_matching_events_are_matched() -> None:
    events = [
        event("change_name", "Platform Eng", {"from": "Platform", "to": "Platform Eng"}, eid="1"),
        event("change_manager", "Engineering",
              {"from": manager("boss@x.com"), "to": manager("NewBoss@x.com")}, eid="2"),
    ]  # fmt: skip
    result = match_audit(PLAN, events, SUBMITTED)
    assert [(c, e.id) for c, e in result.matched] == [(LEAD, "2"), (RENAME, "1")]
    assert result.missing == ()
    assert result.unexpected == ()


def test_planned_changes_without_events_are_missing() -> None:
    result = match_audit(PLAN, [], SUBMITTED)
    assert result.matched == ()
    assert result.missing == (LEAD, RENAME)


def test_events_the_plan_does_not_explain_are_unexpected() -> None:
    stray = event("change_name", "Data", {"from": "Data", "to": "Data Science"}, eid="x")
    wrong_lead = event("change_manager", "Engineering", {"to": manager("other@x.com")}, eid="y")
    other = event("archive_team", "Old", {}, eid="z")
    result = match_audit(PLAN, [stray, wrong_lead, other], SUBMITTED)
    assert {e.id for e in result.unexpected} == {"x", "y", "z"}
    assert result.missing == (LEAD, RENAME)


def test_events_before_the_submission_are_ignored() -> None:
    old = event("change_name", "Platform Eng", {"from": "Platform", "to": "Platform Eng"},
                minutes=-5, eid="old")  # fmt: skip
    stray_old = event("change_name", "Data", {"to": "D"}, minutes=-1, eid="old2")
    at_submission = event("change_manager", "Engineering", {"to": manager("newboss@x.com")},
                          minutes=0, eid="now")  # fmt: skip
    result = match_audit(PLAN, [old, stray_old, at_submission], SUBMITTED)
    assert [(c, e.id) for c, e in result.matched] == [(LEAD, "now")]
    assert result.missing == (RENAME,)
    assert result.unexpected == ()


@pytest.mark.parametrize(
    "metadata",
    [
        pytest.param('{"from": "Platform", "to": "Platform Eng"}', id="json-string"),
        pytest.param({"to": "Platform Eng"}, id="no-from"),
        pytest.param({"from": {"name": "Platform"}, "to": {"name": "Platform Eng"}}, id="objects"),
        pytest.param({}, id="empty-falls-back-to-team-name"),
        pytest.param("not json", id="garbage-string"),
    ],
)
def test_rename_matching_tolerates_metadata_shapes(metadata: Any) -> None:
    result = match_audit(PLAN, [event("change_name", "Platform Eng", metadata)], SUBMITTED)
    assert [c for c, _ in result.matched] == [RENAME]


def test_rename_with_a_different_from_name_does_not_match() -> None:
    e = event("change_name", "Platform Eng", {"from": "Something else", "to": "Platform Eng"})
    result = match_audit(PLAN, [e], SUBMITTED)
    assert result.matched == ()
    assert result.unexpected == (e,)


@pytest.mark.parametrize(
    "metadata",
    [
        pytest.param({"to": {"email": "newboss@x.com"}}, id="email-only-object"),
        pytest.param({"to": "newboss@x.com"}, id="plain-email"),
        pytest.param('{"to": {"id": "1", "name": "N", "email": "newboss@x.com"}}', id="json"),
    ],
)
def test_lead_change_matching_tolerates_metadata_shapes(metadata: Any) -> None:
    result = match_audit(PLAN, [event("change_manager", "Engineering", metadata)], SUBMITTED)
    assert [c for c, _ in result.matched] == [LEAD]


def test_lead_change_event_under_the_old_team_name_still_matches() -> None:
    # The team was renamed and got a new lead in one import: DX may name either.
    plan = make_plan(
        [TeamRow("k", "r", "New", "new@x.com", None, None, ())],
        [team("r", "Old")],
        {"r": TeamRow("k", "r", "Old", "old@x.com", None, None, ())},
    )
    events = [
        event("change_manager", "Old", {"to": manager("new@x.com")}, eid="m"),
        event("change_name", "New", {"from": "Old", "to": "New"}, eid="n"),
    ]
    result = match_audit(plan, events, SUBMITTED)
    assert {e.id for _, e in result.matched} == {"m", "n"}
    assert result.unexpected == () and result.missing == ()


def test_an_event_listed_twice_counts_once() -> None:
    e = event("change_name", "Platform Eng", {"from": "Platform", "to": "Platform Eng"})
    result = match_audit(PLAN, [e, e], SUBMITTED)  # overlapping pages list it twice
    assert len(result.matched) == 1
    assert result.unexpected == ()


def test_two_events_for_one_rename_leave_one_unexpected() -> None:
    first = event("change_name", "Platform Eng", {"from": "Platform", "to": "Platform Eng"},
                  eid="1")  # fmt: skip
    second = event("change_name", "Platform Eng", {"from": "Platform", "to": "Platform Eng"},
                   minutes=2, eid="2")  # fmt: skip
    result = match_audit(PLAN, [second, first], SUBMITTED)
    assert [(c, e.id) for c, e in result.matched] == [(RENAME, "1")]  # the earliest
    assert result.unexpected == (second,)


def test_unknown_old_lead_is_never_missing_and_creates_explain_their_events() -> None:
    plan = make_plan(
        [ENG, TeamRow("k9", "new", "New team", "nl@x.com", "eng", "Engineering", ())],
        [team("eng", "Engineering", contributors=2)],
        {},  # state store lost: eng's lead is unknown
    )
    assert plan.counts["lead_change"] == 1 and plan.counts["create"] == 1
    assert match_audit(plan, [], SUBMITTED).missing == ()
    events = [
        event("change_manager", "New team", {"to": manager("nl@x.com")}, eid="c"),
        event("change_manager", "Engineering", {"to": manager("boss@x.com")}, eid="l"),
    ]
    result = match_audit(plan, events, SUBMITTED)
    assert {(type(c), e.id) for c, e in result.matched} == {(Create, "c"), (LeadChange, "l")}
    assert result.unexpected == ()


def test_creates_of_one_name_take_their_own_events_in_order() -> None:
    first = Create("a", "Ops", None, None, "a@x.com", 0)
    second = Create("b", "Ops", "a", "Ops", "b@x.com", 0)
    plan = Plan((first, second), (), "", 2, 0)
    events = [
        event("change_manager", "Ops", {"to": manager("b@x.com")}, minutes=1, eid="1"),
        event("change_manager", "Ops", {"to": manager("a@x.com")}, minutes=2, eid="2"),
        event("change_name", "Ops", {"to": "Ops"}, minutes=3, eid="3"),
        event("change_name", "Other", {"to": "Other"}, minutes=4, eid="4"),
    ]
    result = match_audit(plan, events, SUBMITTED)
    # The first Create explains every event it can (its lead, the name); the second the rest.
    assert [(c.reference_id, e.id) for c, e in result.matched] == [
        ("a", "2"), ("a", "3"), ("b", "1"),
    ]  # fmt: skip
    assert [e.id for e in result.unexpected] == ["4"]


def test_naive_since_is_rejected() -> None:
    with pytest.raises(ValueError, match="timezone-aware"):
        match_audit(PLAN, [], datetime(2026, 1, 1))


def test_events_of_hrsyncs_own_earlier_submission_are_not_unexpected() -> None:
    # Run 1 renamed Platform -> Platform Eng a minute ago; run 2 renames Data -> Data Eng.
    # Both runs' events fall in run 2's window (audit skew); only a stranger's is unexpected.
    data = TeamRow("k3", "data", "Data", "d@x.com", "eng", "Engineering", ())
    first = make_plan(NEW, GOOD, {r.reference_id: r for r in OLD})
    second_rows = [*NEW, TeamRow("k3", "data", "Data Eng", "d@x.com", "eng", "Engineering", ())]
    current = [GOOD[0], team("plat", "Platform Eng", "id-eng", 1), team("data", "Data", "id-eng")]
    second = make_plan(second_rows, current, {r.reference_id: r for r in [*NEW, data]})
    events = [
        event("change_name", "Platform", {"from": "Platform", "to": "Platform Eng"}, eid="1"),
        event("change_manager", "Engineering", {"to": manager("newboss@x.com")}, eid="2"),
        event("change_name", "Data", {"from": "Data", "to": "Data Eng"}, eid="3"),
        event("change_name", "Ops", {"from": "Ops", "to": "Ops 2"}, eid="4"),
    ]
    without = match_audit(second, events, SUBMITTED)
    assert {e.id for e in without.unexpected} == {"1", "2", "4"}
    match = match_audit(second, events, SUBMITTED, [first])
    assert [e.id for _, e in match.matched] == ["3"]
    assert {e.id for e in match.earlier} == {"1", "2"}
    assert [e.id for e in match.unexpected] == ["4"]
