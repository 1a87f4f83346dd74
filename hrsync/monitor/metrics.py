"""The daemon's Prometheus metrics, in a registry of their own (not the global default),
so each daemon, and each test, starts from a fresh one. Every metric is documented in
docs/reference/metrics.md.

Two kinds: counters of what this process did (runs, durations, DX calls), and state
gauges (STATE_GAUGES) of how things stand, all set by `show` from one reading of the
state store, so every replica serves the same."""

from __future__ import annotations

import platform
import threading
from datetime import datetime

from prometheus_client import (
    CollectorRegistry,
    Counter,
    Gauge,
    Histogram,
    ProcessCollector,
    generate_latest,
)

from hrsync import __version__
from hrsync.core.gate.plan import COUNT_KEYS
from hrsync.core.report.notify import ATTENTION
from hrsync.monitor.gauges import StoreState
from hrsync.outcome import OUTCOMES
from hrsync.sync.results import SyncResult

CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8"

# The gauges `show` sets from the store (the rest are this process's own).
STATE_GAUGES = (
    "hrsync_attention_required",
    "hrsync_last_success_timestamp_seconds",
    "hrsync_last_run_timestamp_seconds",
    "hrsync_deferred_until_timestamp_seconds",
    "hrsync_people",
    "hrsync_teams",
    "hrsync_plan_changes",
    "hrsync_next_snapshot_timestamp_seconds",
    "hrsync_snapshot_ready",
)


class Metrics:
    """What /metrics serves. The DX client and this process's runs feed the counters;
    `show` sets the state gauges from a reading of the store."""

    def __init__(self) -> None:
        self.registry = CollectorRegistry(auto_describe=True)
        r = self.registry
        # Which release each replica runs: a half-done rollout shows as two versions.
        Gauge(
            "hrsync_build_info",
            "Always 1; the labels say which hrsync and Python this process runs.",
            ["version", "python"],
            registry=r,
        ).labels(version=__version__, python=platform.python_version()).set(1)
        # Memory, CPU, open files and the start time (process_*), read from /proc on
        # Linux; the fresh-deployment alert and the dashboard read process_start_time.
        ProcessCollector(registry=r)
        self.runs = Counter("hrsync_runs", "Runs by outcome.", ["outcome"], registry=r)
        self.duration = Histogram(
            "hrsync_run_duration_seconds",
            "How long a run took.",
            buckets=(1, 5, 15, 30, 60, 120, 300, 600, 1200, 3600),
            registry=r,
        )
        self.last_run = Gauge(
            "hrsync_last_run_timestamp_seconds",
            "When the last run of each outcome ended (Unix time).",
            ["outcome"],
            registry=r,
        )
        self.last_success = Gauge(
            "hrsync_last_success_timestamp_seconds",
            "When the last applied or in_sync run ended (Unix time); 0: never.",
            registry=r,
        )
        self.attention = Gauge(
            "hrsync_attention_required",
            "1 while a person must act for this reason, else 0.",
            ["reason"],
            registry=r,
        )
        self.deferred_until = Gauge(
            "hrsync_deferred_until_timestamp_seconds",
            "When the pending deferral ends (Unix time); 0: not deferred.",
            registry=r,
        )
        self.people = Gauge(
            "hrsync_people",
            "People by state: synced (kept from the last accepted export and synced as it "
            "says), held (a problem of their own row: DX keeps what it had), not_in_dx "
            "(sent, but DX does not count them yet), lead_left (their manager left: in the "
            "team kept with a stand-in lead until HR re-points them), no_team (in no team "
            "and not meant to be: each needs a person).",
            ["state"],
            registry=r,
        )
        self.teams = Gauge("hrsync_teams", "Teams in the last accepted export.", registry=r)
        self.plan_changes = Gauge(
            "hrsync_plan_changes",
            "Changes of each kind in the last run's plan.",
            ["kind"],
            registry=r,
        )
        self.dx_requests = Counter(
            "hrsync_dx_requests",
            "DX API calls by method and outcome (ok or the error's kind).",
            ["method", "outcome"],
            registry=r,
        )
        self.dx_retries = Counter(
            "hrsync_dx_retries", "DX API attempts retried, by method.", ["method"], registry=r
        )
        self.attribute_updates = Counter(
            "hrsync_attribute_updates",
            "People in the attribute step, by outcome (updated, unchanged, failed).",
            ["outcome"],
            registry=r,
        )
        self.next_snapshot = Gauge(
            "hrsync_next_snapshot_timestamp_seconds",
            "When the next DX snapshot not started begins (its day, 00:00 UTC; Unix time); "
            "0: none scheduled.",
            registry=r,
        )
        self.snapshot_ready = Gauge(
            "hrsync_snapshot_ready",
            "1 when the latest check found nothing pending and nothing refused: the last run "
            "ended applied or in_sync with no held people and nothing waiting for a person "
            "(DX is ready for the next snapshot), else 0.",
            registry=r,
        )
        self._lock = threading.Lock()
        for outcome in OUTCOMES:
            self.runs.labels(outcome)
        for reason in ATTENTION:
            self.attention.labels(reason).set(0)
        for kind in COUNT_KEYS:
            self.plan_changes.labels(kind).set(0)
        for state in ("synced", "held", "not_in_dx", "lead_left", "no_team"):
            self.people.labels(state).set(0)
        self.last_success.set(0)
        self.deferred_until.set(0)

    def exposition(self) -> bytes:
        return generate_latest(self.registry)

    # ------------------------------------------------------------- feeds

    def dx_request(self, method: str, outcome: str) -> None:
        self.dx_requests.labels(method, outcome).inc()

    def dx_retry(self, method: str) -> None:
        self.dx_retries.labels(method).inc()

    def run_finished(self, result: SyncResult, *, duration_s: float) -> None:
        """This process's counters for a run it made. How things stand after it (the
        state gauges) is read from the store: `show`."""
        with self._lock:
            self.runs.labels(result.outcome.value).inc()
            self.duration.observe(duration_s)
            if result.attributes is not None:
                a = result.attributes
                for kind, count in (
                    ("updated", a.updated),
                    ("unchanged", a.unchanged),
                    ("failed", a.failed),
                ):
                    if count:
                        self.attribute_updates.labels(kind).inc(count)

    def show(self, state: StoreState, *, quarantined: bool) -> None:
        """Every state gauge from one reading of the store (`quarantined`: the daemon's
        view of the failure streak, itself read from the store)."""
        with self._lock:
            for outcome, at in state.last_ends.items():
                self.last_run.labels(outcome).set(at.timestamp())
            self.last_success.set(_unix(state.last_success))
            waiting = state.waiting_on
            for reason in ATTENTION:
                if reason != "quarantined":
                    self.attention.labels(reason).set(1 if reason == waiting else 0)
            self.quarantine_changed(quarantined)
            self.people.labels("synced").set(state.synced or 0)
            self.people.labels("held").set(state.held)
            self.people.labels("not_in_dx").set(state.not_in_dx)
            self.people.labels("lead_left").set(state.lead_left)
            self.people.labels("no_team").set(state.no_team)
            self.teams.set(state.teams)
            for kind in COUNT_KEYS:
                self.plan_changes.labels(kind).set(state.plan_changes.get(kind, 0))
            self.deferred_until.set(_unix(state.deferred_until))
            snapshot = state.next_snapshot
            self.next_snapshot.set(_unix(snapshot.starts_at if snapshot else None))
            self.snapshot_ready.set(1 if state.readiness.ready else 0)

    def quarantine_changed(self, quarantined: bool) -> None:
        self.attention.labels("quarantined").set(1 if quarantined else 0)


def _unix(at: datetime | None) -> float:
    return at.timestamp() if at is not None else 0
