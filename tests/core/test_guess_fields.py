"""`hrsync init`'s guesses: columns and values in, fields with their evidence out."""

from __future__ import annotations

import string
from collections.abc import Sequence

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from hrsync.core.starter.guess_fields import Column, find_records, next_page, propose

PEOPLE = [
    # id, name, e-mail, manager id, department, status
    ("E1", "Ada Okafor", "ada@example.com", "", "Exec", "Active"),
    ("E2", "Ben Lee", "ben@example.com", "E1", "Eng", "Active"),
    ("E3", "Chen Rossi", "chen@example.com", "E2", "Eng", "Leave"),
    ("E4", "Dana Khan", "dana@example.com", "E2", "Eng", "Terminated"),
    ("E5", "Emeka Obi", "emeka@example.com", "E1", "Sales", "Active"),
    ("E6", "Farah Said", "farah@example.com", "E5", "Sales", "Active"),
]


def table(names: tuple[str, ...], people: Sequence[tuple[str, ...]] = PEOPLE) -> list[Column]:
    return [
        Column(name, tuple(person[i] for person in people)) for i, name in enumerate(names) if name
    ]


def test_a_plain_export_is_read_by_names_and_values() -> None:
    proposal = propose(
        table(("Employee ID", "Full Name", "Work Email", "Manager ID", "Department", "Status"))
    )
    assert proposal.field("employee_id") == "Employee ID"
    assert proposal.field("name") == "Full Name"
    assert proposal.field("email") == "Work Email"
    assert proposal.field("manager_id") == "Manager ID"
    assert proposal.field("manager_email") == ""
    assert proposal.field("department") == "Department"
    assert proposal.field("status") == "Status"
    assert proposal.kept_statuses == ("Active", "Leave")
    assert proposal.todos == ()
    evidence = {g.key: g.evidence for g in proposal.fields}
    assert evidence["source.fields.email"] == "Work Email: 6 of 6 values are e-mail addresses"
    assert evidence["source.fields.manager_id"] == (
        "Manager ID: 5 of 5 values are ids found in Employee ID"
    )
    assert proposal.active_status is not None
    assert proposal.active_status.evidence == (
        "kept: Active (4), Leave (1), still employed; dropped: Terminated (1), gone or not started"
    )


@pytest.mark.parametrize(
    ("names", "expected"),
    [
        # Columns named nothing like what they hold: the values decide.
        (("c1", "c2", "c3", "c4", "", ""), {"employee_id": "c1", "email": "c3", "name": "c2"}),
        (("c1", "c2", "c3", "c4", "", ""), {"manager_id": "c4"}),
        # Workday's names.
        (
            (
                "Employee_ID",
                "Worker",
                "Email_-_Work",
                "Manager_ID",
                "Supervisory_Organization",
                "Worker_Status",
            ),
            {"department": "Supervisory_Organization", "status": "Worker_Status"},
        ),
        # Personio's nested values: the container names the field.
        (
            (
                "attributes.id.value",
                "attributes.full_name.value",
                "attributes.email.value",
                "attributes.supervisor.value.attributes.id.value",
                "attributes.department.value.attributes.name",
                "attributes.status.value",
            ),
            {
                "employee_id": "attributes.id.value",
                "manager_id": "attributes.supervisor.value.attributes.id.value",
                "department": "attributes.department.value.attributes.name",
            },
        ),
    ],
)
def test_fields_by_name_and_by_value(names: tuple[str, ...], expected: dict[str, str]) -> None:
    proposal = propose(table(names))
    for field, column in expected.items():
        assert proposal.field(field) == column, field


def test_the_employee_id_is_the_column_the_manager_column_names() -> None:
    # Okta: an employeeNumber is unique too, but managerId names the Okta user id.
    okta = [
        ("00u1", "E1", "Ada Okafor", "ada@example.com", ""),
        ("00u2", "E2", "Ben Lee", "ben@example.com", "00u1"),
        ("00u3", "E3", "Chen Rossi", "chen@example.com", "00u2"),
    ]
    proposal = propose(
        table(
            (
                "id",
                "profile.employeeNumber",
                "profile.displayName",
                "profile.email",
                "profile.managerId",
            ),
            okta,
        )
    )
    assert proposal.field("employee_id") == "id"
    assert proposal.field("manager_id") == "profile.managerId"


def test_a_manager_given_by_e_mail_is_read_by_e_mail() -> None:
    people = [
        (
            p[1],
            p[2],
            {"E1": "ada@example.com", "E2": "ben@example.com", "E5": "emeka@example.com"}.get(
                p[3], ""
            ),
        )
        for p in PEOPLE
    ]
    proposal = propose(table(("name", "mail", "boss"), people))
    assert proposal.field("manager_email") == "boss"
    assert proposal.field("manager_id") == ""
    evidence = {g.key: g.evidence for g in proposal.fields}
    assert "e-mail addresses found in mail" in evidence["source.fields.manager_email"]
    # No id column: a TODO, not a guess.
    assert [t.key for t in proposal.todos] == ["source.fields.employee_id"]


def test_one_duplicated_e_mail_in_a_small_export_is_still_the_e_mail_column() -> None:
    # An ordinary typo (a new hire given a colleague's address) must not hide the column:
    # the run holds those two people, and init should still name the column.
    people = [(*p[:2], "ben@example.com" if p[0] == "E6" else p[2], *p[3:]) for p in PEOPLE]
    proposal = propose(table(("id", "name", "E-Mail", "manager", "dept", "status"), people))
    assert proposal.field("email") == "E-Mail"
    assert proposal.field("manager_id") == "manager"


def test_names_written_last_first_are_read_first_last() -> None:
    # Many HR lists (SAP, DATEV, ADP's Reports To Name) write "Schmidt, Anna": a team
    # would be "Schmidt, Anna's team" in DX.
    people = [(p[0], ", ".join(reversed(p[1].split(" ", 1))), *p[2:]) for p in PEOPLE]
    proposal = propose(
        table(("id", "Nachname, Vorname", "email", "manager", "dept", "status"), people)
    )
    assert proposal.field("name") == "{Nachname, Vorname|natural}"
    evidence = {g.key: g.evidence for g in proposal.fields}["source.fields.name"]
    assert "last name first on 6 of 6 rows" in evidence
    # The evidence is written into the config file, which goes to git: no one's name.
    assert not any(p[1].split(" ")[-1] in evidence for p in PEOPLE)


@pytest.mark.parametrize("manager_first", [True, False])
def test_a_manager_e_mail_column_is_not_the_e_mail_whatever_its_name_or_place(
    manager_first: bool,
) -> None:
    # In a small export a manager column repeats little and may be as full as the
    # people's own: its values being the people's own e-mails tells it apart.
    # Cy has no address yet; Ada leads Ben and Di, Ben leads Cy.
    emails = ("ada@x.io", "ben@x.io", "", "di@x.io")
    managers = ("", "ada@x.io", "ben@x.io", "ada@x.io")
    columns = [Column("id", ("1", "2", "3", "4")), Column("name", ("Ada", "Ben", "Cy", "Di"))]
    own, boss = Column("email", emails), Column("responsable.email", managers)
    columns += [boss, own] if manager_first else [own, boss]
    proposal = propose(columns)
    assert proposal.field("email") == "email"
    assert proposal.field("manager_email") == "responsable.email"


def test_a_copy_of_the_e_mail_is_not_a_manager() -> None:
    people = [(p[0], p[1], p[2], p[2]) for p in PEOPLE]
    proposal = propose(table(("id", "name", "email", "login"), people))
    assert proposal.field("manager_email") == ""
    assert "source.fields.manager_id" in [t.key for t in proposal.todos]


def test_first_and_last_names_make_a_template() -> None:
    people = [(p[0], *p[1].split(" "), p[2], p[3]) for p in PEOPLE]
    proposal = propose(
        table(("Employee #", "First Name", "Last Name", "Work Email", "Supervisor EID"), people)
    )
    assert proposal.field("name") == "{First Name} {Last Name}"
    assert proposal.field("manager_id") == "Supervisor EID"


def test_a_manager_by_display_name() -> None:
    names = {p[0]: p[1] for p in PEOPLE}
    people = [(p[0], p[1], p[2], names.get(p[3], "")) for p in PEOPLE]
    proposal = propose(table(("Employee ID", "Display name", "Email", "Reports to"), people))
    assert proposal.field("manager_name") == "Reports to"
    assert proposal.field("manager_id") == ""


def test_what_cannot_be_decided_is_a_todo() -> None:
    proposal = propose([Column("Notes", ("a", "b", "c"))])
    assert [t.key for t in proposal.todos] == [
        "source.fields.email",
        "source.fields.employee_id",
        "source.fields.name",
        "source.fields.manager_id",
    ]
    assert proposal.field("manager_id") == ""


@pytest.mark.parametrize(
    ("column", "values", "kept"),
    [
        ("Status", ("Active", "Terminated", "Leave"), ("Active", "Leave")),
        ("accountEnabled", ("true", "false", "true"), ("true",)),
        ("suspended", ("false", "true", "false"), ("false",)),
        ("status", ("ACTIVE", "DEPROVISIONED", "LOCKED_OUT", "STAGED"), ("ACTIVE", "LOCKED_OUT")),
        ("lifecycleStatus", ("employed", "terminated"), ("employed",)),
        ("status", ("ACTIVE", "TERMINATED", "HIRED"), ("ACTIVE",)),
        ("Active_Status", ("1", "0", "1"), ("1",)),  # Workday RaaS: a boolean as 1 or 0
        ("status", ("t", "f", "t"), ("t",)),  # SuccessFactors' User: t active, f inactive
        # Exports from HR systems set up in other languages.
        ("Status", ("Aktiv", "Ausgetreten", "Elternzeit", "Inaktiv"), ("Aktiv", "Elternzeit")),
        ("Statut", ("Actif", "Inactif", "Actif"), ("Actif",)),
        ("Estado", ("Activo", "Inactivo", "Activa"), ("Activo", "Activa")),
        ("Stato", ("Attivo", "Cessato", "Attivo"), ("Attivo",)),
        ("Situação", ("Ativo", "Inativo", "Desligado"), ("Ativo",)),
        ("Status", ("Actief", "Inactief", "Uit dienst"), ("Actief",)),
    ],
)
def test_the_status_filter_keeps_the_employed(
    column: str, values: tuple[str, ...], kept: tuple[str, ...]
) -> None:
    proposal = propose([Column(column, values)])
    assert proposal.field("status") == column
    assert proposal.kept_statuses == kept


def test_the_status_column_that_tells_someone_gone_wins() -> None:
    """BambooHR: Employment Status sorts the employed (Full-Time), Status tells who left."""
    columns = [
        Column("Employment Status", ("Full-Time", "Full-Time", "Part-Time", "Full-Time")),
        Column("Status", ("Active", "Active", "Active", "Inactive")),
    ]
    for order in (columns, columns[::-1]):
        proposal = propose(order)
        assert proposal.field("status") == "Status"
        assert proposal.kept_statuses == ("Active",)


def test_an_unknown_status_is_left_out_and_said() -> None:
    proposal = propose([Column("Status", ("Active", "Contractor", "Active"))])
    assert proposal.kept_statuses == ("Active",)
    assert any("'Contractor'" in note for note in proposal.notes)


def test_no_known_status_is_a_todo() -> None:
    proposal = propose([Column("Status", ("A", "B", "A"))])
    assert "filter.active_status" in [t.key for t in proposal.todos]


def test_a_list_with_a_primary_item_is_picked() -> None:
    columns = table(("Employee_ID", "Worker", "Email", "Positions.Manager_ID"))
    manager = columns[3]
    columns[3] = Column(
        manager.name, tuple(v if v != "E2" else "E2; E5" for v in manager.values), several=2
    )
    columns.append(
        Column(
            "Positions.Is_Primary_Job", tuple("1" if v != "E2" else "1; 0" for v in manager.values)
        )
    )
    proposal = propose(columns)
    assert proposal.field("manager_id") == "Positions[Is_Primary_Job=1].Manager_ID"


@pytest.mark.parametrize(
    ("document", "path"),
    [
        ([{"id": 1}], ""),
        ({"@odata.context": "x", "value": [{"id": 1}, {"id": 2}]}, "value"),
        ({"schemas": ["x"], "totalResults": 2, "Resources": [{"id": 1}, {"id": 2}]}, "Resources"),
        ({"Report_Entry": [{"a": 1}]}, "Report_Entry"),
        ({"success": True, "metadata": {}, "data": [{"a": 1}]}, "data"),
        ({"fields": [{"id": "x"}], "employees": [{"a": 1}, {"a": 2}]}, "employees"),
        ({"response": {"people": [{"a": 1}]}}, "response.people"),
    ],
)
def test_the_list_of_records_is_found(document: object, path: str) -> None:
    found = find_records(document)
    assert found is not None
    assert found.path == path


def test_a_document_without_records_has_none() -> None:
    assert find_records({"a": 1, "b": [1, 2]}) is None


# ---------------------------------------------------------------- properties

_names = st.text(string.ascii_letters + " _-.#", min_size=1, max_size=12).filter(str.strip)


@settings(max_examples=60, deadline=None)
@given(st.lists(_names, min_size=6, max_size=6, unique=True), st.permutations(range(6)))
def test_no_column_is_proposed_for_two_fields(names: list[str], order: list[int]) -> None:
    columns = table(tuple(names))
    proposal = propose([columns[i] for i in order])
    used = [g.value for g in proposal.fields if g.value]
    assert len(used) == len(set(used)), proposal.fields


@settings(max_examples=60, deadline=None)
@given(_names, st.lists(_names, min_size=3, max_size=3, unique=True))
def test_the_e_mail_column_is_found_whatever_its_name(email_name: str, others: list[str]) -> None:
    # Whatever its name but a manager's: a "Manager Email" column is the manager's.
    assume(not any(w in email_name.lower() for w in ("manag", "supervis", "report")))
    if email_name in others:
        others = [o + "x" for o in others]
    columns = [
        Column(others[0], tuple(p[0] for p in PEOPLE)),
        Column(email_name, tuple(p[2] for p in PEOPLE)),
        Column(others[1], tuple(p[1] for p in PEOPLE)),
        Column(others[2], tuple(p[4] for p in PEOPLE)),
    ]
    assert propose(columns).field("email") == email_name


def test_a_true_false_column_is_no_status_unless_named_so() -> None:
    assert propose([Column("emails.primary", ("true", "true", "false"))]).field("status") == ""
    assert propose([Column("active", ("true", "true", "false"))]).field("status") == "active"


@pytest.mark.parametrize(
    ("document", "marker"),
    [
        ({"value": [{}], "@odata.nextLink": "https://graph/…"}, "@odata.nextLink"),
        ({"users": [{}], "nextPageToken": "abc"}, "nextPageToken"),
        ({"results": [{}], "next_link": "https://x"}, "next_link"),
        ({"data": [{}], "links": {"next": "https://x?page=2"}}, "links.next"),
        ({"Resources": [{}], "totalResults": 40, "itemsPerPage": 10}, "totalResults 40"),
        ({"data": [{}], "metadata": {"total_pages": 3}}, "metadata.total_pages 3"),
        # Names init did not know: found by the answer's shape, as a run finds them.
        ({"d": {"results": [{}], "__next": "https://sf/odata/v2/User?$skiptoken=x"}}, "d.__next"),
        ({"records": [{}], "done": False, "nextRecordsUrl": "/query/01g-2000"}, "nextRecordsUrl"),
        ({"values": [{}], "isLast": False, "startAt": 0}, "isLast"),
        ({"people": [{}], "continuation": {"href": "https://x?c=2"}}, "continuation.href"),
    ],
)
def test_a_saved_page_of_more_is_said(document: object, marker: str) -> None:
    note = next_page(document)
    assert note is not None
    assert f"({marker}" in note


@pytest.mark.parametrize(
    "document",
    [
        [{}],
        {"results": [{}], "next_link": None},
        {"Resources": [{}], "totalResults": 1, "itemsPerPage": 1},
        {"data": [{}], "metadata": {"total_pages": 1}},
        {"d": {"results": [{"token": "t", "page": 2}], "__next": None}},
        {"records": [{}], "done": True, "totalSize": 1},
    ],
)
def test_a_whole_answer_is_no_page(document: object) -> None:
    assert next_page(document) is None


def test_numbers_that_happen_to_be_ids_are_no_manager_when_a_column_has_the_top() -> None:
    ids = tuple(str(n) for n in range(1, 11))
    columns = [
        Column("Person", ids),
        Column("Mail", tuple(f"p{n}@example.com" for n in range(1, 11))),
        Column("Site", tuple(str(1 + n % 3) for n in range(10))),  # ids by accident
        Column("Boss", ("", *("1",) * 3, *("2",) * 6)),
    ]
    assert propose(columns).field("manager_id") == "Boss"
    assert propose(columns[::-1]).field("manager_id") == "Boss"


# ------------------------------------------- ADP-shaped names, departments, "Last, First"


def _adp(preferred: Sequence[str], *, manager: str = "name") -> list[Column]:
    """An ADP Workforce Now export: legal names, a partly filled preferred first name, a
    home department, and the manager by name ("Last, First") or by associate id."""
    firsts = [p[1].split(" ")[0] for p in PEOPLE]
    lasts = [p[1].split(" ")[1] for p in PEOPLE]
    by_id = {p[0]: f"{last}, {first}" for p, first, last in zip(PEOPLE, firsts, lasts, strict=True)}
    columns = [
        Column("Associate ID", tuple(p[0] for p in PEOPLE)),
        Column("Legal First Name", tuple(firsts)),
        Column("Legal Last Name", tuple(lasts)),
        Column("Preferred First Name", tuple(preferred)),
        Column("Work Contact: Work Email", tuple(p[2] for p in PEOPLE)),
        Column("Home Department Description", tuple(p[4] for p in PEOPLE)),
        Column("Position Status", tuple(p[5] for p in PEOPLE)),
    ]
    if manager == "name":
        columns.append(Column("Reports To Name", tuple(by_id.get(p[3], "") for p in PEOPLE)))
    else:
        columns.append(Column("Reports To Associate ID", tuple(p[3] for p in PEOPLE)))
    return columns


def test_legal_names_with_a_mostly_empty_preferred_name_make_a_fallback_template() -> None:
    # Farah leads nobody: no manager is given by her name (else see the legal-name test).
    proposal = propose(_adp(["", "", "", "", "", "Fara"]))
    assert proposal.field("name") == "{Preferred First Name || Legal First Name} {Legal Last Name}"
    (guess,) = [g for g in proposal.fields if g.key == "source.fields.name"]
    assert "Preferred First Name" in guess.evidence and "1 of 6" in guess.evidence


def test_a_preferred_name_filled_on_every_row_is_read_alone() -> None:
    proposal = propose(_adp(["Ada", "Benny", "Chen", "Dana", "Emeka", "Farah"]))
    assert proposal.field("name") == "{Preferred First Name} {Legal Last Name}"


def test_an_empty_preferred_name_is_left_out() -> None:
    proposal = propose(_adp([""] * 6))
    assert proposal.field("name") == "{Legal First Name} {Legal Last Name}"


@pytest.mark.parametrize(
    ("first", "last"),
    [("Given Name", "Family Name"), ("givenName", "surname"), ("First_Name", "Last_Name")],
)
def test_any_common_pair_of_name_columns_makes_a_template(first: str, last: str) -> None:
    people = [(p[0], *p[1].split(" "), p[2]) for p in PEOPLE]
    proposal = propose(table(("Person Number", first, last, "Email"), people))
    assert proposal.field("name") == f"{{{first}}} {{{last}}}"


def test_the_manager_by_last_first_name_when_no_manager_id_column_exists() -> None:
    proposal = propose(_adp([""] * 6))
    assert proposal.field("manager_name") == "Reports To Name"
    assert proposal.field("manager_id") == ""
    assert proposal.field("employee_id") == "Associate ID"
    (guess,) = [g for g in proposal.fields if g.key == "source.fields.manager_name"]
    assert "5 of 5" in guess.evidence
    with_ids = propose(_adp([""] * 6, manager="id"))
    assert with_ids.field("manager_id") == "Reports To Associate ID"


def test_any_column_named_like_a_department_is_proposed() -> None:
    proposal = propose(_adp([""] * 6))
    assert proposal.field("department") == "Home Department Description"


def test_why_no_department_is_proposed_is_said() -> None:
    people = [(*p[:4], "Everyone") for p in PEOPLE]
    proposal = propose(
        table(("Employee ID", "Full Name", "Work Email", "Manager ID", "Dept"), people)
    )
    assert proposal.field("department") == ""
    assert any("Dept" in n and "1 value" in n for n in proposal.notes), proposal.notes
    none = propose(table(("Employee ID", "Full Name", "Work Email", "Manager ID")))
    assert any("no column is named like a department" in n for n in none.notes), none.notes


def test_managers_given_by_legal_name_make_the_legal_name_read() -> None:
    """ADP's Reports To Name is the manager's legal name: with Ben going by "Benny", the
    preferred name would leave his reports matching nobody."""
    proposal = propose(_adp(["", "Benny", "", "", "", ""]))
    assert proposal.field("manager_name") == "Reports To Name"
    assert proposal.field("name") == "{Legal First Name} {Legal Last Name}"
    (guess,) = [g for g in proposal.fields if g.key == "source.fields.name"]
    assert "legal names" in guess.evidence
    # A preferred name no manager is given by stays the name read.
    kept = propose(_adp(["", "", "", "", "", "Fara"]))
    assert kept.field("name") == "{Preferred First Name || Legal First Name} {Legal Last Name}"
    assert kept.field("manager_name") == "Reports To Name"


def test_several_columns_of_ids_are_named_in_the_todo_not_denied() -> None:
    no_ids = ("Associate ID", "Reports To Associate ID")
    columns = [c for c in _adp([""] * 6, manager="id") if c.name not in no_ids]
    columns.append(Column("Position ID", tuple(f"P{i}" for i in range(6))))
    columns.append(Column("Worker Key", tuple(p[0] for p in PEOPLE)))
    proposal = propose(columns)
    (todo,) = [t for t in proposal.todos if t.key == "source.fields.employee_id"]
    assert "Position ID" in todo.why and "Worker Key" in todo.why
    assert "no column holds" not in todo.why


def test_adp_s_associate_id_is_the_employee_id_beside_a_position_id() -> None:
    columns = [*_adp([""] * 6), Column("Position ID", tuple(f"P{i}" for i in range(6)))]
    assert propose(columns).field("employee_id") == "Associate ID"


def test_a_one_word_preferred_name_is_a_preferred_first_name() -> None:
    """BambooHR's Preferred Name holds "Bob", not "Bob Okonkwo"."""
    people = [(p[0], *p[1].split(" "), p[2], "Benny" if p[0] == "E2" else "") for p in PEOPLE]
    names = ("Employee #", "First Name", "Last Name", "Work Email", "Preferred Name")
    proposal = propose(table(names, people))
    assert proposal.field("name") == "{Preferred Name || First Name} {Last Name}"


def test_a_column_that_might_hold_the_department_is_named_in_the_note() -> None:
    # Workday and SAP exports often group people by cost center (or function) and have
    # no column called department: not proposed, since a cost center is often a finance
    # code, but named, so a person knows where to look.
    people = [(*p[:4], p[4]) for p in PEOPLE]
    proposal = propose(
        table(("Employee ID", "Full Name", "Work Email", "Manager ID", "Cost Center"), people)
    )
    assert proposal.field("department") == ""
    (note,) = [n for n in proposal.notes if "department" in n]
    assert "Cost Center might hold it (3 different values)" in note, note


@pytest.mark.parametrize("name", ["Phone Area Code", "Community", "Pay Group ID"])
def test_a_column_is_named_as_a_possible_department_only_when_it_groups_people(
    name: str,
) -> None:
    # A word inside another ("Community" holds "unit"), or a column of a value per
    # person, groups nobody.
    people = [(*p[:4], f"value {i}") for i, p in enumerate(PEOPLE)]
    proposal = propose(
        table(("Employee ID", "Full Name", "Work Email", "Manager ID", name), people)
    )
    (note,) = [n for n in proposal.notes if "department" in n]
    assert "might hold it" not in note, note
