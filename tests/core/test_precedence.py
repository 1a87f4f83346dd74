"""Per-field precedence across sources as pure functions (issue 26): a `[source.fields]`
entry written as a list of columns takes the first non-empty value of a person's row, and
says which column gave it."""

from __future__ import annotations

from collections.abc import Sequence

import pytest
from hypothesis import given
from hypothesis import strategies as st

from hrsync.core.export.rows import RowTable, SourceRow
from hrsync.core.people import read_people
from hrsync.core.people.precedence import (
    add_columns,
    apply_precedence,
    first_of_column,
    provenance,
    winner,
)
from hrsync.core.settings import FieldSettings, FilterSettings

NULLS = ("", "NULL", "n/a")
COLUMNS = ("ID", "Work_Email", "Boss", "entra.mail", "Name")


def table(rows: Sequence[Sequence[str]], columns: Sequence[str] = COLUMNS) -> RowTable:
    return RowTable.of_rows(
        [
            SourceRow(f"report.csv line {i + 2}", dict(zip(columns, row, strict=True)))
            for i, row in enumerate(rows)
        ],
        columns,
    )


ROWS = [
    ("1", "ann@work.example", "", "ann@entra.example", "Ann"),
    ("2", "bob@work.example", "1", "", "Bob"),
    ("3", "", "1", "  NULL ", "Cy"),
    ("4", "  dee@work.example ", "1", "n/a", "Dee"),
]
EMAIL = {"email": ("entra.mail", "Work_Email")}


def made(rows: Sequence[Sequence[str]] = ROWS, first_of=EMAIL, own: str = ""):  # type: ignore[no-untyped-def]
    return apply_precedence(
        "report.csv", COLUMNS, table(rows), first_of, null_values=NULLS, own=own
    )


def column(done, name: str) -> list[str]:  # type: ignore[no-untyped-def]
    position = done.table.index[name]
    return [cells[position] for cells in done.table.cells]


def test_the_first_non_empty_value_wins_and_each_column_is_counted() -> None:
    done = made()
    name = first_of_column(EMAIL["email"])
    assert name == "first of entra.mail, Work_Email"
    assert done.refusals == ()
    assert name in done.columns
    # A null word and blanks are empty; the value is read (trimmed) as every value is.
    assert column(done, name) == ["ann@entra.example", "bob@work.example", "", "dee@work.example"]
    [report] = done.reports
    assert [(s.name, s.won) for s in report.sources] == [("entra.mail", 1), ("Work_Email", 2)]
    assert report.empty == 1
    assert report.line() == "source.fields.email: entra.mail 1, Work_Email 2, none 1"


def test_the_rows_own_cells_are_kept_as_they_were() -> None:
    done = made()
    for before, after in zip(table(ROWS).cells, done.table.cells, strict=True):
        assert tuple(after[: len(before)]) == tuple(before)
    assert done.table.locations == table(ROWS).locations


def test_the_exports_own_name_reads_its_columns() -> None:
    done = made(first_of={"email": ("entra.mail", "workday.Work_Email")}, own="workday")
    assert done.refusals == ()
    assert column(done, "first of entra.mail, workday.Work_Email")[1] == "bob@work.example"


@pytest.mark.parametrize(
    ("names", "own", "expected"),
    [
        (
            ("entra.mail", "Work_Emial"),
            "",
            "source.fields.email entry 2 'Work_Emial' is not a column of report.csv or of a "
            "join, did you mean 'Work_Email'?",
        ),
        # Without source.name, "workday." is no prefix of the export's.
        (("workday.Work_Email",), "", "entry 1 'workday.Work_Email' is not a column"),
        (("okta.email", "Work_Email"), "hr", "entry 1 'okta.email' is not a column"),
    ],
)
def test_a_name_that_is_no_column_refuses_naming_the_field_and_place(
    names: tuple[str, ...], own: str, expected: str
) -> None:
    done = made(first_of={"email": names}, own=own)
    assert done.reports == ()
    [refusal] = done.refusals
    assert expected in refusal


def test_the_people_read_the_lists_column_and_its_messages_name_the_list() -> None:
    done = made()
    fields = FieldSettings(
        employee_id="ID",
        email=first_of_column(EMAIL["email"]),
        name="Name",
        manager_id="Boss",
    )
    directory = read_people(
        "report.csv",
        done.columns,
        done.table,
        fields,
        FilterSettings(active_status=()),
        null_values=NULLS,
        hold_people=True,
    )
    emails = {p.employee_id: p.email for p in directory.people}
    assert emails == {"1": "ann@entra.example", "2": "bob@work.example", "4": "dee@work.example"}
    [held] = directory.held
    assert held.employee_id == "3"
    assert "first of entra.mail, Work_Email" in held.problems[0].field


def test_explain_says_which_column_gave_the_value() -> None:
    values = {"entra.mail": "", "Work_Email": "bob@work.example", "Name": "Bob"}
    assert winner(values, EMAIL["email"]) == ("Work_Email", "bob@work.example")
    assert provenance(values, {**EMAIL, "name": ("entra.displayName", "Name")}) == [
        "  email: 'bob@work.example' from Work_Email (entra.mail empty)",
        "  name: 'Bob' from Name (entra.displayName empty)",
    ]
    assert provenance({"Work_Email": ""}, EMAIL) == [
        "  email: empty in every one of entra.mail, Work_Email"
    ]
    assert winner({"Work_Email": "x@y"}, ("hr.Work_Email",), own="hr") == ("hr.Work_Email", "x@y")


def test_json_records_without_a_key_read_the_lists_value() -> None:
    rows = [
        SourceRow("r.json [0]", {"id": "1", "mail": "a@x.example"}),
        SourceRow("r.json [1]", {"id": "2", "upn": "b@x.example"}),
    ]
    done = apply_precedence(
        "r.json",
        ("id", "mail", "upn"),
        RowTable.of_rows(rows, ("id", "mail", "upn")),
        {"email": ("mail", "upn")},
        null_values=NULLS,
    )
    fields = FieldSettings(employee_id="id", email="first of mail, upn", name="id", manager_id="")
    directory = read_people(
        "r.json",
        done.columns,
        done.table,
        fields,
        FilterSettings(active_status=()),
        null_values=NULLS,
        unknown_manager="top",
    )
    assert [p.email for p in directory.people] == ["a@x.example", "b@x.example"]


def test_no_list_leaves_the_rows_as_they_are() -> None:
    rows = table(ROWS)
    done = apply_precedence("report.csv", COLUMNS, rows, {}, null_values=NULLS)
    assert done.table is rows and done.columns == COLUMNS


# A value as an export may write it: blank, padded, a null word, or text.
VALUE = st.sampled_from(["", " ", "NULL", " n/a ", "a@x", " b@y ", "c", "Δ"])


@given(
    rows=st.lists(st.tuples(VALUE, VALUE, VALUE), max_size=40),
    order=st.permutations(["A", "B", "C"]),
    as_lists=st.booleans(),
)
def test_the_column_is_the_plain_first_non_empty_of_each_row(
    rows: list[tuple[str, str, str]], order: list[str], as_lists: bool
) -> None:
    """The fast path (whole columns, in C) against a plain loop over each row."""
    columns = ("A", "B", "C")
    source = RowTable(
        {c: i for i, c in enumerate(columns)},
        [list(r) if as_lists else r for r in rows],
        [f"line {i}" for i in range(len(rows))],
        {},
    )
    done = apply_precedence("t", columns, source, {"email": tuple(order)}, null_values=NULLS)

    def read(value: str) -> str:
        value = value.strip()
        return "" if value in NULLS else value

    expected = []
    won = dict.fromkeys(order, 0)
    for row in rows:
        value = dict(zip(columns, map(read, row), strict=True))
        first = next((name for name in order if value[name]), None)
        expected.append(value[first] if first else "")
        if first:
            won[first] += 1
    assert column(done, first_of_column(order)) == expected
    [report] = done.reports
    assert {s.name: s.won for s in report.sources} == won
    assert report.empty == expected.count("")


def test_add_columns_puts_new_cells_after_every_cell() -> None:
    rows = table(ROWS)
    added = add_columns(rows, {"X": ["1", "2", "3", "4"]})
    assert [cells[added.index["X"]] for cells in added.cells] == ["1", "2", "3", "4"]
    assert added.index["ID"] == rows.index["ID"]
    assert add_columns(rows, {}) is rows
