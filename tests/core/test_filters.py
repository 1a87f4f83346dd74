"""The row filters: status, include/exclude globs on logical fields or HR columns (pure)."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from hrsync.core.export.filters import (
    STATUS_REASON,
    build_row_filter,
    canonical,
    closest_name,
    column_for,
)
from hrsync.core.settings import FieldSettings, FilterSettings

FIELDS = FieldSettings(
    employee_id="Employee ID",
    email="Work Email",
    name="Full Name",
    department="Org Unit",
    status="status",
)
COLUMNS = ("Employee ID", "Work Email", "Full Name", "manager_id", "Org Unit", "status", "Title")


def matches_any(value: str, patterns: list[str]) -> bool:
    """Whether an include rule with `patterns` keeps a row whose Title is `value`."""
    including, _ = build_row_filter(
        FilterSettings(active_status=(), include={"Title": tuple(patterns)}), FIELDS, COLUMNS
    )
    return including.reason(values(Title=value)) is None


def values(**overrides: str) -> dict[str, str]:
    row = {
        "Employee ID": "E1",
        "Work Email": "ada@example.com",
        "Full Name": "Ada Okafor",
        "manager_id": "",
        "Org Unit": "Engineering/Platform",
        "status": "Active",
        "Title": "Staff Engineer",
    }
    row.update(overrides)
    return row


@pytest.mark.parametrize(
    ("value", "patterns", "expected"),
    [
        ("Engineering", ["engineering"], True),  # exact, any case
        ("Engineering", ["Eng"], False),  # exact means the whole value
        ("Engineering/Platform", ["engineering/*"], True),
        ("  Engineering   Platform ", ["engineering platform"], True),  # spaces normalised
        ("Sales", ["Eng*", "Sal?s"], True),  # any pattern
        ("Sales", [], False),
        ("B", ["[abc]"], True),
        ("x@contractor.example.com", ["*@CONTRACTOR.example.com"], True),
    ],
)
def test_glob_matching(value: str, patterns: list[str], expected: bool) -> None:
    assert matches_any(value, patterns) is expected
    # The exclude rules match with the very same patterns.
    excluding, _ = build_row_filter(
        FilterSettings(active_status=(), exclude={"Title": tuple(patterns)}), FIELDS, COLUMNS
    )
    assert (excluding.reason(values(Title=value)) is not None) is expected


def test_filter_fields_are_logical_names_first_then_hr_columns() -> None:
    assert column_for("department", FIELDS, COLUMNS) == "Org Unit"
    assert column_for("Title", FIELDS, COLUMNS) == "Title"
    assert column_for("email", FIELDS, COLUMNS) == "Work Email"
    assert column_for("manager_email", FIELDS, COLUMNS) is None  # not configured, not a column
    assert column_for("Nope", FIELDS, COLUMNS) is None


@pytest.mark.parametrize(
    ("settings", "row", "reason"),
    [
        (FilterSettings(), values(), None),
        (FilterSettings(), values(status=" active "), None),
        (FilterSettings(), values(status="Terminated"), STATUS_REASON),
        (FilterSettings(), values(status=""), STATUS_REASON),
        (FilterSettings(active_status=()), values(status="Terminated"), None),
        (FilterSettings(active_status=("Active", "Leave")), values(status="leave"), None),
        (FilterSettings(include={"department": ("Engineering/*",)}), values(), None),
        (
            FilterSettings(include={"department": ("Sales*",)}),
            values(),
            "filter.include.department",
        ),
        (
            FilterSettings(include={"department": ("Eng*",), "Title": ("*manager*",)}),
            values(),
            "filter.include.Title",
        ),
        (FilterSettings(exclude={"Title": ("*intern*",)}), values(), None),
        (
            FilterSettings(exclude={"Title": ("*intern*", "staff *")}),
            values(),
            "filter.exclude.Title",
        ),
        (
            FilterSettings(include={"email": ("*@example.com",)}, exclude={"name": ("ada *",)}),
            values(),
            "filter.exclude.name",
        ),
    ],
)
def test_row_filter_reasons(
    settings: FilterSettings, row: dict[str, str], reason: str | None
) -> None:
    row_filter, unknown = build_row_filter(settings, FIELDS, COLUMNS)
    assert unknown == []
    assert row_filter.reason(row) == reason


def test_status_is_not_filtered_when_the_export_has_no_status_column() -> None:
    fields = FieldSettings(status="")
    row_filter, _ = build_row_filter(FilterSettings(), fields, ("employee_id",))
    assert row_filter.reason({"employee_id": "1"}) is None


def test_unknown_filter_fields_are_reported_with_a_suggestion() -> None:
    settings = FilterSettings(include={"departmnt": ("x",)}, exclude={"Titel": ("y",)})
    _, unknown = build_row_filter(settings, FIELDS, COLUMNS)
    assert [(u.setting, u.field, u.suggestion) for u in unknown] == [
        ("filter.include.departmnt", "departmnt", "department"),
        ("filter.exclude.Titel", "Titel", "Title"),
    ]


def test_closest_name_ignores_case() -> None:
    assert closest_name("work email", ["Employee ID", "Work Email"]) == "Work Email"
    assert closest_name("zzz", ["Employee ID"]) is None


@given(st.text(max_size=30))
def test_canonical_is_idempotent(value: str) -> None:
    assert canonical(canonical(value)) == canonical(value)


@given(st.text(alphabet=st.characters(codec="latin-1", exclude_characters="*?[]"), max_size=20))
def test_a_value_without_wildcards_matches_itself_in_any_case(value: str) -> None:
    assert matches_any(value.upper(), [value])
    assert matches_any(f"  {value} ", [value.lower()])
