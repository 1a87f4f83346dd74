"""`hrsync healthcheck`: fresh heartbeat -> 0; otherwise 1 with a one-line reason."""

from __future__ import annotations

import io
import sqlite3
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from hrsync.commands import healthcheck
from hrsync.config import Settings, StateSettings, SyncSettings
from hrsync.store.repo import HeartbeatRecord, Store

NOW = datetime(2030, 6, 1, 12, 0, tzinfo=UTC)
S = timedelta(seconds=1)
H = timedelta(hours=1)


def beat(
    age: timedelta,
    *,
    state: str = "idle",
    quarantined_for: timedelta | None = None,
    failures: int = 0,
) -> HeartbeatRecord:
    return HeartbeatRecord(
        name="daemon",
        beat_at=NOW - age,
        pid=4242,
        host="hrsync-7d9f",
        state=state,
        quarantined_since=None if quarantined_for is None else NOW - quarantined_for,
        consecutive_failures=failures,
        detail={"next_run_time": "2030-06-02T04:00:00+00:00"},
    )


def judge(record: HeartbeatRecord | None) -> healthcheck.Health:
    return healthcheck.evaluate(record, NOW, max_age_s=120, quarantine_alert_s=86400)


@pytest.mark.parametrize(
    ("record", "healthy", "phrases"),
    [
        (None, False, ["no heartbeat yet"]),
        (beat(10 * S), True, ["ok", "10s ago", "state idle", "next run 2030-06-02T04:00"]),
        (beat(120 * S), True, ["ok"]),  # the limit itself is still fresh
        (beat(121 * S), False, ["stale heartbeat", "121s ago", "limit 120s", "pid 4242"]),
        (beat(3 * H), False, ["stale heartbeat", "10800s ago"]),
        (beat(5 * S, state="running"), True, ["state running"]),
        (beat(5 * S, state="stopped"), False, ["stopped at 2030-06-01T11:59:55"]),
        # Quarantined, but not yet for long: the daemon is doing its job (backing off).
        (beat(5 * S, state="quarantined", quarantined_for=20 * H, failures=7), True, ["ok"]),
        (
            beat(5 * S, state="quarantined", quarantined_for=25 * H, failures=9),
            False,
            ["quarantined for 25.0h", "9 failed runs in a row", "alert after 24h", "history"],
        ),
        # Clock skew between writer and reader: a beat from the near future is fresh.
        (beat(-3 * S), True, ["ok", "0s ago"]),
    ],
)
def test_evaluate(record: HeartbeatRecord | None, healthy: bool, phrases: list[str]) -> None:
    result = judge(record)
    assert result.healthy is healthy
    assert result.exit_code == (0 if healthy else 1)
    for phrase in phrases:
        assert phrase in result.reason
    assert "\n" not in result.reason


# ------------------------------------------------------------ against the store


def settings_for(
    path: Path, *, healthcheck_max_age_s: float = 120, quarantine_alert_s: float = 86400
) -> Settings:
    return Settings(
        state=StateSettings(database_url=f"sqlite:///{path}"),
        sync=SyncSettings(
            healthcheck_max_age_s=healthcheck_max_age_s, quarantine_alert_s=quarantine_alert_s
        ),
    )


@pytest.fixture
def db(tmp_path: Path) -> Iterator[tuple[Path, Store]]:
    path = tmp_path / "state" / "hrsync.db"
    store = Store.open(f"sqlite:///{path}")
    yield path, store
    store.close()


def run_main(settings: Settings) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    code = healthcheck.report(settings, clock=lambda: NOW, out=out, err=err)
    return code, out.getvalue(), err.getvalue()


def test_fresh_heartbeat_exits_0_with_one_line(db: tuple[Path, Store]) -> None:
    path, store = db
    store.beat(NOW - 15 * S, state="idle", detail={"next_run_time": "2030-06-02T04:00:00+00:00"})
    code, out, err = run_main(settings_for(path))
    assert code == 0 and err == ""
    assert out.count("\n") == 1 and out.startswith("ok: heartbeat 15s ago")


def test_stale_heartbeat_exits_1_naming_age_and_limit(db: tuple[Path, Store]) -> None:
    path, store = db
    store.beat(NOW - 300 * S, state="idle")
    code, out, err = run_main(settings_for(path, healthcheck_max_age_s=90))
    assert code == 1 and out == ""
    assert err.startswith("unhealthy: stale heartbeat: last beat 300s ago")
    assert "limit 90s" in err and err.count("\n") == 1


def test_long_quarantine_exits_1(db: tuple[Path, Store]) -> None:
    path, store = db
    store.beat(
        NOW - 5 * S, state="quarantined", quarantined_since=NOW - 3 * H, consecutive_failures=6
    )
    code, _, err = run_main(settings_for(path, quarantine_alert_s=7200))
    assert code == 1 and "quarantined for 3.0h" in err and "alert after 2h" in err
    code, _, _ = run_main(settings_for(path, quarantine_alert_s=4 * 3600))
    assert code == 0


def test_no_heartbeat_yet_in_a_migrated_store(db: tuple[Path, Store]) -> None:
    path, _ = db
    code, _, err = run_main(settings_for(path))
    assert code == 1 and "no heartbeat yet" in err


def test_a_missing_state_store_is_reported_and_not_created(tmp_path: Path) -> None:
    path = tmp_path / "data" / "hrsync.db"
    code, _, err = run_main(settings_for(path))
    assert code == 1
    assert f"the state store {path} does not exist" in err
    assert not path.exists() and not path.parent.exists()


def test_the_healthcheck_runs_no_migrations(tmp_path: Path) -> None:
    path = tmp_path / "hrsync.db"
    sqlite3.connect(path).close()  # an empty database file, never migrated
    code, _, err = run_main(settings_for(path))
    assert code == 1 and "cannot read the heartbeat" in err and "no such table" in err
    with sqlite3.connect(path) as c:
        tables = c.execute("select name from sqlite_master where type = 'table'").fetchall()
    assert tables == []
