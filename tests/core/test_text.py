"""The shared text helpers: the joined-column shortcuts equal the value-by-value rules."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from hrsync.core.text import collapse_whitespace, collapse_whitespace_each, joined, padded

values = st.lists(st.text(alphabet="a |\t\u00a0\u3000é", max_size=6), max_size=6)


@given(values)
def test_collapsing_a_column_at_once_equals_collapsing_each_value(column: list[str]) -> None:
    assert list(collapse_whitespace_each(column)) == [collapse_whitespace(v) for v in column]


@given(values)
def test_padded_sees_every_value_that_begins_or_ends_with_a_space(column: list[str]) -> None:
    if any(v.startswith(" ") or v.endswith(" ") for v in column):
        assert padded(joined(column))
