"""Run outcomes and the exit codes scripts rely on (docs/reference/commands.md, Exit codes)."""

from __future__ import annotations

from enum import StrEnum


class Outcome(StrEnum):
    IN_SYNC = "in_sync"
    APPLIED = "applied"
    FAILED = "failed"
    DEFERRED = "deferred"
    REFUSED = "refused"
    UNVERIFIED = "unverified"
    REJECTED = "rejected"
    # A dry run or a preview with changes to make: nothing was applied.
    PLANNED = "planned"

    @property
    def exit_code(self) -> int:
        return _EXIT_CODES[self]


# Every outcome's value: the runs that ended (a dry run's too), as the store holds them.
OUTCOMES = tuple(o.value for o in Outcome)


_EXIT_CODES = {
    Outcome.IN_SYNC: 0,
    Outcome.APPLIED: 0,
    Outcome.FAILED: 1,
    Outcome.DEFERRED: 3,
    Outcome.REFUSED: 4,
    Outcome.UNVERIFIED: 5,
    Outcome.REJECTED: 6,
    Outcome.PLANNED: 0,
}

EXIT_OK = 0
EXIT_FAILED = 1
EXIT_USAGE = 2
