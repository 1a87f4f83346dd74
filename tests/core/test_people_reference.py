"""`read_people` equals its plain, row-by-row reference (tests/core/people_reference.py) on
every field of every person, every problem and every warning.

The exports are small and dense in trouble (ids and e-mails held twice, managers who are
filtered out, absent, themselves or on a cycle, null words, control characters, names
given as `Last, First`), and sometimes long enough, with few distinct values per column,
for the column engine's shortcuts to apply. The same rows reach `read_people` as records
read one by one (some lacking columns), as one table, or as one table whose locations
are written when asked.
"""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from hrsync.core.export.rows import MAX_FIELD_CHARS, LineLocations, RowTable, SourceRow
from hrsync.core.people import Directory, read_people
from hrsync.core.settings import DEFAULT_NULL_VALUES, FieldSettings, FilterSettings
from tests.core.people_reference import read_people_by_row

COLUMNS = (
    "Employee ID",
    "Work Email",
    "Full Name",
    "Manager ID",
    "Manager Email",
    "Manager Name",
    "Department",
    "Status",
    "Title",
)

IDS = ("E1", "E2", "E3", "E10", " E2 ", "e1", "", "NULL")
EMAILS = ("ann@x.io", "BO@x.io", " cy@x.io ", "di@x.io", "not-an-address", "", "-")
NAMES = ("Ann Lee", "Lee, Ann", "A. Lee", "Bo  Chen", " Cy\u00a0Do ", "", "N/A", "Ann\tLee")


def pool_or_text(pool: tuple[str, ...], alphabet: str) -> st.SearchStrategy[str]:
    return st.one_of(st.sampled_from(pool), st.text(alphabet=alphabet, max_size=6))


row_values = st.fixed_dictionaries(
    {
        "Employee ID": st.sampled_from(IDS),
        "Work Email": st.sampled_from(EMAILS),
        "Full Name": pool_or_text(NAMES, "aB ,.-\t\u00a0\x00"),
        "Manager ID": st.sampled_from((*IDS, "E9", "", "", "")),
        "Manager Email": st.sampled_from((*EMAILS, "", "", "")),
        "Manager Name": st.sampled_from((*NAMES, "ann lee", "Nobody", "", "", "")),
        "Department": pool_or_text(("Eng", "Eng/Platform", " Sales  EMEA ", "", "null"), "aB /"),
        "Status": st.sampled_from(("Active", " active ", "Leave", "Terminated", "", "None")),
        "Title": st.sampled_from(("Staff", "", " Lead ", "a\x1bb\rc", "x" * (MAX_FIELD_CHARS + 1))),
    }
)

field_settings = st.builds(
    FieldSettings,
    employee_id=st.sampled_from(("Employee ID", "Employee ID", "{Employee ID|upper}")),
    email=st.sampled_from(
        (
            "Work Email",
            "Work Email",
            "{Employee ID|lower}@x.io",
            "{Full Name|first|ascii|nospace|lower}.{Employee ID}@x.io",
        )
    ),
    name=st.sampled_from(("Full Name", "Full Name", "{Full Name|first} {Full Name|last}")),
    manager_id=st.sampled_from(("Manager ID", "Manager ID", "")),
    manager_email=st.sampled_from(("", "Manager Email")),
    manager_name=st.sampled_from(("", "Manager Name")),
    department=st.sampled_from(("", "Department", "{Department|upper}")),
    status=st.sampled_from(("", "Status", "Status", "Status")),
)

filter_settings = st.builds(
    FilterSettings,
    active_status=st.sampled_from(((), ("Active",), ("Active",), ("active", " Leave "))),
    root=st.sampled_from((None, None, "", "E1", "E1", "E1", " E2 ", "ann@x.io", "nobody")),
    include=st.sampled_from(({},) * 5 + ({"Title": ("*",)}, {"Department": ("eng*", "sales*")})),
    exclude=st.sampled_from(({},) * 5 + ({"Status": ("leave",)}, {"Title": ("x*", "?")})),
)


@st.composite
def exports(draw: st.DrawFn) -> list[dict[str, str]]:
    """Rows: a handful of any; an org of unique ids whose managers are drawn among them
    (chains through people filtered out, and cycles); or dozens drawn from a few (a column
    of few distinct values is read through them)."""
    kind = draw(st.sampled_from(("any", "org", "org", "few")))
    if kind == "any":
        return draw(st.lists(row_values, max_size=10))
    if kind == "org":
        size = draw(st.integers(2, 8))
        ids = [f"E{i}" for i in range(1, size + 1)]
        emails = [f"{employee_id.lower()}@x.io" for employee_id in ids]
        return [
            {
                **draw(row_values),
                "Employee ID": employee_id,
                # Now and then E1's e-mail twice: a manager named by it is ambiguous.
                "Work Email": draw(st.sampled_from((emails[i],) * 3 + (emails[0],))),
                # Mostly someone earlier (a tree under E1), else anyone (cycles) or nobody.
                "Manager ID": draw(st.sampled_from((*ids[:i] * 4, "", *ids))),
                # When both are set, the id wins, and an e-mail naming someone else is told.
                "Manager Email": draw(st.sampled_from(("", "", *emails))),
                # Managers filtered out, their reports kept: chains through them.
                "Status": draw(st.sampled_from(("Active", "Active", "Terminated"))),
            }
            for i, employee_id in enumerate(ids)
        ]
    few = draw(st.lists(row_values, min_size=1, max_size=4))
    return draw(st.lists(st.sampled_from(few), min_size=24, max_size=48))


@st.composite
def as_read(draw: st.DrawFn, rows: list[dict[str, str]]) -> tuple[list[SourceRow], Any]:
    """The rows as the reference reads them, and as `read_people` is given them."""
    form = draw(st.sampled_from(("records", "table", "lines")))
    if form == "records":
        # JSON-like records, some without some columns: those read as blank, and a
        # person's row holds only their own.
        records = []
        for i, values in enumerate(rows):
            lacking = draw(st.sets(st.sampled_from(("Title", "Manager Email", "Department"))))
            own = {k: v for k, v in values.items() if k not in lacking}
            records.append(SourceRow(f"people.json Report_Entry[{i}]", own))
        return records, records
    locations = [f"hr.csv line {i + 2}" for i in range(len(rows))]
    records = [SourceRow(where, values) for where, values in zip(locations, rows, strict=True)]
    cells = [tuple(values[c] for c in COLUMNS) for values in rows]
    longest = max((len(v) for row in cells for v in row), default=0)
    table = RowTable(
        {c: i for i, c in enumerate(COLUMNS)},
        cells,
        LineLocations("hr.csv", 2, len(rows)) if form == "lines" else locations,
        {},
        longest=draw(st.sampled_from((None, longest))),  # told by the reader, or not
    )
    return records, table


def shown(directory: Directory) -> dict[str, object]:
    """Everything a directory says, people as their fields read."""
    return {
        "people": [(*p[:6], p.location, dict(p.attributes)) for p in directory.people],
        "problems": list(directory.problems),
        "warnings": list(directory.warnings),
        "excluded": (directory.excluded, dict(directory.excluded_by_reason)),
        "rows_read": directory.rows_read,
        "unknown_managers": list(directory.unknown_managers),
    }


@settings(max_examples=1000, deadline=None)
@given(
    st.data(),
    exports(),
    field_settings,
    filter_settings,
    st.sampled_from(((), ("Title",))),
    st.sampled_from((DEFAULT_NULL_VALUES, ())),
    st.sampled_from(("refuse", "top")),
)
def test_read_people_equals_its_row_by_row_reference(
    data: st.DataObject,
    rows: list[dict[str, str]],
    fields: FieldSettings,
    filters: FilterSettings,
    also_used: tuple[str, ...],
    null_values: tuple[str, ...],
    unknown_manager: str,
) -> None:
    records, given_rows = data.draw(as_read(rows))
    options: dict[str, Any] = {
        "also_used": also_used,
        "null_values": null_values,
        "unknown_manager": unknown_manager,
    }
    fast = read_people("hr.csv", COLUMNS, given_rows, fields, filters, **options)
    plain = read_people_by_row("hr.csv", COLUMNS, records, fields, filters, **options)
    assert shown(fast) == shown(plain)
    assert fast == plain  # people equal as Person compares them, too
