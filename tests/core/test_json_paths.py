"""Paths that pick one item of a JSON list: the syntax, what each pick reads, and what
several values read as (issue 22)."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from hrsync.core.export.json_paths import Pick, Step, has_pick, parse_path, read_path
from hrsync.core.export.rows import Several


@pytest.mark.parametrize(
    ("text", "steps"),
    [
        ("Manager.ID", (Step("Manager"), Step("ID"))),
        ("positions[0].manager_id", (Step("positions", Pick(index=0)), Step("manager_id"))),
        ("positions[-1].manager_id", (Step("positions", Pick(index=-1)), Step("manager_id"))),
        (
            "relations[type=manager].value",
            (Step("relations", Pick(key="type", equals="manager")), Step("value")),
        ),
        (
            "relations[ type = manager ].value",
            (Step("relations", Pick(key="type", equals="manager")), Step("value")),
        ),
        ("emails[primary].address", (Step("emails", Pick(key="primary")), Step("address"))),
        ("ids[kind=a.b].v", (Step("ids", Pick(key="kind", equals="a.b")), Step("v"))),
        ("w.jobs[Primary=1]", (Step("w"), Step("jobs", Pick(key="Primary", equals="1")))),
    ],
)
def test_paths_parse(text: str, steps: tuple[Step, ...]) -> None:
    path = parse_path(text)
    assert path.steps == steps
    assert path.text == text


@pytest.mark.parametrize(
    ("text", "said"),
    [
        ("relations[type=manager.value", "never closed"),
        ("relations]0[.value", "with no '['"),
        ("relations[].value", "empty pick"),
        ("relations[=manager].value", "write [key=value] or [key]"),
        ("relations[type=].value", "write [key=value] or [key]"),
        ("[0].value", "right after a key"),
        ("relations[0]x.value", "right after a key"),
        ("relations[0][1].value", "right after a key"),
        ("relations..value", "empty key"),
    ],
)
def test_bad_paths_say_why_with_examples(text: str, said: str) -> None:
    with pytest.raises(ValueError, match="relations\\[type=manager\\]\\.value") as caught:
        parse_path(text)
    assert said in str(caught.value)


def test_a_pick_is_any_bracket() -> None:
    assert has_pick("a[0].b") and has_pick("a]") and not has_pick("Manager.ID")
    assert parse_path("relations[type=manager].value").plain == "relations.value"


GOOGLE = {
    "primaryEmail": "ann@x",
    "relations": [
        {"type": "dotted_line_manager", "value": "b@x"},
        {"type": "manager", "value": "a@x"},
    ],
    "emails": [
        {"address": "ann@old.x"},
        {"address": "ann@x", "primary": True},
    ],
    "positions": {"manager": "m1", "primary": True},
}


@pytest.mark.parametrize(
    ("path", "value"),
    [
        ("relations[type=manager].value", "a@x"),
        ("relations[type=dotted_line_manager].value", "b@x"),
        ("relations[type=assistant].value", ""),
        ("relations[0].value", "b@x"),
        ("relations[1].value", "a@x"),
        ("relations[-1].type", "manager"),
        ("relations[2].value", ""),
        ("emails[primary].address", "ann@x"),
        ("emails[primary=true].address", "ann@x"),
        # An object reads as a list of one.
        ("positions[0].manager", "m1"),
        ("positions[primary].manager", "m1"),
        ("missing[0].value", ""),
        ("primaryEmail", "ann@x"),
    ],
)
def test_a_pick_reads_one_value(path: str, value: str) -> None:
    assert read_path(GOOGLE, parse_path(path)) == (value, None)


def test_an_unpicked_list_gives_several_values_and_a_pick_for_them() -> None:
    text, several = read_path(GOOGLE, parse_path("relations.value"))
    assert text == "b@x; a@x"
    assert several == Several(("b@x", "a@x"), "relations[0].value")


def test_equal_values_of_several_items_are_one_value() -> None:
    record = {"jobs": [{"manager": "m1"}, {"manager": "m1"}, {"manager": ""}]}
    assert read_path(record, parse_path("jobs.manager")) == ("m1", None)


def test_a_list_after_the_pick_is_several_too() -> None:
    record = {"jobs": [{"primary": True, "managers": ["m1", "m2"]}, {"managers": ["m3"]}]}
    text, several = read_path(record, parse_path("jobs[primary].managers"))
    assert text == "m1; m2"
    assert several == Several(("m1", "m2"), "jobs[primary].managers[0]")


def _items() -> st.SearchStrategy[list[dict[str, Any]]]:
    item = st.fixed_dictionaries(
        {"k": st.sampled_from(["a", "b", "c"]), "v": st.text("xyz0123", min_size=1, max_size=4)}
    )
    return st.lists(item, min_size=1, max_size=6)


@given(_items(), st.integers(-8, 8))
def test_picking_an_index_is_python_indexing(items: list[dict[str, Any]], index: int) -> None:
    path = parse_path(f"l[{index}].v")
    assert path.steps == (Step("l", Pick(index=index)), Step("v"))
    expected = items[index]["v"] if -len(items) <= index < len(items) else ""
    # A list of one reads as its item: the pick is the same.
    assert read_path({"l": items}, path)[0] == expected


@given(_items(), st.sampled_from(["a", "b", "c"]))
def test_picking_by_key_is_the_first_item_whose_key_matches(
    items: list[dict[str, Any]], key: str
) -> None:
    first = next((item["v"] for item in items if item["k"] == key), "")
    assert read_path({"l": items}, parse_path(f"l[k={key}].v")) == (first, None)
