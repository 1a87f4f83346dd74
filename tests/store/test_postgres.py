"""SQLite and PostgreSQL side by side: the same schema from the same migrations, and
timestamps that mean the same instant on both whatever the server's or host's zone.

The other tests in tests/store run on both databases through `database_url`; these
compare the two directly, so they need the PostgreSQL server (tests/conftest.py).
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta, timezone
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

import pytest
from sqlalchemy import Engine, event, inspect, text
from sqlalchemy.types import TypeEngine

from hrsync.store.engine import make_engine
from hrsync.store.migrate import head_revision, upgrade
from hrsync.store.repo import Store

ROOT = Path(__file__).resolve().parents[2]
Schema = dict[str, dict[str, Any]]


def normal_type(column_type: TypeEngine[Any]) -> str:
    """A column type as both databases can agree on it: generic kind, length, zone."""
    generic = column_type.as_generic()
    name = type(generic).__name__
    length = getattr(generic, "length", None)
    if length is not None:
        name += f"({length})"
    if getattr(generic, "timezone", False):
        name += " with time zone"
    return name


def schema_of(engine: Engine) -> Schema:
    insp = inspect(engine)
    tables: Schema = {}
    for table in sorted(insp.get_table_names()):
        tables[table] = {
            "columns": [
                (c["name"], normal_type(c["type"]), c["nullable"]) for c in insp.get_columns(table)
            ],
            "primary_key": insp.get_pk_constraint(table)["constrained_columns"],
            "foreign_keys": sorted(
                (
                    tuple(fk["constrained_columns"]),
                    fk["referred_table"],
                    tuple(fk["referred_columns"]),
                    (fk.get("options") or {}).get("ondelete"),
                )
                for fk in insp.get_foreign_keys(table)
            ),
            # PostgreSQL reports the index behind a unique constraint as an index too;
            # SQLite does not. The constraint is what the schema says, so compare that.
            "indexes": sorted(
                (ix["name"], tuple(ix["column_names"]), bool(ix["unique"]))
                for ix in insp.get_indexes(table)
                if "duplicates_constraint" not in ix
            ),
            "unique": sorted(tuple(u["column_names"]) for u in insp.get_unique_constraints(table)),
        }
    return tables


def schema_diff(left: Schema, right: Schema) -> list[str]:
    diffs = [f"table {t} only on one side" for t in sorted(left.keys() ^ right.keys())]
    for table in sorted(left.keys() & right.keys()):
        for part in left[table]:
            if left[table][part] != right[table][part]:
                diffs.append(f"{table}.{part}: {left[table][part]} != {right[table][part]}")
    return diffs


@pytest.fixture
def sqlite_engine(tmp_path: Path) -> Iterator[Engine]:
    engine = make_engine(f"sqlite:///{tmp_path / 'state.db'}")
    yield engine
    engine.dispose()


@pytest.fixture
def postgres_engine(postgres_url: str) -> Iterator[Engine]:
    engine = make_engine(postgres_url)
    yield engine
    engine.dispose()


def test_migrations_make_the_same_schema_on_both_databases(
    sqlite_engine: Engine, postgres_engine: Engine
) -> None:
    upgrade(sqlite_engine)
    upgrade(postgres_engine)
    on_sqlite, on_postgres = schema_of(sqlite_engine), schema_of(postgres_engine)
    assert {"runs", "submissions", "team_identities", "leases", "heartbeats"} <= set(on_sqlite)
    assert schema_diff(on_sqlite, on_postgres) == []


def test_the_schema_comparison_sees_a_difference(
    sqlite_engine: Engine, postgres_engine: Engine
) -> None:
    # A migration that did something on one database only, as a dialect branch would.
    upgrade(sqlite_engine)
    upgrade(postgres_engine)
    with postgres_engine.begin() as c:
        c.execute(text("ALTER TABLE runs ALTER COLUMN reason TYPE varchar(50)"))
        c.execute(text("ALTER TABLE leases ALTER COLUMN pid_started SET NOT NULL"))
        c.execute(text("CREATE INDEX ix_runs_outcome ON runs (outcome)"))
    diffs = schema_diff(schema_of(sqlite_engine), schema_of(postgres_engine))
    assert [d.split(":")[0] for d in diffs] == ["leases.columns", "runs.columns", "runs.indexes"]
    assert "('reason', 'Text', True)" in diffs[1] and "('reason', 'String(50)', True)" in diffs[1]


def test_a_second_upgrade_writes_nothing(database_url: str) -> None:
    engine = make_engine(database_url)
    try:
        assert upgrade(engine)[1] == head_revision(engine)
        statements: list[str] = []

        def record(conn: object, cursor: object, statement: str, *args: object) -> None:
            statements.append(statement)

        event.listen(engine, "before_cursor_execute", record)
        try:
            assert upgrade(engine) == (head_revision(engine), head_revision(engine))
        finally:
            event.remove(engine, "before_cursor_execute", record)
        writes = [
            s
            for s in statements
            if s.lstrip().split(" ", 1)[0].upper()
            in ("CREATE", "ALTER", "DROP", "INSERT", "UPDATE", "DELETE")
        ]
        assert writes == []
    finally:
        engine.dispose()


# ------------------------------------------------------------------ timestamps

# Instants around DST changes in the zones below, at midnight UTC, with microseconds,
# and far from today; each given in a zone that is not UTC.
INSTANTS = [
    datetime(2026, 3, 29, 1, 30, tzinfo=UTC),  # Europe/Berlin springs forward at 01:00 UTC
    datetime(2026, 10, 25, 0, 59, 59, 999999, tzinfo=UTC),
    datetime(2026, 11, 1, 6, 30, tzinfo=UTC),  # America/New_York falls back at 06:00 UTC
    datetime(2027, 1, 1, 0, 0, tzinfo=UTC),
    datetime(1999, 12, 31, 23, 59, 59, tzinfo=UTC),
    datetime(2099, 6, 30, 12, 0, 0, 1, tzinfo=UTC),
]
ZONES = [
    ZoneInfo("Europe/Berlin"),
    ZoneInfo("America/New_York"),
    ZoneInfo("Asia/Kathmandu"),
    timezone(timedelta(hours=-9, minutes=-30)),
]


@pytest.fixture
def far_from_utc(database_url: str) -> Iterator[str]:
    """The database's session zone and this process's local zone both set far from UTC."""
    if database_url.startswith("postgresql"):
        engine = make_engine(database_url)
        with engine.connect() as c:
            name = c.execute(text("select current_database()")).scalar()
            c.execute(text(f"ALTER DATABASE \"{name}\" SET timezone TO 'Asia/Kathmandu'"))
            c.commit()
        engine.dispose()
    saved = os.environ.get("TZ")
    os.environ["TZ"] = "America/St_Johns"
    time.tzset()
    try:
        yield database_url
    finally:
        if saved is None:
            os.environ.pop("TZ", None)
        else:
            os.environ["TZ"] = saved
        time.tzset()


def test_timestamps_round_trip_as_utc_whatever_the_zones(far_from_utc: str) -> None:
    store = Store.open(far_from_utc)
    try:
        if store.engine.dialect.name == "postgresql":
            with store.engine.connect() as c:
                assert c.execute(text("show timezone")).scalar() == "Asia/Kathmandu"
        given = {}
        for i, instant in enumerate(INSTANTS):
            run_id = f"r{i}"
            given[run_id] = instant
            store.runs.start(
                run_id, "manual", instant.astimezone(ZONES[i % len(ZONES)]), dry_run=False
            )
        back = {run.started_at.isoformat(): run for run in store.runs.recent(limit=100)}
        for run_id, instant in given.items():
            record = back[instant.isoformat()]
            assert record.id == run_id
            assert record.started_at == instant and record.started_at.utcoffset() == timedelta(0)
        with store.engine.connect() as c:
            raw = {row[0]: row[1] for row in c.execute(text("select id, started_at from runs"))}
        # Stored as the UTC wall clock, so any other reader (psql, a report) sees UTC.
        for run_id, instant in given.items():
            assert str(raw[run_id]).startswith(instant.replace(tzinfo=None).isoformat(" ")[:19])
        store.heartbeat.beat(INSTANTS[0].astimezone(ZONES[2]), state="idle", detail={})
        heartbeat = store.heartbeat.read()
        assert heartbeat is not None and heartbeat.beat_at == INSTANTS[0]
        assert heartbeat.beat_at.tzinfo is not None
    finally:
        store.close()


# ------------------------------------------------------------------ CI runs them


@pytest.mark.parametrize(
    ("url", "body"),
    [
        pytest.param("", "pass", id="no-server"),
        pytest.param("postgresql+psycopg://postgres@/x", "pytest.skip('why')", id="skipped"),
    ],
)
def test_in_ci_the_postgres_tests_fail_rather_than_skip(
    url: str, body: str, tmp_path: Path
) -> None:
    test = tmp_path / "test_inner.py"
    test.write_text(f"import pytest\ndef test_it(postgres_server_url):\n    {body}\n")
    env = {**os.environ, "HRSYNC_TEST_POSTGRES_URL": url}
    # tests/conftest.py as a plugin: the inner run has the same fixtures and hook.
    cmd = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "tests.conftest"]
    cmd.append(str(test))
    local = subprocess.run(cmd, env={**env, "CI": ""}, capture_output=True, text=True, cwd=ROOT)
    ci = subprocess.run(cmd, env={**env, "CI": "true"}, capture_output=True, text=True, cwd=ROOT)
    assert local.returncode == 0 and "1 skipped" in local.stdout, local.stdout + local.stderr
    assert ci.returncode == 1, ci.stdout + ci.stderr
    assert "PostgreSQL" in ci.stdout and "CI" in ci.stdout
