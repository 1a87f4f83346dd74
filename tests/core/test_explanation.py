"""Tests for hrsync/core/report/explanation.py: finding the person, deriving fields, the chain."""

from __future__ import annotations

import pytest

from hrsync.core.export.filters import build_row_filter
from hrsync.core.export.rows import SourceRow
from hrsync.core.people.pipeline import HeldPerson
from hrsync.core.report.explanation import (
    DxUser,
    derive_fields,
    dx_user_line,
    explain,
    find_excluded,
    find_held,
    find_person,
    manager_chain,
    people_named,
    suggestions,
)
from hrsync.core.settings import FieldSettings, FilterSettings
from hrsync.core.teams.identity import TeamRow
from hrsync.core.teams.mapping import DesiredTeam, TeamMap
from hrsync.dx.models import DxTeam
from tests.strategies import make_person

PEOPLE = [
    make_person("E1", "Ada Root", None, "X"),
    make_person("E2", "Ben Mid", "E1", "X"),
    make_person("E3", "Chen Low", "E2", "X", email="Chen.Low@example.com"),
    make_person("E4", "Dana Away", "E9", "X"),
]


@pytest.mark.parametrize(
    ("query", "found"),
    [("E3", "E3"), (" E3 ", "E3"), ("chen.low@EXAMPLE.com", "E3"), ("e3", None), ("E5", None)],
)
def test_find_person_by_id_or_email(query: str, found: str | None) -> None:
    person = find_person(PEOPLE, query)
    assert (person.employee_id if person else None) == found


NAMED = [
    make_person("N1", "Daniel Kim", None, "X"),
    make_person("N2", "José Álvarez", "N1", "X"),
    make_person("N3", "Jose Alvarez", "N1", "X"),
    make_person("N4", "Sam  Lee", "N1", "X"),
    make_person("N5", "sam lee", "N1", "X"),
]


@pytest.mark.parametrize(
    ("query", "found"),
    [
        ("Daniel Kim", ["N1"]),
        ("  daniel KIM ", ["N1"]),  # no exact match: any case
        ("José Álvarez", ["N2"]),  # exact wins over the accent-free one
        ("Jose Alvarez", ["N3"]),
        ("jose alvarez", ["N2", "N3"]),  # neither exact: both, to choose by id
        ("JOSÉ ÁLVAREZ", ["N2", "N3"]),
        ("sam lee", ["N5"]),
        ("Sam Lee", ["N4", "N5"]),  # spaces collapsed, then any case
        ("Daniel", []),  # a name, not a part of one
        ("", []),
    ],
)
def test_people_are_found_by_name_exact_first_then_any_case_and_accent(
    query: str, found: list[str]
) -> None:
    assert [p.employee_id for p in people_named(NAMED, query)] == found


def test_suggestions_are_close_ids_and_emails() -> None:
    assert "E2" in suggestions(PEOPLE, "E22")
    assert suggestions(PEOPLE, "zzzzzz") == []


def test_suggestions_are_close_names_too() -> None:
    # Asked by the name a person goes by, where the export holds their legal one.
    people = [make_person("E5", "Elizabeth O'Neill", None, "X")]
    assert suggestions(people, "Liz O'Neill") == ["Elizabeth O'Neill"]
    assert "Chen Low" in suggestions(PEOPLE, "chen lo")


@pytest.mark.parametrize(
    ("who", "chain"), [("E3", ["E2", "E1"]), ("E1", []), ("E4", [])]
)  # fmt: skip
def test_manager_chain_up_to_the_top(who: str, chain: list[str]) -> None:
    person = find_person(PEOPLE, who)
    assert person is not None
    assert [p.employee_id for p in manager_chain(person, PEOPLE)] == chain


def test_derived_fields_show_column_or_template_and_value() -> None:
    person = make_person(
        "E7", "Zoë Brandt", None, None, extra={"First": "Zoë", "Last": "Van Brandt"}
    )
    settings = FieldSettings(
        employee_id="Employee ID",
        email="{First|ascii|lower}.{Last|nospace|lower}@example.com",
        name="{First} {Last}",
        manager_id="",
    )
    derived = {d.field: d for d in derive_fields(person, settings)}
    assert set(derived) == {"employee_id", "email", "name"}
    assert derived["email"].template and derived["email"].value == "zoe.vanbrandt@example.com"
    assert derived["name"].value == "Zoë Van Brandt"
    assert not derived["employee_id"].template and derived["employee_id"].value == "E7"


def test_a_shared_reference_id_shows_the_dx_team_the_plan_keeps() -> None:
    # Two DX teams hold the team's reference_id: the smallest id holds it (the plan
    # archives the other), so that is the DX side `explain` shows, whatever the order.
    ada = PEOPLE[0]
    team = DesiredTeam("manager:E1", "Root", ada.email, "E1", None, (PEOPLE[1].email,))
    row = TeamRow("manager:E1", "ref-root", "Root", ada.email, None, None, team.contributors)
    holder = DxTeam(id="1", name="Root", parent_id=None, reference_id="ref-root")
    extra = DxTeam(id="2", name="Root copy", parent_id=None, reference_id="ref-root")
    for listed in ([holder, extra], [extra, holder]):
        text = explain(ada, PEOPLE, TeamMap(teams=(team,)), FieldSettings(), rows=[row],
                       dx_teams=listed, sent={}, strategy="manager")  # fmt: skip
        assert 'DX: team 1 "Root"' in text, text


def test_whether_dx_counts_the_person() -> None:
    ignored = DxUser(False, "DX ignored this e-mail in the import of 2026-11-27")
    assert dx_user_line(ignored) == (
        "  not a DX user yet: DX ignored this e-mail in the import of 2026-11-27"
    )
    assert dx_user_line(DxUser(True, "a team lead DX accepted on 2026-11-27")) == (
        "  a DX user: a team lead DX accepted on 2026-11-27"
    )
    assert dx_user_line(None) is None
    assert "not known yet" in (dx_user_line(DxUser(None, None)) or "")


def _held(employee_id: str, email: str, name: str) -> HeldPerson:
    return HeldPerson(
        row=3,
        location="people.csv line 4",
        employee_id=employee_id,
        email=email,
        name=name,
        department=None,
        manager_id=None,
        manager_usable=True,
        node=True,
        problems=(),
        values={},
    )


@pytest.mark.parametrize(
    ("query", "found"),
    [
        ("E010", "E010"),
        ("PRIYA@example.com", "E010"),
        ("Priya Raman", "E010"),  # by name, as a person is
        ("priya  raman", "E010"),
        ("E011", None),
        ("Priya", None),
    ],
)
def test_a_held_person_is_found_by_id_e_mail_or_name(query: str, found: str | None) -> None:
    held = [_held("E010", "priya@example.com", "Priya Raman"), _held("", "x@example.com", "")]
    person = find_held(held, query)
    assert (person.employee_id if person is not None else None) == found


LEFT_FIELDS = FieldSettings(
    employee_id="ID",
    email="Email",
    name="{First name} {Last name}",
    manager_id="",
    manager_name="Supervisor",
    department="",
    status="Status",
)
LEFT_ROWS = [
    SourceRow(f"people.csv line {n + 2}", dict(zip(("ID", "First name", "Last name",
        "Email", "Status"), values, strict=True)))
    for n, values in enumerate([
        ("1", "Petra", "Kaiser", "petra@example.com", "inactive"),
        ("2", "Jörg", "Lang", "joerg@example.com", "inactive"),
        ("3", "Jörg", "Lang", "joerg.lang@example.com", "inactive"),
        ("4", "Anna", "Kaiser", "anna@example.com", "active"),
    ])
]  # fmt: skip


@pytest.mark.parametrize(
    ("query", "found"),
    [
        ("Petra Kaiser", "people.csv line 2"),  # the name a person asks by
        ("petra  KAISER", "people.csv line 2"),
        ("1", "people.csv line 2"),
        ("Jörg Lang", None),  # two rows share the name: ask by id or e-mail
        ("Anna Kaiser", None),  # kept by the filters: not left out
    ],
)
def test_a_row_the_filters_drop_is_found_by_its_name(query: str, found: str | None) -> None:
    row_filter, _ = build_row_filter(
        FilterSettings(active_status=("active",)), LEFT_FIELDS, ("ID", "Status")
    )
    excluded = find_excluded(LEFT_ROWS, LEFT_FIELDS, row_filter, query)
    assert (excluded.location if excluded else None) == found
