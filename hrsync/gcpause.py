"""The one switch of the cyclic garbage collector: paused around the run's big stages, and
around the imports of a command, whose objects are then frozen.

Reading a 100k-person export builds about a million small objects that all stay alive until
the run ends. CPython's cyclic collector runs whenever allocations outnumber deallocations
by a threshold, and each run of the oldest generation walks every live tracked object: it
finds nothing to free here (the objects are alive, and reference counting frees the rest),
yet costs about a fifth of the pipeline's time. `collector_paused` switches it off for the
duration of the run's read → map → assign stages (`stages.read_and_map` and
`stages.assign_and_plan` under one pause in `story`) and back on afterwards, also when a
stage raises. The pure functions themselves know nothing of it.

What this does not change: reference counting still frees almost everything at once; only
garbage in reference cycles waits until the collector runs again (for the pure functions of
those stages, a few objects at most). Collections skipped now partly happen later, once, as
the young objects age; `benchmarks/bench_pipeline.py` measures the net gain (it pauses the
collector around the same three steps, the same way).

The collector is switched per process, so pauses from several threads are counted: it is
switched back on when the last one ends, and only if it was on when the first began.
"""

from __future__ import annotations

import gc
import threading
from collections.abc import Iterator
from contextlib import contextmanager

_lock = threading.Lock()
_depth = 0
_was_enabled = False


@contextmanager
def collector_paused() -> Iterator[None]:
    """Disable the cyclic garbage collector for a block."""
    global _depth, _was_enabled
    with _lock:
        if _depth == 0:
            _was_enabled = gc.isenabled()
            gc.disable()
        _depth += 1
    try:
        yield
    finally:
        with _lock:
            _depth -= 1
            if _depth == 0 and _was_enabled:
                gc.enable()


@contextmanager
def imports_frozen() -> Iterator[None]:
    """Import without the cyclic collector, then freeze what was loaded: SQLAlchemy and
    the rest are ~200k objects that live as long as the process, and every collection
    of the oldest generation walked them again (~5% of a 50k plan). Frozen objects are
    still freed by reference counting; only cycles among them stay."""
    with collector_paused():
        try:
            yield
        finally:
            gc.freeze()
