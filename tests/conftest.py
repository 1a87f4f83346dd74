"""A real PostgreSQL server for the tests that need one; the property tests' settings.

`HRSYNC_TEST_POSTGRES_URL` names a server (any database on it; `bash .ci/postgres
start DIR` starts a throwaway one and prints the URL). Each test gets a database of its
own, dropped afterwards. Without the variable the PostgreSQL tests are skipped, except
in CI (`CI` set), where a skipped PostgreSQL test would be a silent hole: they fail.

The header names the simulator's seed (`HRSYNC_TEST_SEED`, tests/simulating.py).
"""

from __future__ import annotations

import os
import uuid
from collections.abc import Generator, Iterator
from pathlib import Path

import pytest
from hypothesis import settings
from sqlalchemy import create_engine, text
from sqlalchemy.engine import make_url

from tests.simulating import SEED_ENV, simulator_seed

POSTGRES_ENV = "HRSYNC_TEST_POSTGRES_URL"

# Property tests assert what is true, never how fast: on a loaded two-core machine one
# example of a microsecond function can take half a second, and hypothesis's default
# 200 ms deadline then fails a correct test. Speed is measured in benchmarks/.
settings.register_profile("hrsync", deadline=None)
settings.load_profile("hrsync")


def pytest_xdist_auto_num_workers(config: pytest.Config) -> int:
    """`-n auto`: two workers per core. Most of the suite's time is e2e tests waiting on
    the hrsync and simulator processes they start; with one worker per core a core sat
    idle about half the time (a whole run on two cores used 10 CPU-minutes in 16.5)."""
    return 2 * (os.cpu_count() or 1)


def in_ci() -> bool:
    return os.environ.get("CI", "").strip().lower() not in ("", "0", "false", "no")


def pytest_report_header(config: pytest.Config) -> str:
    # What the simulator varies comes from this seed: printed so a failure can be replayed.
    return f"simulator seed: {simulator_seed()} (replay: {SEED_ENV}={simulator_seed()} pytest ...)"


@pytest.fixture(scope="session")
def postgres_server_url() -> str:
    url = os.environ.get(POSTGRES_ENV, "").strip()
    if not url:
        why = f"no PostgreSQL server: set {POSTGRES_ENV} (bash .ci/postgres start DIR prints one)"
        if in_ci():
            pytest.fail(f"{why}; CI must run the PostgreSQL tests, not skip them", pytrace=False)
        pytest.skip(why)
    if make_url(url).get_backend_name() != "postgresql":
        pytest.fail(f"{POSTGRES_ENV} must be a postgresql+psycopg:// URL", pytrace=False)
    return url


@pytest.fixture
def postgres_url(postgres_server_url: str) -> Iterator[str]:
    """A fresh, empty database on the server, dropped after the test."""
    name = f"hrsync_test_{uuid.uuid4().hex[:12]}"
    admin = create_engine(postgres_server_url, isolation_level="AUTOCOMMIT")
    try:
        with admin.connect() as c:
            c.execute(text(f'CREATE DATABASE "{name}"'))
        yield make_url(postgres_server_url).set(database=name).render_as_string(hide_password=False)
        with admin.connect() as c:
            # FORCE: a connection a test left open (a killed subprocess) must not keep it.
            c.execute(text(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))
    finally:
        admin.dispose()


@pytest.fixture(params=["sqlite", "postgresql"])
def database_url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    """The store's URL, once on each database hrsync supports: SQLite and PostgreSQL."""
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path / 'state.db'}"
    url = request.getfixturevalue("postgres_url")
    assert isinstance(url, str)
    return url


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(
    item: pytest.Item, call: pytest.CallInfo[None]
) -> Generator[None, pytest.TestReport, pytest.TestReport]:
    report: pytest.TestReport = yield
    # In CI a PostgreSQL test must not be skipped for any reason (a missing driver, a
    # skip added later), or a green run would hide that the database was never tested.
    if (
        report.skipped
        and in_ci()
        and "postgres_server_url" in getattr(item, "fixturenames", ())
        and not hasattr(report, "wasxfail")
    ):
        report.outcome = "failed"
        report.longrepr = f"a PostgreSQL test was skipped in CI: {report.longrepr}"
    return report
