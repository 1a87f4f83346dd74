"""An HTTP answer read record by record reads as the whole answer parsed at once: the
same rows, and the same answer around the records for paging and its checks."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hrsync.core.settings import PaginationSettings, SourceSettings
from hrsync.core.starter.guess_fields import find_records as guess_records
from hrsync.core.starter.guess_fields import next_page
from hrsync.sources.base import Payload
from hrsync.sources.json_pages import outline, read_page
from hrsync.sources.json_reader import Records, find_records, records_export
from hrsync.sources.pagination import default_records_path

_SCALARS = st.one_of(
    st.text(max_size=5),
    st.integers(-1000, 1000),
    st.floats(allow_nan=False, allow_infinity=False, width=32),
    st.booleans(),
    st.none(),
)
_KEYS = st.sampled_from(["id", "name", "Manager", "ID", "value", "d", "a.b", "next"])
_VALUES = st.recursive(
    _SCALARS,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(_KEYS, inner, max_size=3),
    max_leaves=6,
)
_RECORDS = st.lists(st.dictionaries(_KEYS, _VALUES, max_size=4), max_size=4)
# What an answer carries around its records: paging, totals, links, metadata.
_AROUND = st.dictionaries(
    st.sampled_from(
        ["@odata.context", "@odata.nextLink", "total", "links", "meta", "d", "value", "x.y"]
    ),
    _VALUES,
    max_size=3,
)


def _answer(shape: str, records: list[Any], around: dict[str, Any]) -> tuple[Any, str]:
    """An answer of `shape` holding `records`, and the records_path configured for it."""
    if shape == "list":
        return records, ""
    if shape == "report":
        return {**around, "Report_Entry": records}, "Report_Entry"
    if shape == "nested":
        return {"meta": around, "data": {"people": records, "count": len(records)}}, "data.people"
    if shape == "odata4":
        return {"@odata.context": "x", **around, "value": records}, ""
    if shape == "odata4_late":  # the OData key written after the records
        return {"value": records, **around, "@odata.count": 3}, ""
    return {"d": {"results": records, "__next": around.get("d")}}, ""


def _emptied(document: Any, path: str) -> Any:
    """`document` with the list at `path` emptied (the top-level list: an empty list)."""
    if not path:
        return [] if isinstance(document, list) else document
    node = document
    keys = path.split(".")
    for key in keys[:-1]:
        node = node[key]
    node[keys[-1]] = []
    return document


def _rows(export: Any) -> list[tuple[str, dict[str, str], Any]]:
    return [(r.location, dict(r.values), r.several) for r in export.rows()]


@settings(max_examples=120, deadline=None)
@given(
    shape=st.sampled_from(["list", "report", "nested", "odata4", "odata4_late", "odata2"]),
    records=_RECORDS,
    around=_AROUND,
    configure=st.booleans(),
    odata=st.booleans(),
)
def test_an_answer_read_record_by_record_reads_as_the_whole_answer(
    tmp_path_factory: pytest.TempPathFactory,
    shape: str,
    records: list[Any],
    around: dict[str, Any],
    configure: bool,
    odata: bool,
) -> None:
    answer, configured = _answer(shape, records, around)
    path = tmp_path_factory.mktemp("p") / "page.json"
    path.write_text(json.dumps(answer), encoding="utf-8")
    source = SourceSettings(
        records_path=configured if configure else "",
        pagination=PaginationSettings(style="odata" if odata else "none"),
    )
    whole = json.loads(path.read_text(encoding="utf-8"))
    where = default_records_path(source, whole)

    held = Records()
    read = read_page(
        Payload.from_path(path),
        "utf-8",
        source.records_path or None,
        held,
        odata=odata,
    )
    if read is None:
        # Left to the whole reading, which refuses a record that is no object (here, or
        # in OData's "value" list taken before a "d" came).
        expected, _ = find_records("page", whole, where, allow_empty=True)
        assert held.count == 0
        assert where == "d" or not all(isinstance(record, dict) for record in expected)
        return
    if read.streamed is not None and read.streamed != where:
        # Taken for the records too early (a "d" after OData's "value" list): the caller
        # forgets what it held and reads the answer whole.
        assert read.streamed == "value"
        assert where == "d"
        return
    if read.streamed is None:
        assert held.count == 0
        assert read.document == whole  # built whole: the caller finds its records there
        return
    expected, named = find_records("page", whole_records(path), where, allow_empty=True)
    assert read.document == _emptied(whole, where)
    assert read.records == len(expected)
    assert read.first == (expected[0] if expected else None)
    locate = lambda i: f"page {named}[{i}]"  # noqa: E731
    assert _rows(held.export("page", locate)) == _rows(records_export("page", expected, locate))
    assert held.export("page", locate).columns == records_export("page", expected, locate).columns


def whole_records(path: Path) -> Any:
    return json.loads(path.read_text(encoding="utf-8"))


def test_a_record_that_is_no_object_leaves_the_answer_to_the_whole_reading(
    tmp_path: Path,
) -> None:
    path = tmp_path / "page.json"
    path.write_text(json.dumps({"value": [{"id": "1"}, "two"], "@odata.count": 2}))
    held = Records()
    held.add({"id": "0"})  # a page before
    assert read_page(Payload.from_path(path), "utf-8", "value", held) is None
    assert held.count == 1


def test_only_the_columns_kept_are_held_and_every_column_is_listed(tmp_path: Path) -> None:
    path = tmp_path / "page.json"
    records = [{"id": str(i), "name": f"P{i}", "Manager": {"ID": "0"}} for i in range(3)]
    path.write_text(json.dumps({"Report_Entry": records, "next": None}))
    held = Records(keep=["id"])
    read = read_page(Payload.from_path(path), "utf-8", "Report_Entry", held)
    assert read is not None and read.document == {"Report_Entry": [], "next": None}
    export = held.export("page", str)
    assert export.columns == ("id", "name", "Manager.ID")
    assert [dict(row.values) for row in export.rows()] == [{"id": "0"}, {"id": "1"}, {"id": "2"}]


def test_a_sample_holds_the_first_half_and_a_spread_of_the_rest() -> None:
    def sample() -> list[tuple[str, dict[str, str]]]:
        held = Records(sample=10)
        for i in range(100):
            held.add({"id": str(i), "n": i if i % 3 else str(i)})
        export = held.export("page", lambda i: f"[{i}]")
        assert export.sampled_from == 100
        assert export.columns == ("id", "n")
        return [(row.location, dict(row.values)) for row in export.rows()]

    rows = sample()
    assert len(rows) == 10
    positions = [int(location[1:-1]) for location, _ in rows]
    assert positions[:5] == [0, 1, 2, 3, 4]
    assert positions == sorted(positions) and positions[-1] > 50  # spread over the rest
    assert all(values["id"] == str(p) for p, (_, values) in zip(positions, rows, strict=True))
    assert sample() == rows  # the same records give the same sample


def test_few_records_are_no_sample() -> None:
    held = Records(sample=10)
    for i in range(10):
        held.add({"id": str(i)})
    assert held.export("page", str).sampled_from == 0


_LINK = st.fixed_dictionaries({"rel": st.sampled_from(["next", "self"]), "href": st.just("/x")})


@settings(max_examples=40, deadline=None)
@given(
    people=st.integers(0, 130),
    links=st.lists(_LINK, max_size=3),
    around=_AROUND,
    top_level=st.booleans(),
)
def test_an_outline_shows_the_lists_and_the_paging_of_the_whole_document(
    tmp_path_factory: pytest.TempPathFactory,
    people: int,
    links: list[Any],
    around: dict[str, Any],
    top_level: bool,
) -> None:
    records = [{"id": str(i), "tags": [{"x": i}, {"x": 1}]} for i in range(people)]
    document: Any = records if top_level else {**around, "links": links, "data": records}
    path = tmp_path_factory.mktemp("o") / "big.json"
    path.write_text(json.dumps(document), encoding="utf-8")
    drawn = outline(Payload.from_path(path), "utf-8")
    assert guess_records(drawn) == guess_records(document)
    assert next_page(drawn) == next_page(document)
    assert outline(Payload.from_path(path), "utf-8") is not None
