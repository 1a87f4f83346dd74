"""`[[source.join]]` as pure functions (issue 26): a lookup table joined to the people on
one key, its columns read as ``name.COLUMN``; a person matching no row (`one`) or two
rows is a problem of their own row; a join that cannot be trusted refuses the run."""

from __future__ import annotations

from collections.abc import Sequence

from hypothesis import given, settings
from hypothesis import strategies as st

from hrsync.core.export.filters import build_row_filter
from hrsync.core.export.rows import RowTable, Several, SourceRow
from hrsync.core.people import read_people
from hrsync.core.people.joins import (
    Joined,
    join_behind,
    join_people,
    names_read,
    provenance,
)
from hrsync.core.people.second_tables import SecondTable
from hrsync.core.report.explanation import find_excluded
from hrsync.core.settings import (
    AttributeSettings,
    FieldSettings,
    FilterSettings,
    JoinSettings,
    MappingSettings,
    Settings,
    SourceSettings,
)

PEOPLE_COLUMNS = ("EMPLOYEE_ID", "FIRST_NAME", "LAST_NAME", "EMAIL", "MANAGER_ID", "DEPT", "ST")
FIELDS = FieldSettings(
    employee_id="EMPLOYEE_ID",
    email="{EMAIL|lower}@example.com",
    name="{FIRST_NAME} {LAST_NAME}",
    manager_id="MANAGER_ID",
    department="departments.DEPARTMENT_NAME",
    status="ST",
)
DEPARTMENTS = (
    ("DEPARTMENT_ID", "DEPARTMENT_NAME", "MANAGER_ID", "LOCATION_ID"),
    ("10", "Administration", "200", "1700"),
    ("50", "Shipping", "121", "1500"),
    ("90", "Executive", "100", "1700"),
)


def table(name: str, rows: Sequence[Sequence[str]], first_line: int = 2) -> RowTable:
    header, *body = rows
    return RowTable.of_rows(
        [
            SourceRow(f"{name} line {first_line + i}", dict(zip(header, row, strict=True)))
            for i, row in enumerate(body)
        ],
        header,
    )


def person(eid: str, dept: str, manager: str = "100", status: str = "Active") -> tuple[str, ...]:
    return (
        eid,
        f"First{eid}",
        f"Last{eid}",
        f"P{eid}",
        manager if eid != "100" else "",
        dept,
        status,
    )


PEOPLE = [
    PEOPLE_COLUMNS,
    person("100", "90"),
    person("121", "50"),
    person("122", "50", "121"),
    person("200", "10"),
]


def join(
    name: str = "departments", on: tuple[str, str] = ("DEPT", "DEPARTMENT_ID"), **kw: str
) -> JoinSettings:
    return JoinSettings(name=name, on={on[0]: on[1]}, **kw)  # type: ignore[arg-type]


def run(
    people: Sequence[Sequence[str]] = PEOPLE,
    joins: Sequence[tuple[JoinSettings, Sequence[Sequence[str]]]] = ((join(), DEPARTMENTS),),
    *,
    fields: FieldSettings = FIELDS,
    read: Sequence[str] = ("departments.DEPARTMENT_NAME", "departments.MANAGER_ID"),
    nulls: Sequence[str] = ("NULL",),
) -> Joined:
    return join_people(
        "EMPLOYEES.csv",
        people[0],
        table("EMPLOYEES.csv", people),
        [
            (
                spec,
                SecondTable(
                    f"{spec.name}.csv",
                    tuple(rows[0]),
                    table(f"{spec.name}.csv", rows),
                    null_values=nulls,
                ),
            )
            for spec, rows in joins
        ],
        fields=fields,
        null_values=nulls,
        read=read,
    )


def directory(joined: Joined, fields: FieldSettings = FIELDS, **kw: object):  # type: ignore[no-untyped-def]
    return read_people(
        "EMPLOYEES.csv",
        joined.columns,
        joined.table,
        fields,
        FilterSettings(),
        row_problems=joined.findings,
        hold_people=True,
        **kw,  # type: ignore[arg-type]
    )


def test_a_join_adds_the_columns_read_under_its_name() -> None:
    joined = run()
    assert not joined.refusals and not joined.findings
    assert joined.columns == (
        *PEOPLE_COLUMNS,
        "departments.DEPARTMENT_NAME",
        "departments.MANAGER_ID",
        "departments.DEPARTMENT_ID",  # the key: where each value came from
    )
    people = directory(joined).people
    assert [(p.employee_id, p.department) for p in people] == [
        ("100", "Executive"),
        ("121", "Shipping"),
        ("122", "Shipping"),
        ("200", "Administration"),
    ]
    assert people[1].attributes["departments.MANAGER_ID"] == "121"
    (report,) = joined.reports
    assert (report.rows, report.matched, report.table_rows) == (4, 4, 3)
    assert report.on == "DEPT = DEPARTMENT_ID"
    row = report.row_for("50")
    assert row is not None and (row.location, row.people) == ("departments.csv line 3", 2)
    assert [(r.key, r.people) for r in report.rows_used()] == [("10", 1), ("50", 2), ("90", 1)]


def test_a_template_reads_a_joined_column() -> None:
    fields = FieldSettings(**{**vars(FIELDS), "department": "{departments.DEPARTMENT_NAME|upper}"})
    joined = run(fields=fields, read=("departments.DEPARTMENT_NAME",))
    assert [p.department for p in directory(joined, fields).people][:2] == ["EXECUTIVE", "SHIPPING"]


def test_no_match_holds_the_person_when_one_is_required() -> None:
    people = [*PEOPLE, person("178", ""), person("179", "70")]
    joined = run(people)
    (report,) = joined.reports
    assert (report.matched, report.unmatched_count) == (4, 2)
    assert [(u.location, u.key) for u in report.unmatched] == [
        ("EMPLOYEES.csv line 6", ""),
        ("EMPLOYEES.csv line 7", "70"),
    ]
    found = directory(joined)
    assert found.ok, found.problems
    assert [h.employee_id for h in found.held] == ["178", "179"]
    assert found.held[1].detail == (
        "DEPT must match a row of departments.csv (join departments: DEPT = DEPARTMENT_ID)"
    )
    assert [p.employee_id for p in found.people] == ["100", "121", "122", "200"]


def test_no_match_is_no_value_when_the_join_is_optional() -> None:
    people = [*PEOPLE, person("178", "")]
    joined = run(people, ((join(match="optional"), DEPARTMENTS),))
    assert not joined.findings
    found = directory(joined)
    assert not found.held
    assert found.people[-1].employee_id == "178" and found.people[-1].department is None


def test_a_second_match_holds_the_person_even_when_optional() -> None:
    twice = [*DEPARTMENTS, ("50", "Shipping West", "122", "1500")]
    for match in ("one", "optional"):
        joined = run(joins=((join(match=match), twice),))
        found = directory(joined)
        assert [h.employee_id for h in found.held] == ["121", "122"], match
        assert found.held[0].detail == (
            "DEPT must match at most one row of departments.csv (join departments: "
            "DEPT = DEPARTMENT_ID): it matches departments.csv line 3, departments.csv line 5"
        )
        (report,) = joined.reports
        assert (report.matched, report.several_count, report.unmatched_count) == (2, 2, 0)


def test_a_filtered_out_row_is_not_held_for_its_join() -> None:
    people = [*PEOPLE, person("178", "", status="Terminated")]
    found = directory(run(people))
    assert not found.held and found.excluded == 1


def test_a_problem_of_a_join_refuses_naming_it() -> None:
    empty = run(joins=((join(), DEPARTMENTS[:1]),))
    assert empty.refusals == (
        "join 'departments': departments.csv has no rows: every person would go without a "
        "match (an empty answer or a cut file?); nothing was sent",
    )
    renamed = [("DEPT_ID", *DEPARTMENTS[0][1:]), *DEPARTMENTS[1:]]
    (missing,) = run(joins=((join(), renamed),)).refusals
    assert missing.startswith(
        "join 'departments': departments.csv lacks 'DEPARTMENT_ID' (the table's side of its "
        "on); its columns: DEPT_ID, "
    )
    (column,) = run(read=("departments.DEPARTMENT_NAM",)).refusals
    assert "lacks 'DEPARTMENT_NAM' (read as departments.DEPARTMENT_NAM, did you mean " in column
    (left,) = run(joins=((join(on=("DEPARTMENT", "DEPARTMENT_ID")), DEPARTMENTS),)).refusals
    assert left.startswith(
        "join 'departments': 'DEPARTMENT' (the people's side of its on) is not a column of "
        "EMPLOYEES.csv; its columns: EMPLOYEE_ID,"
    )


def test_an_e_mail_key_matches_without_regard_to_case() -> None:
    okta = [
        ("mail", "displayName"),
        ("P100@Example.com", "Steven King"),
        ("p121@example.com", "Adam"),
    ]
    joined = run(joins=((join("okta", ("email", "mail")), okta),), read=("okta.displayName",))
    (report,) = joined.reports
    assert report.matched == 2 and report.unmatched_count == 2
    # The key is brought as the table writes it; only the matching ignores its case.
    assert tuple(joined.table.cells[0][-2:]) == ("Steven King", "P100@Example.com")
    assert report.row_for("P100@EXAMPLE.COM") is not None


def test_a_join_reads_a_column_an_earlier_join_brought() -> None:
    locations = [("LOCATION_ID", "CITY"), ("1500", "South San Francisco"), ("1700", "Seattle")]
    joined = run(
        joins=(
            (join(), DEPARTMENTS),
            (join("locations", ("departments.LOCATION_ID", "LOCATION_ID")), locations),
        ),
        read=("departments.DEPARTMENT_NAME", "departments.LOCATION_ID", "locations.CITY"),
    )
    assert not joined.refusals
    found = directory(joined)
    assert [p.attributes["locations.CITY"] for p in found.people] == [
        "Seattle",
        "South San Francisco",
        "South San Francisco",
        "Seattle",
    ]


def test_the_tables_null_words_read_empty() -> None:
    departments = [*DEPARTMENTS, ("120", "Treasury", "NULL", "1700")]
    people = [*PEOPLE, person("300", "120", "100")]
    found = directory(run(people, ((join(), departments),)))
    assert found.people[-1].attributes["departments.MANAGER_ID"] == ""


def test_a_joined_column_of_several_values_is_the_persons_problem() -> None:
    rows = [
        SourceRow("d.json [0]", {"DEPARTMENT_ID": "50", "DEPARTMENT_NAME": "A | B"}),
    ]
    several = RowTable.of_rows(rows, ("DEPARTMENT_ID", "DEPARTMENT_NAME"))
    several = RowTable(
        several.index,
        several.cells,
        several.locations,
        {},
        several=({0: {"DEPARTMENT_NAME": Several(("A", "B"), "names[0]")}}),
    )
    joined = join_people(
        "EMPLOYEES.csv",
        PEOPLE[0],
        table("EMPLOYEES.csv", PEOPLE[:3]),
        [
            (
                join(match="optional"),
                SecondTable("d.json", ("DEPARTMENT_ID", "DEPARTMENT_NAME"), several),
            )
        ],
        fields=FIELDS,
        null_values=(),
        read=("departments.DEPARTMENT_NAME",),
    )
    found = directory(joined)
    assert [h.employee_id for h in found.held] == ["121"]
    assert "departments.names[0]" in found.held[0].detail


def test_names_read_are_every_name_the_config_reads() -> None:
    settings = Settings(
        source=SourceSettings(
            fields=FIELDS,
            join=(join(), join("locations", ("departments.LOCATION_ID", "LOCATION_ID"))),
        )
    )
    names = names_read(settings)
    assert {"departments.DEPARTMENT_NAME", "departments.LOCATION_ID", "EMAIL"} <= set(names)
    # Team names, attributes and filters read joined columns as any other.
    settings = Settings(
        source=settings.source,
        mapping=MappingSettings(team_name="{departments.SHORT} team"),
        attributes=AttributeSettings(entries={"Cost centre": "{departments.COST}"}),
        filter=FilterSettings(exclude={"departments.KIND": ("closed",)}),
    )
    names = names_read(settings)
    assert {"departments.SHORT", "departments.COST", "departments.KIND"} <= set(names)


keys = st.sampled_from(["", "1", "2", "3", "x", "NULL"])


@settings(max_examples=200, deadline=None)
@given(
    left=st.lists(keys, min_size=1, max_size=12),
    right=st.lists(keys, min_size=1, max_size=6),
    match=st.sampled_from(["one", "optional"]),
)
def test_the_hash_join_is_the_nested_loop_join(
    left: list[str], right: list[str], match: str
) -> None:
    people = [("EMPLOYEE_ID", "K")] + [(str(i), k) for i, k in enumerate(left)]
    lookup = [("K", "V")] + [(k, f"v{j}") for j, k in enumerate(right)]
    joined = join_people(
        "p.csv",
        people[0],
        table("p.csv", people),
        [
            (
                join("t", ("K", "K"), match=match),
                SecondTable("t.csv", ("K", "V"), table("t.csv", lookup), null_values=("NULL",)),
            )
        ],
        fields=FieldSettings(employee_id="EMPLOYEE_ID"),
        null_values=("NULL",),
        read=("t.V",),
    )
    held = {at for at, problem in joined.findings}
    for i, key in enumerate(left):
        value = "" if key == "NULL" else key
        hits = [j for j, k in enumerate(right) if value and k == value]
        got = joined.table.cells[i][-2]
        if len(hits) == 1:
            assert got == f"v{hits[0]}" and i not in held
        else:
            assert got == ""
            assert (i in held) == (len(hits) > 1 or match == "one")
    (report,) = joined.reports
    assert report.matched + report.unmatched_count + report.several_count == len(left)


def test_a_row_a_filter_drops_for_a_joined_column_is_found_with_where_it_came_from() -> None:
    # `hrsync explain` of a person the filters leave out: the joined rows, filtered.
    joined = run()
    row_filter, unknown = build_row_filter(
        FilterSettings(exclude={"departments.DEPARTMENT_NAME": ("shipping",)}),
        FIELDS,
        joined.columns,
    )
    assert not unknown
    excluded = find_excluded(joined.table.rows(), FIELDS, row_filter, "p122@example.com")
    assert excluded is not None
    assert (excluded.location, excluded.setting, excluded.value) == (
        "EMPLOYEES.csv line 4",
        "filter.exclude.departments.DEPARTMENT_NAME",
        "Shipping",
    )
    assert (excluded.employee_id, excluded.email) == ("122", "p122@example.com")
    assert provenance(excluded.values, excluded.email, excluded.employee_id, joined.reports) == [
        "  join departments: departments.csv line 3 (DEPT '50' = DEPARTMENT_ID): "
        "departments.DEPARTMENT_NAME = 'Shipping', departments.MANAGER_ID = '121', "
        "departments.DEPARTMENT_ID = '50'"
    ]
    assert find_excluded(joined.table.rows(), FIELDS, row_filter, "200") is None  # kept


records = st.lists(
    st.dictionaries(st.sampled_from("abcd"), st.text("xy ", max_size=3), max_size=4),
    max_size=6,
)


@given(records)
def test_a_table_gives_back_the_rows_it_was_made_of(values: list[dict[str, str]]) -> None:
    rows = [SourceRow(f"r.json [{i}]", v) for i, v in enumerate(values)]
    again = list(RowTable.of_rows(rows, ("a", "b")).rows())
    assert [r.location for r in again] == [r.location for r in rows]
    # A record lacking some columns keeps its own values, nothing more.
    assert [dict(r.values) for r in again] == values


def test_a_join_most_held_people_matched_no_row_of_is_named() -> None:
    # Departments 50 and 10 missing from the table: 122, 121 and 200 match nothing.
    joined = run(joins=((join(match="optional"), (DEPARTMENTS[0], DEPARTMENTS[3])),))
    (report,) = joined.reports
    assert report.missed([0, 1, 2, 3]) == 3
    said = join_behind([1, 2, 3], joined.reports)
    assert said is not None and said.startswith(
        "3 of them matched no row of join 'departments' (1 of the 4 rows of the export "
        "matched on DEPT = DEPARTMENT_ID; 1 rows read from departments.csv)"
    )
    # Held for something else: most of them matched.
    assert join_behind([0, 1], joined.reports) is None
    assert join_behind([], joined.reports) is None
