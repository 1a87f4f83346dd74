"""`hrsync healthcheck`: fresh heartbeat -> 0; otherwise 1 with a one-line reason."""

from __future__ import annotations

import io
import os
import socket
import sqlite3
import subprocess
import sys
import threading
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import ClassVar

import pytest

from hrsync.commands import healthcheck
from hrsync.config.loading import Settings, StateSettings, SyncSettings
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


def settings_for(path: Path, *, heartbeat_s: float = 30) -> Settings:
    # The healthcheck allows four heartbeats: 120 s at the default.
    return Settings(
        state=StateSettings(database_url=f"sqlite:///{path}"),
        sync=SyncSettings(heartbeat_s=heartbeat_s),
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
    store.heartbeat.beat(
        NOW - 15 * S, state="idle", detail={"next_run_time": "2030-06-02T04:00:00+00:00"}
    )
    code, out, err = run_main(settings_for(path))
    assert code == 0 and err == ""
    assert out.count("\n") == 1 and out.startswith("ok: heartbeat 15s ago")


def test_stale_heartbeat_exits_1_naming_age_and_limit(db: tuple[Path, Store]) -> None:
    path, store = db
    store.heartbeat.beat(NOW - 300 * S, state="idle")
    code, out, err = run_main(settings_for(path, heartbeat_s=22.5))
    assert code == 1 and out == ""
    assert err.startswith("unhealthy: stale heartbeat: last beat 300s ago")
    assert "limit 90s" in err and err.count("\n") == 1


def test_long_quarantine_exits_1(db: tuple[Path, Store]) -> None:
    path, store = db
    store.heartbeat.beat(
        NOW - 5 * S, state="quarantined", quarantined_since=NOW - 25 * H, consecutive_failures=6
    )
    code, _, err = run_main(settings_for(path))
    assert code == 1 and "quarantined for 25.0h" in err and "alert after 24h" in err
    store.heartbeat.beat(
        NOW - 5 * S, state="quarantined", quarantined_since=NOW - 23 * H, consecutive_failures=6
    )
    code, _, _ = run_main(settings_for(path))
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
    with sqlite3.connect(path) as c:  # a database never migrated (an empty file is refused)
        c.execute("create table other (x)")
    code, _, err = run_main(settings_for(path))
    assert code == 1 and "cannot read the heartbeat" in err and "no such table" in err
    with sqlite3.connect(path) as c:
        tables = c.execute("select name from sqlite_master where type = 'table'").fetchall()
    assert tables == [("other",)]


def test_an_empty_database_file_is_unhealthy_and_left_empty(tmp_path: Path) -> None:
    path = tmp_path / "hrsync.db"
    path.write_bytes(b"")
    code, _, err = run_main(settings_for(path))
    assert code == 1 and "cannot open the state store" in err and "empty (0 bytes)" in err
    assert path.stat().st_size == 0


# ------------------------------------------------------------ the cheap probe


def probe(path: Path, **sync: float) -> healthcheck.Health | None:
    quick = healthcheck.ProbeSettings(
        sqlite_path=path,
        max_age_s=4 * sync.get("heartbeat_s", 30),
        quarantine_alert_s=86400,
        listen="",
    )
    return healthcheck.probe_sqlite(quick, NOW)


def test_the_probe_defaults_are_the_settings_defaults(tmp_path: Path) -> None:
    defaults = Settings()
    quick = healthcheck.probe_settings(None, {})
    assert quick is not None
    assert quick.max_age_s == defaults.sync.healthcheck_max_age_s
    assert quick.quarantine_alert_s == 86400
    assert defaults.state.database_url.endswith("/hrsync.db")
    assert quick.sqlite_path is not None and quick.sqlite_path.name == "hrsync.db"


@pytest.mark.parametrize(
    ("stored", "sync"),
    [
        ({"age": 15 * S, "state": "idle"}, {}),
        ({"age": 300 * S, "state": "idle"}, {"heartbeat_s": 22.5}),
        ({"age": 5 * S, "state": "quarantined", "q": 25 * H}, {}),
        ({"age": 5 * S, "state": "quarantined", "q": 3 * H}, {}),
        ({"age": 5 * S, "state": "stopped"}, {}),
    ],
)
def test_the_sqlite_probe_says_what_the_store_says(
    db: tuple[Path, Store], stored: dict[str, object], sync: dict[str, float]
) -> None:
    path, store = db
    age = stored["age"]
    since = stored.get("q")
    assert isinstance(age, timedelta)
    store.heartbeat.beat(
        NOW - age,
        state=str(stored["state"]),
        quarantined_since=NOW - since if isinstance(since, timedelta) else None,
        consecutive_failures=6,
        detail={"next_run_time": "2030-06-02T04:00:00+00:00"},
    )
    full = healthcheck.check(settings_for(path, **sync), clock=lambda: NOW)
    assert probe(path, **sync) == full


def test_the_sqlite_probe_without_a_heartbeat_or_a_file(db: tuple[Path, Store]) -> None:
    path, _ = db
    result = probe(path)
    assert result is not None and not result.healthy and "no heartbeat yet" in result.reason
    missing = path.parent / "nope" / "hrsync.db"
    result = probe(missing)
    assert result is not None and f"the state store {missing} does not exist" in result.reason
    assert not missing.parent.exists()


def test_the_sqlite_probe_hands_an_unmigrated_store_to_the_full_path(tmp_path: Path) -> None:
    path = tmp_path / "hrsync.db"
    sqlite3.connect(path).close()
    assert probe(path) is None  # the full path then says "cannot read the heartbeat"
    with sqlite3.connect(path) as c:
        assert c.execute("select name from sqlite_master").fetchall() == []


@pytest.mark.parametrize(
    ("toml", "env", "expected"),
    [
        ("", {}, ("{base}/hrsync.db", 120.0, 86400.0, "")),
        (
            '[state]\ndatabase_url = "sqlite:///data/h.db"\n',
            {"HRSYNC_SYNC__HEARTBEAT_S": "15"},
            ("{base}/data/h.db", 60.0, 86400.0, ""),
        ),
        (
            '[daemon]\nlisten = "0.0.0.0:9464"\n',
            {"HRSYNC_STATE__DATABASE_URL": "sqlite:////abs/h.db"},
            ("/abs/h.db", 120.0, 86400.0, "0.0.0.0:9464"),
        ),
        # What the probe cannot read with certainty goes to the full loader.
        ('[state]\ndatabase_url = "postgresql+psycopg://u@h/db"\n', {}, (None, 120.0, 86400.0, "")),
        ('[state]\ndatabase_url = "sqlite:///file:x.db?mode=ro&uri=true"\n', {}, (None,) * 4),
    ],
)
def test_probe_settings(
    tmp_path: Path, toml: str, env: dict[str, str], expected: tuple[object, ...]
) -> None:
    config = tmp_path / "hrsync.toml"
    config.write_text(toml)
    quick = healthcheck.probe_settings(config, env)
    assert quick is not None
    path, max_age, alert, listen = expected
    if alert is None:
        assert quick.sqlite_path is None
        return
    want = None if path is None else Path(str(path).format(base=tmp_path))
    assert (quick.sqlite_path, quick.max_age_s, quick.quarantine_alert_s, quick.listen) == (
        want,
        max_age,
        alert,
        listen,
    )


@pytest.mark.parametrize(
    ("toml", "env"),
    [
        ("not = [valid", {}),
        ("[sync]\nheartbeat_s = 'soon'\n", {}),
        ("", {"HRSYNC_SYNC__HEARTBEAT_S": "soon"}),
    ],
)
def test_probe_settings_it_cannot_read_go_to_the_full_loader(
    tmp_path: Path, toml: str, env: dict[str, str]
) -> None:
    config = tmp_path / "hrsync.toml"
    config.write_text(toml)
    assert healthcheck.probe_settings(config, env) is None
    assert healthcheck.probe_settings(tmp_path / "missing.toml", {}) is None


class _Healthz(BaseHTTPRequestHandler):
    status = 200
    body = b"ok: scheduler alive, heartbeat 3s ago"
    paths: ClassVar[list[str]] = []

    def do_GET(self) -> None:
        type(self).paths.append(self.path)
        self.send_response(self.status)
        self.send_header("Content-Length", str(len(self.body)))
        self.end_headers()
        self.wfile.write(self.body)

    def log_message(self, *_: object) -> None:
        pass


@pytest.fixture
def healthz() -> Iterator[tuple[type[_Healthz], int]]:
    handler = type("Handler", (_Healthz,), {"paths": []})
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield handler, server.server_address[1]
    server.shutdown()
    server.server_close()


def test_the_http_probe_asks_healthz(healthz: tuple[type[_Healthz], int]) -> None:
    handler, port = healthz
    result = healthcheck.probe_http(f"0.0.0.0:{port}")
    assert result.healthy and "scheduler alive" in result.reason
    assert handler.paths == ["/healthz"]
    handler.status, handler.body = 503, b"heartbeat stale: 400s"
    result = healthcheck.probe_http(f"127.0.0.1:{port}")
    assert not result.healthy and "HTTP 503" in result.reason and "400s" in result.reason


def test_the_http_probe_without_a_daemon_is_unhealthy() -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]  # bound, never listening: the connection is refused
        result = healthcheck.probe_http(f"127.0.0.1:{port}", timeout_s=1)
    assert (
        not result.healthy and f"does not answer GET /healthz on 127.0.0.1:{port}" in result.reason
    )
    assert not healthcheck.probe_http("nonsense").healthy


def _run_healthcheck(env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    script = (
        "import resource, sys\n"
        "from hrsync.cli import main\n"
        "code = main(['healthcheck'])\n"
        "heavy = sorted(m for m in ('sqlalchemy', 'alembic', 'structlog', 'httpx',"
        " 'hrsync.config.loading', 'hrsync.store.repo') if m in sys.modules)\n"
        "print('HEAVY', heavy, file=sys.stderr)\n"
        "sys.exit(code)\n"
    )
    child = subprocess.run(
        [sys.executable, "-c", script], env=env, capture_output=True, text=True, timeout=30
    )
    return child


def test_the_healthcheck_imports_nothing_heavy(db: tuple[Path, Store], tmp_path: Path) -> None:
    path, store = db
    store.heartbeat.beat(datetime.now(UTC), state="idle")
    env = {**os.environ, "HRSYNC_CONFIG": "", "HRSYNC_STATE__DATABASE_URL": f"sqlite:///{path}"}
    child = _run_healthcheck(env)
    assert child.returncode == 0, child.stderr
    assert child.stdout.startswith("ok: heartbeat") and "HEAVY []" in child.stderr
    # A PostgreSQL store (or anything the probe cannot read) takes the full path.
    env["HRSYNC_STATE__DATABASE_URL"] = "sqlite:///file:" + str(path) + "?mode=ro&uri=true"
    child = _run_healthcheck(env)
    assert "sqlalchemy" in child.stderr


def test_the_http_probe_asks_an_ipv6_listener_with_a_bracketed_host() -> None:
    try:
        server = socket.socket(socket.AF_INET6)
        server.bind(("::1", 0))
    except OSError as exc:
        pytest.skip(f"this machine has no IPv6 loopback: {exc}")
    heads: list[bytes] = []

    def answer() -> None:
        conn, _ = server.accept()
        with conn:
            heads.append(conn.recv(4096))
            conn.sendall(b"HTTP/1.0 200 OK\r\nContent-Length: 2\r\n\r\nok")

    with server:
        server.listen(1)
        port = server.getsockname()[1]
        thread = threading.Thread(target=answer, daemon=True)
        thread.start()
        result = healthcheck.probe_http(f"[::]:{port}", timeout_s=3)
        thread.join(3)
    assert result.healthy and f"[::1]:{port}" in result.reason
    assert f"Host: [::1]:{port}\r\n".encode() in heads[0]


def test_the_probe_reads_the_config_in_the_current_folder(tmp_path: Path) -> None:
    # As every other command does: no --config, no $HRSYNC_CONFIG, ./hrsync.toml.
    (tmp_path / "hrsync.toml").write_text("[sync]\nheartbeat_s = 10.5\n")
    quick = healthcheck.probe_settings(None, {}, cwd=tmp_path)
    assert quick is not None
    assert quick.max_age_s == 42.0
