"""`hrsync run` as a process: signal handlers, the daemon and its monitor, until stopped."""

from __future__ import annotations

import signal
import threading
from collections.abc import Callable
from types import FrameType
from typing import TYPE_CHECKING, Any

from hrsync.clock import Clock, utcnow
from hrsync.config.loading import Settings
from hrsync.core import defaults
from hrsync.daemon.service import Daemon, RunSync
from hrsync.logs import get_logger
from hrsync.outcome import EXIT_OK
from hrsync.store.repo import Store

if TYPE_CHECKING:
    from hrsync.monitor.reporting import Monitor

log = get_logger(__name__)


def run(
    settings: Settings,
    *,
    now: bool,
    store: Store,
    run_sync: RunSync,
    clock: Clock = utcnow,
    stop_event: threading.Event | None = None,
    monitor: Monitor | None = None,
    shutdown_grace_s: float = defaults.SHUTDOWN_GRACE_S,
) -> int:
    """`hrsync run`: schedule syncs until SIGTERM/SIGINT (or `stop_event`); returns 0.

    Signal handlers are installed only when called from the main thread; otherwise
    (tests, embedding) set `stop_event` to stop. Pass the same event to the engine
    so a run in progress can stop at the end of its current step.
    """
    stop = stop_event if stop_event is not None else threading.Event()
    restore = _install_signal_handlers(stop)
    daemon = Daemon(
        settings,
        store=store,
        run_sync=run_sync,
        clock=clock,
        on_finished=(
            (lambda r, s, q: monitor.run_finished(r, s, quarantined=q)) if monitor else None
        ),
        on_beat=(lambda q: monitor.beat(quarantined=q)) if monitor else None,
        shutdown_grace_s=shutdown_grace_s,
    )
    try:
        daemon.start(now=now)
        if monitor is not None:
            monitor.start(daemon)
        # Short waits keep the main thread responsive to signals on every platform.
        while not stop.wait(1.0):
            pass
    finally:
        daemon.stop()
        if monitor is not None:
            monitor.stop()
        restore()
    return EXIT_OK


def _install_signal_handlers(stop: threading.Event) -> Callable[[], None]:
    if threading.current_thread() is not threading.main_thread():
        return lambda: None

    def handler(signum: int, _frame: FrameType | None) -> None:
        if not stop.is_set():
            log.info("daemon.signal", signal=signal.Signals(signum).name)
        stop.set()

    previous: dict[int, Any] = {}
    for sig in (signal.SIGTERM, signal.SIGINT):
        previous[sig] = signal.signal(sig, handler)

    def restore() -> None:
        for sig, old in previous.items():
            signal.signal(sig, old)

    return restore
