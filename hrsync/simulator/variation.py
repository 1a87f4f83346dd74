"""What the simulator varies where DX's contract is silent, chosen by a seed.

The contract does not say how ``invalid_rows`` names a row, in which order
``teams.list`` lists teams, nor how soon a finished import shows in the audit trail and
in the contributor counts. A client fitted to one answer would pass every test against
one simulator and fail against DX, so the simulator gives a different answer per seed:

- ``invalid_rows`` details: ``fields`` (``{"rows": [{"index", "reference_id", "field",
  "message"}]}``), ``reasons`` (``{"errors": [{"index", "reference_id", "reason"}]}``,
  the reason a sentence that quotes the offending value), or ``message`` (a sentence,
  no ``error_details`` at all). The seed's remainder by 3 picks it, so any three
  consecutive seeds see all three.
- ``teams.list`` order: creation order, newest first, or shuffled anew for each answer.
- after an import completes: its audit events, and the new contributor counts, each
  appear up to ``MAX_LAG_S`` later (teams.list shows the old count until then).

The same seed gives the same choices, so a failure seen under one seed is replayed by
passing it again (``hrsync simulator --seed N``, ``start_simulator(seed=N)``).
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from typing import Final, Literal

InvalidRowsShape = Literal["fields", "reasons", "message"]
TeamsOrder = Literal["created", "newest_first", "shuffled"]

INVALID_ROWS_SHAPES: Final[tuple[InvalidRowsShape, ...]] = ("fields", "reasons", "message")
TEAMS_ORDERS: Final[tuple[TeamsOrder, ...]] = ("created", "newest_first", "shuffled")
# Bounded so that a test waiting for an import waits at most about a second more.
MAX_LAG_S: Final = 1.0
_LAGS: Final = (0.0, 0.3, 0.6, MAX_LAG_S)
_MAX_SEED: Final = 1_000_000
# A seed that adds no lag and keeps creation order: benchmarks measure hrsync, not DX.
STEADY_SEED: Final = 2


@dataclass(frozen=True, slots=True)
class Variation:
    """The simulator's answers to what the contract leaves open (see the module)."""

    seed: int
    invalid_rows: InvalidRowsShape
    teams_order: TeamsOrder
    audit_lag_s: float  # audit events of an import appear this long after it completes
    count_lag_s: float  # and its contributor counts this long after

    def describe(self) -> str:
        """One line for a person replaying a run."""
        return (
            f"seed {self.seed}: invalid_rows {self.invalid_rows}, teams.list "
            f"{self.teams_order.replace('_', ' ')}, audit events +{self.audit_lag_s:g} s, "
            f"contributor counts +{self.count_lag_s:g} s"
        )


def variation_for(seed: int) -> Variation:
    """The choices of `seed` (the same every time)."""
    rng = random.Random(seed)
    return Variation(
        seed=seed,
        invalid_rows=INVALID_ROWS_SHAPES[seed % len(INVALID_ROWS_SHAPES)],
        teams_order=rng.choice(TEAMS_ORDERS),
        audit_lag_s=rng.choice(_LAGS),
        count_lag_s=rng.choice(_LAGS),
    )


def choose_seed() -> int:
    """A seed for a simulator started without one (printed, so it can be replayed)."""
    return random.SystemRandom().randrange(1, _MAX_SEED)


def order_rng(seed: int) -> random.Random:
    """The generator that shuffles ``teams.list`` answers under a ``shuffled`` seed."""
    return random.Random(f"teams.list:{seed}")
