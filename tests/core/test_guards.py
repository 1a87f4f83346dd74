from __future__ import annotations

import math
from datetime import UTC, datetime, timedelta
from fractions import Fraction
from zoneinfo import ZoneInfo

import pytest
from hypothesis import given
from hypothesis import strategies as st

from hrsync.core.gate.guards import (
    MAX_PAYLOAD_BYTES,
    Defer,
    Deferral,
    Go,
    Refusal,
    Refuse,
    check_safety,
    check_snapshots,
    deferral_for_api_error,
    gate,
    import_backoff,
    waits_for_snapshot,
)
from hrsync.core.gate.plan import Plan, make_plan
from hrsync.core.settings import SyncSettings
from hrsync.core.teams.identity import TeamRow
from hrsync.dx.models import DxTeam, Snapshot

NOW = datetime(2026, 3, 10, 12, 0, tzinfo=UTC)
WINDOW = 21


def snap(sid: str, completed: datetime | None, deleted: datetime | None = None) -> Snapshot:
    return Snapshot(id=sid, scheduled_for=None, completed_at=completed, deleted_at=deleted)


# ---------------------------------------------------------------- snapshots


def test_no_snapshots_no_deferral() -> None:
    assert check_snapshots([], NOW, WINDOW) is None


def test_live_snapshot_defers_for_the_recheck_interval() -> None:
    deferral = check_snapshots([snap("s1", None)], NOW, WINDOW)
    assert deferral is not None
    assert deferral.kind == "snapshot_live"
    assert deferral.resume_at == NOW + timedelta(hours=6)
    assert deferral.snapshot_id == "s1"
    assert "s1 is live" in deferral.reason
    custom = check_snapshots([snap("s1", None)], NOW, WINDOW, recheck=timedelta(hours=1))
    assert custom is not None and custom.resume_at == NOW + timedelta(hours=1)


@pytest.mark.parametrize(
    ("recheck", "said"),
    [
        (timedelta(hours=6), "6 hours"),
        (timedelta(hours=1), "1 hour"),
        (timedelta(minutes=90), "90 minutes"),
        (timedelta(minutes=1), "1 minute"),
        (timedelta(seconds=30), "30 seconds"),
    ],
)
def test_a_deferral_says_when_it_looks_again(recheck: timedelta, said: str) -> None:
    deferral = check_snapshots([snap("s1", None)], NOW, WINDOW, recheck=recheck)
    assert deferral is not None and deferral.reason.endswith(f"checking again in {said}")


@pytest.mark.parametrize(
    ("completed_ago", "deferred"),
    [
        (timedelta(days=1), True),
        (timedelta(days=21) - timedelta(seconds=1), True),  # one second left in the window
        (timedelta(days=21), False),  # the window ends exactly now
        (timedelta(days=21, seconds=1), False),
        (timedelta(days=400), False),
    ],
)
def test_completed_snapshot_holds_until_its_window_ends(
    completed_ago: timedelta, deferred: bool
) -> None:
    completed = NOW - completed_ago
    deferral = check_snapshots([snap("s1", completed)], NOW, WINDOW)
    if deferred:
        assert deferral is not None
        assert deferral.kind == "snapshot_window"
        assert deferral.resume_at == completed + timedelta(days=21)
        assert "sync.retro_window_days" in deferral.reason
    else:
        assert deferral is None


def test_window_length_comes_from_settings() -> None:
    completed = NOW - timedelta(days=10)
    assert check_snapshots([snap("s", completed)], NOW, 7) is None
    d = check_snapshots([snap("s", completed)], NOW, 14)
    assert d is not None and d.resume_at == completed + timedelta(days=14)


def test_deleted_snapshots_are_ignored() -> None:
    snapshots = [
        snap("live-deleted", None, deleted=NOW - timedelta(hours=1)),
        snap("recent-deleted", NOW - timedelta(days=2), deleted=NOW - timedelta(days=1)),
    ]
    assert check_snapshots(snapshots, NOW, WINDOW) is None


def test_latest_resume_wins_among_several_snapshots() -> None:
    snapshots = [
        snap("old", NOW - timedelta(days=100)),
        snap("recent", NOW - timedelta(days=5)),  # window ends in 16 days
        snap("older", NOW - timedelta(days=20)),  # window ends in 1 day
        snap("live", None),  # re-check in 6 hours
        snap("gone", NOW - timedelta(days=1), deleted=NOW),  # would end in 20 days
    ]
    deferral = check_snapshots(snapshots, NOW, WINDOW)
    assert deferral is not None
    assert deferral.snapshot_id == "recent"
    assert deferral.resume_at == NOW + timedelta(days=16)


def test_live_snapshot_wins_when_it_is_the_latest() -> None:
    snapshots = [snap("older", NOW - timedelta(days=21, hours=-1)), snap("live", None)]
    deferral = check_snapshots(snapshots, NOW, WINDOW)
    assert deferral is not None and deferral.snapshot_id == "live"


def test_naive_now_is_rejected() -> None:
    with pytest.raises(ValueError, match="timezone-aware"):
        check_snapshots([], datetime(2026, 1, 1), WINDOW)


# ---------------------------------------------------------------- API answers


@pytest.mark.parametrize(
    ("attempt", "minutes"),
    [(0, 1), (1, 1), (2, 2), (3, 4), (4, 8), (5, 16), (6, 30), (7, 30), (50, 30), (10**6, 30)],
)
def test_import_backoff_grows_and_is_capped(attempt: int, minutes: int) -> None:
    assert import_backoff(attempt) == timedelta(minutes=minutes)
    deferral = deferral_for_api_error("import_in_progress", NOW, attempt, None)
    assert deferral.kind == "import_in_progress"
    assert "import is running" in deferral.reason
    assert deferral.resume_at == NOW + timedelta(minutes=minutes)


def test_snapshot_in_progress_uses_our_window_when_we_agree() -> None:
    ours = check_snapshots([snap("s1", NOW - timedelta(days=3))], NOW, WINDOW)
    deferral = deferral_for_api_error("snapshot_in_progress", NOW, 1, ours)
    assert deferral.kind == "snapshot_in_progress"
    assert deferral.resume_at == NOW + timedelta(days=18)
    assert deferral.snapshot_id == "s1"


def test_snapshot_in_progress_rechecks_when_our_arithmetic_disagrees() -> None:
    deferral = deferral_for_api_error("snapshot_in_progress", NOW, 1, None)
    assert deferral.resume_at == NOW + timedelta(hours=6)
    assert "sync.retro_window_days" in deferral.reason
    stale = Deferral("snapshot_window", NOW - timedelta(minutes=1), "ended")
    deferral = deferral_for_api_error(
        "snapshot_in_progress", NOW, 1, stale, recheck=timedelta(hours=2)
    )
    assert deferral.resume_at == NOW + timedelta(hours=2)


# ---------------------------------------------------------------- safety

SETTINGS = SyncSettings()  # max_archive 10, fraction 0.2, min people 0.8


def plan_archiving(n: int, keep: int = 1) -> Plan:
    """A plan that keeps `keep` teams and archives `n` others."""
    desired = [TeamRow(f"k{i}", f"keep-{i}", f"Keep {i}", "l@x.com", None, None, ())
               for i in range(keep)]  # fmt: skip
    current = [DxTeam(f"id{i}", f"Keep {i}", None, f"keep-{i}") for i in range(keep)]
    current += [DxTeam(f"gone{i}", f"Gone {i:02}", None, f"gone-{i}") for i in range(n)]
    return make_plan(desired, current, {r.reference_id: r for r in desired})


def safety(plan: Plan, **overrides: object) -> Refusal | None:
    args: dict[str, object] = {
        "people_count": 100,
        "last_accepted_people": 100,
        "current_team_count": 1000,
        "payload_bytes": 1000,
        "settings": SETTINGS,
    }
    args.update(overrides)
    return check_safety(plan, **args)  # type: ignore[arg-type]


def test_a_normal_run_passes() -> None:
    assert safety(plan_archiving(3)) is None


@pytest.mark.parametrize(("archives", "refused"), [(0, False), (10, False), (11, True)])
def test_max_archive_allows_the_limit_and_refuses_one_more(archives: int, refused: bool) -> None:
    refusal = safety(plan_archiving(archives))
    assert (refusal is not None) == refused
    if refusal is not None:
        assert refusal.guards == ("max_archive",)
        assert refusal.trips[0].message == "would archive 11 teams, limit 10 (sync.max_archive)"
        assert refusal.override_flags == ("--allow-archive", "11")


@pytest.mark.parametrize(("archives", "refused"), [(10, False), (11, True)])
def test_archive_fraction_allows_the_limit_and_refuses_one_more(
    archives: int, refused: bool
) -> None:
    settings = SyncSettings(max_archive=1000)
    refusal = safety(plan_archiving(archives), current_team_count=50, settings=settings)
    assert (refusal is not None) == refused
    if refusal is not None:
        assert refusal.guards == ("max_archive_fraction",)
        assert refusal.trips[0].message == (
            "would archive 11 of 50 current teams (22%), limit 20% = 10 teams "
            "(sync.max_archive_fraction)"
        )


def test_archive_fraction_is_not_fooled_by_float_rounding() -> None:
    # 0.29 * 100 is 28.999999999999996 in floating point; 29 must still be allowed.
    settings = SyncSettings(max_archive=1000, max_archive_fraction=0.29)
    assert safety(plan_archiving(29), current_team_count=100, settings=settings) is None
    assert safety(plan_archiving(30), current_team_count=100, settings=settings) is not None


def test_both_archive_guards_trip_together_and_list_every_team() -> None:
    refusal = safety(plan_archiving(14), current_team_count=50)
    assert refusal is not None
    assert refusal.guards == ("max_archive", "max_archive_fraction")
    assert refusal.trips[0].message == "would archive 14 teams, limit 10 (sync.max_archive)"
    assert [(a.name, a.reference_id) for a in refusal.archives] == [
        (f"Gone {i:02}", f"gone-{i}") for i in range(14)
    ]
    assert refusal.override_flags == ("--allow-archive", "14")  # one flag, not two
    assert refusal.reason.startswith("would archive 14 teams, limit 10 (sync.max_archive); ")


@pytest.mark.parametrize(("allowed", "refused"), [(13, True), (14, False), (20, False)])
def test_allow_archive_lets_up_to_n_through_both_guards(allowed: int, refused: bool) -> None:
    refusal = safety(plan_archiving(14), current_team_count=50, allow_archive=allowed)
    assert (refusal is not None) == refused
    if refusal is not None:
        assert "--allow-archive 13 was given, 14 needed" in refusal.trips[0].message


def test_negative_allow_archive_is_a_usage_error() -> None:
    with pytest.raises(ValueError, match="allow_archive"):
        safety(plan_archiving(0), allow_archive=-1)


@pytest.mark.parametrize(
    ("people", "last", "refused"),
    [(64, 80, False), (63, 80, True), (80, 100, False), (79, 100, True), (500, 100, False),
     (40, 80, True), (1, None, False), (1, 0, False)],
)  # fmt: skip
def test_shrink_guard_at_the_threshold(people: int, last: int | None, refused: bool) -> None:
    refusal = safety(plan_archiving(0), people_count=people, last_accepted_people=last)
    assert (refusal is not None) == refused
    if refusal is not None:
        assert refusal.guards == ("min_people_fraction",)
        assert refusal.override_flags == ("--allow-shrink",)


def test_shrink_message_gives_the_numbers() -> None:
    refusal = safety(plan_archiving(0), people_count=40, last_accepted_people=80)
    assert refusal is not None
    assert refusal.trips[0].message == (
        "export has 40 people, 50% of the last accepted 80, minimum 80% = 64 people "
        "(sync.min_people_fraction)"
    )
    just_below = safety(plan_archiving(0), people_count=799, last_accepted_people=1000)
    assert just_below is not None
    assert "79.9% of the last accepted 1000" in just_below.trips[0].message
    # Rounded to the nearest tenth (5 of 13 is 38.5%, not 38.4%), but never to the
    # limit itself: 79.96% is not "80%" beside a minimum of 80%.
    closer = safety(plan_archiving(0), people_count=7996, last_accepted_people=10000)
    assert closer is not None
    assert "79.96% of the last accepted 10000" in closer.trips[0].message
    tenth = safety(plan_archiving(0), people_count=5, last_accepted_people=13)
    assert tenth is not None
    assert "38.5% of the last accepted 13" in tenth.trips[0].message


def test_allow_shrink_overrides_only_the_shrink_guard() -> None:
    assert safety(plan_archiving(0), people_count=40, last_accepted_people=80,
                  allow_shrink=True) is None  # fmt: skip
    refusal = safety(plan_archiving(11), people_count=40, last_accepted_people=80,
                     allow_shrink=True)  # fmt: skip
    assert refusal is not None and refusal.guards == ("max_archive",)


def test_empty_export_is_never_overridable() -> None:
    refusal = safety(plan_archiving(3), people_count=0, allow_archive=100, allow_shrink=True)
    assert refusal is not None
    assert refusal.guards == ("empty_export",)
    assert not refusal.overridable
    assert refusal.override_flags is None
    assert "never applied" in refusal.trips[0].message


def test_every_tripped_guard_is_reported_in_order() -> None:
    refusal = safety(
        plan_archiving(20),
        people_count=0,
        last_accepted_people=80,
        current_team_count=21,
        payload_bytes=MAX_PAYLOAD_BYTES + 1,
    )
    assert refusal is not None
    assert refusal.guards == (
        "empty_export",
        "payload_too_large",
        "max_archive",
        "max_archive_fraction",
        "min_people_fraction",
    )
    assert len(refusal.archives) == 20


@pytest.mark.parametrize(
    ("size", "refused"), [(MAX_PAYLOAD_BYTES, False), (MAX_PAYLOAD_BYTES + 1, True)]
)
def test_payload_limit_is_five_megabytes(size: int, refused: bool) -> None:
    refusal = safety(plan_archiving(0), payload_bytes=size, allow_archive=5, allow_shrink=True)
    assert (refusal is not None) == refused
    if refusal is not None:
        assert refusal.guards == ("payload_too_large",)
        assert refusal.override_flags is None
        assert "5,000,001 bytes" in refusal.trips[0].message


# ---------------------------------------------------------------- gate


def gate_with(plan: Plan, snapshots: list[Snapshot], **overrides: object) -> object:
    args: dict[str, object] = {
        "snapshots": snapshots,
        "now": NOW,
        "settings": SETTINGS,
        "people_count": 100,
        "last_accepted_people": 100,
        "current_team_count": 1000,
        "payload_bytes": 1000,
    }
    args.update(overrides)
    return gate(plan, **args)  # type: ignore[arg-type]


def test_gate_goes_when_nothing_holds() -> None:
    plan = plan_archiving(2)
    assert gate_with(plan, []) == Go(plan)


def test_gate_defers_before_judging_safety() -> None:
    decision = gate_with(plan_archiving(50), [snap("s", NOW - timedelta(days=1))], people_count=0)
    assert isinstance(decision, Defer)
    assert decision.deferral.resume_at == NOW + timedelta(days=20)


def test_gate_refuses_outside_the_window() -> None:
    decision = gate_with(plan_archiving(50), [snap("s", NOW - timedelta(days=30))])
    assert isinstance(decision, Refuse)
    assert decision.refusal.guards == ("max_archive",)


def test_gate_passes_overrides_through() -> None:
    plan = plan_archiving(50)
    assert isinstance(gate_with(plan, [], allow_archive=50), Go)
    assert isinstance(gate_with(plan, [], allow_archive=49), Refuse)


# ---------------------------------------------------------------- approvals (issue 23)


def refused_id(plan: Plan, **overrides: object) -> str:
    decision = gate_with(plan, [], **overrides)
    assert isinstance(decision, Refuse) and decision.refusal.plan_id is not None
    return decision.refusal.plan_id


def test_a_refusal_carries_its_plan_id_the_same_with_or_without_flags() -> None:
    plan = plan_archiving(50)
    plan_id = refused_id(plan)
    assert len(plan_id) == 8
    assert refused_id(plan, allow_archive=3) == plan_id
    let_past = gate_with(plan, [], allow_archive=50)
    assert let_past == Go(plan, plan_id=plan_id, approved=False)


def test_an_approved_plan_id_goes_as_if_its_guards_were_allowed() -> None:
    plan = plan_archiving(50)
    plan_id = refused_id(plan)
    assert gate_with(plan, [], approved={plan_id}) == Go(plan, plan_id=plan_id, approved=True)
    # Another plan's approval lets nothing through.
    assert isinstance(gate_with(plan_archiving(51), [], approved={plan_id}), Refuse)


def test_an_approval_never_bypasses_a_snapshot_window() -> None:
    plan = plan_archiving(50)
    window = [snap("s", NOW - timedelta(days=1))]
    assert isinstance(gate_with(plan, window, approved={refused_id(plan)}), Defer)


def test_an_approval_never_lets_an_empty_export_through() -> None:
    plan = plan_archiving(50)
    plan_id = refused_id(plan, people_count=0)
    decision = gate_with(plan, [], people_count=0, approved={plan_id})
    assert isinstance(decision, Refuse)
    assert "empty_export" in decision.refusal.guards


def test_a_plan_no_guard_trips_has_no_id() -> None:
    plan = plan_archiving(2)
    assert gate_with(plan, [], approved={"whatever"}) == Go(plan)


# ---------------------------------------------------------------- properties

_percentages = st.integers(min_value=0, max_value=100).map(lambda p: p / 100)


@given(_percentages, st.integers(min_value=0, max_value=400), st.data())
def test_archive_fraction_limit_is_exact_for_every_percentage(
    fraction: float, current: int, data: st.DataObject
) -> None:
    """The limit is the written percentage of the current teams, rounded down, however
    the float product happens to round, and never below the floor of one team."""
    archives = data.draw(st.integers(min_value=0, max_value=current))
    exact_limit = max(1, math.floor(Fraction(str(fraction)) * current))
    refusal = check_safety(
        plan_archiving(archives, keep=0),
        people_count=10,
        last_accepted_people=None,
        current_team_count=current,
        payload_bytes=1,
        settings=SyncSettings(max_archive=10_000, max_archive_fraction=fraction),
    )
    assert (refusal is not None) == (archives > exact_limit)


@given(_percentages, st.integers(min_value=1, max_value=5000), st.data())
def test_shrink_minimum_is_exact_for_every_percentage(
    fraction: float, last: int, data: st.DataObject
) -> None:
    people = data.draw(st.integers(min_value=1, max_value=last * 2))
    exact_minimum = math.ceil(Fraction(str(fraction)) * last)
    refusal = check_safety(
        plan_archiving(0),
        people_count=people,
        last_accepted_people=last,
        current_team_count=1,
        payload_bytes=1,
        settings=SyncSettings(min_people_fraction=fraction),
    )
    assert (refusal is not None) == (people < exact_minimum)


# ------------------------------------------------ snapshots by their schedule (issue 9, item 12)


def scheduled(
    sid: str,
    day: str | None,
    completed: datetime | None = None,
    deleted: datetime | None = None,
) -> Snapshot:
    return Snapshot(id=sid, scheduled_for=day, completed_at=completed, deleted_at=deleted)


@pytest.mark.parametrize(
    ("label", "snapshot", "kind", "resume_at"),
    [
        # Not started yet: DX recommends updating the hierarchy in exactly these weeks.
        ("scheduled tomorrow", scheduled("s", "2026-03-11"), None, None),
        ("scheduled next month", scheduled("s", "2026-04-06"), None, None),
        # Its day has come (UTC) and it is not completed: live.
        (
            "scheduled today",
            scheduled("s", "2026-03-10"),
            "snapshot_live",
            NOW + timedelta(hours=6),
        ),
        (
            "scheduled yesterday",
            scheduled("s", "2026-03-09"),
            "snapshot_live",
            NOW + timedelta(hours=6),
        ),
        # An unreadable or missing day cannot prove the snapshot has not started.
        ("no scheduled_for", scheduled("s", None), "snapshot_live", NOW + timedelta(hours=6)),
        (
            "garbled scheduled_for",
            scheduled("s", "next week"),
            "snapshot_live",
            NOW + timedelta(hours=6),
        ),
        # A timestamp where a date was documented: its day counts.
        ("timestamp tomorrow", scheduled("s", "2026-03-11T00:00:00Z"), None, None),
        (
            "completed 3 days ago",
            scheduled("s", "2026-03-01", NOW - timedelta(days=3)),
            "snapshot_window",
            NOW - timedelta(days=3) + timedelta(days=WINDOW),
        ),
        (
            "completed 21 days ago",
            scheduled("s", "2026-02-01", NOW - timedelta(days=21)),
            None,
            None,
        ),
        ("future but deleted", scheduled("s", "2026-03-20", deleted=NOW), None, None),
        ("past, not completed, deleted", scheduled("s", "2026-03-01", deleted=NOW), None, None),
    ],
)
def test_snapshot_defers_by_its_schedule(
    label: str, snapshot: Snapshot, kind: str | None, resume_at: datetime | None
) -> None:
    deferral = check_snapshots([snapshot], NOW, WINDOW)
    if kind is None:
        assert deferral is None, label
    else:
        assert deferral is not None, label
        assert (deferral.kind, deferral.resume_at) == (kind, resume_at), label


def test_today_is_the_utc_day() -> None:
    # 23:30 in New York on the 10th is already the 11th in UTC: a snapshot scheduled for
    # the 11th has started.
    late = datetime(2026, 3, 10, 23, 30, tzinfo=ZoneInfo("America/New_York"))
    deferral = check_snapshots([scheduled("s", "2026-03-11")], late, WINDOW)
    assert deferral is not None and deferral.kind == "snapshot_live"


def test_an_upcoming_snapshot_does_not_hide_a_live_one() -> None:
    snapshots = [scheduled("next", "2026-06-01"), scheduled("now", "2026-03-02")]
    deferral = check_snapshots(snapshots, NOW, WINDOW)
    assert deferral is not None and deferral.snapshot_id == "now"


def test_gate_goes_ahead_before_a_scheduled_snapshot() -> None:
    plan = plan_archiving(1)
    assert gate_with(plan, [scheduled("q2", "2026-03-16")]) == Go(plan)


def test_dx_snapshot_in_progress_still_defers_when_our_list_shows_only_upcoming() -> None:
    ours = check_snapshots([scheduled("q2", "2026-03-16")], NOW, WINDOW)
    assert ours is None
    deferral = deferral_for_api_error("snapshot_in_progress", NOW, 1, ours)
    assert deferral.kind == "snapshot_in_progress"
    assert deferral.resume_at == NOW + timedelta(hours=6)


# ---------------------------------------------------------------- the archive floor (issue 11)


@pytest.mark.parametrize("current", [1, 2, 3, 4])
def test_a_small_org_may_archive_one_team_unattended(current: int) -> None:
    # 0.2 of fewer than 5 teams rounds down to 0: without the floor every departure
    # of a manager would need a person.
    assert safety(plan_archiving(1), current_team_count=current) is None


def test_the_archive_floor_allows_one_team_not_two() -> None:
    refusal = safety(plan_archiving(2), current_team_count=3)
    assert refusal is not None
    assert refusal.guards == ("max_archive_fraction",)
    assert refusal.trips[0].limit == 1
    assert refusal.trips[0].message == (
        "would archive 2 of 3 current teams (66.7%), limit 20% = 0 teams, "
        "at least 1 team (sync.max_archive_fraction)"
    )


def test_the_archive_floor_does_not_lift_max_archive() -> None:
    settings = SyncSettings(max_archive=0)
    refusal = safety(plan_archiving(1), current_team_count=3, settings=settings)
    assert refusal is not None
    assert refusal.guards == ("max_archive",)


def test_the_archive_floor_holds_even_at_fraction_zero() -> None:
    settings = SyncSettings(max_archive_fraction=0.0)
    assert safety(plan_archiving(1), current_team_count=100, settings=settings) is None


# ---------------------------------------------------------------- the held guard, at the gate


@pytest.mark.parametrize(
    ("held", "guard"),
    [(25, None), (26, "max_held"), (4, None), (5, "max_held_fraction")],
)
def test_the_held_guard_trips_at_the_gate_like_every_other(held: int, guard: str | None) -> None:
    # 100 people besides the held: 25 held passes sync.max_held (25) but 2% of 125 is 2.5,
    # so sync.max_held_fraction refuses from 5 held (it counts from 5) up to the cap.
    settings = SyncSettings(max_held_fraction=0.2 if held > 20 else 0.02)
    decision = gate_with(plan_archiving(1), [], held=held_keys(held), settings=settings)
    if guard is None:
        assert isinstance(decision, Go)
        return
    assert isinstance(decision, Refuse)
    assert decision.refusal.guards == (guard,)
    (trip,) = decision.refusal.trips
    assert (trip.setting, trip.override) == (f"sync.{guard}", f"--allow-held {held}")
    assert decision.refusal.plan_id is not None


def held_keys(n: int, first: int = 0) -> list[str]:
    return [f"E{i:03}" for i in range(first, first + n)]


def test_a_held_refusal_is_approved_or_let_through_by_its_flag_under_one_id() -> None:
    plan, held = plan_archiving(1), held_keys(30)
    plan_id = refused_id(plan, held=held)
    assert refused_id(plan, held=held, allow_held=29) == plan_id
    assert gate_with(plan, [], held=held, allow_held=30) == Go(plan, plan_id=plan_id)
    assert gate_with(plan, [], held=held, approved={plan_id}) == Go(
        plan, plan_id=plan_id, approved=True
    )
    # One more held person, or another one, is another plan (a held person is kept where
    # DX had them: the payload alone is the same): the approval does not cover it.
    assert refused_id(plan, held=held_keys(31)) != plan_id
    assert refused_id(plan, held=held_keys(30, first=1)) != plan_id


@pytest.mark.parametrize(
    ("kind", "waits"),
    [
        ("snapshot_live", True),
        ("snapshot_window", True),
        ("snapshot_in_progress", True),
        # Deferred, but not by a snapshot: a person's approval of the attribute plan
        # still counts (a stop during verification must not turn it into a refusal).
        ("stopped_verifying", False),
        ("import_in_progress", False),
        ("lease_held", False),
        (None, False),  # stopped before submitting
    ],
)
def test_only_a_snapshot_deferral_waits_for_the_snapshot(kind: str | None, waits: bool) -> None:
    assert waits_for_snapshot(kind) is waits
