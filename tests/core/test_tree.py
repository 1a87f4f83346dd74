"""hrsync/core/tree.py: depths, ancestors and cycles of a parent mapping (pure)."""

from __future__ import annotations

import random

import pytest
from hypothesis import given
from hypothesis import strategies as st

from hrsync.core.tree import ancestors, forest

Parents = dict[str, str | None]

CASES: dict[str, tuple[Parents, dict[str, int], list[tuple[str, ...]]]] = {
    "empty": ({}, {}, []),
    "one root": ({"a": None}, {"a": 0}, []),
    "a chain": ({"a": None, "b": "a", "c": "b"}, {"a": 0, "b": 1, "c": 2}, []),
    "two trees": (
        {"a": None, "b": "a", "x": None, "y": "x", "z": "x"},
        {"a": 0, "b": 1, "x": 0, "y": 1, "z": 1},
        [],
    ),
    "a parent outside the mapping ends the chain": (
        {"b": "gone", "c": "b"},
        {"b": 0, "c": 1},
        [],
    ),
    "children before parents in the mapping": (
        {"c": "b", "b": "a", "a": None},
        {"a": 0, "b": 1, "c": 2},
        [],
    ),
    "own parent": ({"a": "a"}, {}, [("a",)]),
    "two-node cycle": ({"a": "b", "b": "a"}, {}, [("a", "b")]),
    "a tail into a cycle gets no depth": (
        {"t": "a", "a": "b", "b": "c", "c": "a"},
        {},
        [("a", "b", "c")],
    ),
    "a cycle beside a tree": (
        {"r": None, "s": "r", "x": "y", "y": "x"},
        {"r": 0, "s": 1},
        [("x", "y")],
    ),
    "two cycles, each once": (
        {"a": "b", "b": "a", "c": "d", "d": "e", "e": "c", "f": "d"},
        {},
        [("a", "b"), ("c", "d", "e")],
    ),
}


@pytest.mark.parametrize("case", list(CASES))
def test_forest(case: str) -> None:
    parents, depths, cycles = CASES[case]
    result = forest(parents)
    assert dict(result.depths) == depths
    assert list(result.cycles) == cycles


def test_the_order_decides_where_a_cycle_is_entered() -> None:
    parents: Parents = {"a": "b", "b": "c", "c": "a"}
    assert forest(parents, ["b", "a", "c"]).cycles == (("b", "c", "a"),)
    assert forest(parents, sorted(parents, reverse=True)).cycles == (("c", "a", "b"),)


ANCESTORS: dict[str, tuple[Parents, str, list[str]]] = {
    "a root has none": ({"a": None}, "a", []),
    "nearest first": ({"a": None, "b": "a", "c": "b"}, "c", ["b", "a"]),
    "a parent outside the mapping is not one": ({"b": "gone", "c": "b"}, "c", ["b"]),
    "a cycle ends the chain": ({"a": "b", "b": "c", "c": "a"}, "a", ["b", "c"]),
    "own parent": ({"a": "a"}, "a", []),
    "a tail into a cycle": ({"t": "a", "a": "b", "b": "a"}, "t", ["a", "b"]),
}


@pytest.mark.parametrize("case", list(ANCESTORS))
def test_ancestors(case: str) -> None:
    parents, node, expected = ANCESTORS[case]
    assert list(ancestors(parents, node)) == expected


NODES = st.integers(min_value=0, max_value=12)
PARENT_MAPS = st.dictionaries(NODES, st.one_of(st.none(), st.integers(min_value=0, max_value=14)))


def _reaches_cycle(parents: dict[int, int | None], node: int) -> bool:
    seen: set[int] = set()
    current: int | None = node
    while current is not None and current in parents:
        if current in seen:
            return True
        seen.add(current)
        current = parents[current]
    return False


@given(PARENT_MAPS, st.randoms(use_true_random=False))
def test_every_node_has_a_depth_or_runs_into_exactly_one_reported_cycle(
    parents: dict[int, int | None], rnd: random.Random
) -> None:
    order = list(parents)
    rnd.shuffle(order)
    result = forest(parents, order)
    on_cycle = [node for cycle in result.cycles for node in cycle]
    assert len(on_cycle) == len(set(on_cycle)), "a node is on two reported cycles"
    for cycle in result.cycles:
        # A real cycle, closed by the parent of its last node.
        for here, there in zip(cycle, (*cycle[1:], cycle[0]), strict=True):
            assert parents[here] == there
    for node, parent in parents.items():
        if _reaches_cycle(parents, node):
            assert node not in result.depths
            # Its cycle was reported: some ancestor (or itself) is on one.
            chain = {node, *ancestors(parents, node)}
            assert chain & set(on_cycle)
        elif parent is None or parent not in parents:
            assert result.depths[node] == 0
        else:
            assert result.depths[node] == result.depths[parent] + 1
    assert set(result.depths) | {n for n in parents if _reaches_cycle(parents, n)} == set(parents)


@given(PARENT_MAPS, NODES)
def test_ancestors_follow_parent_links_and_never_repeat(
    parents: dict[int, int | None], node: int
) -> None:
    found = list(ancestors(parents, node))
    assert len(found) == len(set(found)) and node not in found
    child = node
    for ancestor in found:
        assert parents[child] == ancestor
        child = ancestor


def _reference_forest(
    parents: dict[int, int | None], order: list[int]
) -> tuple[dict[int, int], list[tuple[int, ...]]]:
    """The plain walk `forest` was first written as (one bookkeeping dict, no shortcuts):
    the faster one must find the same depths and the same cycles, entered at the same
    nodes, in the same order."""
    depths: dict[int, int] = {}
    walk_of: dict[int, int] = {}
    cycles: list[tuple[int, ...]] = []
    for walk, start in enumerate(order):
        if start in walk_of:
            continue
        chain: list[int] = []
        node: int | None = start
        while node is not None and node in parents and node not in walk_of:
            walk_of[node] = walk
            chain.append(node)
            node = parents[node]
        if node is None or node not in parents:
            base = -1
        elif node in depths:
            base = depths[node]
        elif walk_of[node] == walk:
            cycles.append(tuple(chain[chain.index(node) :]))
            continue
        else:
            continue
        for offset, settled in enumerate(reversed(chain)):
            depths[settled] = base + 1 + offset
    return depths, cycles


@given(
    PARENT_MAPS,
    st.lists(st.integers(min_value=0, max_value=14), max_size=20),
    st.randoms(use_true_random=False),
)
def test_forest_matches_the_plain_walk(
    parents: dict[int, int | None], extra: list[int], rnd: random.Random
) -> None:
    # Any order, with nodes listed twice, nodes outside the mapping and nodes left out.
    order = [*parents, *extra]
    rnd.shuffle(order)
    order = order[: rnd.randint(0, len(order))]
    result = forest(parents, order)
    depths, cycles = _reference_forest(parents, order)
    assert dict(result.depths) == depths
    assert list(result.cycles) == cycles
    default = forest(parents)
    assert (dict(default.depths), list(default.cycles)) == _reference_forest(parents, list(parents))
