"""A manager who left (terminated, filtered out) keeps their team until HR re-points
their reports: hrsync/core/people (the reader) and hrsync/core/teams/mapping (the teams)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from datetime import UTC, datetime, timedelta

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hrsync.core.export.rows import SourceRow
from hrsync.core.people import (
    NOT_IN_EXPORT,
    Directory,
    KnownTeam,
    LeftManagers,
    Person,
    read_people,
)
from hrsync.core.report.explanation import explain, find_person
from hrsync.core.report.notify import (
    LeftTeam,
    MessageContext,
    lead_left_message,
    lead_left_notices,
)
from hrsync.core.settings import FieldSettings, FilterSettings, MappingSettings
from hrsync.core.teams.held import NOTHING_KNOWN, graph_people, place_held
from hrsync.core.teams.mapping import DesiredTeam, TeamMap, build_teams
from tests.strategies import make_person, org_forests

P = make_person

COLUMNS = ("Employee ID", "Full Name", "Work Email", "Manager ID", "Department", "Status")
FIELDS = FieldSettings(
    employee_id="Employee ID",
    email="Work Email",
    name="Full Name",
    manager_id="Manager ID",
    manager_email="",
    department="Department",
    status="Status",
)
MANAGER = MappingSettings()


def row(eid: str, mgr: str = "", status: str = "Active") -> tuple[str, ...]:
    return (eid, f"Person {eid}", f"{eid.lower()}@example.com", mgr, "Eng", status)


def read(rows: Sequence[Sequence[str]]) -> Directory:
    source = [
        SourceRow(f"people.csv line {i + 2}", dict(zip(COLUMNS, values, strict=True)))
        for i, values in enumerate(rows)
    ]
    return read_people("people.csv", COLUMNS, source, FIELDS, FilterSettings())


def mapped(rows: Sequence[Sequence[str]]) -> TeamMap:
    directory = read(rows)
    assert directory.ok, [str(p) for p in directory.problems]
    return build_teams(directory.people, MANAGER, FIELDS, left=directory.left)


def team_of(team_map: TeamMap) -> dict[str, str]:
    """Each placed e-mail's team key (as contributor)."""
    return {email: t.key for t in team_map.teams for email in t.contributors}


def test_the_reports_of_a_terminated_manager_stay_in_their_team() -> None:
    # E2 left; E3 and E4 still name them as manager.
    rows = [row("E1"), row("E2", "E1", "Terminated"), row("E3", "E2"), row("E4", "E2")]
    team_map = mapped(rows)
    placed = team_of(team_map)
    assert placed.get("e3@example.com") == "manager:E2"
    assert placed.get("e4@example.com") == "manager:E2"
    assert not team_map.unplaced
    [gone] = team_map.leads_left
    assert (gone.key, gone.employee_id, gone.why) == ("manager:E2", "E2", "filter.active_status")
    assert gone.reports == ("e3@example.com", "e4@example.com")


def teams_by_key(team_map: TeamMap) -> dict[str, DesiredTeam]:
    return {t.key: t for t in team_map.teams}


def test_the_team_keeps_its_key_and_name_and_the_nearest_kept_manager_stands_in() -> None:
    rows = [row("E1"), row("E2", "E1", "Terminated"), row("E3", "E2"), row("E4", "E2")]
    teams = teams_by_key(mapped(rows))
    # Named for the manager who left (the name DX knows), led by the one above.
    assert teams["manager:E2"].name == "Person E2's team"
    assert teams["manager:E2"].lead_email == "e1@example.com"
    assert teams["manager:E2"].lead_employee_id == "E1"
    assert teams["manager:E2"].parent_key == "manager:E1"
    # E1's only report left: E1 still leads their team, so E2's keeps its parent.
    assert teams["manager:E1"].contributors == ()
    assert teams["manager:E1"].parent_key is None
    [gone] = mapped(rows).leads_left
    assert (gone.stand_in_id, gone.stand_in_email, gone.team) == (
        "E1",
        "e1@example.com",
        "Person E2's team",
    )
    assert str(gone).startswith("lead left: Person E1 (E1) stands in for Person E2 (E2)")


def test_the_stand_in_is_found_through_several_managers_who_left() -> None:
    rows = [
        row("E1"),
        row("E9", "E1"),
        row("E2", "E1", "Terminated"),
        row("E3", "E2", "Terminated"),  # no one names E2 but E3, who left too
        row("E4", "E3"),
        row("E5", "E3"),
    ]
    team_map = mapped(rows)
    teams = teams_by_key(team_map)
    assert "manager:E2" not in teams  # nobody active names E2: nothing to keep
    assert teams["manager:E3"].lead_email == "e1@example.com"
    assert teams["manager:E3"].parent_key == "manager:E1"
    assert teams["manager:E3"].contributors == ("e4@example.com", "e5@example.com")
    assert [g.key for g in team_map.leads_left] == ["manager:E3"]
    assert not team_map.unplaced


def test_a_kept_lead_whose_manager_left_stays_under_the_kept_team() -> None:
    rows = [
        row("E1"),
        row("E2", "E1", "Terminated"),
        row("E3", "E2"),  # a manager themselves
        row("E4", "E3"),
    ]
    teams = teams_by_key(mapped(rows))
    assert teams["manager:E3"].parent_key == "manager:E2"
    assert teams["manager:E2"].contributors == ("e3@example.com",)
    assert teams["manager:E2"].parent_key == "manager:E1"


def test_nobody_up_the_chain_is_kept_so_the_people_are_in_no_team_and_need_a_person() -> None:
    rows = [
        row("E1"),
        row("E2", "E1"),
        row("E7", status="Terminated"),  # the top of another branch left
        row("E8", "E7"),
        row("E9", "E7"),
    ]
    team_map = mapped(rows)
    assert "manager:E7" not in teams_by_key(team_map)
    [gone] = team_map.leads_left
    assert (gone.key, gone.stand_in_id, gone.team) == ("manager:E7", None, "")
    assert "nobody up their chain is kept" in str(gone)
    assert [(u.employee_id, u.needs_person) for u in team_map.unplaced] == [
        ("E8", True),
        ("E9", True),
    ]
    assert "their manager Person E7 (E7) left" in team_map.unplaced[0].reason
    assert [u.employee_id for u in team_map.needing_person] == ["E8", "E9"]


def test_when_hr_re_points_the_reports_the_teams_are_as_usual() -> None:
    rows = [row("E1"), row("E2", "E1", "Terminated"), row("E3", "E1"), row("E4", "E1")]
    team_map = mapped(rows)
    assert set(teams_by_key(team_map)) == {"manager:E1"}
    assert not team_map.leads_left
    assert not team_map.unplaced


def test_someone_with_no_manager_and_no_reports_is_meant_to_be_in_no_team() -> None:
    team_map = build_teams(
        [P("E1", "Ann", None, "X"), P("E2", "Ben", "E1", "X"), P("E5", "Loner", None, "X")],
        MANAGER,
        FIELDS,
    )
    [loner] = team_map.unplaced
    assert (loner.employee_id, loner.needs_person) == ("E5", False)
    assert team_map.needing_person == ()


def test_a_manager_absent_from_the_export_leaves_their_lone_report_needing_a_person() -> None:
    team_map = build_teams(
        [P("E1", "Ann", None, "X"), P("E2", "Ben", "E1", "X"), P("E5", "Dana", "E404", "X")],
        MANAGER,
        FIELDS,
    )
    [dana] = team_map.unplaced
    assert dana.needs_person
    assert "E404" in dana.reason


def test_a_team_folded_by_min_team_size_is_not_told_as_kept() -> None:
    rows = [row("E1"), row("E5", "E1"), row("E2", "E1", "Terminated"), row("E3", "E2")]
    directory = read(rows)
    team_map = build_teams(
        directory.people, MappingSettings(min_team_size=2), FIELDS, left=directory.left
    )
    teams = teams_by_key(team_map)
    assert set(teams) == {"manager:E1"}
    # The manager who left is no contributor: only the active people are.
    assert teams["manager:E1"].contributors == ("e3@example.com", "e5@example.com")
    assert not team_map.leads_left
    assert not team_map.unplaced


def test_any_filter_counts_as_leaving_and_is_named() -> None:
    rows = [row("E1"), row("E2", "E1"), row("E3", "E2"), row("E4", "E3")]
    source = [
        SourceRow(f"people.csv line {i + 2}", dict(zip(COLUMNS, values, strict=True)))
        for i, values in enumerate(rows)
    ]
    filters = FilterSettings(exclude={"Employee ID": ("E3",)})
    directory = read_people("people.csv", COLUMNS, source, FIELDS, filters)
    team_map = build_teams(directory.people, MANAGER, FIELDS, left=directory.left)
    [gone] = team_map.leads_left
    assert gone.why.startswith("filter.exclude")
    assert teams_by_key(team_map)["manager:E3"].lead_email == "e2@example.com"


# ---------------------------------------------------------------- properties


@st.composite
def orgs_with_leavers(draw: st.DrawFn) -> tuple[list[Person], LeftManagers, set[str]]:
    """A generated org, and some of its managers gone: the people kept (each whose manager
    left with no manager of their own, as the reader gives them) and who left. Some who
    left have no row at all: known from the teams DX last took, by id and team name."""
    org = draw(org_forests(max_size=30))
    managers = sorted({p.manager_id for p in org if p.manager_id})
    gone = set(draw(st.lists(st.sampled_from(managers), unique=True))) if managers else set()
    kept = [
        p._replace(manager_id=None) if p.manager_id in gone else p
        for p in org
        if p.employee_id not in gone
    ]
    of_person = {
        p.employee_id: p.manager_id
        for p in org
        if p.manager_id in gone and p.employee_id not in gone
    }
    ids = sorted(p.employee_id for p in org)
    # Some who left name anyone as their manager: a report of theirs, or another who left
    # (HR data closes cycles through rows a filter drops).
    departed = {
        p.employee_id: p._replace(manager_id=draw(st.sampled_from(ids)))
        if draw(st.integers(0, 3)) == 0
        else p
        for p in org
        if p.employee_id in gone
    }
    missing = set(draw(st.lists(st.sampled_from(sorted(gone)), unique=True))) if gone else set()
    for eid in missing:
        departed[eid] = departed[eid]._replace(email="", name=eid)
    left = LeftManagers(
        departed,
        {eid: NOT_IN_EXPORT if eid in missing else "filter.active_status" for eid in gone},
        {k: v for k, v in of_person.items() if v is not None},
        {eid: f"DX team of {eid}" for eid in missing},
    )
    return kept, left, gone


def reaches_kept(manager: str | None, by_id: dict[str, Person], left: LeftManagers) -> bool:
    seen: set[str] = set()
    while manager is not None and manager not in seen:
        if manager not in left.people:
            return manager in by_id
        seen.add(manager)
        manager = left.people[manager].manager_id
    return False


@settings(max_examples=150, deadline=None)
@given(orgs_with_leavers())
def test_nobody_active_falls_out_of_dx_silently(
    case: tuple[list[Person], LeftManagers, set[str]],
) -> None:
    kept, left, gone = case
    if not kept:
        return
    team_map = build_teams(kept, MANAGER, FIELDS, left=left)
    assert not team_map.problems
    by_id = {p.employee_id: p for p in kept}
    member_of = Counter(email for t in team_map.teams for email in t.contributors)
    leads = {t.lead_email for t in team_map.teams}
    unplaced = {u.email: u for u in team_map.unplaced}
    keys = {t.key for t in team_map.teams}
    has_reports = {p.manager_id for p in kept} | set(left.of_person.values())
    for person in kept:
        manager = person.manager_id or left.of_person.get(person.employee_id)
        if reaches_kept(manager, by_id, left):
            # A chain reaching a kept manager: in exactly one team.
            assert member_of[person.email] == 1, person
        else:
            assert member_of[person.email] == 0, person
        # Placed (a member or a lead), or listed in no team, and needing a person unless
        # meant to be there.
        if member_of[person.email] == 0 and person.email not in leads:
            listed = unplaced[person.email]
            meant = manager is None and person.employee_id not in has_reports
            assert listed.needs_person is not meant, listed
    for team in team_map.teams:
        assert team.lead_email in {p.email for p in kept}  # never someone who left
        assert team.parent_key is None or team.parent_key in keys
        assert not set(team.contributors) & {left.people[g].email for g in gone}
    for entry in team_map.leads_left:
        assert entry.employee_id in gone
        assert (entry.key in keys) is (entry.stand_in_id is not None)
        if entry.stand_in_id is not None and entry.employee_id in left.names:
            # No row to render a name from: DX's name for the team stays.
            assert entry.team.startswith(left.names[entry.employee_id]), entry


# ---------------------------------------------------------------- explain


def test_explain_says_who_stands_in_for_the_manager_who_left() -> None:
    rows = [row("E1"), row("E2", "E1", "Terminated"), row("E3", "E2"), row("E4", "E2")]
    directory = read(rows)
    team_map = build_teams(directory.people, MANAGER, FIELDS, left=directory.left)
    people = directory.people
    report = explain(
        find(people, "E3"), people, team_map, FIELDS, rows=(), dx_teams=(), sent={},
        strategy="manager",
    )  # fmt: skip
    assert "manager chain: Person E2 (E2) left (excluded by filter.active_status" in report
    assert (
        'member of "Person E2\'s team": their manager Person E2 (E2) left; lead left: '
        "Person E1 (E1) stands in until HR names their new manager"
    ) in report
    stand_in = explain(
        find(people, "E1"), people, team_map, FIELDS, rows=(), dx_teams=(), sent={},
        strategy="manager",
    )  # fmt: skip
    assert """leads "Person E2's team" (under "Person E1's team"): lead left: Person E1 """ in (
        stand_in
    )
    assert "nobody reports to them now, but a team below is that of a manager who left" in (
        stand_in
    )


def find(people: Sequence[Person], query: str) -> Person:
    found = find_person(people, query)
    assert found is not None
    return found


# ---------------------------------------------------------------- the late notice

NOW = datetime(2026, 12, 6, 9, 0, tzinfo=UTC)


def left_team(key: str, days: float, *, told: bool = False, cleared: bool = False) -> LeftTeam:
    return LeftTeam(
        key,
        "Growth",
        key.removeprefix("manager:"),
        "Rohan Gupta",
        "lead@example.com",
        2,
        NOW - timedelta(days=days),
        told,
        cleared,
    )


@pytest.mark.parametrize(
    ("teams", "late", "cleared"),
    [
        ([left_team("manager:E1", 2.9)], [], []),  # HR may still re-point them: quiet
        ([left_team("manager:E1", 3)], ["manager:E1"], []),
        ([left_team("manager:E1", 30, told=True)], [], []),  # told once, never every run
        ([left_team("manager:E1", 30, told=True, cleared=True)], [], ["manager:E1"]),
        ([left_team("manager:E1", 1, cleared=True)], [], []),  # fixed in time: never paged
    ],
)
def test_a_manager_who_left_is_told_once_after_the_alert_days_and_once_when_cleared(
    teams: list[LeftTeam], late: list[str], cleared: list[str]
) -> None:
    found = lead_left_notices(teams, NOW, alert_days=3)
    assert ([t.key for t in found[0]], [t.key for t in found[1]]) == (late, cleared)


def test_the_late_message_names_the_manager_the_stand_in_and_what_to_do() -> None:
    body = lead_left_message(
        [left_team("manager:E128", 4)], [], MessageContext("json", "r1", NOW), alert_days=3
    )
    assert body["event"] == "lead_left" and body["late_count"] == 1
    assert body["late"][0]["stand_in"] == "lead@example.com"
    assert "Give those people their new manager in HR" in body["text"]
    assert "- Growth: Rohan Gupta (E128) left on or before 2026-12-02;" in body["text"]


def test_a_report_who_was_their_departed_managers_manager_closes_no_cycle() -> None:
    # E2 names E3 as manager and left; E3 names E2. Before, E3 was top of the org (E2
    # filtered out); E3 now stands in for E2, whose team sits at the top: no cycle refuses
    # the run.
    rows = [row("E1"), row("E9", "E1"), row("E2", "E3", "Terminated"), row("E3", "E2")]
    rows += [row("E4", "E2"), row("E5", "E3")]
    team_map = mapped(rows)
    assert not team_map.problems, team_map.problems
    teams = teams_by_key(team_map)
    assert teams["manager:E2"].lead_email == "e3@example.com"
    assert teams["manager:E2"].parent_key is None
    assert teams["manager:E3"].parent_key == "manager:E2"


# ---------------------------------------------------------------- a row missing altogether


def read_knowing(
    rows: Sequence[Sequence[str]], known: dict[str, KnownTeam], *, top: bool = False
) -> Directory:
    source = [
        SourceRow(f"people.csv line {i + 2}", dict(zip(COLUMNS, values, strict=True)))
        for i, values in enumerate(rows)
    ]
    return read_people(
        "people.csv",
        COLUMNS,
        source,
        FIELDS,
        FilterSettings(),
        unknown_manager="top" if top else "refuse",
        hold_people=True,
        known_teams=known,
    )


@pytest.mark.parametrize(
    ("rows", "known", "key", "stand_in", "parent"),
    [
        # E2's row is gone; DX last had their team "Payments" under E1's.
        (
            [row("E1"), row("E3", "E2"), row("E4", "E2")],
            {"E2": KnownTeam("Payments", "E1")},
            "manager:E2",
            "E1",
            "manager:E1",
        ),
        # E2 and their manager E5 are both gone: the stored chain leads on to E1.
        (
            [row("E1"), row("E3", "E2"), row("E4", "E2")],
            {"E2": KnownTeam("Payments", "E5"), "E5": KnownTeam("Finance", "E1")},
            "manager:E2",
            "E1",
            "manager:E1",
        ),
        # E2 is gone; above them E5 is in the export, Terminated; above that E1 is kept.
        (
            [row("E1"), row("E5", "E1", "Terminated"), row("E3", "E2"), row("E4", "E2")],
            {"E2": KnownTeam("Payments", "E5")},
            "manager:E2",
            "E1",
            "manager:E1",
        ),
    ],
)
def test_a_manager_missing_from_the_export_whom_hrsync_knows_keeps_their_team(
    rows: list[tuple[str, ...]],
    known: dict[str, KnownTeam],
    key: str,
    stand_in: str,
    parent: str,
) -> None:
    for top in (False, True):
        directory = read_knowing(rows, known, top=top)
        assert directory.ok and not directory.held, [str(p) for p in directory.problems]
        assert not directory.unknown_managers
        team_map = build_teams(directory.people, MANAGER, FIELDS, left=directory.left)
        assert not team_map.problems and not team_map.needing_person
        teams = teams_by_key(team_map)
        team = teams[key]
        assert team.name == "Payments"  # the name DX knows, whatever the template says
        assert team.lead_employee_id == stand_in and team.parent_key == parent
        assert team.contributors == ("e3@example.com", "e4@example.com")
        [gone] = team_map.leads_left
        assert (gone.key, gone.team, gone.why) == (key, "Payments", NOT_IN_EXPORT)
        assert gone.stand_in_id == stand_in
        assert "no longer in the export" in str(gone)


def test_a_manager_nobody_ever_knew_is_held_as_before() -> None:
    rows = [row("E1"), row("E3", "E2"), row("E4", "E2")]
    directory = read_knowing(rows, {"E9": KnownTeam("Other", "E1")})
    assert [h.employee_id for h in directory.held] == ["E3", "E4"]
    assert directory.left.people == {}
    top = read_knowing(rows, {}, top=True)
    assert [u.value for u in top.unknown_managers] == ["E2"]


def test_a_held_person_elsewhere_keeps_the_managers_who_left() -> None:
    # Holding one person rebuilds the team map around them; who left, and who stands in,
    # stays what explain and the run's lines tell.
    rows = [row("E1"), row("E2", "E1", "Terminated"), row("E3", "E2"), row("E4", "E2")]
    rows.append(("E5", "Person E5", "e5@", "E1", "Eng", "Active"))  # held: no domain
    source = [
        SourceRow(f"people.csv line {i + 2}", dict(zip(COLUMNS, values, strict=True)))
        for i, values in enumerate(rows)
    ]
    directory = read_people(
        "people.csv", COLUMNS, source, FIELDS, FilterSettings(), hold_people=True
    )
    assert [h.key for h in directory.held] == ["E5"]
    people = graph_people(directory.people, directory.held, NOTHING_KNOWN)
    built = build_teams(people, MANAGER, FIELDS, left=directory.left)
    placed = place_held(built, directory.held, NOTHING_KNOWN).team_map
    assert [(g.employee_id, g.stand_in_id) for g in placed.leads_left] == [("E2", "E1")]
    assert placed.leads_left == built.leads_left


def test_explain_counts_one_person_left_with_a_stand_in_as_one() -> None:
    rows = [row("E1"), row("E2", "E1", "Terminated"), row("E3", "E2")]
    directory = read(rows)
    team_map = build_teams(directory.people, MANAGER, FIELDS, left=directory.left)
    report = explain(
        find(directory.people, "E1"), directory.people, team_map, FIELDS, rows=(),
        dx_teams=(), sent={}, strategy="manager",
    )  # fmt: skip
    assert "until HR re-points its 1 person (the nearest" in report
