"""`[[source.union]]` as pure functions (issue 26): another people export merged into
the same org, its ids in a namespace of their own, its roots attached to a person of the
primary export; what refuses the run names the source; the per-source shrink guard."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from hypothesis import given, settings
from hypothesis import strategies as st

from hrsync.core.export.rows import LineLocations, RowTable, SourceRow
from hrsync.core.gate.guards import table_trips
from hrsync.core.people import Directory, read_people
from hrsync.core.people.second_tables import SecondTable, TableCount
from hrsync.core.people.union import (
    attach_refusals,
    kept_nobody,
    merge,
    origin,
    part_of,
    source_counts,
)
from hrsync.core.settings import (
    FieldSettings,
    FilterSettings,
    SourceSettings,
    SyncSettings,
    UnionSettings,
)

NULLS = ("NULL", "-")
# The people guard at 80% (sync.min_people_fraction).
FRACTION_08 = SyncSettings(min_people_fraction=0.8)
PRIMARY_FIELDS = FieldSettings(
    employee_id="Employee_ID",
    email="Work_Email",
    name="Legal_Name",
    manager_id="Manager_ID",
    status="Worker_Status",
)
ACQ_FIELDS = FieldSettings(
    employee_id="id",
    email="workEmail",
    name="{firstName} {lastName}",
    manager_id="supervisorEId",
    manager_email="",
    status="",
)
KEEP_ACTIVE = FilterSettings(active_status=("Active",))


def csv_table(name: str, header: Sequence[str], rows: Sequence[Sequence[str]]) -> RowTable:
    """A table as the CSV reader makes it: lists of cells, locations written when asked."""
    index = {column: i for i, column in enumerate(header)}
    return RowTable(index, [list(row) for row in rows], LineLocations(name, 2, len(rows)), {})


def json_table(name: str, records: Sequence[Mapping[str, str]]) -> RowTable:
    rows = [SourceRow(f"{name} employees[{i}]", dict(r)) for i, r in enumerate(records)]
    return RowTable.of_rows(rows)


PARENT_HEADER = ("Employee_ID", "Legal_Name", "Work_Email", "Manager_ID", "Worker_Status", "CC")
PARENT = (
    ("1", "Pat Parent", "pat@parent.example", "", "Active", "CC-1"),
    ("2", "Ravi Rao", "ravi@parent.example", "1", "Active", "CC-2"),
    ("7", "Sam Seven", "sam@parent.example", "1", "Active", "CC-1"),
    ("5", "Omar Ortiz", "omar@parent.example", "1", "Terminated", "CC-1"),
)
ACQUIRED = (
    {"id": "7", "firstName": "Ada", "lastName": "Acq", "workEmail": "Ada@Acq.example",
     "supervisorEId": "", "location": "Paris"},
    {"id": "8", "firstName": "Ben", "lastName": "B", "workEmail": "ben@acq.example",
     "supervisorEId": "7", "location": "Lyon"},
    {"id": "9", "firstName": "Cleo", "lastName": "C", "workEmail": "cleo@acq.example",
     "supervisorEId": "NULL", "location": "Nice"},
)  # fmt: skip


def parent(rows: Sequence[Sequence[str]] = PARENT) -> SecondTable:
    table = csv_table("workday.csv", PARENT_HEADER, rows)
    return SecondTable("workday.csv", PARENT_HEADER, table, PRIMARY_FIELDS, NULLS)


def acquired(
    records: Sequence[Mapping[str, str]] = ACQUIRED, fields: FieldSettings = ACQ_FIELDS
) -> SecondTable:
    table = json_table("acquired.json", records)
    return SecondTable("acquired.json", tuple(table.index), table, fields, NULLS)


def union(attach: str = "1", prefix: str | None = None) -> UnionSettings:
    return UnionSettings(
        name="acq", id_prefix=prefix, attach_root_to=attach, table=SourceSettings()
    )


def read(merged_from: SecondTable, *unions: tuple[UnionSettings, SecondTable]) -> Directory:
    merged = merge(merged_from, list(unions), active_status=KEEP_ACTIVE.active_status)
    assert merged.refusals == ()
    return read_people(
        merged_from.name,
        merged.columns,
        merged.table,
        merged.fields,
        KEEP_ACTIVE,
        null_values=NULLS,
    )


def by_id(directory: Directory) -> dict[str, tuple[str, str, str | None, str]]:
    return {p.employee_id: (p.email, p.name, p.manager_id, p.location) for p in directory.people}


def test_a_union_reads_its_people_with_its_own_fields_and_prefixed_ids() -> None:
    directory = read(parent(), (union(), acquired()))
    assert directory.ok, directory.problems
    assert by_id(directory) == {
        "1": ("pat@parent.example", "Pat Parent", None, "workday.csv line 2"),
        "2": ("ravi@parent.example", "Ravi Rao", "1", "workday.csv line 3"),
        "7": ("sam@parent.example", "Sam Seven", "1", "workday.csv line 4"),
        # Ada names no supervisor: attached to the parent's 1; Cleo's is a null word.
        "acq:7": ("ada@acq.example", "Ada Acq", "1", "acquired.json employees[0]"),
        "acq:8": ("ben@acq.example", "Ben B", "acq:7", "acquired.json employees[1]"),
        "acq:9": ("cleo@acq.example", "Cleo C", "1", "acquired.json employees[2]"),
    }
    assert directory.excluded == 1  # Omar, terminated (the union reads no status: Active)


def test_without_attach_root_to_a_unions_root_is_a_root_of_its_own() -> None:
    directory = read(parent(), (union(attach=""), acquired()))
    assert by_id(directory)["acq:7"][2] is None and by_id(directory)["acq:9"][2] is None


def test_a_custom_prefix_and_a_self_managed_root() -> None:
    records = [{**ACQUIRED[0], "supervisorEId": "7"}, *ACQUIRED[1:]]
    directory = read(parent(), (union(prefix="B-"), acquired(records)))
    people = by_id(directory)
    assert people["B-7"][2] == "1"  # naming only herself: a root, attached
    assert people["B-8"][2] == "B-7"


def test_the_raw_columns_of_every_row_stay_readable_and_shared_columns_are_one() -> None:
    records = [{**r, "CC": f"ACQ-{r['id']}"} for r in ACQUIRED]
    merged = merge(parent(), [(union(), acquired(records))])
    assert merged.columns.count("CC") == 1
    directory = read(parent(), (union(), acquired(records)))
    ada = next(p for p in directory.people if p.employee_id == "acq:7")
    assert ada.attributes["location"] == "Paris" and ada.attributes["CC"] == "ACQ-7"
    assert ada.attributes["firstName"] == "Ada"
    pat = next(p for p in directory.people if p.employee_id == "1")
    assert pat.attributes["CC"] == "CC-1" and pat.attributes["location"] == ""


def test_the_merged_fields_name_where_each_source_reads_them() -> None:
    merged = merge(parent(), [(union(), acquired())])
    assert merged.fields.email == "email (Work_Email; acq: workEmail)"
    assert merged.fields.name == "name (Legal_Name; acq: template of firstName, lastName)"
    assert merged.fields.manager_email == ""


def test_e_mail_references_are_not_prefixed() -> None:
    fields = FieldSettings(
        employee_id="id", email="workEmail", name="firstName", manager_id="", manager_email="boss"
    )
    records = [
        {"id": "1", "workEmail": "x@acq.example", "firstName": "X", "boss": "RAVI@parent.example"},
        {"id": "2", "workEmail": "y@acq.example", "firstName": "Y", "boss": "x@acq.example"},
    ]
    directory = read(parent(), (union(attach=""), acquired(records, fields)))
    people = by_id(directory)
    assert people["acq:1"][2] == "2" and people["acq:2"][2] == "acq:1"


def test_a_department_lead_id_is_prefixed_an_e_mail_is_not() -> None:
    fields = FieldSettings(
        employee_id="id", email="workEmail", name="firstName", manager_id="", department_lead="lead"
    )
    primary = SecondTable(
        "p.csv",
        ("employee_id", "email", "name", "manager_id"),
        csv_table("p.csv", ("employee_id", "email", "name", "manager_id"), [("1", "a@p", "A", "")]),
        FieldSettings(),
        NULLS,
    )
    records = [
        {"id": "1", "workEmail": "x@a", "firstName": "X", "lead": "1"},
        {"id": "2", "workEmail": "y@a", "firstName": "Y", "lead": "x@a"},
    ]
    merged = merge(primary, [(union(attach=""), acquired(records, fields))])
    column = merged.table.index[merged.fields.department_lead]
    assert [row[column] for row in merged.table.cells] == ["", "acq:1", "x@a"]


def test_a_union_without_rows_or_a_column_refuses_naming_it() -> None:
    empty = merge(parent(), [(union(), acquired([]))])
    assert empty.refusals == (
        "source.union[acq]: acquired.json has no rows: its people would all leave the org (an "
        "empty answer or a cut file?); nothing was sent",
    )
    lacking = merge(parent(), [(union(), acquired([{k: v for k, v in ACQUIRED[0].items()
                                                     if k != "workEmail"}]))])  # fmt: skip
    (refusal,) = lacking.refusals
    assert refusal.startswith("source.union[acq]: acquired.json: workEmail must be a column")
    assert "source.union[acq].fields.email" in refusal
    no_parent = merge(parent(()), [(union(), acquired())])
    assert no_parent.refusals[0].startswith("source: workday.csv has no rows")


def test_no_union_is_the_primary_as_it_is() -> None:
    primary = parent()
    merged = merge(primary, [])
    assert merged.table is primary.table and merged.fields is PRIMARY_FIELDS
    assert merged.columns == PARENT_HEADER and merged.unions == ()


def test_counts_origin_and_attach_refusals_by_source() -> None:
    merged = merge(parent(), [(union(), acquired())])
    directory = read(parent(), (union(), acquired()))
    ids = [p.employee_id for p in directory.people]
    counts = source_counts(merged.parts, ids)
    assert [(c.name, c.rows, c.people) for c in counts] == [("source", 4, 3), ("acq", 3, 3)]
    assert part_of(merged.parts, "acq:7").name == "acq" and part_of(merged.parts, "7").prefix == ""
    assert origin(merged.parts, "acq:8") == (
        "source.union[acq] (acquired.json), employee id there '8'"
    )
    assert origin(merged.parts[:1], "7") is None
    assert attach_refusals(merged.parts, set(ids)) == []
    assert attach_refusals(merged.parts, {"acq:1", "2"}) == [
        "source.union[acq].attach_root_to '1' names nobody kept in the primary export "
        "(workday.csv): its people without a manager would report to nobody; nothing was sent"
    ]


def test_a_source_that_shrank_trips_the_people_guard_naming_it() -> None:
    last = {"source": TableCount.source("source", 90, 90), "acq": TableCount.source("acq", 10, 10)}
    now = [TableCount.source("source", 90, 90), TableCount.source("acq", 7, 7)]
    (trip,) = table_trips(now, last, FRACTION_08)
    assert trip.message == (
        "source.union[acq] has 7 people, 70% of the last accepted 10, minimum 80% = 8 people "
        "(sync.min_people_fraction)"
    )
    assert trip.override == "--allow-shrink" and trip.guard == "min_people_fraction"
    assert table_trips([TableCount.source("acq", 8, 8)], last, FRACTION_08) == []
    assert (
        table_trips([TableCount.source("new", 1, 1)], last, FRACTION_08) == []
    )  # nothing to fall from
    (primary,) = table_trips([TableCount.source("source", 50, 50)], last, FRACTION_08)
    assert primary.message.startswith("source has 50 people")


# ---------------------------------------------------------------- properties

ids = st.lists(
    st.sampled_from([str(n) for n in range(1, 30)]), min_size=1, max_size=12, unique=True
)


def rows_of(people: Sequence[str], managers: Sequence[int]) -> list[tuple[str, str, str, str]]:
    """(id, email, name, manager) rows, each manager one of the rows before (or none)."""
    rows = []
    for at, eid in enumerate(people):
        boss = people[managers[at] % at] if at and managers[at] >= 0 else ""
        rows.append((eid, f"p{eid}@{id(people)}.example", f"Person {eid}", boss))
    return rows


@settings(max_examples=60, deadline=None)
@given(
    ids,
    ids,
    st.lists(st.integers(-1, 30), min_size=12, max_size=12),
    st.lists(st.integers(-1, 30), min_size=12, max_size=12),
    st.booleans(),
)
def test_every_row_of_every_source_is_read_once_and_ids_never_collide(
    primary_ids: list[str],
    union_ids: list[str],
    primary_managers: list[int],
    union_managers: list[int],
    attach: bool,
) -> None:
    header = ("employee_id", "email", "name", "manager_id")
    primary_rows = rows_of(primary_ids, primary_managers)
    union_rows = [
        (eid, f"u{eid}@acq.example", f"U {eid}", boss)
        for eid, _, _, boss in rows_of(union_ids, union_managers)
    ]
    primary = SecondTable(
        "p.csv", header, csv_table("p.csv", header, primary_rows), FieldSettings(), NULLS
    )
    other = SecondTable(
        "u.json",
        header,
        json_table("u.json", [dict(zip(header, r, strict=True)) for r in union_rows]),
        FieldSettings(),
        NULLS,
    )
    settings_ = union(attach=primary_ids[0] if attach else "")
    merged = merge(primary, [(settings_, other)])
    table = merged.table
    # Every row once, in order, each named by its own file and row.
    assert len(table.cells) == len(primary_rows) + len(union_rows)
    assert list(table.locations) == [
        *(f"p.csv line {2 + i}" for i in range(len(primary_rows))),
        *(f"u.json employees[{i}]" for i in range(len(union_rows))),
    ]
    directory = read_people(
        "p.csv", merged.columns, table, merged.fields, FilterSettings(), null_values=NULLS
    )
    assert directory.ok, directory.problems
    people = {p.employee_id: p for p in directory.people}
    # Ids never collide: each source's people are all there, the union's prefixed.
    assert set(people) == {*primary_ids, *(f"acq:{eid}" for eid in union_ids)}
    for eid, _, _, boss in union_rows:
        expected = f"acq:{boss}" if boss else (primary_ids[0] if attach else None)
        assert people[f"acq:{eid}"].manager_id == expected
    for eid, _, _, boss in primary_rows:
        assert people[eid].manager_id == (boss or None)


@settings(max_examples=40, deadline=None)
@given(ids, st.lists(st.integers(-1, 30), min_size=12, max_size=12))
def test_no_union_reads_exactly_as_the_primary_alone(
    primary_ids: list[str], managers: list[int]
) -> None:
    header = ("employee_id", "email", "name", "manager_id")
    rows = rows_of(primary_ids, managers)
    primary = SecondTable("p.csv", header, csv_table("p.csv", header, rows), FieldSettings(), NULLS)
    merged = merge(primary, [])
    alone = read_people(
        "p.csv", header, primary.table, FieldSettings(), FilterSettings(), null_values=NULLS
    )
    through = read_people(
        "p.csv", merged.columns, merged.table, merged.fields, FilterSettings(), null_values=NULLS
    )
    assert through == alone


def test_a_json_union_whose_records_lack_keys_names_every_row() -> None:
    """A BambooHR-like record without `supervisorEId` is a row of its own shape: every
    person still says where they came from (it crashed `explain` and unplaced people)."""
    records = [{k: v for k, v in ACQUIRED[0].items() if k != "supervisorEId"}, *ACQUIRED[1:]]
    directory = read(parent(), (union(attach=""), acquired(records)))
    assert directory.ok, directory.problems
    assert {p.employee_id: p.location for p in directory.people} == {
        "1": "workday.csv line 2",
        "2": "workday.csv line 3",
        "7": "workday.csv line 4",
        "acq:7": "acquired.json employees[0]",
        "acq:8": "acquired.json employees[1]",
        "acq:9": "acquired.json employees[2]",
    }
    assert by_id(directory)["acq:7"][2] is None


def test_a_prefix_that_begins_a_primary_id_refuses_naming_the_union() -> None:
    """A union's people are told from the primary's by their prefix: a prefix that some
    primary id begins with would count, attach and explain them as the union's."""
    rows = [("E1", *PARENT[0][1:]), ("E2", *PARENT[1][1:4]), *PARENT[2:]]
    rows[1] = ("E2", "Ravi Rao", "ravi@parent.example", "E1", "Active", "CC-2")
    merged = merge(parent(rows), [(union(attach="E1", prefix="E"), acquired())])
    assert merged.refusals == (
        "source.union[acq].id_prefix 'E' begins 2 ids of the primary export (workday.csv: "
        "E1, E2): its people would be told from the primary's by it; choose a prefix no "
        "primary id begins with, such as the default 'acq:'",
    )


def test_a_union_the_filters_empty_refuses_naming_it() -> None:
    """An include on a column only the primary has reads blank for the union's rows: the
    whole acquired company would leave the org without a word."""
    merged = merge(parent(), [(union(), acquired())])
    counts = [TableCount.source("source", 4, 3), TableCount.source("acq", 3, 0)]
    assert kept_nobody(merged.parts, counts, held_ids=()) == [
        "source.union[acq]: the filters keep none of the 3 rows of acquired.json: a filter on "
        "a column or field it lacks reads blank there ([filter] include, exclude, "
        "active_status); give it that column in its fields, or filter on one both exports "
        "have; nothing was sent"
    ]
    # Held people are still the org's; a union with people kept is fine.
    assert kept_nobody(merged.parts, counts, held_ids=("acq:7",)) == []
    assert kept_nobody(merged.parts, [counts[0], TableCount.source("acq", 3, 1)], ()) == []
