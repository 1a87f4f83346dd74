"""The range of every number in the settings: finite, and within what its key means.

The kind of a key is read from its name, so a number added to the settings later is
checked without a line here:

- a share (`..._fraction`) lies between 0 and 1;
- a duration (`..._s`, `..._hours`, `..._days`, …) is greater than 0 and at most a year:
  longer would overflow a timer or a date before it meant anything;
- any other number counts something (people, pages, bytes, attempts): 0 or more.

`RANGES` holds the keys whose range their name does not tell. Every range has an upper
bound, and NaN or infinity lies in none.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

# Whole numbers above this are no count any key means (a trillion bytes is 1 TB).
MAX_COUNT = 10**12
YEAR_DAYS = 366

# A duration's unit, by the key's ending: how many of it make a day.
_PER_DAY = {"_s": 86_400, "_seconds": 86_400, "_minutes": 1_440, "_hours": 24, "_days": 1}


@dataclass(frozen=True)
class Range:
    low: float
    high: float
    above_low: bool = False  # the low end itself is out ("greater than 0")
    unit_per_day: int = 0  # a duration in a unit shorter than a day: the bound in days
    choice: bool = False  # two whole numbers: "0 or 1"

    def holds(self, value: float) -> bool:
        if not math.isfinite(value) or value > self.high:
            return False
        return value > self.low if self.above_low else value >= self.low

    def expected(self, value: float) -> str:
        """What the value should have been, for a message: the side it missed, or the
        whole range when it is NaN or infinite."""
        if not math.isfinite(value):
            return f"a finite number {self._whole()}"
        if self.choice or (self.low, self.high) == (0, 1):
            return self._whole()
        return self._lower() if value <= self.low else self._upper()

    def _whole(self) -> str:
        if self.choice:
            return f"{_shown(self.low)} or {_shown(self.high)}"
        if (self.low, self.high) == (0, 1):
            return "between 0 and 1"
        return f"{self._lower()} and {self._upper()}"

    def _lower(self) -> str:
        if self.above_low:
            return f"greater than {_shown(self.low)}"
        return "0 or more" if self.low == 0 else f"at least {_shown(self.low)}"

    def _upper(self) -> str:
        days = f" ({YEAR_DAYS} days)" if self.unit_per_day > 1 else ""
        return f"at most {_shown(self.high)}{days}"


def _shown(number: float) -> str:
    return f"{number:,}" if float(number).is_integer() else f"{number:g}"


SHARE = Range(0, 1)
COUNT = Range(0, MAX_COUNT)
AT_LEAST_ONE = Range(1, MAX_COUNT)

# Keys whose range their name does not tell.
RANGES: dict[str, Range] = {
    "source.max_bytes": AT_LEAST_ONE,
    "source.pagination.page_size": AT_LEAST_ONE,
    "source.pagination.max_pages": AT_LEAST_ONE,
    "source.pagination.first_page": Range(0, 1, choice=True),  # the API's first page's number
    "sync.quarantine_after": AT_LEAST_ONE,
    # 0: no window after a snapshot in which imports wait.
    "sync.retro_window_days": Range(0, YEAR_DAYS),
    # 0: keep all history. A century at most: the cut-off must stay a date.
    "state.keep_days": Range(0, 100 * YEAR_DAYS),
}


def number_range(key: str) -> Range:
    """The range of the number at dotted `key`."""
    if key in RANGES:
        return RANGES[key]
    name = key.rsplit(".", 1)[-1]
    if name.endswith("_fraction"):
        return SHARE
    for ending, per_day in _PER_DAY.items():
        if name.endswith(ending):
            return Range(0, YEAR_DAYS * per_day, above_low=True, unit_per_day=per_day)
    return COUNT


def number_problem(key: str, value: float) -> str | None:
    """What the number at `key` must be, when `value` is not that; None when it is."""
    span = number_range(key)
    return None if span.holds(value) else span.expected(value)
