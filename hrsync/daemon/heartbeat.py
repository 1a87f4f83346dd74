"""The daemon's heartbeat: what it is doing and when it runs next, written to the store.

`hrsync healthcheck` and `hrsync status` read it; /healthz reads the time of the last
beat that reached the store, /readyz whether the last one failed. While a run is in
progress the beat names it: when it started and its trigger.
"""

from __future__ import annotations

from datetime import datetime

from hrsync.clock import Clock
from hrsync.config.loading import SyncSettings
from hrsync.daemon.cron import Quarantine
from hrsync.daemon.scheduler import iso
from hrsync.store.repo import Store


class Heartbeat:
    def __init__(self, store: Store, clock: Clock, sync: SyncSettings) -> None:
        self.store = store
        self.clock = clock
        self.sync = sync
        # When a beat last reached the store (what /healthz asks).
        self.ok_at: datetime | None = None
        # When the last beat failed and why, until one gets through: the store cannot be
        # written (a full disk, a read-only file), which /readyz tells.
        self.failure: tuple[datetime, str] | None = None

    def write(
        self,
        state: str,
        *,
        quarantine: Quarantine | None,
        next_run_time: datetime | None,
        resume_at: datetime | None,
        run: tuple[datetime, str] | None = None,
    ) -> None:
        """`run`: the run in progress, when it started and its trigger."""
        detail = {
            "next_run_time": iso(next_run_time),
            "resume_at": iso(resume_at),
            "next_attempt_at": iso(quarantine.next_attempt_at) if quarantine else None,
            "schedule": self.sync.schedule,
            "timezone": self.sync.timezone,
        }
        if run is not None:
            detail |= {"run_started_at": iso(run[0]), "run_trigger": run[1]}
        try:
            self.store.heartbeat.beat(
                self.clock(),
                state=state,
                quarantined_since=quarantine.since if quarantine else None,
                consecutive_failures=quarantine.failures if quarantine else 0,
                detail=detail,
            )
        except Exception as exc:
            lines = str(exc).strip().splitlines()
            self.failure = (self.clock(), lines[0] if lines else type(exc).__name__)
            raise
        self.failure = None
        self.ok_at = self.clock()
