"""The daemon's Prometheus metrics, in a registry of their own (not the global default),
so each daemon, and each test, starts from a fresh one. Every metric is documented in
docs/reference/metrics.md."""

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
from hrsync.core.notify import ATTENTION, SUCCESS
from hrsync.core.plan import COUNT_KEYS
from hrsync.outcome import Outcome
from hrsync.store.repo import RunRecord, Store
from hrsync.sync.results import SyncResult

OUTCOMES = tuple(o.value for o in Outcome)
CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8"


class Metrics:
    """What /metrics serves. The run, the DX client and the attribute step feed it."""

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
            "(sent, but DX does not count them yet).",
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
            "1 when the last run ended applied or in_sync with no held people and nothing "
            "waiting for a person (DX is ready for the next snapshot), else 0.",
            registry=r,
        )
        self._lock = threading.Lock()
        for outcome in OUTCOMES:
            self.runs.labels(outcome)
        for reason in ATTENTION:
            self.attention.labels(reason).set(0)
        for kind in COUNT_KEYS:
            self.plan_changes.labels(kind).set(0)
        for state in ("synced", "held", "not_in_dx"):
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

    def run_finished(
        self,
        result: SyncResult,
        *,
        ended_at: datetime,
        duration_s: float,
        quarantined: bool,
        deferred_until: datetime | None,
    ) -> None:
        outcome = result.outcome.value
        with self._lock:
            self.runs.labels(outcome).inc()
            self.duration.observe(duration_s)
            self.last_run.labels(outcome).set(ended_at.timestamp())
            if outcome in SUCCESS:
                self.last_success.set(ended_at.timestamp())
                if result.people_count is not None:
                    self.people.labels("synced").set(result.people_count)
                self.people.labels("not_in_dx").set(len(result.not_in_dx))
                if result.plan is not None:
                    self.teams.set(result.plan.desired_count)
            if result.people_count is not None:  # the export was read and mapped
                self.people.labels("held").set(len(result.held))
            if result.plan is not None:
                for kind, count in result.plan.counts.items():
                    self.plan_changes.labels(kind).set(count)
            # What a person must act on includes the attribute step (`overall`).
            self._attention(result.overall.value, quarantined)
            self.deferred_until.set(deferred_until.timestamp() if deferred_until else 0)
            if result.attributes is not None:
                a = result.attributes
                for kind, count in (
                    ("updated", a.updated),
                    ("unchanged", a.unchanged),
                    ("failed", a.failed),
                ):
                    if count:
                        self.attribute_updates.labels(kind).inc(count)

    def snapshot_outlook(self, starts_at: datetime | None, *, ready: bool) -> None:
        with self._lock:
            self.next_snapshot.set(starts_at.timestamp() if starts_at else 0)
            self.snapshot_ready.set(1 if ready else 0)

    def quarantine_changed(self, quarantined: bool) -> None:
        self.attention.labels("quarantined").set(1 if quarantined else 0)

    def _attention(self, outcome: str, quarantined: bool) -> None:
        # A deferral or a failure short of quarantine says nothing new about a refusal
        # still waiting for a person: only a run that got further clears it.
        if outcome in ATTENTION or outcome in SUCCESS:
            for reason in ATTENTION:
                if reason != "quarantined":
                    self.attention.labels(reason).set(1 if reason == outcome else 0)
        self.quarantine_changed(quarantined)

    # ------------------------------------------------------------- start

    def seed(self, store: Store, *, quarantined: bool) -> None:
        """From the state store, so a restarted daemon does not report zeros."""
        for outcome in OUTCOMES:
            run = store.newest_run((outcome,))
            if run is not None:
                self.last_run.labels(outcome).set(_ended(run).timestamp())
        success = store.newest_run(SUCCESS)
        if success is not None:
            self.last_success.set(_ended(success).timestamp())
        people = store.last_accepted_people_count()
        if people is not None:
            self.people.labels("synced").set(people)
        self.people.labels("held").set(len(store.held_people()))
        self.people.labels("not_in_dx").set(len(store.not_counted()))
        self.teams.set(store.active_team_count())
        last = store.newest_run(OUTCOMES)
        if last is not None:
            for kind in COUNT_KEYS:
                self.plan_changes.labels(kind).set(last.counts.get(kind, 0))
        decisive = store.newest_run((*ATTENTION, *SUCCESS))
        if decisive is not None and decisive.outcome is not None:
            # As `run_finished` tells it: the attribute step's refusal counts too.
            self._attention(decisive.waiting_on or decisive.outcome, quarantined)
        else:
            self.quarantine_changed(quarantined)
        pending = store.pending_deferral()
        self.deferred_until.set(pending.resume_at.timestamp() if pending else 0)


def _ended(run: RunRecord) -> datetime:
    return run.finished_at or run.started_at
