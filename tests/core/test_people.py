"""Rows to people: normalisation, filters, and validation that reports every problem."""

from __future__ import annotations

import copy
import inspect
import pickle
import re
from collections.abc import Hashable, Sequence
from dataclasses import dataclass
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hrsync.core.export.rows import MAX_FIELD_CHARS, RowTable, RowValues, SourceRow
from hrsync.core.export.templates import template_names
from hrsync.core.people import (
    Directory,
    Person,
    PersonValues,
    Problem,
    normalise_name,
    read_people,
    read_value,
)
from hrsync.core.people.columns import ExportColumns, lower_each, normalise_column
from hrsync.core.people.emails import (
    email_fault,
    is_valid_email,
    normalise_email,
    valid_emails,
)
from hrsync.core.settings import FieldSettings, FilterSettings, SourceSettings
from hrsync.core.text import collapse_whitespace
from hrsync.sources.base import SourceError
from hrsync.sources.open import open_export

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
BY_EMAIL_COLUMNS = (
    "Employee ID",
    "Full Name",
    "Work Email",
    "Manager Email",
    "Department",
    "Status",
)
BY_EMAIL = FieldSettings(
    employee_id="Employee ID",
    email="Work Email",
    name="Full Name",
    manager_id="",
    manager_email="Manager Email",
    department="Department",
    status="Status",
)

Row = tuple[str, str, str, str, str, str]  # id, name, email, manager, department, status


def row(eid: str, mgr: str = "", *, email: str | None = None, status: str = "Active") -> Row:
    name = f"Person {eid}" if eid else "Nobody"
    return (eid, name, f"{eid.lower()}@example.com" if email is None else email, mgr, "Eng", status)


def source(rows: Sequence[Sequence[str]], columns: Sequence[str] = COLUMNS) -> list[SourceRow]:
    """Rows as the CSV reader gives them: data starts on line 2, after the header."""
    return [
        SourceRow(f"people.csv line {i + 2}", dict(zip(columns, values, strict=True)))
        for i, values in enumerate(rows)
    ]


def read(
    rows: Sequence[Sequence[str]],
    *,
    fields: FieldSettings = FIELDS,
    filters: FilterSettings | None = None,
    columns: Sequence[str] = COLUMNS,
) -> Directory:
    return read_people(
        "people.csv", columns, source(rows, columns), fields, filters or FilterSettings()
    )


ORG = [row("E1"), row("E2", "E1"), row("E3", "E1"), row("E4", "E2"), row("E5", "E4")]


@dataclass(frozen=True)
class Expect:
    location: str
    field: str
    value: str
    says: str  # a phrase of `expected`


def assert_reported(problems: Sequence[Problem], expect: Expect) -> None:
    found = [
        p
        for p in problems
        if (p.location, p.field, p.value) == (expect.location, expect.field, expect.value)
        and expect.says in p.expected
    ]
    assert len(found) == 1, f"{expect} not in {[str(p) for p in problems]}"
    text = str(found[0])
    assert text.startswith(f"{expect.location}: {expect.field} ")
    assert text.endswith(f"got {expect.value!r}")


# ---------------------------------------------------------------- each problem, table-driven

L = "people.csv line "
CASES: dict[str, tuple[list[Row], list[Expect]]] = {
    "missing employee id": (
        [*ORG, row("", "E1", email="x@example.com")],
        [Expect(L + "7", "Employee ID", "", "must not be empty")],
    ),
    "duplicate employee id names both rows": (
        [*ORG, row("E3", "E1", email="other@example.com")],
        [
            Expect(
                L + "7 (first at people.csv line 4)",
                "Employee ID",
                "E3",
                "another row holds the same",
            ),
        ],
    ),
    "duplicate e-mail, in any case": (
        [*ORG, row("E6", "E1", email="E2@Example.COM")],
        [
            Expect(
                L + "7 (first at people.csv line 3)",
                "Work Email",
                "e2@example.com",
                "another row holds the same",
            ),
        ],
    ),
    "missing e-mail": (
        [*ORG, row("E6", "E1", email="  ")],
        [Expect(L + "7", "Work Email", "", "must not be empty")],
    ),
    "invalid e-mail: no domain": (
        [*ORG, row("E6", "E1", email="jane.doe@")],
        [Expect(L + "7", "Work Email", "jane.doe@", "must be an e-mail address")],
    ),
    "invalid e-mail: display name": (
        [*ORG, row("E6", "E1", email="Jane <jane@example.com>")],
        [Expect(L + "7", "Work Email", "jane <jane@example.com>", "must be an e-mail address")],
    ),
    "invalid e-mail: no dot in the domain": (
        [*ORG, row("E6", "E1", email="jane@localhost")],
        [Expect(L + "7", "Work Email", "jane@localhost", "must be an e-mail address")],
    ),
    "manager id that matches nobody": (
        [*ORG, row("E6", "E99")],
        [Expect(L + "7", "Manager ID", "E99", "employee id of a person in the export")],
    ),
    "own manager": (
        [*ORG, row("E6", "E6")],
        [Expect(L + "7", "Manager ID", "E6", "cannot be their own manager")],
    ),
    "manager cycle, printed as a chain from the smallest id": (
        [*ORG, row("E8", "E6"), row("E7", "E8"), row("E6", "E7")],
        [
            Expect(
                L + "9 (cycle with people.csv line 8, people.csv line 7)",
                "Manager ID",
                "E6 → E7 → E8 → E6",
                "must not form a reporting cycle",
            )
        ],
    ),
    "two-person cycle": (
        [row("A", "B"), row("B", "A")],
        [
            Expect(
                L + "2 (cycle with people.csv line 3)", "Manager ID", "A → B → A", "reporting cycle"
            )
        ],
    ),
}


@pytest.mark.parametrize("case", list(CASES))
def test_each_problem_names_row_field_and_value(case: str) -> None:
    rows, expected = CASES[case]
    directory = read(rows)
    assert not directory.ok
    for expect in expected:
        assert_reported(directory.problems, expect)
    assert len(directory.problems) == len(expected)


BY_EMAIL_CASES: dict[str, tuple[list[Row], list[Expect]]] = {
    "manager e-mail that matches nobody": (
        [row("E1"), row("E2", "ghost@example.com")],
        [Expect(L + "3", "Manager Email", "ghost@example.com", "e-mail of a person")],
    ),
    "own manager by e-mail": (
        [row("E1"), row("E2", "E2@example.com")],
        [Expect(L + "3", "Manager Email", "e2@example.com", "cannot be their own manager")],
    ),
    "cycle through e-mails prints ids": (
        [row("E1", "e2@example.com"), row("E2", "e1@example.com")],
        [
            Expect(
                L + "2 (cycle with people.csv line 3)",
                "Manager Email",
                "E1 → E2 → E1",
                "reporting cycle",
            )
        ],
    ),
}


@pytest.mark.parametrize("case", list(BY_EMAIL_CASES))
def test_problems_with_managers_given_by_email(case: str) -> None:
    rows, expected = BY_EMAIL_CASES[case]
    directory = read(rows, fields=BY_EMAIL, columns=BY_EMAIL_COLUMNS)
    for expect in expected:
        assert_reported(directory.problems, expect)
    assert len(directory.problems) == len(expected)


def test_missing_required_columns_are_one_whole_file_problem_with_suggestions() -> None:
    columns = ("Employee ID", "Full Name", "Work E-mail", "Manager ID", "Department", "Status")
    directory = read([row("E1")], columns=columns)
    [problem] = directory.problems
    assert problem.location == "people.csv"
    assert problem.field == "Work Email"
    assert problem.value == ", ".join(columns)
    assert "source.fields.email, did you mean 'Work E-mail'?" in problem.expected
    assert directory.people == ()


def test_every_missing_column_is_listed_in_the_one_problem() -> None:
    columns = ("id", "mail", "dept")
    directory = read([("1", "a@x.io", "D")], columns=columns)
    [problem] = directory.problems
    assert problem.field == "Employee ID, Work Email, Full Name, Manager ID, Department, Status"
    assert problem.value == "id, mail, dept"


@pytest.mark.parametrize(
    ("filters", "expect"),
    [
        (
            FilterSettings(root="E404"),
            Expect("people.csv", "filter.root", "E404", "must be the employee id or e-mail"),
        ),
        (
            FilterSettings(root="E3"),
            Expect("people.csv", "filter.root", "E3", "excluded by filter.active_status"),
        ),
        (
            FilterSettings(include={"departmnt": ("Eng",)}),
            Expect("people.csv", "filter.include.departmnt", "departmnt", "did you mean"),
        ),
        (
            FilterSettings(exclude={"Title": ("*",)}),
            Expect("people.csv", "filter.exclude.Title", "Title", "must name a column"),
        ),
    ],
)
def test_filter_settings_that_match_nothing_are_fatal(
    filters: FilterSettings, expect: Expect
) -> None:
    rows = [row("E1"), row("E2", "E1"), row("E3", "E1", status="Terminated")]
    directory = read(rows, filters=filters)
    assert not directory.ok
    assert_reported(directory.problems, expect)


def test_every_problem_is_reported_at_once() -> None:
    rows = [
        row("E1"),
        row("", "E1", email="a@example.com"),
        row("E3", "E1", email="bad@"),
        row("E4", "E77"),
        row("E5", "E5"),
        row("E1", "E4", email="dup@example.com"),
    ]
    problems = read(rows).problems
    fields_and_lines = {(p.location, p.field) for p in problems}
    assert fields_and_lines == {
        (L + "3", "Employee ID"),
        (L + "4", "Work Email"),
        (L + "5", "Manager ID"),
        (L + "6", "Manager ID"),
        (L + "7 (first at people.csv line 2)", "Employee ID"),
    }
    lines = [int(p.location.split(" ")[2]) for p in problems]
    assert lines == sorted(lines)


# ---------------------------------------------------------------- people and normalisation


def test_people_are_normalised_and_kept_in_export_order() -> None:
    rows = [
        (" E1 ", "  Ada \t  Okafor ", " Ada.Okafor@Example.COM ", "", " Executive ", "active"),
        ("E2", "Ben\u00a0 Lee", "ben@example.com", " E1", "Platform  Team", " Active "),
    ]
    directory = read(rows)
    assert directory.ok and directory.warnings == ()
    ada, ben = directory.people
    assert (ada.employee_id, ada.name, ada.email, ada.manager_id) == (
        "E1",
        "Ada Okafor",
        "ada.okafor@example.com",
        None,
    )
    assert (ada.department, ada.status, ada.location) == ("Executive", "active", L + "2")
    assert (ben.name, ben.manager_id, ben.department) == ("Ben Lee", "E1", "Platform Team")
    assert ben.attributes["Department"] == "Platform  Team"  # trimmed only
    assert ben.attributes["Status"] == "Active"


def test_managers_given_by_email_resolve_to_employee_ids() -> None:
    rows = [row("E1"), row("E2", " E1@Example.com "), row("E3", "e2@example.com")]
    directory = read(rows, fields=BY_EMAIL, columns=BY_EMAIL_COLUMNS)
    assert directory.ok
    assert [(p.employee_id, p.manager_id) for p in directory.people] == [
        ("E1", None),
        ("E2", "E1"),
        ("E3", "E2"),
    ]


def test_manager_id_wins_over_a_disagreeing_manager_email_with_a_warning() -> None:
    columns = (*COLUMNS, "Manager Email")
    fields = FieldSettings(
        employee_id="Employee ID",
        email="Work Email",
        name="Full Name",
        manager_id="Manager ID",
        manager_email="Manager Email",
        department="Department",
        status="Status",
    )
    rows = [(*row("E1"), ""), (*row("E2"), ""), (*row("E3", "E1"), "e2@example.com")]
    directory = read(rows, fields=fields, columns=columns)
    assert directory.ok
    assert directory.people[2].manager_id == "E1"
    [warning] = directory.warnings
    assert (warning.location, warning.field, warning.value) == (
        L + "4",
        "Manager Email",
        "e2@example.com",
    )
    assert "employee id wins" in warning.expected


def test_an_empty_name_is_a_warning_and_the_email_stands_in() -> None:
    directory = read([("E1", "  ", "e1@example.com", "", "Eng", "Active")])
    assert directory.ok
    assert directory.people[0].name == "e1@example.com"
    [warning] = directory.warnings
    assert str(warning).startswith("warning: people.csv line 2: Full Name ")


# ---------------------------------------------------------------- filters


def test_filtered_rows_are_not_errors_and_are_counted_by_reason() -> None:
    rows = [
        *ORG,
        ("", "Gone Person", "", "E404", "Eng", "Terminated"),  # no id, no e-mail: not a problem
        row("E7", "E1", email="not-an-email", status="Leave"),
        row("E2", "E1", status="Terminated"),  # an old row for a rehired id
    ]
    directory = read(rows)
    assert directory.ok, [str(p) for p in directory.problems]
    assert [p.employee_id for p in directory.people] == ["E1", "E2", "E3", "E4", "E5"]
    assert directory.excluded == 3
    assert directory.excluded_by_reason == {"filter.active_status": 3}
    assert directory.rows_read == 8


def test_a_manager_who_is_filtered_out_leaves_a_warning_not_an_error() -> None:
    rows = [row("E1"), row("E2", "E1", status="Terminated"), row("E3", "E2"), row("E4", "E3")]
    directory = read(rows)
    assert directory.ok
    managers = {p.employee_id: p.manager_id for p in directory.people}
    assert managers == {"E1": None, "E3": None, "E4": "E3"}
    [warning] = directory.warnings
    assert not warning.fatal
    assert (warning.location, warning.field, warning.value) == (L + "4", "Manager ID", "E2")
    text = str(warning)
    assert text.startswith("warning: people.csv line 4: Manager ID names Person E2 (E2)")
    assert "excluded by filter.active_status" in text
    assert "Person E3 (E3) stays in their team" in text


def test_status_filter_ignores_case_and_an_empty_list_keeps_everyone() -> None:
    rows = [row("E1", status="ACTIVE"), row("E2", "E1", status="Terminated")]
    assert [p.employee_id for p in read(rows).people] == ["E1"]
    everyone = read(rows, filters=FilterSettings(active_status=()))
    assert [p.employee_id for p in everyone.people] == ["E1", "E2"]
    on_leave = read(rows, filters=FilterSettings(active_status=("active", "terminated")))
    assert len(on_leave.people) == 2


ROOTED = [
    row("E1"),  # CEO
    row("E2", "E1"),  # CTO
    row("E3", "E2"),
    row("E4", "E3", status="Terminated"),  # a manager who left
    row("E5", "E4"),  # still in the CTO's org
    row("E6", "E5"),
    row("E7", "E1"),  # CFO, outside
    row("E8", "E7"),
]


@pytest.mark.parametrize("root", ["E2", "e2@example.com", " E2@EXAMPLE.com "])
def test_root_keeps_only_the_org_under_one_person(root: str) -> None:
    directory = read(ROOTED, filters=FilterSettings(root=root))
    assert directory.ok
    managers = {p.employee_id: p.manager_id for p in directory.people}
    # E2's own manager is cut; E5 keeps its place in the org though its manager left.
    assert managers == {"E2": None, "E3": "E2", "E5": None, "E6": "E5"}
    assert directory.excluded_by_reason == {"filter.active_status": 1, "filter.root": 3}
    assert directory.excluded == 4
    assert [w.location for w in directory.warnings] == [L + "6"]  # about E5 only


def test_warnings_about_people_outside_the_root_are_dropped() -> None:
    rows = [*ROOTED, row("E9", "E7", status="Terminated"), row("E10", "E9")]
    directory = read(rows, filters=FilterSettings(root="E2"))
    assert all(w.location != L + "11" for w in directory.warnings)


def test_root_does_not_hide_problems_outside_it() -> None:
    # A typo in a manager id would silently cut a whole branch out of the org; it stays fatal.
    rows = [*ROOTED, row("E9", "E404")]
    directory = read(rows, filters=FilterSettings(root="E2"))
    assert_reported(directory.problems, Expect(L + "10", "Manager ID", "E404", "matches nobody"))


@pytest.mark.parametrize(
    ("filters", "kept"),
    [
        (FilterSettings(include={"department": ("eng*",)}), ["E1", "E2", "E3"]),
        (FilterSettings(include={"Department": ("Engineering",)}), ["E1", "E2"]),
        (FilterSettings(include={"department": ("Sales", "Eng?neering")}), ["E1", "E2", "E4"]),
        (FilterSettings(exclude={"email": ("*@contractor.example.com",)}), ["E1", "E3", "E4"]),
        (
            FilterSettings(include={"department": ("eng*",)}, exclude={"Full Name": ("*bot*",)}),
            ["E1", "E3"],
        ),
    ],
)
def test_include_and_exclude_rules(filters: FilterSettings, kept: list[str]) -> None:
    rows = [
        ("E1", "Ada", "ada@example.com", "", "Engineering", "Active"),
        ("E2", "Build Bot", "bot@contractor.example.com", "E1", "Engineering", "Active"),
        ("E3", "Cy", "cy@example.com", "E1", "Eng Ops", "Active"),
        ("E4", "Di", "di@example.com", "E1", "Sales", "Active"),
    ]
    directory = read(rows, filters=filters)
    assert directory.ok
    assert [p.employee_id for p in directory.people] == kept
    assert directory.excluded == 4 - len(kept)


# ---------------------------------------------------------------- end to end from a file


def test_a_real_world_shaped_csv_reads_cleanly(tmp_path: Path) -> None:
    path = tmp_path / "Workers Export.csv"
    text = (
        "Employee ID;Full Name;Work Email;Manager ID;Department;Status\r\n"
        "E1; Ada  Okafor ;Ada.Okafor@Example.com;;Executive;Active\r\n"
        'E2;"Lee, Ben";ben.lee@example.com;E1;"R&D; Platform";Active\r\n'
        "E3;Old Timer;;E1;Sales;Terminated\r\n"
        "E4;Cy  Rossi;cy.rossi@example.com; E2 ;R&D;Active\r\n"
    )
    path.write_bytes(b"\xef\xbb\xbf" + text.encode())
    export = open_export(SourceSettings(path=path))
    directory = read_people(export.name, export.columns, export.rows(), FIELDS, FilterSettings())
    assert directory.ok and directory.warnings == ()
    assert [
        (p.employee_id, p.name, p.email, p.manager_id, p.location) for p in directory.people
    ] == [
        ("E1", "Ada Okafor", "ada.okafor@example.com", None, "Workers Export.csv line 2"),
        ("E2", "Lee, Ben", "ben.lee@example.com", "E1", "Workers Export.csv line 3"),
        ("E4", "Cy Rossi", "cy.rossi@example.com", "E2", "Workers Export.csv line 5"),
    ]
    assert directory.people[1].department == "R&D; Platform"
    assert directory.excluded_by_reason == {"filter.active_status": 1}


def test_json_rows_without_some_keys_read_as_blank(tmp_path: Path) -> None:
    path = tmp_path / "report.json"
    path.write_text(
        '{"Report_Entry": ['
        '{"ID": "1", "Worker": "Ada", "Email": "ada@x.io", "Status": "Active"},'
        '{"ID": "2", "Worker": "Ben", "Email": "ben@x.io", "Status": "Active",'
        ' "Manager": [{"ID": 1}]}]}',
        encoding="utf-8",
    )
    export = open_export(SourceSettings(path=path, records_path="Report_Entry"))
    fields = FieldSettings(
        employee_id="ID",
        email="Email",
        name="Worker",
        manager_id="Manager.ID",
        department="",
        status="Status",
    )
    directory = read_people(export.name, export.columns, export.rows(), fields, FilterSettings())
    assert directory.ok, [str(p) for p in directory.problems]
    assert [(p.employee_id, p.manager_id, p.location) for p in directory.people] == [
        ("1", None, "report.json Report_Entry[0]"),
        ("2", "1", "report.json Report_Entry[1]"),
    ]


# ---------------------------------------------------------------- properties

text_values = st.text(alphabet=" \t\u00a0abcAB.@-Éé\n", max_size=20)


@given(text_values)
def test_normalisation_is_idempotent(value: str) -> None:
    for normalise in (normalise_name, normalise_email):
        once = normalise(value)
        assert normalise(once) == once
    assert "  " not in normalise_name(value)
    assert normalise_name(value) == normalise_name(value).strip()


@given(st.text(alphabet=" \t\u00a0\u2003\u2028\x1c\x85ab.", max_size=12))
def test_normalise_name_collapses_every_kind_of_whitespace(value: str) -> None:
    # Its fast path keeps a value as it is; the result is the same as always splitting.
    assert normalise_name(value) == " ".join(value.split())


@given(text_values.filter(lambda v: "\n" not in v), text_values.filter(lambda v: "\n" not in v))
def test_read_people_normalises_names_and_departments_with_normalise_name(
    name: str, department: str
) -> None:
    directory = read([("E1", name, "e1@example.com", "", department, "Active")])
    assert directory.ok, [str(p) for p in directory.problems]
    (person,) = directory.people
    # "-" is one of source.null_values: an empty cell.
    assert person.name == ("" if name.strip() == "-" else normalise_name(name)) or person.email
    assert person.department == (
        None if department.strip() == "-" else normalise_name(department) or None
    )


@given(st.emails())
def test_generated_addresses_pass_once_normalised_unless_exotic(address: str) -> None:
    normalised = normalise_email(address)
    if normalised.isascii() and '"' not in normalised and "[" not in normalised:
        assert is_valid_email(normalised)


IDS = ("E1", "E2", "E3", "E4", "E5", "")
messy_rows = st.lists(
    st.tuples(
        st.sampled_from(IDS),
        st.sampled_from(("Ada", " Ben  Lee ", "")),
        st.sampled_from(("e1@x.io", "E2@x.io", "e3@x.io", "e4@x.io", "bad@", "", "e5@x.io")),
        st.sampled_from((*IDS, "E9", "e1@x.io", "e2@x.io", "E3@x.io", "e9@x.io")),
        st.sampled_from(("Eng", "Sales")),
        st.sampled_from(("Active", "Active", "Terminated")),
    ),
    max_size=9,
)


def summary(directory: Directory) -> tuple[frozenset[str], frozenset[str], frozenset[object]]:
    people = frozenset((p.employee_id, p.email, p.manager_id) for p in directory.people)
    return (
        frozenset(str(p) for p in directory.problems),
        frozenset(str(w) for w in directory.warnings) if directory.ok else frozenset(),
        people if directory.ok else frozenset(),
    )


@settings(max_examples=150)
@given(st.data(), messy_rows, st.sampled_from((None, "E1", "e2@x.io")), st.booleans())
def test_any_order_of_rows_gives_the_same_problems(
    data: st.DataObject, rows: list[Row], root: str | None, by_email: bool
) -> None:
    columns, fields = (BY_EMAIL_COLUMNS, BY_EMAIL) if by_email else (COLUMNS, FIELDS)
    located = source(rows, columns)
    shuffled = data.draw(st.permutations(located))
    filters = FilterSettings(root=root)
    first = read_people("people.csv", columns, located, fields, filters)
    second = read_people("people.csv", columns, shuffled, fields, filters)
    assert summary(first) == summary(second)
    if first.ok:  # with duplicates, who stands for an id follows the order; it is fatal anyway
        assert first.excluded_by_reason == second.excluded_by_reason


@st.composite
def valid_orgs(draw: st.DrawFn) -> list[Row]:
    size = draw(st.integers(min_value=1, max_value=30))
    rows: list[Row] = []
    for i in range(size):
        manager = f"E{draw(st.integers(min_value=0, max_value=i - 1))}" if i else ""
        # The top stays active: an export with nobody kept is a problem of its own.
        status = (
            draw(st.sampled_from(("Active", "Active", "Active", "Terminated"))) if i else "Active"
        )
        rows.append(row(f"E{i}", manager, status=status))
    return rows


@given(valid_orgs())
def test_a_valid_org_reads_cleanly(rows: list[Row]) -> None:
    directory = read(rows)
    assert directory.ok
    active = [r for r in rows if r[5] == "Active"]
    assert len(directory.people) == len(active)
    assert directory.excluded == len(rows) - len(active)
    ids = {p.employee_id for p in directory.people}
    assert all(p.manager_id is None or p.manager_id in ids for p in directory.people)
    terminated = {r[0] for r in rows if r[5] != "Active"}
    # Exactly the people whose manager left are warned about, and they lose the manager.
    orphans = {r[0] for r in active if r[3] in terminated}
    assert {w.location for w in directory.warnings} == {
        p.location for p in directory.people if p.employee_id in orphans
    }


SAMPLES = Path(__file__).resolve().parents[2] / "config"


def test_the_sample_csv_and_json_exports_give_the_same_people() -> None:
    csv_export = open_export(SourceSettings(path=SAMPLES / "sample-org.csv"))
    json_export = open_export(
        SourceSettings(path=SAMPLES / "sample-org.json", records_path="Report_Entry")
    )
    json_fields = FieldSettings(
        employee_id="Employee_ID",
        email="Email_-_Work",
        name="Worker",
        manager_id="Manager.ID",
        department="Supervisory_Organization",
        status="Worker_Status",
    )
    from_csv = read_people(
        csv_export.name, csv_export.columns, csv_export.rows(), FIELDS, FilterSettings()
    )
    from_json = read_people(
        json_export.name, json_export.columns, json_export.rows(), json_fields, FilterSettings()
    )
    assert from_csv.ok and from_json.ok
    assert from_csv.excluded == from_json.excluded > 0

    def key(directory: Directory) -> list[tuple[str, str, str, str | None, str | None]]:
        return [
            (p.employee_id, p.email, p.name, p.manager_id, p.department) for p in directory.people
        ]

    assert key(from_csv) == key(from_json)
    assert len(from_csv.people) > 30


def test_an_export_whose_every_row_is_filtered_out_is_fatal_and_shows_the_statuses() -> None:
    rows = [row("E1", status="Employed"), row("E2", "E1", status="Terminated")]
    directory = read(rows)
    [problem] = directory.problems
    assert (problem.location, problem.field) == ("people.csv", "filters")
    assert "all were excluded (2 by filter.active_status)" in problem.expected
    assert "the Status values in the export are 'Employed', 'Terminated'" in problem.expected
    assert "filter.active_status is ['Active']" in problem.expected


cell_text = st.sampled_from(["", " ", "E1", "E2", " E1", "E3 ", "N/A", "-", "Ann  Lee", "x\ty"])


@settings(max_examples=150)
@given(
    st.lists(
        st.tuples(
            st.sampled_from(["E1", "E2", "E3", " E4", "", "E1"]),
            cell_text,
            st.sampled_from(["a@x.io", "B@X.IO", " c@x.io", "bad", "", "N/A"]),
            cell_text,
            cell_text,
            st.sampled_from(["Active", "Terminated", " active", "NULL"]),
        ),
        min_size=1,
        max_size=8,
    ),
    st.sampled_from(["refuse", "top"]),
)
def test_rows_read_alike_as_dicts_as_row_values_and_as_one_table(
    data: list[Row], unknown_manager: str
) -> None:
    # The run hands read_people one table (RowTable from the CSV reader's whole-file pass);
    # tests and JSON hand it rows one by one, as dicts or as RowValues over one index.
    index = {column: i for i, column in enumerate(COLUMNS)}
    as_dicts = source(data)
    as_values = [
        SourceRow(row.location, RowValues(index, tuple(row.values.values()))) for row in as_dicts
    ]
    as_table = RowTable(
        index, [list(values) for values in data], [r.location for r in as_dicts], {}
    )
    results = [
        read_people(
            "people.csv", COLUMNS, rows, FIELDS, FilterSettings(), unknown_manager=unknown_manager
        )
        for rows in (as_dicts, as_values, as_table)
    ]
    first = results[0]
    for other in results[1:]:
        assert other.problems == first.problems
        assert other.warnings == first.warnings
        assert other.excluded_by_reason == first.excluded_by_reason
        assert other.unknown_managers == first.unknown_managers
        # People are alike when they read alike, their rows as cells or as mappings.
        assert other.people == first.people
        assert [dict(p.attributes) for p in other.people] == [
            dict(p.attributes) for p in first.people
        ]


def test_a_persons_other_columns_read_trimmed_with_null_words_blank() -> None:
    # Columns hrsync does not use are normalised when read (attributes, team names), not
    # up front: the person's row reads the same either way.
    columns = (*COLUMNS, "Title", "Cost Centre")
    rows = [(*row("E1"), "  Staff Engineer ", "N/A")]
    directory = read(rows, columns=columns)
    [person] = directory.people
    assert person.attributes["Title"] == "Staff Engineer"
    assert person.attributes.get("Cost Centre") == ""
    assert dict(person.attributes)["Title"] == "Staff Engineer"
    assert person.attributes.get("Nope", "?") == "?"


def test_row_values_behave_like_a_read_only_dict() -> None:

    index = {"Employee ID": 0, "Work Email": 1}
    values = RowValues(index, ("E1", "a@x.io"))
    assert values == {"Employee ID": "E1", "Work Email": "a@x.io"}
    assert values.get("Work Email") == "a@x.io"
    assert values.get("Title") is None
    assert values.get("Title", "") == ""
    assert "Employee ID" in values and "Title" not in values
    assert list(values) == ["Employee ID", "Work Email"] and len(values) == 2
    with pytest.raises(KeyError):
        values["Title"]


# ---------------------------------------------------------------- inputs that would lose people


def test_an_export_with_a_header_and_no_rows_is_fatal_naming_the_file(tmp_path: Path) -> None:
    path = tmp_path / "people.csv"
    path.write_text(",".join(COLUMNS) + "\r\n", encoding="utf-8")
    export = open_export(SourceSettings(path=path))
    directory = read_people(export.name, export.columns, export.rows(), FIELDS, FilterSettings())
    [problem] = directory.problems
    assert (problem.location, problem.field) == ("people.csv", "rows")
    assert "must hold at least one person" in problem.expected
    assert "header and no rows" in problem.expected
    assert directory.people == ()


@pytest.mark.parametrize(
    ("column", "value", "found"),
    [
        ("Full Name", "Ann\x00e", "U+0000 (NUL) at character 4"),
        ("Full Name", "\x1b[31mAnn", "U+001B (ESC) at character 1"),
        ("Department", "Eng\x7f", "U+007F (DEL) at character 4"),
        ("Department", "Eng\u0085ineering", "U+0085"),
        # A quoted CSV value may hold a line break; a team name must not.
        ("Full Name", "Ann\nLee", "U+000A (a line break, LF) at character 4"),
        ("Employee ID", "E\r7", "U+000D (a line break, CR)"),
        ("Manager ID", "E1\x00", "U+0000 (NUL) at character 3"),
        # An unknown status would filter the person out without a word.
        ("Status", "Active\x00", "U+0000 (NUL)"),
    ],
)
def test_control_characters_in_a_used_field_are_fatal(column: str, value: str, found: str) -> None:
    values = dict(zip(COLUMNS, row("E7", "E1"), strict=True))
    values[column] = value
    directory = read([*ORG, tuple(values[c] for c in COLUMNS)])
    [problem] = [p for p in directory.problems if p.field == column and "control" in p.expected]
    assert problem.location == "people.csv line 7"
    assert f"must not contain control characters (only a tab is allowed): found {found}" in str(
        problem
    )
    assert repr(value.strip()) in str(problem)  # shown escaped, never raw
    assert "\x00" not in str(problem) and "\x1b" not in str(problem)


def test_a_control_character_in_a_filtered_out_row_is_fatal_too() -> None:
    directory = read([*ORG, row("E7", "E1", email="x\x00@example.com", status="Terminated")])
    assert_reported(
        directory.problems,
        Expect(L + "7", "Work Email", "x\x00@example.com", "found U+0000 (NUL)"),
    )


def test_tabs_no_break_spaces_and_control_characters_in_unused_columns_are_accepted() -> None:
    columns = (*COLUMNS, "Notes")
    rows = [(*r, "line one\r\nline two\x00") for r in ORG]
    rows[1] = ("E2", "Ann\u00a0Lee\tJr", "e2@example.com", "E1", "Eng", "Active", "")
    directory = read(rows, columns=columns)
    assert directory.ok, [str(p) for p in directory.problems]
    assert directory.people[1].name == "Ann Lee Jr"


def test_filter_and_template_columns_are_checked_like_the_fields() -> None:
    columns = (*COLUMNS, "Site", "Team")
    rows = [(*r, "Berlin", "Core") for r in ORG]
    rows[2] = (*ORG[2], "Ber\x00lin", "Co\x1bre")
    include = FilterSettings(include={"Site": ("*",)})
    directory = read_people(
        "people.csv",
        columns,
        source(rows, columns),
        FIELDS,
        include,
        also_used=template_names("{Team} ({lead_name})"),
    )
    assert {(p.location, p.field) for p in directory.problems} == {
        (L + "4", "Site"),
        (L + "4", "Team"),
    }
    # Without the template's columns, only the filter's column is checked.
    directory = read_people("people.csv", columns, source(rows, columns), FIELDS, include)
    assert [p.field for p in directory.problems] == ["Site"]


def test_template_columns_lists_every_placeholder_once() -> None:
    assert template_names("{Team} – {lead_name} ({Team})") == ("Team", "lead_name")
    assert template_names("no placeholder") == ()
    assert template_names("{unclosed") == ()


def test_a_used_value_over_the_limit_is_fatal_and_shown_short() -> None:
    huge = "x" * (MAX_FIELD_CHARS + 1)
    directory = read([*ORG, row("E7", "E1", email=huge)])
    [problem] = [p for p in directory.problems if "characters" in p.expected]
    assert (problem.location, problem.field) == (L + "7", "Work Email")
    assert "must be at most 65,536 characters, but holds 65,537" in problem.expected
    assert len(str(problem)) < 200


def test_json_exports_are_held_to_the_same_rules(tmp_path: Path) -> None:
    path = tmp_path / "report.json"
    fields = FieldSettings(
        employee_id="ID", email="Email", name="Worker", manager_id="", department="", status=""
    )

    def problems(text: str, **settings: object) -> list[str]:
        path.write_text(text, encoding="utf-8")
        export = open_export(SourceSettings(path=path, **settings))  # type: ignore[arg-type]
        directory = read_people(
            export.name, export.columns, export.rows(), fields, FilterSettings()
        )
        return [str(p) for p in directory.problems]

    assert problems('[{"ID": "1", "Worker": "Ada\\u0000", "Email": "ada@x.io"}]') == [
        "report.json [0]: Worker must not contain control characters (only a tab is allowed): "
        "found U+0000 (NUL) at character 4, got 'Ada\\x00'"
    ]
    [long] = problems('[{"ID": "1", "Worker": "' + "W" * 70_000 + '", "Email": "a@x.io"}]')
    assert "report.json [0]: Worker must be at most 65,536 characters" in long
    with pytest.raises(SourceError, match=r"report.json is \d+ bytes, over 20 bytes.*max_bytes"):
        problems('[{"ID": "1", "Worker": "Ada", "Email": "ada@x.io"}]', max_bytes=20)


# ---------------------------------------------------------------- messages stay short


def test_a_missing_column_of_a_100k_column_header_gives_a_short_message() -> None:
    columns = tuple(f"col{i}" for i in range(100_000))
    directory = read_people("wide.csv", columns, [], FIELDS, FilterSettings())
    [problem] = directory.problems
    assert problem.value.startswith("col0, col1, col2")
    assert problem.value.endswith("col19 and 99980 more")
    assert len(str(problem)) < 1500


def test_an_id_held_by_thousands_of_rows_gives_short_messages() -> None:
    rows = [row("E1"), *[row("E2", "E1", email=f"p{i}@example.com") for i in range(3000)]]
    directory = read(rows)
    duplicates = [p for p in directory.problems if p.field == "Employee ID"]
    # Each row after the first, pointing back at the first, in words that group.
    assert len(duplicates) == 2999
    first = duplicates[0]
    assert first.location == L + "4 (first at people.csv line 3)"
    assert len({p.expected for p in duplicates}) == 1
    assert max(len(str(p)) for p in duplicates) < 1000


def test_a_long_reporting_cycle_is_shown_capped() -> None:
    ids = [f"E{i:03d}" for i in range(100)]
    rows = [row(eid, ids[(i + 1) % len(ids)]) for i, eid in enumerate(ids)]
    [problem] = read(rows).problems
    assert problem.value.startswith("E000 → E001 → E002")
    assert problem.value.endswith("E019 and 81 more")


def test_every_status_of_an_all_filtered_export_is_not_listed() -> None:
    rows = [row(f"E{i}", status=f"S{i:03d}") for i in range(50)]
    [problem] = read(rows).problems
    assert "values in the export are 'S000', 'S001'" in problem.expected
    assert "'S019' and 30 more" in problem.expected


@settings(max_examples=200)
@given(st.lists(st.integers(min_value=-1, max_value=11), min_size=1, max_size=12))
def test_every_reporting_cycle_is_reported_once(managers: list[int]) -> None:
    # Person i reports to managers[i] (-1 or out of range: nobody). Each cycle found by a
    # plain walk is reported exactly once, whoever is on it and however the rows are ordered.
    ids = [f"E{i}" for i in range(len(managers))]
    data = [
        row(eid, ids[m] if 0 <= m < len(ids) else "") for eid, m in zip(ids, managers, strict=True)
    ]
    expected: set[frozenset[str]] = set()
    for start in range(len(managers)):
        seen: list[int] = []
        node = start
        while 0 <= node < len(managers) and node not in seen:
            seen.append(node)
            node = managers[node]
        if 0 <= node < len(managers) and node in seen:
            expected.add(frozenset(ids[i] for i in seen[seen.index(node) :]))
    found = [p for p in read(data).problems if "reporting cycle" in p.expected]
    own = [p for p in read(data).problems if "cannot be their own manager" in p.expected]
    reported = {frozenset(p.value.split(" → ")) for p in found}
    assert len(found) == len(reported)
    # A person naming themselves is their own problem, not a cycle.
    assert reported == {c for c in expected if len(c) > 1}
    assert len(own) == sum(1 for c in expected if len(c) == 1)


def test_a_long_value_is_shown_cut_short_in_its_problem_and_its_group() -> None:
    # A value may be up to 64 Ki characters; a message quoting twenty of them in full was
    # almost a megabyte. The message shows the start and says how long the value is.
    from hrsync.core.report.problems import group_problems

    long_email = "x" * 5_000
    rows = [row(f"E{i}", email=f"{long_email}{i}") for i in range(1, 4)]
    directory = read(rows)
    assert directory.problems
    for problem in directory.problems:
        assert len(str(problem)) < 600
        assert "5,001 characters" in str(problem)
    (group,) = group_problems(directory.problems)
    assert len(str(group)) < 1500 and "5,001 characters" in str(group)
    # The problem itself keeps the value: a report in JSON or a fix can still use it.
    assert directory.problems[0].value.startswith(long_email)


# The e-mail rule as first written, without possessive quantifiers.
PLAIN_EMAIL_RULE = re.compile(
    r"[a-z0-9!#$%&'*+/=?^_`{|}~-]+(?:\.[a-z0-9!#$%&'*+/=?^_`{|}~-]+)*"
    r"@[a-z0-9](?:[a-z0-9-]*[a-z0-9])?(?:\.[a-z0-9](?:[a-z0-9-]*[a-z0-9])?)+"
)


@given(
    st.one_of(
        st.from_regex(PLAIN_EMAIL_RULE, fullmatch=True),
        st.text(alphabet="ab9-.@_+'Z é", max_size=14),
        # An address with one character more, or one less, at a random place.
        st.tuples(st.from_regex(PLAIN_EMAIL_RULE, fullmatch=True), st.integers(0, 40)).map(
            lambda pair: pair[0][: pair[1]] + "-."[pair[1] % 2] + pair[0][pair[1] :]
        ),
        st.tuples(st.from_regex(PLAIN_EMAIL_RULE, fullmatch=True), st.integers(0, 40)).map(
            lambda pair: pair[0][: pair[1]] + pair[0][pair[1] + 1 :]
        ),
    )
)
def test_the_email_rule_accepts_what_its_plain_form_accepts(value: str) -> None:
    plain = PLAIN_EMAIL_RULE.fullmatch(value) is not None
    assert is_valid_email(value) == plain
    assert valid_emails([value, "a@b.co"]) == [plain, True]


@pytest.mark.parametrize(
    ("address", "fault"),
    [
        ("chlo\u00e9.example@contoso.com", "'\u00e9' is not ASCII"),
        ("ann lee@x.io", "it holds a space"),
        ("ann.lee.x.io", "it has no @"),
        ("ann@lee@x.io", "it has more than one @"),
        ("@x.io", "nothing comes before the @"),
        ("ann@", "no domain comes after the @"),
        (".ann@x.io", "its name starts or ends with a dot, or has two in a row"),
        ("ann..lee@x.io", "its name starts or ends with a dot, or has two in a row"),
        ("ann(lee)@x.io", "its name holds '('"),
        ("ann@localhost", "its domain has no dot (like example.com)"),
        ("ann@x_y.io", "its domain holds '_'"),
        ("ann@-x.io", "a part of its domain starts or ends with a hyphen, or is empty"),
        ("ann@x..io", "a part of its domain starts or ends with a hyphen, or is empty"),
        ("ann@x.io", ""),
    ],
)
def test_a_refused_address_says_what_is_wrong_with_it(address: str, fault: str) -> None:
    assert email_fault(address) == fault


@given(
    st.one_of(
        st.emails().map(normalise_email),
        st.text(alphabet="ab9-.@_+'Z \u00e9(", max_size=14),
        st.from_regex(PLAIN_EMAIL_RULE, fullmatch=True),
        # One @ between a name and a domain, each with a character the rule refuses here
        # and there: the faults past the first checks.
        st.builds(
            "{}@{}".format,
            st.text(alphabet="ab.(Z\u00e9", min_size=1, max_size=5),
            st.text(alphabet="ab-._Z", min_size=1, max_size=7),
        ),
    )
)
def test_the_fault_named_is_true_of_the_address(value: str) -> None:
    # What the message claims is checked against the address itself, by plain means: a
    # fault that named the wrong character or part would send HR looking in vain.
    fault = email_fault(value)
    assert (fault == "") == is_valid_email(value)
    if not fault:
        return
    name, _, domain = value.partition("@")
    quoted = re.search(r"'(.)'", fault)
    if fault.endswith("is not ASCII"):
        assert quoted and quoted[1] in value and not quoted[1].isascii()
    elif fault == "it holds a space":
        assert value.isascii() and any(c.isspace() for c in value)
    elif fault == "it has no @":
        assert "@" not in value
    elif fault == "it has more than one @":
        assert value.count("@") >= 2
    elif fault == "nothing comes before the @":
        assert value.startswith("@")
    elif fault == "no domain comes after the @":
        assert value.endswith("@") and value.count("@") == 1
    elif fault.startswith("its name starts or ends with a dot"):
        assert name.startswith(".") or name.endswith(".") or ".." in name
    elif fault.startswith("its name holds"):
        assert (
            quoted
            and quoted[1] in name
            and not re.fullmatch(r"[a-z0-9!#$%&'*+/=?^_`{|}~.-]", quoted[1])
        )
    elif fault.startswith("its domain has no dot"):
        assert "." not in domain
    elif fault.startswith("its domain holds"):
        assert quoted and quoted[1] in domain and not re.fullmatch(r"[a-z0-9.-]", quoted[1])
    else:
        assert fault == "a part of its domain starts or ends with a hyphen, or is empty"
        labels = domain.split(".")
        assert any(not label or label[0] == "-" or label[-1] == "-" for label in labels)


def test_a_held_person_s_message_says_what_is_wrong_with_the_address() -> None:
    directory = read(
        [row("E1"), ("E2", "Chlo\u00e9 Roy", "chlo\u00e9@x.io", "E1", "Eng", "Active")]
    )
    (problem,) = directory.problems
    assert problem.expected == (
        "must be an e-mail address like name@example.com: '\u00e9' is not ASCII"
    )


def test_a_person_holds_the_row_as_read_and_equals_one_built_from_a_mapping() -> None:
    columns = ("Employee ID", "Work Email", "Full Name", "Manager ID", "Title")
    table = RowTable(
        {c: i for i, c in enumerate(columns)},
        [("E1", "ann@x.io", "Ann", "", "  NULL "), ("E2", "bo@x.io", "Bo", "E1", " Staff ")],
        ["hr.csv line 2", "hr.csv line 3"],
        {},
    )
    fields = FieldSettings(
        employee_id="Employee ID", email="Work Email", name="Full Name", manager_id="Manager ID"
    )
    ann, bo = read_people("hr.csv", columns, table, fields, FilterSettings()).people
    # The row reads trimmed, a null word blank, whether asked once or again.
    assert (
        dict(bo.attributes)
        == dict(bo.attributes)
        == {
            "Employee ID": "E2",
            "Work Email": "bo@x.io",
            "Full Name": "Bo",
            "Manager ID": "E1",
            "Title": "Staff",
        }
    )
    assert ann.attributes["Title"] == ""
    built = Person("E2", "bo@x.io", "Bo", "E1", None, None, "hr.csv line 3", dict(bo.attributes))
    assert bo == built
    assert (bo != built) is False
    assert bo != built._replace(at="hr.csv line 4")
    changed = built._replace(row={**bo.attributes, "Title": "Principal"})
    assert bo != changed
    assert (bo == changed) is False
    # Shown as it would be made by hand, and so made it is equal.
    assert "row={'Employee ID': 'E2'" in repr(bo)
    assert eval(repr(bo), {"Person": Person}) == bo
    # Copied or pickled, a person reads as before.
    assert copy.deepcopy(bo) == bo and pickle.loads(pickle.dumps(bo)) == bo


def test_a_person_has_the_fields_its_constructor_takes() -> None:
    assert tuple(inspect.signature(Person).parameters) == Person._fields
    ann = Person("E1", "ann@x.io", "Ann", None, "Eng", "Active", "hr.csv line 2", {"T": "x"})
    assert ann == Person._make(ann)
    assert ann._asdict()["at"] == ann.location == "hr.csv line 2"
    assert ann._asdict()["row"] == ann.attributes == {"T": "x"}


def test_a_person_is_unhashable_on_purpose() -> None:
    # Equal people read alike, row included, and a row may be a mapping its maker still
    # changes: people are keyed by employee id or e-mail, never hashed themselves.
    ann = Person("E1", "ann@x.io", "Ann", None, None, None, "hr.csv line 2")
    assert Person.__hash__ is None
    assert not isinstance(ann, Hashable)
    with pytest.raises(TypeError, match="unhashable"):
        hash(ann)
    with pytest.raises(TypeError, match="unhashable"):
        {ann}  # noqa: B018


spaced_text = st.text(alphabet="ab \t\u00a0", max_size=7)


@given(st.lists(st.tuples(spaced_text, spaced_text), min_size=1, max_size=6))
def test_names_and_departments_read_with_their_whitespace_collapsed(
    values: list[tuple[str, str]],
) -> None:
    columns = ("Employee ID", "Work Email", "Full Name", "Department", "Manager ID")
    table = RowTable(
        {c: i for i, c in enumerate(columns)},
        [(f"E{i}", f"p{i}@x.io", name, dept, "") for i, (name, dept) in enumerate(values)],
        [f"hr.csv line {i + 2}" for i in range(len(values))],
        {},
    )
    fields = FieldSettings(
        employee_id="Employee ID",
        email="Work Email",
        name="Full Name",
        department="Department",
        manager_id="Manager ID",
    )
    people = read_people("hr.csv", columns, table, fields, FilterSettings()).people
    assert [(p.name, p.department) for p in people] == [
        (" ".join(name.split()) or f"p{i}@x.io", " ".join(dept.split()) or None)
        for i, (name, dept) in enumerate(values)
    ]


@given(st.lists(st.text(alphabet="aA|.@ΣİßЖ", max_size=5), max_size=8))
def test_a_column_lower_cases_as_each_value_would_alone(values: list[str]) -> None:
    assert list(lower_each(values)) == [value.lower() for value in values]


cell_words = st.text(alphabet=" aN\tUL\u00a0-\x00", max_size=5)


@given(
    st.one_of(
        # Few distinct values, many rows: each distinct value is read once.
        st.tuples(st.lists(cell_words, min_size=1, max_size=3), st.integers(24, 60)).flatmap(
            lambda pool: st.lists(st.sampled_from(pool[0]), min_size=pool[1], max_size=pool[1])
        ),
        # Mostly distinct values: one test over the joined column.
        st.lists(cell_words, max_size=12),
    ),
    st.booleans(),
)
def test_a_column_reads_as_each_value_would_read_alone(values: list[str], spacing: bool) -> None:
    nulls = frozenset({"NULL", "N/A", "-"})
    read = list(values)
    facts = normalise_column(read, nulls, spacing=spacing)
    assert read == [read_value(v, nulls) for v in values]
    assert facts.printable == all(v.isprintable() for v in values)
    # Collapsed and spaceless are never said wrongly; collapsed only when asked.
    assert not facts.collapsed or (spacing and all(collapse_whitespace(v) == v for v in read))
    assert not facts.spaceless or all(v.split() in ([], [v]) for v in read)


@given(
    st.lists(st.sampled_from(["Active", " Active", "Active ", "NULL", "Leave"]), min_size=40),
    st.booleans(),
)
def test_a_column_of_few_values_reads_as_each_cell_would_read_alone(
    cells: list[str], trimmed: bool
) -> None:
    if trimmed:  # every value reads as it is: the rows keep the strings they were read as
        cells = [cell.strip() for cell in cells if cell.strip() != "NULL"] or ["Active"] * 40
    nulls = frozenset({"NULL"})
    table = RowTable({"Status": 0}, [[cell] for cell in cells], ["x"] * len(cells), {})
    column = ExportColumns(table, nulls, ()).column("Status")
    assert column == [read_value(cell, nulls) for cell in cells]
    # Equal cells read as one string, which later look-ups match by identity.
    strings = {
        cell: {id(value) for value, c in zip(column, cells, strict=True) if c == cell}
        for cell in cells
    }
    assert all(len(ids) == 1 for ids in strings.values())


def test_rows_that_read_their_cells_their_own_way_are_read_as_they_read() -> None:
    index = {"Employee ID": 0, "Title": 1}
    nulls = frozenset({"NULL"})
    rows = [
        SourceRow("hr.csv line 2", PersonValues(index, ("E1", "  Staff "), nulls)),
        SourceRow("hr.csv line 3", PersonValues(index, ("E2", "NULL"), nulls)),
    ]
    table = RowTable.of_rows(rows, ("Employee ID", "Title"))
    assert [list(cells) for cells in table.cells] == [["E1", "Staff"], ["E2", ""]]
    assert table.locations == ["hr.csv line 2", "hr.csv line 3"]


# ---------------------------------------------------------------- managers matching nobody

TOP_HINT = 'source.unknown_manager = "top"'


def big_org(size: int = 40) -> list[Row]:
    return [row("E1"), *(row(f"E{n}", "E1") for n in range(2, size + 1))]


def nobody_hints(directory: Directory) -> set[str]:
    return {p.expected for p in directory.problems if "matches nobody" in p.expected}


def test_a_stray_manager_reference_suggests_making_its_people_top() -> None:
    # One board member above the CEO: what source.unknown_manager = "top" is for.
    (hint,) = nobody_hints(read([row("E1", "BOARD"), *big_org()[1:]]))
    assert TOP_HINT in hint


def test_many_references_matching_nobody_suggest_missing_pages_not_top() -> None:
    # The second page of the export was never read: half the managers are on it.
    org = big_org(40)
    rows = [*org[:20], *(row(f"E{n}", f"E{n + 40}") for n in range(21, 41))]
    (hint,) = nobody_hints(read(rows))
    assert TOP_HINT not in hint
    assert "20 of 39 references to managers match nobody" in hint
    assert "pages of the export may be missing" in hint and "source.pagination" in hint


def test_a_manager_column_of_another_kind_of_id_says_so_with_examples() -> None:
    # Okta's profile.managerId holds the manager's Okta user id, not an employee number.
    rows = [row("1001"), *(row(str(1000 + n), f"00u{n}abcdefgh") for n in range(2, 12))]
    (hint,) = nobody_hints(read(rows))
    assert TOP_HINT not in hint
    assert "another kind of id" in hint
    assert "'00u2abcdefgh' beside the employee id '1001'" in hint
    assert "source.fields.manager_id" in hint


def test_a_large_share_of_references_matching_nobody_is_no_stray() -> None:
    # Three of four people's managers absent: not a board member.
    rows = [row("E1"), row("E2", "E1"), row("E3", "E7"), row("E4", "E8"), row("E5", "E8")]
    (hint,) = nobody_hints(read(rows))
    assert TOP_HINT not in hint and "3 of 4 references" in hint
