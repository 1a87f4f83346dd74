"""The daemon's heartbeat: what it is doing and when it runs next, written to the store.

`hrsync healthcheck` and `hrsync status` read it; /healthz reads the time of the last
beat that reached the store.
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

    def write(
        self,
        state: str,
        *,
        quarantine: Quarantine | None,
        next_run_time: datetime | None,
        resume_at: datetime | None,
    ) -> None:
        self.store.beat(
            self.clock(),
            state=state,
            quarantined_since=quarantine.since if quarantine else None,
            consecutive_failures=quarantine.failures if quarantine else 0,
            detail={
                "next_run_time": iso(next_run_time),
                "resume_at": iso(resume_at),
                "next_attempt_at": iso(quarantine.next_attempt_at) if quarantine else None,
                "schedule": self.sync.schedule,
                "timezone": self.sync.timezone,
            },
        )
        self.ok_at = self.clock()
