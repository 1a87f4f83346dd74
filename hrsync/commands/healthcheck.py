"""`hrsync healthcheck`: is the daemon alive and not stuck in quarantine?

It runs every 30 s inside the container, so it stays cheap: one read of the
heartbeat row, no migrations, no DX call, and it never creates a database file.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import TextIO

from sqlalchemy.exc import SQLAlchemyError

from hrsync.commands.startup import load_local
from hrsync.config import Settings
from hrsync.outcome import EXIT_FAILED, EXIT_OK
from hrsync.store.repo import HeartbeatRecord, Store
from hrsync.store.url import parse_database_url

Clock = Callable[[], datetime]


@dataclass(frozen=True, slots=True)
class Health:
    healthy: bool
    reason: str  # one line, for `docker inspect` and the operator

    @property
    def exit_code(self) -> int:
        return EXIT_OK if self.healthy else EXIT_FAILED


def evaluate(
    heartbeat: HeartbeatRecord | None,
    now: datetime,
    *,
    max_age_s: float,
    quarantine_alert_s: float,
) -> Health:
    """Judge the heartbeat row (pure)."""
    if heartbeat is None:
        return Health(False, "no heartbeat yet: `hrsync run` has not started on this state store")
    age = (now - heartbeat.beat_at).total_seconds()
    who = f"pid {heartbeat.pid} on {heartbeat.host}"
    if heartbeat.state == "stopped":
        return Health(False, f"the daemon ({who}) stopped at {_iso(heartbeat.beat_at)}")
    if age > max_age_s:
        return Health(
            False,
            f"stale heartbeat: last beat {age:.0f}s ago at {_iso(heartbeat.beat_at)} "
            f"(limit {max_age_s:g}s) from {who}",
        )
    since = heartbeat.quarantined_since
    if since is not None:
        quarantined_s = (now - since).total_seconds()
        if quarantined_s > quarantine_alert_s:
            return Health(
                False,
                f"quarantined for {quarantined_s / 3600:.1f}h since {_iso(since)} after "
                f"{heartbeat.consecutive_failures} failed runs in a row "
                f"(alert after {quarantine_alert_s / 3600:g}h); see `hrsync history`",
            )
    next_run = heartbeat.detail.get("next_run_time")
    return Health(
        True,
        f"ok: heartbeat {max(age, 0):.0f}s ago, state {heartbeat.state}"
        + (f", next run {next_run}" if next_run else ""),
    )


def check(settings: Settings, *, clock: Clock | None = None) -> Health:
    """Read the heartbeat from the state store named in `settings` and judge it."""
    url = settings.state.database_url
    missing = _missing_sqlite_file(url)
    if missing is not None:
        return Health(False, f"no heartbeat yet: the state store {missing} does not exist")
    now = (clock or _utcnow)()
    try:
        store = Store.open(url, migrate=False)
    except SQLAlchemyError as exc:
        return Health(False, f"cannot open the state store: {_first_line(exc)}")
    try:
        heartbeat = store.heartbeat()
    except SQLAlchemyError as exc:
        return Health(False, f"cannot read the heartbeat: {_first_line(exc)}")
    finally:
        store.close()
    return evaluate(
        heartbeat,
        now,
        max_age_s=settings.sync.healthcheck_max_age_s,
        quarantine_alert_s=settings.sync.quarantine_alert_s,
    )


def healthcheck(args: argparse.Namespace) -> int:
    return report(load_local(args))


def report(
    settings: Settings,
    *,
    clock: Clock | None = None,
    out: TextIO | None = None,
    err: TextIO | None = None,
) -> int:
    """`hrsync healthcheck`: print one line, exit 0 when healthy, 1 otherwise."""
    health = check(settings, clock=clock)
    stream = (out or sys.stdout) if health.healthy else (err or sys.stderr)
    print(health.reason if health.healthy else f"unhealthy: {health.reason}", file=stream)
    return health.exit_code


def _missing_sqlite_file(url: str) -> str | None:
    # Connecting would create an empty database (and make_engine its directory):
    # a healthcheck must not invent state, so look first.
    path = parse_database_url(url).sqlite_path
    return None if path is None or path.exists() else str(path)


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return text[0] if text else type(exc).__name__


def _utcnow() -> datetime:
    return datetime.now(UTC)


def _iso(value: datetime) -> str:
    return value.astimezone(UTC).isoformat(timespec="seconds")
