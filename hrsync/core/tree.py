"""Parent links walked once (pure): depths, ancestors and cycles.

Every hierarchy hrsync handles is a mapping of node to parent: reporting lines (people),
desired teams and department units (mapping, identity). A parent that is not itself a
node (None, or someone outside the mapping) ends the chain there: the node is a root.

A cycle is a finding, never a hang: `forest` reports each cycle once and leaves the nodes
on it, and those whose chain runs into it, without a depth. What a cycle means (a fatal
problem, an error, a link to cut) is the caller's to say.
"""

from __future__ import annotations

from collections.abc import Hashable, Iterable, Iterator, Mapping
from dataclasses import dataclass
from typing import Generic, TypeVar

K = TypeVar("K", bound=Hashable)


@dataclass(frozen=True, slots=True)
class Forest(Generic[K]):
    """The shape of a parent mapping.

    `depths`: 0 for a root, one more per link below it; only nodes whose chain ends at a
    root have one. `cycles`: each cycle once, in the order the walks found them, each
    starting at the node where its walk entered it and following parent links (the
    parent of the last node is the first).
    """

    depths: Mapping[K, int]
    cycles: tuple[tuple[K, ...], ...]


def forest(parents: Mapping[K, K | None], order: Iterable[K] | None = None) -> Forest[K]:
    """Walk the chain of every node once (linear in the number of nodes).

    `order`: the nodes in the order their walks start, which decides where each cycle is
    entered (default: the mapping's order). A node left out of `order` gets a depth only
    when a listed node's chain passes through it.
    """
    depths: dict[K, int] = {}
    stuck: set[K] = set()  # settled without a depth: on a cycle, or their chain runs into one
    cycles: list[tuple[K, ...]] = []
    for start in parents if order is None else order:
        if start in depths or start in stuck or start not in parents:
            continue  # settled by an earlier walk, or no node at all
        # Most walks are one link long (the parent is settled already): no chain for them,
        # which is most of the time at 100k people.
        parent = parents[start]
        if parent is None or parent not in parents:
            depths[start] = 0
            continue
        if parent in depths:
            depths[start] = depths[parent] + 1
            continue
        chain: list[K] = [start]
        on_chain: dict[K, int] = {start: 0}  # node -> its index in `chain`
        node: K | None = parent
        base: int | None  # the depth above the chain's top; None when it has none
        while True:
            if node is None or node not in parents:
                base = -1
                break
            if node in depths:
                base = depths[node]
                break
            if node in stuck:
                base = None  # ran into an earlier walk that ended on a cycle
                break
            if node in on_chain:
                cycles.append(tuple(chain[on_chain[node] :]))
                base = None
                break
            on_chain[node] = len(chain)
            chain.append(node)
            node = parents[node]
        if base is None:
            stuck.update(chain)
            continue
        # The chain's top is one below `base`, its start the deepest.
        depths.update(zip(reversed(chain), range(base + 1, base + 1 + len(chain)), strict=True))
    return Forest(depths, tuple(cycles))


def ancestors(parents: Mapping[K, K | None], node: K) -> Iterator[K]:
    """The proper ancestors of `node`, nearest first; stops at a root, or before a node
    comes round again (so a cycle ends the chain rather than looping)."""
    seen = {node}
    parent = parents.get(node)
    while parent is not None and parent in parents and parent not in seen:
        yield parent
        seen.add(parent)
        parent = parents[parent]
