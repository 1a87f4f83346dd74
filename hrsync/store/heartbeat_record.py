"""The heartbeat row as a record: its columns and how a row reads.

The standard library only: `healthcheck`'s cheap probe reads the row with `sqlite3`
and must not import SQLAlchemy, yet it and the store (heartbeat_table.py) share one record,
one column list and one reading of the stored values.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

COLUMNS = (
    "name",
    "beat_at",
    "pid",
    "host",
    "state",
    "quarantined_since",
    "consecutive_failures",
    "detail",
)


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

    def running(self, now: datetime, max_age_s: float) -> bool:
        """A daemon runs: it has not stopped, and it beat as recently as the healthcheck
        asks (an older beat is a daemon that died without saying so)."""
        return self.state != "stopped" and (now - self.beat_at).total_seconds() <= max_age_s


def encode_detail(detail: Mapping[str, Any] | None) -> str:
    return json.dumps(dict(detail or {}), default=str)


def heartbeat_record(row: Sequence[Any]) -> HeartbeatRecord:
    """A row's values in `COLUMNS` order as a record; times as SQLAlchemy's UTCDateTime
    returns them or as the text SQLite keeps (naive UTC), both read as aware UTC."""
    name, beat_at, pid, host, state, quarantined_since, failures, detail = row
    return HeartbeatRecord(
        name,
        _utc(beat_at),
        pid,
        host,
        state,
        _utc(quarantined_since) if quarantined_since is not None else None,
        failures or 0,
        json.loads(detail or "{}"),
    )


def _utc(value: datetime | str) -> datetime:
    # store/types.py keeps naive UTC text ("2030-06-01 12:00:00.000000").
    parsed = datetime.fromisoformat(value) if isinstance(value, str) else value
    return parsed.replace(tzinfo=UTC) if parsed.tzinfo is None else parsed.astimezone(UTC)
