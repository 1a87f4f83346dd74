"""The one way tests start the simulator: with the run's seed.

Where DX's contract is silent the simulator's answers depend on a seed
(hrsync/simulator/variation.py). Every test takes it from `HRSYNC_TEST_SEED` (CI derives
it from the commit), or `DEFAULT_SEED`; the pytest header prints it, so a failure is
replayed with `HRSYNC_TEST_SEED=N pytest …`.
"""

from __future__ import annotations

import os
from typing import Any, Final

from hrsync.clock import Clock
from hrsync.simulator.core import SimulatedDx
from hrsync.simulator.scenario import Scenario
from hrsync.simulator.server import RunningSimulator
from hrsync.simulator.server import start_simulator as _start_simulator

SEED_ENV: Final = "HRSYNC_TEST_SEED"
DEFAULT_SEED: Final = 34


def simulator_seed() -> int:
    """The seed of this test run (`HRSYNC_TEST_SEED`, else `DEFAULT_SEED`)."""
    text = os.environ.get(SEED_ENV, "").strip()
    if not text:
        return DEFAULT_SEED
    try:
        seed = int(text, 0)
    except ValueError:
        raise ValueError(f"{SEED_ENV}={text!r}: expected a whole number") from None
    if seed < 0:
        raise ValueError(f"{SEED_ENV}={text!r}: expected a whole number >= 0")
    return seed


def start_simulator(
    scenario: Scenario | None = None, *, clock: Clock | None = None, **kwargs: Any
) -> RunningSimulator:
    """`hrsync.simulator.server.start_simulator` with this run's seed."""
    return _start_simulator(scenario, clock=clock, seed=simulator_seed(), **kwargs)


def simulated_dx(scenario: Scenario | None = None, clock: Clock | None = None) -> SimulatedDx:
    """A `SimulatedDx` (no sockets) with this run's seed."""
    return SimulatedDx(scenario, clock, seed=simulator_seed())


def seed_args() -> list[str]:
    """`--seed N` for a command that starts a simulator (`hrsync simulator`, `demo`)."""
    return ["--seed", str(simulator_seed())]
