"""What the daemon tells the world about itself: metrics, the HTTP endpoints, the webhook.

`hrsync run` builds one Monitor; the daemon hands it each finished run and each
heartbeat. The state gauges are read from the state store (monitor.gauges), never fed
from a run, so a run by hand or the other replica's shows within a heartbeat, and every
replica serves the same. Nothing here may fail or hold up a run: every step is guarded
and logged.
"""

from __future__ import annotations

import threading
from datetime import datetime
from typing import Protocol

from sqlalchemy.exc import SQLAlchemyError

from hrsync.clock import Clock
from hrsync.core import defaults
from hrsync.core.command_lines import approve_command
from hrsync.core.gate.plan import Archive
from hrsync.core.report.notify import SUCCESS, observe, recovered_since
from hrsync.core.run_bounds import RUN_SLACK_S, overdue_after_s
from hrsync.core.settings import Settings
from hrsync.logs import get_logger, scrub
from hrsync.monitor.endpoints import Endpoints
from hrsync.monitor.gauges import StoreState, read_state
from hrsync.monitor.metrics import Metrics
from hrsync.monitor.webhook import Notifier
from hrsync.store.repo import RunRecord, Store
from hrsync.sync.results import SyncResult

log = get_logger(__name__)


class DaemonView(Protocol):
    """What the monitor asks of the daemon (hrsync.daemon.service.Daemon has it)."""

    def scheduler_alive(self) -> bool: ...

    def last_beat_at(self) -> datetime | None: ...

    def quarantined(self) -> bool: ...

    def heartbeat_failure(self) -> tuple[datetime, str] | None: ...

    def running_since(self) -> datetime | None: ...


class Monitor:
    def __init__(self, settings: Settings, store: Store, clock: Clock) -> None:
        self.settings = settings
        self.store = store
        self.clock = clock
        self.metrics = Metrics()
        self.notifier = Notifier.configured(settings.notify, store)
        self._endpoints: Endpoints | None = None
        self._daemon: DaemonView | None = None
        self._refresh_lock = threading.Lock()
        self._store_unreadable = False
        # The last success `beat` told (or tried to tell) `recovered` for.
        self._recovery_tried: str | None = None

    def start(self, daemon: DaemonView) -> None:
        self._daemon = daemon
        self.refresh(quarantined=daemon.quarantined())
        if self.settings.daemon.listen:
            self._endpoints = Endpoints(
                self.settings.daemon.listen,
                health=self.health,
                ready=self.ready,
                metrics=self._scrape,
            )
            self._endpoints.start()

    def stop(self) -> None:
        if self._endpoints is not None:
            self._endpoints.stop()

    @property
    def address(self) -> str | None:
        return self._endpoints.address if self._endpoints else None

    def _scrape(self) -> bytes:
        # The quarantine also ends outside the daemon's runs (a `hrsync sync` by hand ends
        # the streak): take the daemon's latest view at every scrape.
        if self._daemon is not None:
            self.metrics.quarantine_changed(self._daemon.quarantined())
        return self.metrics.exposition()

    # ----------------------------------------------------------- probes

    def health(self) -> tuple[bool, str]:
        daemon = self._daemon
        if daemon is None or not daemon.scheduler_alive():
            return False, "the scheduler is not running"
        beat = daemon.last_beat_at()
        if beat is None:
            return False, "no heartbeat written yet"
        age = (self.clock() - beat).total_seconds()
        limit = self.settings.sync.healthcheck_max_age_s
        if age > limit:
            return False, f"stale heartbeat: last written {age:.0f}s ago (limit {limit:g}s)"
        return True, f"ok: heartbeat {max(age, 0):.0f}s ago"

    def ready(self) -> tuple[bool, str]:
        daemon = self._daemon
        if daemon is None or not daemon.scheduler_alive():
            return False, "not ready: the scheduler is not running"
        failure = daemon.heartbeat_failure()
        if failure is not None:
            # Reads may still work (a full disk): what counts is that nothing can be kept.
            at, error = failure
            ago = (self.clock() - at).total_seconds()
            return False, scrub(
                f"not ready: the state store cannot be written: the heartbeat {ago:.0f} s "
                f"ago failed: {error}"
            )
        try:
            self.store.heartbeat.read()
        except SQLAlchemyError as exc:
            first = (str(exc).strip().splitlines() or [type(exc).__name__])[0]
            return False, f"not ready: the state store is unreachable: {first}"
        if daemon.quarantined():
            return False, "not ready: quarantined after failed runs in a row; see `hrsync status`"
        since = daemon.running_since()
        if since is None:
            return True, "ready"
        running_s = (self.clock() - since).total_seconds()
        limit = overdue_after_s(self.settings)
        if running_s > limit:
            # Stuck, not slow: every scheduled run is skipped while it holds on.
            return False, (
                f"not ready: a sync has been in progress for {running_s:.0f} s, longer than "
                f"any run should take ({limit:.0f} s: source.deadline_s + "
                f"sync.verify_timeout_s + {RUN_SLACK_S:.0f} s); scheduled runs are skipped "
                f"until it ends; see the log (daemon.run_overdue)"
            )
        return True, f"ready: sync in progress for {max(running_s, 0):.0f} s"

    # ------------------------------------------------------- from the store

    def refresh(self, *, quarantined: bool) -> StoreState | None:
        """The state gauges from the store, at start, after each run and at every
        heartbeat; the reading, or None when the store could not be read: the gauges
        then keep their values, and the log says so once until it can be read again."""
        # One at a time: a heartbeat's older reading must not land after a run's newer one.
        with self._refresh_lock:
            try:
                state = read_state(self.store, self.settings.command_config)
            except SQLAlchemyError as exc:
                if not self._store_unreadable:
                    log.warning(
                        "daemon.store_unavailable",
                        error=str(exc),
                        detail="the metrics keep their last values until the state store "
                        "can be read again",
                    )
                self._store_unreadable = True
                return None
            self._store_unreadable = False
            self.metrics.show(state, quarantined=quarantined)
            return state

    def beat(self, *, quarantined: bool) -> None:
        """At every heartbeat: the gauges from the store, and `recovered` for a success
        this process did not make (a run by hand, the other replica's), once."""
        state = self.refresh(quarantined=quarantined)
        if state is None or self.notifier is None:
            return
        try:
            self._recovered_elsewhere(self.notifier, state.decisive, quarantined=quarantined)
        except SQLAlchemyError as exc:
            log.warning("daemon.store_unavailable", error=str(exc))
        except Exception as exc:  # the webhook must never take the daemon down
            log.warning("notify.failed", error=type(exc).__name__, detail=str(exc)[:200])

    def _recovered_elsewhere(
        self, notifier: Notifier, decisive: RunRecord | None, *, quarantined: bool
    ) -> None:
        # Each success is tried once from here: a webhook that is down hears of it
        # after the next run (as after any run), not at every beat.
        if decisive is None or decisive.id == self._recovery_tried:
            return
        last = self.store.notifications.state()
        told = self.store.runs.get(last.run_id) if last and last.run_id else None
        news = recovered_since(
            last,
            told_run_started=told.started_at if told else None,
            success_started=decisive.started_at if decisive.waiting_on is None else None,
            quarantined=quarantined,
        )
        if not news:
            return
        self._recovery_tried = decisive.id
        seen = observe(
            decisive.id, decisive.outcome or "", quarantined=False, reason=decisive.reason
        )
        notifier.tell(last, seen, self.clock())

    # ------------------------------------------------------------- runs

    def run_finished(self, result: SyncResult, duration_s: float, *, quarantined: bool) -> None:
        self.metrics.run_finished(result, duration_s=duration_s)
        state = self.refresh(quarantined=quarantined)
        if self.notifier is None:
            return
        archives = (
            [c.name for c in result.plan.changes if isinstance(c, Archive)] if result.plan else []
        )
        seen = observe(
            result.run_id,
            result.overall.value,  # an attribute step a person must approve is news too
            quarantined=quarantined,
            plan_digest=result.plan.payload_digest if result.plan else None,
            reason=result.reason,
            archives=archives,
            action=result.action,
            plan_id=result.plan_id,
            approve_plan=(
                approve_command(result.plan_id, self.settings.command_config)
                if result.plan_id and result.overall.value == "refused" and result.action
                else None
            ),
            preview_url=result.preview_url if result.outcome.value == "refused" else None,
        )
        now = self.clock()
        try:
            self.notifier.after_run(seen, now)
            if result.outcome.value in SUCCESS:
                self.notifier.after_success(result.run_id, result.substitutes, now)
            self.notifier.after_held(result.run_id, now)
            self.notifier.after_people(result.run_id, now, alert_days=defaults.NOT_IN_DX_ALERT_DAYS)
            self.notifier.after_leads_left(
                result.run_id, now, alert_days=defaults.LEAD_LEFT_ALERT_DAYS
            )
        except Exception as exc:  # the webhook must never take a run or the daemon down
            log.warning("notify.failed", error=type(exc).__name__, detail=str(exc)[:200])
        if state is None:
            return
        # After the run's own notices: a refusal is told before what it means for the
        # snapshot.
        try:
            self.notifier.after_snapshot(
                result.run_id,
                self.clock(),
                state.next_snapshot,
                state.readiness,
                hours=self.settings.sync.pre_snapshot_hours,
            )
        except SQLAlchemyError as exc:
            log.warning("daemon.store_unavailable", error=str(exc))
        except Exception as exc:  # the webhook must never take a run or the daemon down
            log.warning("notify.failed", error=type(exc).__name__, detail=str(exc)[:200])
