"""Reading JSON exports: top-level lists, Workday's Report_Entry, dotted paths, bad shapes."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hrsync.core.export.rows import Several
from hrsync.core.people import read_people
from hrsync.core.settings import FieldSettings, FilterSettings, SourceSettings
from hrsync.sources.base import Export, Payload, SourceError
from hrsync.sources.json_reader import _streamed, flatten, open_json
from hrsync.sources.open import open_export


def write_json(tmp_path: Path, document: Any, name: str = "report.json") -> Path:
    path = tmp_path / name
    path.write_text(json.dumps(document), encoding="utf-8")
    return path


def export_of(path: Path, **settings: object) -> Export:
    return open_export(SourceSettings(path=path, **settings))  # type: ignore[arg-type]


def table(export: Export) -> list[tuple[str, dict[str, str]]]:
    return [(row.location, dict(row.values)) for row in export.rows()]


WORKDAY = {
    "Report_Entry": [
        {
            "Employee_ID": 1001,
            "Worker": "Ada Lovelace",
            "Email": "ada@example.com",
            "Worker_Group": [{"Department": "Engineering", "Cost_Center": "CC1"}],
            "Status": "Active",
        },
        {
            "Employee_ID": "1002",
            "Worker": "Bob Byte",
            "Email": "bob@example.com",
            "Manager": {"ID": 1001, "Email": "ada@example.com"},
            "Worker_Group": [{"Department": "Engineering"}, {"Department": "Platform"}],
            "Status": "Active",
            "FTE": 1.0,
            "Contractor": False,
            "Location": None,
        },
    ]
}


def test_top_level_list(tmp_path: Path) -> None:
    path = write_json(tmp_path, [{"id": "1", "email": "a@x.io"}, {"id": 2, "email": "b@x.io"}])
    export = export_of(path)
    assert export.format == "json"
    assert export.columns == ("id", "email")
    assert table(export) == [
        ("report.json [0]", {"id": "1", "email": "a@x.io"}),
        ("report.json [1]", {"id": "2", "email": "b@x.io"}),
    ]


def test_workday_report_entry_with_nested_values_by_dotted_path(tmp_path: Path) -> None:
    export = export_of(write_json(tmp_path, WORKDAY), records_path="Report_Entry")
    first, second = table(export)
    assert first == (
        "report.json Report_Entry[0]",
        {
            "Employee_ID": "1001",
            "Worker": "Ada Lovelace",
            "Email": "ada@example.com",
            "Worker_Group.Department": "Engineering",  # a list of one object reads as the object
            "Worker_Group.Cost_Center": "CC1",
            "Status": "Active",
        },
    )
    assert second[0] == "report.json Report_Entry[1]"
    values = second[1]
    assert values["Manager.ID"] == "1001"
    assert values["Manager.Email"] == "ada@example.com"
    assert values["Worker_Group.Department"] == "Engineering; Platform"
    assert values["Worker_Group.1.Department"] == "Platform"
    assert values["FTE"] == "1"
    assert values["Contractor"] == "false"
    assert values["Location"] == ""
    # Columns are the union over all records, without the per-item paths.
    assert "Manager.ID" in export.columns
    assert "Worker_Group.Cost_Center" in export.columns
    assert not any(".0." in column or ".1." in column for column in export.columns)


def test_records_path_can_go_deeper(tmp_path: Path) -> None:
    path = write_json(tmp_path, {"data": {"people": [{"id": "1"}]}, "meta": {}})
    assert table(export_of(path, records_path="data.people")) == [
        ("report.json data.people[0]", {"id": "1"})
    ]


@pytest.mark.parametrize(
    ("document", "records_path", "expected"),
    [
        (WORKDAY, "Report_Entries", r"Report_Entries' not found.*did you mean 'Report_Entry'"),
        ({"Report_Entry": {"id": 1}}, "Report_Entry", "Report_Entry is an object, expected a list"),
        ({"a": [1]}, "a.b", r"cannot be followed: a is a list, not an object"),
        (WORKDAY, "", r"top level is an object.*set source.records_path.*'Report_Entry'"),
        ("text", "", "top level is a string"),
        ([], "", "has no people: the list at the top level is empty"),
        ([{"id": 1}, "x"], "", r"report.json \[1\] is a string, expected an object"),
    ],
)
def test_unusable_structure_is_a_source_error(
    tmp_path: Path, document: Any, records_path: str, expected: str
) -> None:
    path = write_json(tmp_path, document)
    with pytest.raises(SourceError, match=expected) as caught:
        export_of(path, records_path=records_path)
    assert "report.json" in str(caught.value)


def test_invalid_json_names_line_and_column(tmp_path: Path) -> None:
    path = tmp_path / "report.json"
    path.write_text('[\n {"id": 1},\n {"id": 2\n]\n', encoding="utf-8")
    with pytest.raises(SourceError, match=r"report.json is not valid JSON: .* at line 4 column 1"):
        export_of(path)


def test_a_number_of_thousands_of_digits_is_a_source_error(tmp_path: Path) -> None:
    # json.loads refuses more than 4,300 digits with a plain ValueError: it was a crash.
    path = tmp_path / "report.json"
    path.write_text('[\n {"id": ' + "9" * 5000 + ', "email": "a@x.io"}\n]\n', encoding="utf-8")
    with pytest.raises(SourceError) as caught:
        export_of(path)
    message = str(caught.value)
    assert message == (
        "report.json has a number of 5,000 digits at line 2 column 9: too long for any HR "
        "value (at most 4,300 digits are read)"
    )


def test_empty_json_file(tmp_path: Path) -> None:
    path = tmp_path / "report.json"
    path.write_text("  \n", encoding="utf-8")
    with pytest.raises(SourceError, match=r"report\.json is empty"):
        export_of(path)


def test_format_is_sniffed_from_content_without_an_extension(tmp_path: Path) -> None:
    path = write_json(tmp_path, WORKDAY, name="export")
    export = export_of(path, records_path="Report_Entry")
    assert export.format == "json"
    csv_path = tmp_path / "export2"
    csv_path.write_text("id,email\n1,a@x.io\n", encoding="utf-8")
    assert export_of(csv_path).format == "csv"


def test_configured_format_wins_over_the_extension(tmp_path: Path) -> None:
    path = write_json(tmp_path, [{"id": "1"}], name="people.txt")
    assert export_of(path, format="json").format == "json"


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ({"a": []}, {"a": ""}),
        ({"a": [1, 2]}, {"a": "1; 2", "a.0": "1", "a.1": "2"}),
        ({"a": [[{"b": "x"}]]}, {"a.b": "x"}),
        ({"a": [{"b": ""}, {"b": "y"}]}, {"a.0.b": "", "a.1.b": "y", "a.b": "y"}),
        ({"n": 2.5, "m": -3, "t": True}, {"n": "2.5", "m": "-3", "t": "true"}),
    ],
)
def test_flattening_rules(value: dict[str, Any], expected: dict[str, str]) -> None:
    out: dict[str, str] = {}
    flatten(value, "", out)
    assert out == expected


def test_absurdly_deep_nesting_is_a_source_error(tmp_path: Path) -> None:
    path = tmp_path / "report.json"
    path.write_text("[" * 100_000 + "]" * 100_000, encoding="utf-8")
    with pytest.raises(SourceError, match="nests its values too deeply"):
        export_of(path)


GOOGLE_USERS = {
    "users": [
        {
            "primaryEmail": "ann@x.com",
            "externalIds": [{"type": "organization", "value": "E1"}],
            "relations": [
                {"type": "dotted_line_manager", "value": "bob@x.com"},
                {"type": "manager", "value": "cat@x.com"},
            ],
        },
        {
            "primaryEmail": "bob@x.com",
            "externalIds": [{"type": "organization", "value": "E2"}],
            "relations": [{"type": "manager", "value": "cat@x.com"}],
        },
        {"primaryEmail": "cat@x.com", "externalIds": [{"type": "organization", "value": "E3"}]},
    ]
}


def test_a_path_that_picks_from_a_list_is_read_as_its_own_column(tmp_path: Path) -> None:
    path = write_json(tmp_path, GOOGLE_USERS)
    picked = "relations[type=manager].value"
    fields = FieldSettings(employee_id="externalIds.value", email="primaryEmail")
    export = export_of(
        path, records_path="users", fields=dataclasses.replace(fields, manager_email=picked)
    )
    assert picked in export.columns
    assert [row.values[picked] for row in export.rows()] == ["cat@x.com", "cat@x.com", ""]
    assert [row.several for row in export.rows()][1:] == [None, None]


def test_a_pick_of_a_list_no_record_has_is_a_missing_column(tmp_path: Path) -> None:
    path = write_json(tmp_path, GOOGLE_USERS)
    fields = FieldSettings(manager_email="relashions[type=manager].value")
    export = export_of(path, records_path="users", fields=fields)
    assert "relashions[type=manager].value" not in export.columns


def test_an_unpicked_list_of_several_values_is_marked_on_its_row(tmp_path: Path) -> None:
    export = export_of(write_json(tmp_path, GOOGLE_USERS), records_path="users")
    first = next(export.rows())
    assert first.values["relations.value"] == "bob@x.com; cat@x.com"
    assert first.several is not None
    assert first.several["relations.value"] == Several(
        ("bob@x.com", "cat@x.com"), "relations[0].value"
    )
    assert 0 in export.table().several and 1 not in export.table().several


def test_items_with_the_same_value_read_as_that_value() -> None:
    out: dict[str, str] = {}
    several: dict[str, Several] = {}
    flatten({"jobs": [{"m": "E1", "t": "a"}, {"m": "E1", "t": "b"}]}, "", out, several)
    assert out["jobs.m"] == "E1" and out["jobs.t"] == "a; b"
    assert list(several) == ["jobs.t"]


def test_workday_positions_pick_the_primary_one(tmp_path: Path) -> None:
    """The Workday example of docs/reference/exports.md ("How lists are read")."""
    worker = {
        "Employee_ID": "E110",
        "Positions": [
            {"Primary": "0", "Manager_ID": "E020", "Supervisory_Organization": "Platform"},
            {"Primary": "1", "Manager_ID": "E011", "Supervisory_Organization": "Payments"},
        ],
    }
    fields = FieldSettings(
        manager_id="Positions[Primary=1].Manager_ID",
        department="Positions[Primary=1].Supervisory_Organization",
    )
    path = write_json(tmp_path, {"Report_Entry": [worker]})
    export = export_of(path, records_path="Report_Entry", fields=fields)
    (row,) = export.rows()
    assert row.values[fields.manager_id] == "E011"
    assert row.values[fields.department] == "Payments"
    assert set(row.several or ()) == {"Positions.Primary", "Positions.Manager_ID"} | {
        "Positions.Supervisory_Organization"
    }


def held_details(tmp_path: Path, email: Any, **more: Any) -> list[str]:
    """What holding says of the second of three people, whose record has `email`."""
    people = [
        {"employee_id": 1, "email": "ada@x.io", "name": "Ada", "manager_id": ""},
        {"employee_id": 2, "email": email, "name": "Bob", "manager_id": 1, **more},
        {"employee_id": 3, "email": "cy@x.io", "name": "Cy", "manager_id": 1},
    ]
    export = export_of(write_json(tmp_path, people))
    directory = read_people(
        export.name,
        export.columns,
        export.table(),
        FieldSettings(),
        FilterSettings(),
        hold_people=True,
    )
    assert directory.problems == ()
    return [f"{h.location}: {h.detail}" for h in directory.held]


@pytest.mark.parametrize(
    ("email", "said"),
    [
        ({"primary": "bob@x.io"}, "email is an object, expected text"),
        ([{"primary": "bob@x.io"}, {"other": "b@y.io"}], "email is a list, expected text"),
        (True, "email is a boolean, expected text"),
        (42, "email is a number, expected text"),
    ],
)
def test_a_value_of_the_wrong_type_is_named_as_such(tmp_path: Path, email: Any, said: str) -> None:
    assert held_details(tmp_path, email) == [f"report.json [1]: {said}"]


def test_a_number_is_text_enough_for_an_id(tmp_path: Path) -> None:
    # HR APIs give employee ids as numbers: read as their digits, nobody held.
    assert held_details(tmp_path, "bob@x.io") == []


# A record of an HR export: text, numbers, null, nested objects and lists of them.
_SCALARS = st.one_of(
    st.text(max_size=6),
    st.integers(-(10**6), 10**6),
    st.floats(allow_nan=False, allow_infinity=False, width=32),
    st.booleans(),
    st.none(),
)
_KEYS = st.sampled_from(["id", "name", "Manager", "ID", "Worker_Group", "é", "a.b"])
_VALUES = st.recursive(
    _SCALARS,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(_KEYS, inner, max_size=3),
    max_leaves=8,
)
_RECORDS = st.lists(st.dictionaries(_KEYS, _VALUES, max_size=5), min_size=1, max_size=5)


@settings(max_examples=60, deadline=None)
@given(records=_RECORDS, wrapped=st.booleans())
def test_a_file_read_record_by_record_reads_as_the_whole_document(
    tmp_path_factory: pytest.TempPathFactory, records: list[dict[str, Any]], wrapped: bool
) -> None:
    path = write_json(
        tmp_path_factory.mktemp("s"), {"Report_Entry": records} if wrapped else records
    )
    records_path = "Report_Entry" if wrapped else ""
    picks = ("Worker_Group[0].ID", "Manager[name=x].ID")
    streamed = _streamed(Payload.from_path(path), "utf-8-sig", records_path, picks, None)
    whole = open_json(
        Payload.from_path(path), encoding="utf-8-sig", records_path=records_path, picks=picks
    )
    assert streamed is not None  # text beside other kinds at one path too
    assert streamed.columns == whole.columns
    assert [(r.location, dict(r.values), r.several) for r in streamed.rows()] == [
        (r.location, dict(r.values), r.several) for r in whole.rows()
    ]


# Numbers and text, never at one path: read record by record.
STREAMED = {
    "Report_Entry": [
        {"Employee_ID": 1001, "Worker": "Ada", "Manager": {"ID": 7}, "FTE": 1.0},
        {"Employee_ID": 1002, "Worker": "Bob", "Groups": [{"ID": "x"}, {"ID": "y"}]},
    ]
}


def test_an_export_of_text_with_numbers_of_their_own_is_read_record_by_record(
    tmp_path: Path,
) -> None:
    path = write_json(tmp_path, STREAMED)
    streamed = _streamed(Payload.from_path(path), "utf-8-sig", "Report_Entry", (), None)
    whole = export_of(path, records_path="Report_Entry")
    assert streamed is not None
    assert table(streamed) == table(whole)


def test_text_and_an_object_at_one_path_is_marked_on_its_row_record_by_record(
    tmp_path: Path,
) -> None:
    records = [{"email": "a@x.com"}, {"email": {"work": "b@x.com"}}, {"email": 7}]
    path = write_json(tmp_path, records)
    streamed = _streamed(Payload.from_path(path), "utf-8-sig", "", (), ["email"])
    assert streamed is not None
    assert [row.several for row in streamed.rows()] == [
        None,
        {"email": Several(('{"work": "b@x.com"}',), "", "an object")},
        {"email": Several(("7",), "", "a number")},
    ]


def test_a_file_larger_than_its_buffer_is_read_record_by_record(tmp_path: Path) -> None:
    # Pieces of decoded text longer than ijson's buffer (64 KiB): not one byte may be lost.
    records = [{"id": str(i), "name": "Zoë " + "x" * 50_000} for i in range(8)]
    path = write_json(tmp_path, {"Report_Entry": records})
    streamed = _streamed(Payload.from_path(path), "utf-8-sig", "Report_Entry", (), None)
    assert streamed is not None
    assert [row.values["id"] for row in streamed.rows()] == [str(i) for i in range(8)]


def test_a_run_keeps_only_the_columns_it_reads_but_lists_every_column(tmp_path: Path) -> None:
    path = write_json(tmp_path, STREAMED)
    export = export_of(path, records_path="Report_Entry")
    lean = open_export(SourceSettings(path=path, records_path="Report_Entry"), keep=["Worker"])
    assert lean.columns == export.columns
    assert {column for row in lean.table().rows() for column in row.values} == {"Worker"}


@pytest.mark.parametrize(
    "text",
    [
        '{"Report_Entry": [{"id": "1"}, {"id": "2"',  # cut off
        '{"Report_Entry": [{"id": "1"}, "two"]}',  # a record that is no object
        '{"Report_Entry": [{"id": "1\u0001"}]}',  # a control character
        '{"Report_Entry": []}',
        '{"Other": [{"id": "1"}]}',
        '[{"id": "1"}] trailing',
    ],
)
def test_what_the_streaming_pass_cannot_read_is_left_to_the_whole_document_reader(
    tmp_path: Path, text: str
) -> None:
    path = tmp_path / "report.json"
    path.write_text(text, encoding="utf-8")
    assert _streamed(Payload.from_path(path), "utf-8-sig", "Report_Entry", (), None) is None
    with pytest.raises(SourceError):
        export_of(path, records_path="Report_Entry")
