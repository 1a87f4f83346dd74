"""Injected faults: the ways a real network and a real DX misbehave.

A fault matches requests by method name (or ``"*"`` for every method) and
affects the next ``count`` matching requests; then it is spent. A ``random`` fault
is never spent: each matching request meets, with probability ``rate``, one of the
concrete kinds in ``RANDOM_KINDS`` (chosen evenly by a generator seeded with
``seed``, so a run can be replayed), and otherwise passes on to the next fault.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field, replace
from typing import Final, Literal, get_args

FaultKind = Literal["429", "500", "503", "drop", "drop_after_send", "latency", "html", "random"]
FAULT_KINDS: Final[frozenset[str]] = frozenset(get_args(FaultKind))
ANY_METHOD: Final = "*"
# What a random fault draws from: rate limits (with Retry-After), server errors, a
# connection dropped before or after DX acted, and a slow answer.
RANDOM_KINDS: Final[tuple[FaultKind, ...]] = (
    "429",
    "500",
    "503",
    "drop",
    "drop_after_send",
    "latency",
)


@dataclass(frozen=True, slots=True)
class Fault:
    """One configured misbehaviour.

    ``drop`` closes the connection before doing anything; ``drop_after_send``
    does the work (a ``process`` is accepted) and then closes without
    answering; ``latency`` does the work and answers ``latency_s`` late;
    ``html`` answers 502 with a proxy's HTML page; ``429`` carries a
    ``Retry-After`` header when ``retry_after_s`` is set.
    """

    method: str
    kind: FaultKind
    count: int = 1
    retry_after_s: float | None = 1.0
    latency_s: float = 0.2
    rate: float = 0.0  # random: the share of matching requests that meet a fault
    seed: int | None = None  # random: replayable draws
    _rng: random.Random = field(
        default_factory=random.Random, init=False, repr=False, compare=False
    )

    def __post_init__(self) -> None:
        if self.kind not in FAULT_KINDS:
            raise ValueError(
                f"unknown fault kind {self.kind!r}; expected one of {sorted(FAULT_KINDS)}"
            )
        if not self.method:
            raise ValueError("fault method must be a method name or '*'")
        if self.count < 1:
            raise ValueError(f"fault count must be at least 1, got {self.count}")
        if self.retry_after_s is not None and self.retry_after_s < 0:
            raise ValueError(f"retry_after_s must not be negative, got {self.retry_after_s}")
        if self.latency_s < 0:
            raise ValueError(f"latency_s must not be negative, got {self.latency_s}")
        if not 0 <= self.rate <= 1:
            raise ValueError(f"rate must be between 0 and 1, got {self.rate}")
        if self.kind == "random" and self.rate == 0:
            raise ValueError("a random fault needs a rate above 0")
        self._rng.seed(self.seed)

    def draw(self) -> Fault | None:
        """For a random fault: the concrete fault this request meets, or None."""
        if self._rng.random() >= self.rate:
            return None
        kind = self._rng.choice(RANDOM_KINDS)
        return replace(self, kind=kind, count=1, rate=0.0, seed=None)

    def matches(self, method_name: str) -> bool:
        return self.method in (ANY_METHOD, method_name)


class FaultBook:
    """The faults still to be served, in the order they were added. Not thread-safe:
    the simulator calls it under its own lock."""

    def __init__(self) -> None:
        self._pending: list[tuple[Fault, int]] = []

    def add(self, fault: Fault) -> None:
        self._pending.append((fault, fault.count))

    def clear(self) -> None:
        self._pending.clear()

    def take(self, method_name: str) -> Fault | None:
        """The first pending fault matching ``method_name``, spending one of its uses."""
        for position, (fault, remaining) in enumerate(self._pending):
            if fault.matches(method_name) and fault.kind == "random":
                drawn = fault.draw()
                if drawn is not None:
                    return drawn
                continue
            if fault.matches(method_name):
                if remaining <= 1:
                    del self._pending[position]
                else:
                    self._pending[position] = (fault, remaining - 1)
                return fault
        return None

    def pending(self) -> list[tuple[Fault, int]]:
        """Each pending fault with the number of requests it will still affect."""
        return list(self._pending)
