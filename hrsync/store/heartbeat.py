"""The heartbeat table: the daemon's last sign of life, what `healthcheck` reads."""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import select

from hrsync.store import models
from hrsync.store.lease import this_host
from hrsync.store.sessions import StoreSessions
from hrsync.store.upsert import upsert


@dataclass(frozen=True, slots=True)
class HeartbeatRecord:
    name: str
    beat_at: datetime
    pid: int
    host: str
    state: str
    quarantined_since: datetime | None
    consecutive_failures: int
    detail: dict[str, Any]


class HeartbeatQueries(StoreSessions):
    def beat(
        self,
        now: datetime,
        *,
        state: str,
        name: str = "daemon",
        quarantined_since: datetime | None = None,
        consecutive_failures: int = 0,
        detail: Mapping[str, Any] | None = None,
    ) -> None:
        values = {
            "beat_at": now,
            "pid": os.getpid(),
            "host": this_host(),
            "state": state,
            "quarantined_since": quarantined_since,
            "consecutive_failures": consecutive_failures,
            "detail": json.dumps(dict(detail or {}), default=str),
        }
        with self._write() as s:
            # An upsert: two replicas starting together both find no row to update.
            s.execute(upsert(self.engine, models.heartbeats, {"name": name}, values))

    def heartbeat(self, name: str = "daemon") -> HeartbeatRecord | None:
        heartbeats = models.heartbeats
        with self._read() as s:
            row = s.execute(select(heartbeats).where(heartbeats.c.name == name)).first()
            if row is None:
                return None
            return HeartbeatRecord(
                row.name,
                row.beat_at,
                row.pid,
                row.host,
                row.state,
                row.quarantined_since,
                row.consecutive_failures,
                json.loads(row.detail or "{}"),
            )
