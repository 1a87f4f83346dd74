"""Log volume that does not grow with the org: events emitted once per team or person
(`plan.change`, `identity.decision`, `mapping.note`, `export.warning`, `verify.audit_*`)
go through `Capped`, the one owner of the cap.

The first `cap` of a kind are logged at their own level, the rest at debug, and if any
went to debug one `log.capped` event says how many there were and where to see all of
them, at the level of the most serious one left out (at least info): at `--log-level
warning` the summary of capped warnings is still there to say that more were left out.
A 50,000-person first sync thus writes a few hundred lines at info, not one per team;
at debug nothing is lost. The fields of an event past the cap are built only when debug
is on: describing thousands of changes nobody reads cost most of a plan's time.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable, Iterator, Mapping
from contextlib import contextmanager
from typing import Any, Literal, TypeVar

T = TypeVar("T")

DEFAULT_CAP = 50
# Where a person sees every change when the log shows only the first ones.
SEE_ALL = "hrsync plan --format json"

Level = Literal["debug", "info", "warning", "error"]
_RANK: dict[str, int] = {"debug": 0, "info": 1, "warning": 2, "error": 3}

_cap = DEFAULT_CAP


def set_cap(cap: int) -> None:
    """The cap per kind for this process (`defaults.EVENTS_PER_KIND`)."""
    global _cap
    _cap = max(cap, 0)


def current_cap() -> int:
    return _cap


def debug_enabled() -> bool:
    return logging.getLogger().isEnabledFor(logging.DEBUG)


class Capped:
    """Emits one kind of event: the first `cap` at their level, the rest at debug."""

    def __init__(self, log: Any, event: str, *, cap: int | None = None, see: str = SEE_ALL) -> None:
        self._log = log
        self.event = event
        self.cap = _cap if cap is None else cap
        self.see = see
        self.total = 0
        self._debug = debug_enabled()
        self._summary: Level = "info"  # the most serious level of an event past the cap

    def emit(
        self, fields: Callable[[T], Mapping[str, object]], item: T, level: Level = "info"
    ) -> None:
        """Log one event about `item`; `fields(item)` is called only if it is written."""
        self.total += 1
        if self.total <= self.cap:
            getattr(self._log, level)(self.event, **fields(item))
            return
        if _RANK[level] > _RANK[self._summary]:
            self._summary = level
        if self._debug:
            self._log.debug(self.event, **fields(item))

    def close(self) -> None:
        """The one summary, when some went to debug."""
        if self.total > self.cap:
            getattr(self._log, self._summary)(
                "log.capped",
                kind=self.event,
                total=self.total,
                logged=self.cap,
                at_debug=self.total - self.cap,
                see=self.see,
            )


@contextmanager
def capped(log: Any, event: str, *, cap: int | None = None, see: str = SEE_ALL) -> Iterator[Capped]:
    """`Capped` for one loop, its summary written when the loop ends."""
    emitter = Capped(log, event, cap=cap, see=see)
    try:
        yield emitter
    finally:
        emitter.close()


def log_each(
    log: Any,
    event: str,
    items: Iterable[T],
    fields: Callable[[T], Mapping[str, object]],
    level: Level = "info",
    *,
    see: str = SEE_ALL,
) -> None:
    """One event per item through `capped`: the loop most callers would write."""
    with capped(log, event, see=see) as emitter:
        for item in items:
            emitter.emit(fields, item, level)
