"""`hrsync healthcheck`: is the daemon alive and not stuck in quarantine?

It runs every 30 s inside the container (under a CPU limit), so the usual path costs
a few milliseconds of CPU: the settings it needs read with `tomllib` and the
environment (`probe_settings`), then either `GET /healthz` over a plain socket when
`daemon.listen` is set, or the heartbeat row read with the standard library's
`sqlite3`, read-only. No SQLAlchemy, Alembic, structlog or hrsync.config.loading: importing
them costs more CPU than the probe is allowed. Whatever that path cannot read with
certainty (a PostgreSQL store, a URI, a config it cannot parse, an SQLite error)
goes through the full settings and the store instead, whose answer is authoritative.
Either way: no migrations, no DX call, and never a database file created.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

from hrsync.clock import Clock, utcnow
from hrsync.commands.output import show
from hrsync.core import defaults
from hrsync.outcome import EXIT_FAILED, EXIT_OK

if TYPE_CHECKING:
    from hrsync.config.loading import Settings
    from hrsync.store.heartbeat_record import HeartbeatRecord


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
    from sqlalchemy.exc import SQLAlchemyError

    from hrsync.store.repo import Store

    url = settings.state.database_url
    missing = _missing_sqlite_file(url)
    if missing is not None:
        return Health(False, f"no heartbeat yet: the state store {missing} does not exist")
    now = (clock or utcnow)()
    try:
        store = Store.open(url, migrate=False)
    except (SQLAlchemyError, OSError) as exc:  # OSError: an empty file, refused
        return Health(False, f"cannot open the state store: {_first_line(exc)}")
    try:
        heartbeat = store.heartbeat.read()
    except SQLAlchemyError as exc:
        return Health(False, f"cannot read the heartbeat: {_first_line(exc)}")
    finally:
        store.close()
    return evaluate(
        heartbeat,
        now,
        max_age_s=settings.sync.healthcheck_max_age_s,
        quarantine_alert_s=defaults.QUARANTINE_ALERT_S,
    )


def healthcheck(args: argparse.Namespace) -> int:
    quick = probe_settings(args.config, os.environ)
    health: Health | None = None
    if quick is not None and quick.listen:
        health = probe_http(quick.listen)
    elif quick is not None and quick.sqlite_path is not None:
        health = probe_sqlite(quick, utcnow())
    if health is not None:
        return _print(health, sys.stdout, sys.stderr)
    from hrsync.commands.startup import load_local

    return report(load_local(args))


def report(
    settings: Settings,
    *,
    clock: Clock | None = None,
    out: TextIO | None = None,
    err: TextIO | None = None,
) -> int:
    """`hrsync healthcheck`: print one line, exit 0 when healthy, 1 otherwise."""
    return _print(check(settings, clock=clock), out or sys.stdout, err or sys.stderr)


def _print(health: Health, out: TextIO, err: TextIO) -> int:
    stream = out if health.healthy else err
    show(health.reason if health.healthy else f"unhealthy: {health.reason}", stream)
    return health.exit_code


# ---------------------------------------------------------------- the cheap path

_SQLITE_PREFIXES = ("sqlite:///", "sqlite+pysqlite:///")
HTTP_TIMEOUT_S = 5.0


@dataclass(frozen=True, slots=True)
class ProbeSettings:
    """What the probe needs: where the heartbeat is and how old it may be."""

    sqlite_path: Path | None  # None: not a plain SQLite file (the full path reads it)
    max_age_s: float
    quarantine_alert_s: float
    listen: str  # daemon.listen; empty when the daemon serves no HTTP


def probe_settings(
    config: Path | None, env: Mapping[str, str], cwd: Path | None = None
) -> ProbeSettings | None:
    """The probe's settings from the TOML file and HRSYNC_* variables, or None when they
    cannot be read with certainty here (the full loader then reads them and says what
    is wrong)."""
    # The same order as config.loading.config_file, which this light module cannot import.
    path = config
    if path is None and env.get("HRSYNC_CONFIG"):
        path = Path(env["HRSYNC_CONFIG"])
    here = (cwd or Path.cwd()) / "hrsync.toml"
    if path is None and "HRSYNC_CONFIG" not in env and here.is_file():
        path = here
    raw: dict[str, Any] = {}
    if path is not None:
        import tomllib

        try:
            with path.open("rb") as fh:
                raw = tomllib.load(fh)
        except (OSError, tomllib.TOMLDecodeError):
            return None
    try:
        url = _setting(raw, env, "state", "database_url", str, defaults.DATABASE_URL)
        heartbeat = _setting(raw, env, "sync", "heartbeat_s", float, defaults.HEARTBEAT_S)
        max_age = defaults.healthcheck_max_age_s(heartbeat)
        alert = defaults.QUARANTINE_ALERT_S
        listen = _setting(raw, env, "daemon", "listen", str, "")
    except (TypeError, ValueError):
        return None
    base = path.parent if path is not None else Path.cwd()
    return ProbeSettings(_plain_sqlite_path(url, base), max_age, alert, listen.strip())


def _setting(
    raw: Mapping[str, Any],
    env: Mapping[str, str],
    section: str,
    key: str,
    kind: type[Any],
    default: Any,
) -> Any:
    text = env.get(f"HRSYNC_{section.upper()}__{key.upper()}")
    if text is not None:
        return kind(text)
    table = raw.get(section, {})
    if not isinstance(table, dict):
        raise TypeError(section)
    value = table.get(key, default)
    if kind is float and isinstance(value, int | float) and not isinstance(value, bool):
        return float(value)
    if not isinstance(value, kind):
        raise TypeError(key)
    return value


def _plain_sqlite_path(url: str, base: Path) -> Path | None:
    for prefix in _SQLITE_PREFIXES:
        if url.startswith(prefix):
            rest = url[len(prefix) :]
            # URIs, parameters and in-memory stores: the full path knows what they mean.
            if not rest or "?" in rest or rest == ":memory:" or rest.startswith("file:"):
                return None
            path = Path(rest)
            # Relative to the config file's folder, as config.anchor_sqlite does.
            return path if path.is_absolute() else base / path
    return None


def probe_sqlite(settings: ProbeSettings, now: datetime) -> Health | None:
    """The heartbeat row read with the standard library, read-only; None when SQLite
    answered with an error (the full path then reports it in its own words)."""
    import sqlite3

    from hrsync.store.heartbeat_record import COLUMNS, heartbeat_record

    path = settings.sqlite_path
    assert path is not None
    if not path.exists():
        return Health(False, f"no heartbeat yet: the state store {path} does not exist")
    try:
        # mode=ro: a probe never creates or writes the file.
        with sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro", uri=True, timeout=5) as c:
            row = c.execute(
                f"SELECT {', '.join(COLUMNS)} FROM heartbeats WHERE name = 'daemon'"
            ).fetchone()
    except sqlite3.Error:
        return None
    if row is None:
        return evaluate(
            None, now, max_age_s=settings.max_age_s, quarantine_alert_s=settings.quarantine_alert_s
        )
    return evaluate(
        heartbeat_record(row),
        now,
        max_age_s=settings.max_age_s,
        quarantine_alert_s=settings.quarantine_alert_s,
    )


def probe_http(listen: str, *, timeout_s: float = HTTP_TIMEOUT_S) -> Health:
    """`GET /healthz` on the daemon's own listener: 200 is healthy, anything else (or no
    answer) is not. A plain socket: `urllib.request` alone costs ~80 ms of CPU."""
    import socket

    host, _, port_text = listen.rpartition(":")
    host = host.strip("[]")
    # The daemon binds every interface with 0.0.0.0 or ::; the probe asks it locally.
    host = {"": "127.0.0.1", "0.0.0.0": "127.0.0.1", "::": "::1"}.get(host, host)
    where = f"[{host}]:{port_text}" if ":" in host else f"{host}:{port_text}"
    try:
        port = int(port_text)
    except ValueError:
        return Health(False, f"daemon.listen {listen!r} is not HOST:PORT")
    try:
        with socket.create_connection((host, port), timeout=timeout_s) as sock:
            sock.sendall(
                f"GET /healthz HTTP/1.0\r\nHost: {where}\r\nConnection: close\r\n\r\n".encode()
            )
            chunks: list[bytes] = []
            while sum(map(len, chunks)) < 65536:
                chunk = sock.recv(4096)
                if not chunk:
                    break
                chunks.append(chunk)
    except OSError as exc:
        return Health(False, f"the daemon does not answer GET /healthz on {where}: {exc}")
    head, _, body = b"".join(chunks).partition(b"\r\n\r\n")
    status_line = head.split(b"\r\n", 1)[0].decode("latin-1")
    parts = status_line.split(" ", 2)
    text = " ".join(body.decode("utf-8", "replace").split())[:300]
    if len(parts) < 2 or not parts[0].startswith("HTTP/") or not parts[1].isdigit():
        return Health(False, f"GET /healthz on {where} answered no HTTP status: {status_line!r}")
    status = int(parts[1])
    if status == 200:
        return Health(True, f"ok: GET /healthz on {where}: {text or 'HTTP 200'}")
    return Health(False, f"GET /healthz on {where} answered HTTP {status}: {text or '-'}")


def _missing_sqlite_file(url: str) -> str | None:
    from hrsync.store.url import parse_database_url

    # Connecting would create an empty database (and make_engine its directory):
    # a healthcheck must not invent state, so look first.
    path = parse_database_url(url).sqlite_path
    return None if path is None or path.exists() else str(path)


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return text[0] if text else type(exc).__name__


def _iso(value: datetime) -> str:
    return value.astimezone(UTC).isoformat(timespec="seconds")
