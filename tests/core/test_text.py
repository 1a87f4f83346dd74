"""The shared text helpers: the joined-column shortcuts equal the value-by-value rules."""

from __future__ import annotations

import re

import pytest
from hypothesis import given
from hypothesis import strategies as st

from hrsync.core.text import (
    collapse_whitespace,
    collapse_whitespace_each,
    joined,
    name_and_id,
    natural_key,
    padded,
    plural,
)

values = st.lists(st.text(alphabet="a |\t\u00a0\u3000é", max_size=6), max_size=6)


@given(values)
def test_collapsing_a_column_at_once_equals_collapsing_each_value(column: list[str]) -> None:
    assert list(collapse_whitespace_each(column)) == [collapse_whitespace(v) for v in column]


@given(values)
def test_padded_sees_every_value_that_begins_or_ends_with_a_space(column: list[str]) -> None:
    if any(v.startswith(" ") or v.endswith(" ") for v in column):
        assert padded(joined(column))


@pytest.mark.parametrize(
    ("texts", "ordered"),
    [
        (["x line 10", "x line 9", "x line 100"], ["x line 9", "x line 10", "x line 100"]),
        (
            ["r.json [2]", "r.json [10]", "q.json [30]"],
            ["q.json [30]", "r.json [2]", "r.json [10]"],
        ),
        (["a 1", "a1", "a", ""], ["", "a", "a1", "a 1"]),
        (["x²1", "x1²2", "x1²1"], ["x1²1", "x1²2", "x²1"]),  # ² is no digit run: no int()
    ],
)
def test_natural_key_sorts_numbers_by_value(texts: list[str], ordered: list[str]) -> None:
    assert sorted(texts, key=natural_key) == ordered


def _earlier_key(text: str) -> list[tuple[int, str]]:
    # The key core.people had (core.mapping's differed in form only), for texts it could read.
    return [(int(part), "") if part.isdigit() else (0, part) for part in re.split(r"(\d+)", text)]


digits_and_words = st.text(alphabet="ab 0129٣", max_size=8)


@given(digits_and_words, digits_and_words)
def test_natural_key_orders_as_the_keys_it_replaced(a: str, b: str) -> None:
    assert (natural_key(a) < natural_key(b)) == (_earlier_key(a) < _earlier_key(b))
    assert (natural_key(a) == natural_key(b)) == (_earlier_key(a) == _earlier_key(b))


@pytest.mark.parametrize(
    ("count", "word", "said"),
    [
        (1, "team", "1 team"),
        (2, "team", "2 teams"),
        (1, "person", "1 person"),
        (0, "person", "0 people"),
    ],
)
def test_plural_says_people_for_persons(count: int, word: str, said: str) -> None:
    assert plural(count, word) == said


@pytest.mark.parametrize(
    ("name", "employee_id", "shown"),
    [
        ("Cleo Moss", "W1002", "Cleo Moss (W1002)"),
        ("W1002", "W1002", "W1002"),  # a manager whose row is gone: the id alone
        ("", "W1002", "W1002"),
    ],
)
def test_a_person_is_named_with_their_id_once(name: str, employee_id: str, shown: str) -> None:
    assert name_and_id(name, employee_id) == shown
