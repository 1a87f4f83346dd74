"""The heartbeat table: the daemon's last sign of life, what `healthcheck` reads."""

from __future__ import annotations

import os
from collections.abc import Mapping
from datetime import datetime
from typing import Any

from sqlalchemy import select

from hrsync.store import tables
from hrsync.store.heartbeat_record import (
    COLUMNS,
    HeartbeatRecord,
    encode_detail,
    heartbeat_record,
)
from hrsync.store.lease import this_host
from hrsync.store.sessions import StoreSessions
from hrsync.store.upsert import upsert


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
            "detail": encode_detail(detail),
        }
        with self._write() as s:
            # An upsert: two replicas starting together both find no row to update.
            s.execute(upsert(self.engine, tables.heartbeats, {"name": name}, values))

    def read(self, name: str = "daemon") -> HeartbeatRecord | None:
        heartbeats = tables.heartbeats
        with self._read() as s:
            columns = [heartbeats.c[column] for column in COLUMNS]
            row = s.execute(select(*columns).where(heartbeats.c.name == name)).first()
            return None if row is None else heartbeat_record(row)
