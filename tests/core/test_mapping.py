"""Tests for the mapping (hrsync/core/teams/mapping.py and the modules it runs): strategies,
names, folding; generated orgs."""

from __future__ import annotations

import csv
import json
import random
import re
from collections import Counter
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hrsync.core.people import Person
from hrsync.core.settings import FieldSettings, MappingSettings
from hrsync.core.teams.mapping import (
    DesiredTeam,
    LeadWithoutReports,
    TeamMap,
    build_teams,
    no_team_problem,
    team_name_problems,
    validate_template,
)
from tests.strategies import make_person, org_forests

CONFIG = Path(__file__).resolve().parents[2] / "config"
FIELDS = FieldSettings()
MANAGER = MappingSettings()
DEPARTMENT = MappingSettings(strategy="department", team_name="{department}")


def sample_people(name: str = "sample-org.csv") -> list[Person]:
    """The active people of a sample export, as the readers and filters hand them over."""
    with (CONFIG / name).open(encoding="utf-8") as fh:
        rows = list(csv.DictReader(fh))
    return [
        make_person(
            r["Employee ID"],
            r["Full Name"],
            r["Manager ID"] or None,
            r["Department"],
            email=r["Work Email"],
            title=r["Title"],
        )
        for r in rows
        if r["Status"] == "Active"
    ]


def by_key(team_map: TeamMap) -> dict[str, DesiredTeam]:
    return {t.key: t for t in team_map.teams}


P = make_person  # short for the tables


# ---------------------------------------------------------------- templates


@pytest.mark.parametrize(
    ("template", "fragment"),
    [
        ("{lead_nmae}'s team", "did you mean {lead_name}?"),
        ("{Titel}", "did you mean {Title}?"),
        ("{cost_center}", "neither a built-in placeholder"),
        ("{} team", "positional placeholder"),
        ("{0} team", "positional placeholder"),
        ("{lead_name!r}", "takes no format spec or conversion"),
        ("{lead_name:>20}", "takes no format spec or conversion"),
        ("{lead_name", "is not a valid template"),
        ("Team }", "is not a valid template"),
        ("Engineering", "has no placeholder"),
        ("  ", "is empty"),
    ],
)
def test_validate_template_names_the_problem(template: str, fragment: str) -> None:
    problems = validate_template(template, ["Title", "Full Name"])
    assert problems, template
    assert any(fragment in p for p in problems), problems
    assert all("mapping.team_name" in p for p in problems)


@pytest.mark.parametrize(
    "template",
    [
        "{lead_name}'s team",
        "{department}",
        "{department_path} ({lead_first_name} {lead_last_name})",
        "{Title}: {lead_email} {lead_employee_id}",
        "{Full Name}",
        "{{literal}} {lead_name}",
    ],
)
def test_validate_template_accepts_builtins_and_columns(template: str) -> None:
    assert validate_template(template, ["Title", "Full Name"]) == []


def test_validate_template_lists_at_most_20_columns_of_a_wide_export() -> None:
    columns = [f"col{i:06d}" for i in range(100_000)]
    [problem] = validate_template("{Titel}", columns)
    assert "col000000, col000001" in problem
    assert "col000019 and 99980 more" in problem
    assert len(problem) < 1000


def test_an_unknown_placeholder_is_a_team_name_problem() -> None:
    people = [P("E1", "Ada Okafor", None, "Eng"), P("E2", "Ben Lee", "E1", "Eng")]
    settings = MappingSettings(team_name="{lead_nmae}'s team")
    (problem,) = team_name_problems(settings.team_name, people)
    assert re.search(r"\{lead_nmae\}.*did you mean \{lead_name\}", problem)
    with pytest.raises(ValueError, match="team_name_problems"):
        build_teams(people, settings, FIELDS)


@pytest.mark.parametrize(
    ("template", "expected"),
    [
        ("{lead_name}'s team", "Ada Okafor's team"),
        ("{lead_first_name}'s crew", "Ada's crew"),
        ("{lead_last_name} / {lead_employee_id}", "Okafor / E1"),
        ("{lead_email}", "e1@example.com"),
        ("{department}", "Platform"),
        ("{Title} group", "CTO group"),
        ("{{{department}}}", "{Platform}"),
        ("  {department}   team ", "Platform team"),
    ],
)
def test_manager_team_names_render_the_leads_fields(template: str, expected: str) -> None:
    people = [
        P("E1", "Ada Okafor", None, "Platform", title="CTO"),
        P("E2", "Ben Lee", "E1", "Platform"),
    ]
    (team,) = build_teams(people, MappingSettings(team_name=template), FIELDS).teams
    assert team.name == expected


def test_a_name_that_renders_blank_falls_back_to_the_leads_name() -> None:
    people = [P("E1", "Ada Okafor", None, None), P("E2", "Ben Lee", "E1", None)]
    result = build_teams(people, MappingSettings(team_name="{department}"), FIELDS)
    assert [t.name for t in result.teams] == ["Ada Okafor's team"]
    assert any("rendered empty" in n for n in result.notes)


def test_duplicate_names_get_numbered_suffixes_in_key_order() -> None:
    # Three leads called "Ada Lee" (E1, E2, E3) and one whose name already looks suffixed.
    people = [
        P("E0", "Root Person", None, "X"),
        P("E3", "Ada Lee", "E0", "X"),
        P("E1", "ADA  LEE", "E0", "X"),
        P("E2", "Ada Lee (2)", "E0", "X"),
        P("E4", "Ada Lee", "E0", "X"),
    ]
    people += [P(f"E{i}", "Report", f"E{i - 10}", "X") for i in (11, 12, 13, 14)]
    teams = by_key(build_teams(people, MANAGER, FIELDS))
    # The template is "{lead_name}'s team"; E1's name is collapsed to "ADA LEE".
    assert teams["manager:E1"].name == "ADA LEE's team"
    assert teams["manager:E3"].name == "Ada Lee's team (2)"
    assert teams["manager:E4"].name == "Ada Lee's team (3)"
    assert teams["manager:E2"].name == "Ada Lee (2)'s team"
    names = [t.name.casefold() for t in teams.values()]
    assert len(names) == len(set(names))


def test_suffixes_skip_names_already_taken() -> None:
    people = [
        P("E0", "Boss", None, "Root"),
        P("E1", "A", "E0", "Core"),
        P("E2", "B", "E0", "Core"),
        P("E3", "C", "E0", "Core (2)"),
    ]
    people += [P(f"E{i}", "Report", f"E{i - 10}", "Core") for i in (11, 12, 13)]
    teams = by_key(build_teams(people, MappingSettings(team_name="{department}"), FIELDS))
    assert teams["manager:E1"].name == "Core"
    assert teams["manager:E3"].name == "Core (2)"
    assert teams["manager:E2"].name == "Core (3)"


@pytest.mark.parametrize(
    ("chain", "plain", "suffixed"),
    [
        # (employee id, manager id) of three leads all named "Sales": the highest keeps it
        # whatever the ids' order (issue 11: "Sales (2)" was the parent of "Sales").
        ([("E9", None), ("E1", "E9")], "manager:E9", ["manager:E1"]),
        ([("E1", None), ("E9", "E1")], "manager:E1", ["manager:E9"]),
        ([("E5", None), ("E3", "E5"), ("E1", "E3")], "manager:E5", ["manager:E3", "manager:E1"]),
        # Same depth: the smaller key keeps it, the others in key order.
        ([("E0", None), ("E7", "E0"), ("E2", "E0")], "manager:E0", ["manager:E2", "manager:E7"]),
    ],
)
def test_the_team_highest_in_the_hierarchy_keeps_a_duplicate_name(
    chain: list[tuple[str, str | None]], plain: str, suffixed: list[str]
) -> None:
    people = [P(emp, "Lead", manager, "Sales") for emp, manager in chain]
    people += [P(f"R{emp}", "Report", emp, "Other") for emp, _ in chain]
    teams = by_key(build_teams(people, MappingSettings(team_name="{department}"), FIELDS))
    assert teams[plain].name == "Sales"
    assert [teams[key].name for key in suffixed] == [
        f"Sales ({n})" for n in range(2, 2 + len(suffixed))
    ]


def test_the_note_on_a_shared_name_shows_the_first_renames_and_counts_the_rest() -> None:
    people = [P("E00", "Lead", None, "Sales")]
    people += [P(f"E{i:02}", "Lead", "E00", "Sales") for i in range(1, 24)]
    people += [P(f"R{i:02}", "Report", f"E{i:02}", "Other") for i in range(24)]
    result = build_teams(people, MappingSettings(team_name="{department}"), FIELDS)
    (note,) = [n for n in result.notes if "are named" in n]
    shown = ", ".join(f"manager:E{i:02} -> 'Sales ({i + 1})'" for i in range(1, 21))
    assert note == f"24 teams are named 'Sales': manager:E00 keeps it, {shown} and 3 more"


@settings(max_examples=150, deadline=None)
@given(org_forests(), st.sampled_from(["manager", "department"]), st.integers(0, 3))
def test_a_suffixed_name_is_never_above_its_plain_name(
    people: list[Person], strategy: str, min_size: int
) -> None:
    mapping = MappingSettings(
        strategy="department" if strategy == "department" else "manager",
        team_name="{department}" if strategy == "department" else "{lead_last_name}",
        min_team_size=min_size,
    )
    result = build_teams(people, mapping, FIELDS)
    depth: dict[str, int] = {}
    for team in result.teams:  # parents come first
        depth[team.key] = 0 if team.parent_key is None else depth[team.parent_key] + 1
    by_name = {t.name: t for t in result.teams}
    for team in result.teams:
        base, _, rest = team.name.rpartition(" (")
        if base and rest.endswith(")") and base in by_name:
            assert depth[by_name[base].key] <= depth[team.key], (base, team.name)


# ---------------------------------------------------------------- manager strategy


def test_sample_org_maps_to_the_expected_manager_teams() -> None:
    result = build_teams(sample_people(), MANAGER, FIELDS)
    teams = by_key(result)
    assert list(teams) == [
        "manager:E001",
        "manager:E002",
        "manager:E010",
        "manager:E011",
        "manager:E012",
        "manager:E020",
        "manager:E021",
        "manager:E022",
        "manager:E023",
        "manager:E024",
        "manager:E025",
        "manager:E026",
        "manager:E112",
    ]
    assert teams["manager:E001"].parent_key is None
    assert teams["manager:E001"].contributors == ("marcus.lindqvist@example.com",)
    assert teams["manager:E002"].name == "Marcus Lindqvist's team"
    assert teams["manager:E112"].parent_key == "manager:E023"
    assert teams["manager:E112"].contributors == (
        "oliver.brown@example.com",
        "zainab.yusuf@example.com",
    )
    # The tech lead is a contributor of the Mobile manager's team, not of their own.
    assert "kwame.asante@example.com" in teams["manager:E023"].contributors
    # The on-leave contractor was filtered out before mapping.
    assert "pedro.alves@example.com" not in teams["manager:E026"].contributors
    assert result.problems == ()


def test_reports_of_a_manager_outside_the_export_are_top_of_org() -> None:
    people = [
        P("E2", "Ben Lee", "E9", "X"),  # E9 was filtered out
        P("E3", "Chen Rossi", "E2", "X"),
        P("E4", "Lone Person", None, "X"),
    ]
    result = build_teams(people, MANAGER, FIELDS)
    assert [(t.key, t.parent_key) for t in result.teams] == [("manager:E2", None)]
    assert any("1 person reports to 'E9'" in n for n in result.notes)
    assert (
        "1 person has neither a manager nor reports in the filtered export and belongs to no team"
    ) in result.notes


def test_people_in_no_team_are_counted_whatever_made_them_top_of_org() -> None:
    people = [
        P("E1", "Ada Root", None, "X"),  # leads E2's team: in a team
        P("E2", "Ben Lee", "E1", "X"),
        P("E5", "Dana Gone", "E9", "X"),  # E9 filtered out, no reports: no team
        P("E6", "Eve Alone", None, "X"),  # no manager, no reports: no team
        P("E7", "Finn Boss", "E8", "X"),  # E8 filtered out, but leads E3: in a team
        P("E3", "Chen Rossi", "E7", "X"),
    ]
    result = build_teams(people, MANAGER, FIELDS)
    assert [t.key for t in result.teams] == ["manager:E1", "manager:E7"]
    assert (
        "2 people have neither a manager nor reports in the filtered export and belong to no team"
    ) in result.notes


def test_a_manager_cycle_is_a_problem_naming_the_cycle() -> None:
    people = [P("E1", "A", "E2", "X"), P("E2", "B", "E1", "X")]
    result = build_teams(people, MANAGER, FIELDS)
    (problem,) = result.problems
    assert problem.value == "manager:E1 -> manager:E2 -> manager:E1"
    assert (problem.location, problem.field) == (people[0].location, FIELDS.manager_id)
    assert "must not form a cycle" in str(problem)
    assert result.teams == ()


def test_duplicate_employee_ids_are_problems() -> None:
    people = [P("E1", "A", None, "X"), P("E1", "B", None, "X")]
    result = build_teams(people, MANAGER, FIELDS)
    (problem,) = result.problems
    assert (problem.value, problem.location) == ("E1", people[1].location)
    assert "must appear once" in str(problem)
    assert result.teams == ()


def test_no_people_no_teams() -> None:
    assert build_teams([], MANAGER, FIELDS) == TeamMap(teams=())


# ---------------------------------------------------------------- min_team_size


def chain_org() -> list[Person]:
    """E1 -> E2 -> {E3 with 2 reports (E5 with 1 report), E4 with 3 reports}."""
    return [
        P("E1", "Root", None, "X"),
        P("E2", "Cto", "E1", "X"),
        P("E3", "Small", "E2", "X"),
        P("E4", "Big", "E2", "X"),
        P("E5", "Tiny", "E3", "X"),
        P("E6", "Ic", "E3", "X"),
        P("E7", "Ic", "E5", "X"),
        P("E8", "Ic", "E4", "X"),
        P("E9", "Ic", "E4", "X"),
        P("E10", "Ic", "E4", "X"),
    ]


def test_min_team_size_zero_folds_nothing() -> None:
    result = build_teams(chain_org(), MANAGER, FIELDS)
    assert len(result.teams) == 5
    assert not any("folded" in n for n in result.notes)


def test_small_teams_fold_into_their_parent_deepest_first() -> None:
    result = build_teams(chain_org(), MappingSettings(min_team_size=3), FIELDS)
    teams = by_key(result)
    # E5's team (1 contributor) folds into E3's, which then has 3 and stays.
    assert "manager:E5" not in teams
    assert teams["manager:E3"].contributors == (
        "e5@example.com",
        "e6@example.com",
        "e7@example.com",
    )
    # E2's team has 2 contributors and folds into the root; its sub-teams re-attach.
    assert "manager:E2" not in teams
    assert teams["manager:E3"].parent_key == "manager:E1"
    assert teams["manager:E4"].parent_key == "manager:E1"
    assert set(teams["manager:E1"].contributors) == {
        "e2@example.com",
        "e3@example.com",
        "e4@example.com",
    }
    # The root has 3 after folding and is kept; every fold is noted.
    assert [n for n in result.notes if n.startswith("folded")] == [
        "folded manager:E5 (1 contributor, below min_team_size 3) into manager:E3; "
        "0 sub-teams re-attached to manager:E3",
        "folded manager:E2 (2 contributors, below min_team_size 3) into manager:E1; "
        "2 sub-teams re-attached to manager:E1",
    ]


def test_a_root_team_below_the_minimum_is_kept_and_noted() -> None:
    people = [P("E1", "Root", None, "X"), P("E2", "Ic", "E1", "X")]
    result = build_teams(people, MappingSettings(min_team_size=3), FIELDS)
    assert [t.key for t in result.teams] == ["manager:E1"]
    assert any("kept root team manager:E1 with 1 contributor, below" in n for n in result.notes)


def test_folding_a_department_adds_its_lead_only_when_not_placed_elsewhere() -> None:
    fields = FieldSettings(department_lead="Lead")
    people = [
        P("E1", "Boss", None, "Eng", extra={"Lead": "E1"}),
        P("E2", "Ic", "E1", "Eng", extra={"Lead": "E1"}),
        P("E3", "Ic", "E1", "Eng", extra={"Lead": "E1"}),
        P("E4", "Ic", "E1", "Eng/Tiny", extra={"Lead": "E9"}),
        P("E9", "Advisor", None, None),  # leads Eng/Tiny, is in no unit
    ]
    result = build_teams(people, MappingSettings(strategy="department", min_team_size=2), fields)
    (team,) = result.teams
    assert team.key == "department:Eng"
    assert team.contributors == (
        "e1@example.com",
        "e2@example.com",
        "e3@example.com",
        "e4@example.com",
        "e9@example.com",
    )


# ---------------------------------------------------------------- department strategy


def test_department_paths_make_parent_units_and_pick_the_most_senior_lead() -> None:
    people = [
        P("E1", "Cto", None, "Engineering"),
        P("E2", "Platform Head", "E1", "Engineering/Platform"),
        P("E3", "Infra Ic", "E2", "Engineering/Platform/Infra"),
        P("E5", "Infra Ic", "E2", "Engineering / Platform / Infra "),
        P("E4", "Product Ic", "E1", "Engineering/Product"),
        P("E6", "Product Ic", "E1", "Engineering/Product"),
    ]
    result = build_teams(people, DEPARTMENT, FIELDS)
    teams = by_key(result)
    assert [(t.key, t.parent_key, t.name, t.lead_email) for t in result.teams] == [
        ("department:Engineering", None, "Engineering", "e1@example.com"),
        ("department:Engineering/Platform", "department:Engineering", "Platform", "e2@example.com"),
        ("department:Engineering/Product", "department:Engineering", "Product", "e4@example.com"),
        (
            "department:Engineering/Platform/Infra",
            "department:Engineering/Platform",
            "Infra",
            "e3@example.com",
        ),
    ]
    assert teams["department:Engineering/Platform/Infra"].contributors == (
        "e3@example.com",
        "e5@example.com",
    )


def test_a_path_unit_without_members_is_led_by_the_most_senior_below_it() -> None:
    people = [
        P("E1", "Vp", None, "Eng/Platform"),
        P("E2", "Ic", "E1", "Eng/Platform"),
        P("E3", "Ic", "E1", "Eng/Product"),
    ]
    teams = by_key(build_teams(people, DEPARTMENT, FIELDS))
    assert teams["department:Eng"].contributors == ()
    assert teams["department:Eng"].lead_email == "e1@example.com"
    # Eng/Product's only member E3 is its lead.
    assert teams["department:Eng/Product"].lead_email == "e3@example.com"


def test_most_senior_ties_go_to_the_smaller_employee_id() -> None:
    people = [P("E7", "Root A", None, "Ops"), P("E5", "Root B", None, "Ops")]
    (team,) = build_teams(people, DEPARTMENT, FIELDS).teams
    assert team.lead_employee_id == "E5"


def test_a_custom_separator_splits_paths() -> None:
    people = [P("E1", "A", None, "Eng > Data"), P("E2", "B", "E1", "Eng > Data")]
    settings = MappingSettings(strategy="department", department_separator=">")
    assert [t.key for t in build_teams(people, settings, FIELDS).teams] == [
        "department:Eng",
        "department:Eng>Data",
    ]


def test_people_without_a_department_are_noted() -> None:
    people = [P("E1", "A", None, "Eng"), P("E2", "B", "E1", None), P("E3", "C", "E1", " ")]
    result = build_teams(people, DEPARTMENT, FIELDS)
    assert "2 people have no department and belong to no team" in result.notes


def test_one_person_without_a_department_is_noted_in_the_singular() -> None:
    people = [P("E1", "A", None, "Eng"), P("E2", "B", "E1", None)]
    result = build_teams(people, DEPARTMENT, FIELDS)
    assert "1 person has no department and belongs to no team" in result.notes


PARENT_FIELDS = FieldSettings(department_parent="Parent Unit", department_lead="Unit Lead")


def test_parent_column_builds_the_unit_tree_without_splitting_paths() -> None:
    people = [
        P("E1", "Cto", None, "Engineering", extra={"Parent Unit": ""}),
        P("E2", "Head", "E1", "Data/ML", extra={"Parent Unit": "Engineering"}),
        P("E3", "Ic", "E2", "Data/ML", extra={"Parent Unit": ""}),
        P("E4", "Ic", "E1", "Apps", extra={"Parent Unit": "Product"}),  # Product: nobody in it
    ]
    result = build_teams(people, DEPARTMENT, PARENT_FIELDS)
    assert [(t.key, t.parent_key, t.lead_employee_id) for t in result.teams] == [
        ("department:Engineering", None, "E1"),
        ("department:Product", None, "E4"),
        ("department:Apps", "department:Product", "E4"),
        ("department:Data/ML", "department:Engineering", "E2"),
    ]
    assert result.problems == ()


def test_disagreeing_parent_values_are_a_problem_naming_rows_and_column() -> None:
    people = [
        P("E1", "A", None, "Eng"),
        P("E2", "B", "E1", "Data", extra={"Parent Unit": "Eng"}),
        P("E3", "C", "E1", "Data", extra={"Parent Unit": "Product"}),
    ]
    (problem,) = build_teams(people, DEPARTMENT, PARENT_FIELDS).problems
    assert problem.field == "Parent Unit"
    assert problem.location == "people.csv row E2"
    assert "one parent unit for 'Data'" in str(problem)
    assert "'Product' (people.csv row E3)" in str(problem)


def test_parent_cycles_and_self_parents_are_problems() -> None:
    people = [
        P("E1", "A", None, "X", extra={"Parent Unit": "Y"}),
        P("E2", "B", "E1", "Y", extra={"Parent Unit": "X"}),
        P("E3", "C", "E1", "Z", extra={"Parent Unit": "Z"}),
    ]
    result = build_teams(people, DEPARTMENT, PARENT_FIELDS)
    messages = [str(p) for p in result.problems]
    assert any("cycle of parent units" in m and "X -> Y -> X" in m for m in messages)
    assert any("other than 'Z' itself" in m for m in messages)
    assert {t.key for t in result.teams} == {"department:X", "department:Y", "department:Z"}


@pytest.mark.parametrize("lead", ["E3", "e3@example.com", "E3@EXAMPLE.COM"])
def test_lead_column_by_employee_id_or_email(lead: str) -> None:
    people = [
        P("E1", "Boss", None, "Eng", extra={"Unit Lead": lead}),
        P("E2", "Ic", "E1", "Eng", extra={"Unit Lead": ""}),
        P("E3", "Elsewhere", "E1", "Sales"),
    ]
    teams = by_key(build_teams(people, DEPARTMENT, PARENT_FIELDS))
    assert teams["department:Eng"].lead_email == "e3@example.com"


def test_lead_column_conflicts_and_unknown_leads_are_problems() -> None:
    people = [
        P("E1", "Boss", None, "Eng", extra={"Unit Lead": "E1"}),
        P("E2", "Ic", "E1", "Eng", extra={"Unit Lead": "E2"}),
        P("E3", "Ic", "E1", "Sales", extra={"Unit Lead": "ghost@example.com"}),
    ]
    result = build_teams(people, DEPARTMENT, PARENT_FIELDS)
    by_value = {p.value: p for p in result.problems}
    assert set(by_value) == {"E1, E2", "ghost@example.com"}
    assert by_value["ghost@example.com"].location == "people.csv row E3"
    assert by_value["ghost@example.com"].field == "Unit Lead"
    assert "lead of unit 'Sales'" in str(by_value["ghost@example.com"])
    assert "one lead for unit 'Eng'" in str(by_value["E1, E2"])
    assert result.teams == ()


# ---------------------------------------------------------------- properties


def contributions(team_map: TeamMap) -> Counter[str]:
    return Counter(email for team in team_map.teams for email in team.contributors)


def assert_well_formed(team_map: TeamMap) -> None:
    seen: set[str] = set()
    for team in team_map.teams:
        assert team.parent_key is None or team.parent_key in seen, "parent after child"
        assert team.key not in seen
        seen.add(team.key)
        assert list(team.contributors) == sorted(set(team.contributors))
    names = [t.name.casefold() for t in team_map.teams]
    assert len(names) == len(set(names))


@settings(max_examples=150, deadline=None)
@given(org_forests(), st.integers(min_value=0, max_value=4))
def test_manager_strategy_every_managed_person_is_in_exactly_one_team(
    people: list[Person], min_size: int
) -> None:
    result = build_teams(people, MappingSettings(min_team_size=min_size), FIELDS)
    assert_well_formed(result)
    counts = contributions(result)
    for person in people:
        expected = 1 if person.manager_id is not None else 0
        assert counts[person.email] == expected, person
    leads = {t.lead_employee_id for t in result.teams}
    managers = {p.manager_id for p in people if p.manager_id is not None}
    if min_size == 0:
        assert leads == managers


@settings(max_examples=150, deadline=None)
@given(org_forests(), st.integers(min_value=0, max_value=4))
def test_department_strategy_every_placed_person_is_in_exactly_one_team(
    people: list[Person], min_size: int
) -> None:
    result = build_teams(
        people, MappingSettings(strategy="department", min_team_size=min_size), FIELDS
    )
    assert_well_formed(result)
    assert result.problems == ()
    counts = contributions(result)
    for person in people:
        assert counts[person.email] == (1 if person.department else 0), person


@settings(max_examples=100, deadline=None)
@given(org_forests(), st.sampled_from(["manager", "department"]), st.randoms())
def test_same_people_in_any_order_give_the_same_teams(
    people: list[Person], strategy: str, rng: random.Random
) -> None:
    mapping = MappingSettings(strategy="department" if strategy == "department" else "manager")
    shuffled = list(people)
    rng.shuffle(shuffled)
    assert build_teams(people, mapping, FIELDS) == build_teams(shuffled, mapping, FIELDS)


def test_the_json_sample_is_the_same_org_as_the_csv_sample() -> None:
    for stem in ("sample-org", "sample-org-reorg"):
        entries = json.loads((CONFIG / f"{stem}.json").read_text(encoding="utf-8"))
        people = [
            make_person(
                e["Employee_ID"],
                e["Worker"],
                e.get("Manager", {}).get("ID"),
                e["Supervisory_Organization"],
                email=e["Email_-_Work"],
                title=e["Business_Title"],
            )
            for e in entries["Report_Entry"]
            if e["Worker_Status"] == "Active"
        ]
        from_csv = build_teams(sample_people(f"{stem}.csv"), MANAGER, FIELDS)
        assert build_teams(people, MANAGER, FIELDS) == from_csv
        assert len(from_csv.teams) == 13


def test_a_unit_whose_rows_name_many_leads_lists_the_first_20() -> None:
    fields = FieldSettings(department_lead="Unit Lead")
    people = [P("E000", "Boss", None, "Ops")]
    people += [
        P(f"E{i:03d}", "Ic", "E000", "Ops", extra={"Unit Lead": f"E{i:03d}"}) for i in range(1, 31)
    ]
    result = build_teams(people, DEPARTMENT, fields)
    (problem,) = result.problems
    assert "and 10 more" in problem.expected
    assert "and 10 more" in problem.value
    assert "E021" not in problem.expected


def test_many_teams_sharing_a_name_are_noted_with_the_first_20_renames() -> None:
    people = [P("E000", "Boss", None, "Root")]
    for i in range(1, 31):
        people += [P(f"E{i:03d}", "Lead", "E000", "Sales"), P(f"R{i:03d}", "Ic", f"E{i:03d}", "X")]
    result = build_teams(people, MappingSettings(team_name="{department}"), FIELDS)
    (note,) = [n for n in result.notes if "teams are named 'Sales'" in n]
    assert note.endswith("and 9 more")


# ---------------------------------------------------------------- people in no team (issue 11)


def at(person: Person, line: int) -> Person:
    return person._replace(at=f"hr.csv line {line}")


def test_people_in_no_team_are_listed_with_why_in_export_order() -> None:
    people = [
        at(P("E1", "Ada Root", None, "X"), 2),  # leads E2's team
        at(P("E2", "Ben Lee", "E1", "X"), 3),
        at(P("E6", "Eve Alone", None, "X"), 10),
        at(P("E5", "Dana Gone", "E9", "X"), 9),  # E9 filtered out, no reports
        at(P("E4", "Finn Self", "E4", "X"), 4),
    ]
    result = build_teams(people, MANAGER, FIELDS)
    assert [(u.employee_id, u.location, u.reason) for u in result.unplaced] == [
        ("E4", "hr.csv line 4", "names themselves as manager and nobody reports to them"),
        (
            "E5",
            "hr.csv line 9",
            "their manager 'E9' is not among the people kept (filtered out or absent from "
            "the export) and nobody reports to them",
        ),
        ("E6", "hr.csv line 10", "no manager and nobody reports to them"),
    ]
    assert str(result.unplaced[2]) == (
        "Eve Alone (E6, hr.csv line 10): no manager and nobody reports to them"
    )


def test_department_strategy_lists_people_without_a_department() -> None:
    people = [P("E1", "A", None, "Eng"), at(P("E2", "B", "E1", None), 3)]
    result = build_teams(people, DEPARTMENT, FIELDS)
    assert [(u.employee_id, u.reason) for u in result.unplaced] == [("E2", "no department")]


@settings(max_examples=150, deadline=None)
@given(
    org_forests(),
    st.sampled_from(["manager", "department"]),
    st.integers(min_value=0, max_value=4),
)
def test_every_person_is_in_a_team_or_listed_as_unplaced(
    people: list[Person], strategy: str, min_size: int
) -> None:
    mapping = MappingSettings(
        strategy="department" if strategy == "department" else "manager", min_team_size=min_size
    )
    result = build_teams(people, mapping, FIELDS)
    placed = {e for t in result.teams for e in (*t.contributors, t.lead_email)}
    unplaced = {u.email for u in result.unplaced}
    assert placed.isdisjoint(unplaced)
    assert placed | unplaced == {p.email for p in people}


# ---------------------------------------------------------------- department leads (issue 11)


def test_a_department_lead_is_a_manager_before_a_more_senior_individual_contributor() -> None:
    people = [
        P("E1", "Top Technician", None, "Production"),  # no manager, no reports
        P("E2", "Plant Boss", "E9", "Production"),  # below the CEO: less senior than E1
        P("E3", "Worker", "E2", "Production"),
        P("E9", "Ceo", None, "Board"),
    ]
    result = build_teams(people, DEPARTMENT, FIELDS)
    assert by_key(result)["department:Production"].lead_employee_id == "E2"
    assert result.leads_without_reports == ()


def test_a_unit_of_individual_contributors_is_led_as_before_and_warned() -> None:
    people = [at(P("E7", "Root A", None, "Ops"), 2), at(P("E5", "Root B", None, "Ops"), 3)]
    result = build_teams(people, DEPARTMENT, FIELDS)
    assert result.teams[0].lead_employee_id == "E5"
    assert result.leads_without_reports == (
        LeadWithoutReports("Ops", "E5", "Root B", "hr.csv line 3"),
    )
    assert "unit 'Ops' is led by Root B (E5, hr.csv line 3), who has no reports" in str(
        result.leads_without_reports[0]
    )


def test_a_lead_from_the_lead_column_is_never_warned() -> None:
    fields = FieldSettings(department_lead="Unit Lead")
    people = [
        P("E1", "A", None, "Ops", extra={"Unit Lead": "E2"}),
        P("E2", "B", None, "Ops", extra={"Unit Lead": "E2"}),
    ]
    result = build_teams(people, DEPARTMENT, fields)
    assert result.teams[0].lead_employee_id == "E2"
    assert result.leads_without_reports == ()


def test_an_empty_department_separator_means_no_nesting() -> None:
    people = [
        P("E1", "A", None, "Eng/Data"),
        P("E2", "B", "E1", "Eng/Data"),
        P("E3", "C", "E1", "Eng"),
    ]
    settings_ = MappingSettings(
        strategy="department", team_name="{department}", department_separator=""
    )
    result = build_teams(people, settings_, FIELDS)
    assert [(t.key, t.parent_key, t.name) for t in result.teams] == [
        ("department:Eng", None, "Eng"),
        ("department:Eng/Data", None, "Eng/Data"),
    ]


def test_a_person_whose_manager_was_filtered_out_is_told_so() -> None:
    # The reader drops a filtered-out manager (manager_id None); the row still names them.
    people = [P("E1", "A", None, "X", extra={"manager_id": "E9"})]
    (unplaced,) = build_teams(people, MANAGER, FIELDS).unplaced
    assert unplaced.reason == (
        "their manager 'E9' (manager_id) is not among the people kept (filtered out) "
        "and nobody reports to them"
    )


def test_a_manager_given_by_name_and_filtered_out_is_named() -> None:
    fields = FieldSettings(manager_id="", manager_name="Boss Name")
    people = [P("E1", "A", None, "X", extra={"Boss Name": "Ada Gone"})]
    (unplaced,) = build_teams(people, MANAGER, fields).unplaced
    assert unplaced.reason.startswith("their manager 'Ada Gone' (Boss Name) is not among")


def test_people_who_make_not_one_team_are_a_problem_naming_file_and_one_person() -> None:
    # Nobody has a report: every person is "top of the org", and process would archive
    # every team in DX (on a first run it would say "in sync" while DX got nothing).
    people = [make_person(f"E{i}", f"Person {i}", None, None) for i in range(3)]
    team_map = build_teams(people, MappingSettings(), FieldSettings())
    assert team_map.teams == ()
    problem = no_team_problem("people.csv", len(people), team_map, "manager")
    assert problem is not None
    assert problem.startswith("people.csv: 3 people but not one team")
    assert "mapping.strategy = 'manager'" in problem
    assert team_map.unplaced[0].reason in problem
    assert no_team_problem("people.csv", 0, TeamMap(teams=()), "manager") is None


def _reference_manager_teams(people: list[Person]) -> list[tuple[str, str, str | None, list[str]]]:
    """The manager strategy as plainly as it can be said (no folding, the default name):
    (key, name, parent key, contributors) per team, parents first by depth, then key."""
    by_id = {p.employee_id: p for p in people}
    reports: dict[str, set[str]] = {}
    for p in people:
        if p.manager_id in by_id and p.manager_id != p.employee_id:
            reports.setdefault(p.manager_id, set()).add(p.email)

    def parent(lead_id: str) -> str | None:
        manager = by_id[lead_id].manager_id
        return manager if manager in reports and manager != lead_id else None

    def depth(lead_id: str) -> int:
        up = parent(lead_id)
        return 0 if up is None else 1 + depth(up)

    order = sorted(reports, key=lambda i: (depth(i), f"manager:{i}"))
    names = {i: f"{by_id[i].name}'s team" for i in order}
    taken = {name.casefold() for name in names.values()}
    for folded in sorted(taken):
        group = [i for i in order if names[i].casefold() == folded]
        suffix = 2
        for i in group[1:]:
            while f"{names[i]} ({suffix})".casefold() in taken:
                suffix += 1
            names[i] = f"{names[i]} ({suffix})"
            taken.add(names[i].casefold())
    return [
        (
            f"manager:{i}",
            names[i],
            None if parent(i) is None else f"manager:{parent(i)}",
            sorted(reports[i]),
        )
        for i in order
    ]


def assert_teams_match_the_reference(people: list[Person]) -> None:
    """build_teams makes the teams the plain reference makes, and leaves out only who
    is in none of them."""
    result = build_teams(people, MANAGER, FIELDS)
    got = [(t.key, t.name, t.parent_key, list(t.contributors)) for t in result.teams]
    assert got == _reference_manager_teams(people)
    placed = {e for t in result.teams for e in (*t.contributors, t.lead_email)}
    left_out = [p.email for p in people if p.email not in placed]
    assert sorted(u.email for u in result.unplaced) == sorted(left_out)


@settings(max_examples=200, deadline=None)
@given(org_forests(max_size=60), st.data())
def test_manager_teams_match_the_plain_reference(people: list[Person], data: st.DataObject) -> None:
    # Some e-mails listed twice (in one team, or two), a few people naming themselves:
    # the paths build_teams takes only when it must.
    for _ in range(data.draw(st.integers(0, 3))):
        i, j = (
            data.draw(st.integers(0, len(people) - 1)),
            data.draw(st.integers(0, len(people) - 1)),
        )
        people[i] = people[i]._replace(email=people[j].email)
    if data.draw(st.booleans()):
        i = data.draw(st.integers(0, len(people) - 1))
        people[i] = people[i]._replace(manager_id=people[i].employee_id)
    assert_teams_match_the_reference(people)


@settings(max_examples=200, deadline=None)
@given(org_forests(max_size=40), st.data())
def test_manager_teams_with_managers_missing_match_the_plain_reference(
    people: list[Person], data: st.DataObject
) -> None:
    # Managers nobody in the export is, and a lead naming themselves: the grouping's
    # row-by-row path, beside the bulk one the test above takes most of the time.
    for _ in range(data.draw(st.integers(1, 3))):
        i = data.draw(st.integers(0, len(people) - 1))
        people[i] = people[i]._replace(manager_id=data.draw(st.sampled_from(["X1", "X2"])))
    if data.draw(st.booleans()):
        i = data.draw(st.integers(0, len(people) - 1))
        people[i] = people[i]._replace(manager_id=people[i].employee_id)
    assert_teams_match_the_reference(people)
