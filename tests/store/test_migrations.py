"""Migrations: first start creates the schema, later starts change nothing,
the models and the migration scripts agree, and a built wheel carries them."""

from __future__ import annotations

import os
import subprocess
import sys
import sysconfig
import venv
from pathlib import Path

import pytest
from alembic.autogenerate import compare_metadata
from alembic.runtime.migration import MigrationContext
from sqlalchemy import inspect

from hrsync.store.engine import make_engine
from hrsync.store.migrate import HEAD_REVISION, current_revision, head_revision, upgrade
from hrsync.store.repo import Store
from hrsync.store.tables import metadata

ROOT = Path(__file__).resolve().parents[2]


def test_first_start_creates_later_starts_change_nothing(tmp_path: Path) -> None:
    engine = make_engine(f"sqlite:///{tmp_path / 'nested' / 'state.db'}")
    before, after = upgrade(engine)
    assert before is None and after == head_revision(engine)
    tables = set(inspect(engine).get_table_names())
    assert {"team_identities", "runs", "submissions", "deferrals", "leases", "heartbeats"} <= tables
    db_file = tmp_path / "nested" / "state.db"
    engine.dispose()
    stamp = db_file.stat().st_mtime_ns, db_file.read_bytes()
    engine = make_engine(f"sqlite:///{db_file}")
    assert upgrade(engine) == (after, after)
    engine.dispose()
    assert (db_file.stat().st_mtime_ns, db_file.read_bytes()) == stamp


def test_models_and_migrations_agree(database_url: str) -> None:
    engine = make_engine(database_url)
    upgrade(engine)
    with engine.connect() as connection:
        context = MigrationContext.configure(connection, opts={"compare_type": True})
        diff = compare_metadata(context, metadata)
    assert diff == [], f"models differ from migrations/versions: {diff}"
    assert current_revision(engine) == head_revision(engine)
    engine.dispose()


def test_head_revision_constant_is_alembics_head(tmp_path: Path) -> None:
    # A new migration without bumping HEAD_REVISION would let every start skip it.
    engine = make_engine(f"sqlite:///{tmp_path / 'h.db'}")
    try:
        assert head_revision(engine) == HEAD_REVISION, (
            f"migrations/versions' head is {head_revision(engine)}: set HEAD_REVISION in "
            "hrsync/store/migrate.py to it"
        )
    finally:
        engine.dispose()


OPEN_AND_LIST_MODULES = (
    "import sys\n"
    "from hrsync.store.repo import Store\n"
    "store = Store.open(sys.argv[1])\n"
    "store.close()\n"
    "print('alembic' in sys.modules)\n"
)


def _open_in_child(database_url: str) -> bool:
    """Whether a fresh process that opens the store imported alembic to do it."""
    proc = subprocess.run(
        [sys.executable, "-c", OPEN_AND_LIST_MODULES, database_url],
        capture_output=True,
        text=True,
        cwd=ROOT,
    )
    assert proc.returncode == 0, proc.stderr
    return proc.stdout.strip() == "True"


def test_a_current_store_opens_without_alembic(database_url: str) -> None:
    # Alembic's import and script scan were a third of a 50k `hrsync plan` (issue 12).
    Store.open(database_url).close()
    assert _open_in_child(database_url) is False


def test_an_sqlite_store_loads_no_postgresql_dialect(tmp_path: Path) -> None:
    # SQLAlchemy's PostgreSQL dialects (asyncpg, pg8000, ...) were ~20 ms of every start.
    script = (
        "import sys\n"
        "from datetime import UTC, datetime\n"
        "from hrsync.store.repo import Store\n"
        "store = Store.open(sys.argv[1])\n"
        "store.heartbeat.beat(datetime.now(UTC), state='idle')\n"  # an upsert
        "store.close()\n"
        "print(sorted(m for m in sys.modules if m.startswith('sqlalchemy.dialects.postgresql')))\n"
    )
    url = f"sqlite:///{tmp_path / 'state.db'}"
    Store.open(url).close()  # created here: Alembic's own import brings the dialect in
    proc = subprocess.run(
        [sys.executable, "-c", script, url], capture_output=True, text=True, cwd=ROOT
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "[]"


def test_an_old_store_is_upgraded_on_open(database_url: str) -> None:
    from alembic import command

    from hrsync.store.migrate import alembic_config

    engine = make_engine(database_url)
    try:
        command.upgrade(alembic_config(engine), "0003")
        assert current_revision(engine) == "0003"
        assert _open_in_child(database_url) is True
        assert current_revision(engine) == HEAD_REVISION
        assert "notify_state" in inspect(engine).get_table_names()
    finally:
        engine.dispose()


def test_a_new_store_is_created_on_open(database_url: str) -> None:
    assert _open_in_child(database_url) is True
    engine = make_engine(database_url)
    try:
        assert current_revision(engine) == HEAD_REVISION
    finally:
        engine.dispose()


def test_cli_db_upgrade_twice(database_url: str, tmp_path: Path) -> None:
    env = {**os.environ, "HRSYNC_STATE__DATABASE_URL": database_url}
    env.pop("HRSYNC_CONFIG", None)
    cmd = [sys.executable, "-m", "hrsync", "--log-format", "json", "db", "upgrade"]
    first = subprocess.run(cmd, env=env, capture_output=True, text=True, cwd=tmp_path)
    assert first.returncode == 0, first.stderr
    assert '"event": "db.upgraded"' in first.stdout
    second = subprocess.run(cmd, env=env, capture_output=True, text=True, cwd=tmp_path)
    assert second.returncode == 0, second.stderr
    assert '"event": "db.up_to_date"' in second.stdout


@pytest.mark.slow
def test_wheel_carries_migrations(tmp_path: Path) -> None:
    dist = tmp_path / "dist"
    built = subprocess.run(
        [sys.executable, "-m", "build", "--wheel", "--no-isolation", "--outdir", str(dist)],
        cwd=ROOT,
        capture_output=True,
        text=True,
    )
    assert built.returncode == 0, built.stdout + built.stderr
    wheel = next(dist.glob("hrsync-*.whl"))
    target = tmp_path / "venv"
    venv.create(target, with_pip=True)
    py = target / "bin" / "python"
    # Dependencies come from this test environment (no network needed); hrsync
    # itself only from the wheel, so the scripts must be inside it.
    site = Path(sysconfig.get_paths()["purelib"])
    target_site = Path(
        subprocess.run(
            [str(py), "-c", "import sysconfig;print(sysconfig.get_paths()['purelib'])"],
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
    )
    (target_site / "deps.pth").write_text(str(site) + "\n")
    subprocess.run(
        [str(py), "-m", "pip", "install", "--no-deps", "--no-index", str(wheel)],
        check=True,
        capture_output=True,
    )
    env = {k: v for k, v in os.environ.items() if not k.startswith(("HRSYNC_", "PYTHONPATH"))}
    env["HRSYNC_STATE__DATABASE_URL"] = f"sqlite:///{tmp_path / 'w.db'}"
    run_dir = tmp_path / "elsewhere"
    run_dir.mkdir()
    hrsync = target / "bin" / "hrsync"
    where = subprocess.run(
        [str(py), "-c", "import hrsync;print(hrsync.__file__)"],
        cwd=run_dir,
        env=env,
        capture_output=True,
        text=True,
        check=True,
    )
    assert str(target) in where.stdout, "hrsync was not imported from the wheel"
    first = subprocess.run(
        [str(hrsync), "--log-format", "json", "db", "upgrade"],
        cwd=run_dir,
        env=env,
        capture_output=True,
        text=True,
    )
    assert first.returncode == 0, first.stdout + first.stderr
    assert "db.upgraded" in first.stdout
    second = subprocess.run(
        [str(hrsync), "--log-format", "json", "db", "upgrade"],
        cwd=run_dir,
        env=env,
        capture_output=True,
        text=True,
    )
    assert second.returncode == 0 and "db.up_to_date" in second.stdout
