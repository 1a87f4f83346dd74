"""The lease: one sync at a time across processes and replicas sharing a store.

Common rules run on both databases; the TTL rules are SQLite's; the advisory lock
tests talk to a real PostgreSQL server with several Stores (several engines, hence
several sessions), as replicas would.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from sqlalchemy import create_engine, event, text

from hrsync.store.lease import LeaseState, advisory_key
from hrsync.store.lease_row import RowLease, process_started
from hrsync.store.repo import Store

NOW = datetime(2026, 11, 2, 6, 0, tzinfo=UTC)


@pytest.fixture
def rival(database_url: str, store: Store) -> Iterator[Store]:
    """A second Store on the same database: another process or replica."""
    s = Store.open(database_url, migrate=False)
    yield s
    s.close()


@pytest.fixture
def sqlite_store(tmp_path: Any) -> Iterator[Store]:
    s = Store.open(f"sqlite:///{tmp_path / 'state.db'}")
    yield s
    s.close()


@pytest.fixture
def pg_url(postgres_url: str) -> str:
    Store.open(postgres_url).close()  # migrated
    return postgres_url


# ------------------------------------------------------------ both databases


def test_lease_is_exclusive_until_released(store: Store, rival: Store) -> None:
    first = store.acquire_lease("run-a", NOW, 600)
    assert first.acquired
    for other in (store, rival):
        second = other.acquire_lease("run-b", NOW, 600)
        assert not second.acquired
        assert (second.holder, second.host, second.pid) == ("run-a", first.host, os.getpid())
    store.release_lease("run-a")
    assert rival.acquire_lease("run-b", NOW, 600).acquired


def test_current_lease_names_the_holder_and_takes_nothing(store: Store, rival: Store) -> None:
    assert store.current_lease(NOW) is None
    store.acquire_lease("run-a", NOW, 600)
    mine, theirs = store.current_lease(NOW), rival.current_lease(NOW)
    assert mine is not None and mine.acquired and mine.holder == "run-a"
    assert theirs is not None and not theirs.acquired and theirs.holder == "run-a"
    store.release_lease("run-a")
    assert rival.current_lease(NOW) is None
    assert rival.acquire_lease("run-b", NOW, 600).acquired


def test_the_same_holder_may_take_it_again(store: Store) -> None:
    assert store.acquire_lease("run-a", NOW, 600).acquired
    assert store.acquire_lease("run-a", NOW, 600).acquired
    assert store.renew_lease("run-a", NOW, 600)


def test_renew_after_release_is_false(store: Store) -> None:
    store.acquire_lease("run-a", NOW, 600)
    store.release_lease("run-a")
    assert not store.renew_lease("run-a", NOW, 600)


def test_lease_of_a_dead_process_on_this_host_is_free(database_url: str, store: Store) -> None:
    code = (
        "from datetime import UTC, datetime\n"
        "from hrsync.store.repo import Store\n"
        f"s = Store.open({database_url!r})\n"
        "assert s.acquire_lease('killed-run', datetime.now(UTC), 3600).acquired\n"
        "import os; os._exit(0)\n"  # no release, no close: as if killed
    )
    subprocess.run([sys.executable, "-c", code], check=True)
    state = store.acquire_lease("next-run", datetime.now(UTC), 600)
    # PostgreSQL frees the lock once its server process has seen the client go, a few
    # milliseconds after the exit (on a loaded machine, after this test's first try).
    deadline = time.monotonic() + 5
    while not state.acquired and store.engine.dialect.name == "postgresql":
        assert time.monotonic() < deadline, f"the killed holder's lock was never freed: {state}"
        time.sleep(0.02)
        state = store.acquire_lease("next-run", datetime.now(UTC), 600)
    assert state.acquired


def test_concurrent_acquires_never_raise_and_one_wins(database_url: str, store: Store) -> None:
    # Two daemons firing in the same second once crashed with a unique-key violation.
    stores = [Store.open(database_url, migrate=False) for _ in range(8)]
    barrier = threading.Barrier(len(stores))
    results: list[LeaseState] = []
    errors: list[BaseException] = []

    def contend(i: int) -> None:
        try:
            barrier.wait(5)
            results.append(stores[i].acquire_lease(f"run-{i}", NOW, 600))
        except BaseException as exc:
            errors.append(exc)

    threads = [threading.Thread(target=contend, args=(i,)) for i in range(len(stores))]
    try:
        for t in threads:
            t.start()
        for t in threads:
            t.join(30)
        assert errors == []
        winners = [r for r in results if r.acquired]
        assert len(results) == len(stores) and len(winners) == 1
        for loser in (r for r in results if not r.acquired):
            assert loser.holder == winners[0].holder
    finally:
        for s in stores:
            s.close()


def test_an_insert_conflict_on_the_row_means_not_acquired(store: Store) -> None:
    # The race itself: both acquirers read "no row", the rival's insert lands first.
    rows = RowLease(store.engine)
    rival_row = (
        "INSERT INTO leases (name, holder, host, pid, pid_started, acquired_at, expires_at) "
        "VALUES ('sync', 'rival-run', 'rival-host', 4242, NULL, :at, :until)"
    )

    fired: list[str] = []

    def rival_first(conn: Any, cursor: Any, statement: str, *args: Any) -> None:
        if statement.lstrip().upper().startswith("INSERT INTO LEASES") and not fired:
            fired.append(statement)
            conn.execute(text(rival_row), {"at": NOW, "until": NOW + timedelta(hours=1)})

    event.listen(store.engine, "before_cursor_execute", rival_first)
    try:
        state = rows.acquire("run-a", NOW, 600, "sync")
    finally:
        event.remove(store.engine, "before_cursor_execute", rival_first)
    assert fired
    assert not state.acquired
    assert (state.holder, state.host, state.pid) == ("rival-run", "rival-host", 4242)


# ------------------------------------------------------------ SQLite: the TTL


def test_expired_lease_of_a_holder_elsewhere_can_be_taken(sqlite_store: Store) -> None:
    store = sqlite_store
    store.acquire_lease("run-a", NOW, 60)
    with store.engine.begin() as c:
        c.execute(text("update leases set host = 'another-host'"))
    assert not store.acquire_lease("run-b", NOW + timedelta(seconds=59), 60).acquired
    assert store.acquire_lease("run-b", NOW + timedelta(seconds=61), 60).acquired


def test_a_live_holder_here_keeps_the_lease_past_its_ttl(sqlite_store: Store) -> None:
    # A slow but live run is never overtaken; only a dead or reused pid frees it.
    sqlite_store.acquire_lease("slow-run", NOW, 60)
    assert not sqlite_store.acquire_lease("run-b", NOW + timedelta(hours=2), 60).acquired


def test_a_reused_pid_is_not_the_holder(sqlite_store: Store) -> None:
    # A restarted container gives hrsync the same pid again: the lease of the earlier
    # life must not look alive just because the pid is.
    store = sqlite_store
    store.acquire_lease("earlier-life", NOW, 3600)
    with store.engine.begin() as c:
        c.execute(text("update leases set pid_started = pid_started || '0'"))
    assert store.acquire_lease("this-life", NOW, 600).acquired


def test_a_holder_in_another_pid_namespace_is_trusted_until_its_ttl(sqlite_store: Store) -> None:
    store = sqlite_store
    store.acquire_lease("other-container", NOW, 600)
    with store.engine.begin() as c:
        # Its pid (ours, here) means another process in that namespace.
        c.execute(text("update leases set pid_started = 'pid:[4026531999]@12345'"))
    assert not store.acquire_lease("this-run", NOW, 600).acquired
    assert store.acquire_lease("this-run", NOW + timedelta(seconds=601), 600).acquired


def test_renew_tells_when_the_lease_was_lost(sqlite_store: Store) -> None:
    store = sqlite_store
    store.acquire_lease("run-a", NOW, 60)
    assert store.renew_lease("run-a", NOW, 60)
    with store.engine.begin() as c:
        c.execute(text("update leases set host = 'another-host'"))
    assert store.acquire_lease("run-b", NOW + timedelta(seconds=61), 60).acquired
    assert not store.renew_lease("run-a", NOW + timedelta(seconds=62), 60)


def test_process_started_reads_this_process() -> None:
    started = process_started(os.getpid())
    assert started is None or started.rpartition("@")[2].isdigit()
    assert process_started(2**22 + 12345) is None


# ------------------------------------------- PostgreSQL: the advisory lock


def _lock_sessions(url: str) -> list[tuple[int, str]]:
    """(pid, state) of every session holding the lease's advisory lock in this database."""
    key = advisory_key("sync") & 0xFFFF_FFFF_FFFF_FFFF
    engine = create_engine(url)
    try:
        with engine.connect() as c:
            rows = c.execute(
                text(
                    "SELECT l.pid, a.state FROM pg_locks l JOIN pg_stat_activity a USING (pid) "
                    # Advisory locks belong to a database; other tests' databases on
                    # the same server hold theirs at the same time.
                    "WHERE l.locktype = 'advisory' AND l.granted AND l.objsubid = 1 "
                    "AND l.database = (SELECT oid FROM pg_database "
                    "WHERE datname = current_database()) "
                    "AND l.classid::bigint = :hi AND l.objid::bigint = :lo"
                ),
                {"hi": key >> 32, "lo": key & 0xFFFF_FFFF},
            ).all()
            return [(int(r[0]), str(r[1])) for r in rows]
    finally:
        engine.dispose()


def _terminate(url: str, pid: int) -> None:
    engine = create_engine(url)
    try:
        with engine.connect() as c:
            assert c.execute(text("SELECT pg_terminate_backend(:p)"), {"p": pid}).scalar()
    finally:
        engine.dispose()


def _acquire_within(store: Store, holder: str, seconds: float) -> LeaseState:
    deadline = time.monotonic() + seconds
    while True:
        state = store.acquire_lease(holder, datetime.now(UTC), 600)
        if state.acquired or time.monotonic() > deadline:
            return state
        time.sleep(0.05)


def test_pg_the_lock_is_a_session_lock_held_while_idle(pg_url: str) -> None:
    a = Store.open(pg_url, migrate=False)
    try:
        assert a.acquire_lease("run-a", NOW, 600).acquired
        (session,) = _lock_sessions(pg_url)
        # Autocommit: the holder is idle between steps, not idle in a transaction.
        assert session[1] == "idle"
        a.release_lease("run-a")
        assert _lock_sessions(pg_url) == []
    finally:
        a.close()


def test_pg_the_row_is_information_not_the_lock(pg_url: str) -> None:
    a, b = Store.open(pg_url, migrate=False), Store.open(pg_url, migrate=False)
    try:
        assert a.acquire_lease("run-a", NOW, 60).acquired
        with a.engine.begin() as c:
            # A row that SQLite would call expired, held elsewhere: the lock still holds.
            c.execute(text("UPDATE leases SET host = 'another-host', expires_at = :t"), {"t": NOW})
        assert not b.acquire_lease("run-b", NOW + timedelta(hours=3), 60).acquired
        # Without its row (not written yet), or under a row naming someone else (a dead
        # holder's leftover), the holder is still named: its session carries the name.
        with a.engine.begin() as c:
            c.execute(text("UPDATE leases SET holder = 'dead-run'"))
        assert b.acquire_lease("run-b", NOW, 60).holder == "run-a"
        with a.engine.begin() as c:
            c.execute(text("DELETE FROM leases"))
        late = b.acquire_lease("run-b", NOW + timedelta(hours=3), 60)
        assert not late.acquired and late.holder == "run-a"
        current = b.current_lease(NOW)
        assert current is not None and current.holder == "run-a" and not current.acquired
        mine = a.current_lease(NOW)
        assert mine is not None and mine.acquired
        # And a leftover row of a dead holder does not stop the next one.
        a.release_lease("run-a")
        with a.engine.begin() as c:
            c.execute(
                text(
                    "INSERT INTO leases (name, holder, host, pid, acquired_at, expires_at) "
                    "VALUES ('sync', 'dead-run', 'gone-host', 1, :t, :u)"
                ),
                {"t": NOW, "u": NOW + timedelta(days=1)},
            )
        taken = b.acquire_lease("run-b", NOW, 60)
        assert taken.acquired
        current = a.current_lease(NOW)
        assert current is not None and current.holder == "run-b" and not current.acquired
    finally:
        a.close()
        b.close()


def test_pg_a_terminated_session_frees_the_lock_at_once(pg_url: str) -> None:
    a, b = Store.open(pg_url, migrate=False), Store.open(pg_url, migrate=False)
    try:
        assert a.acquire_lease("run-a", NOW, 600).acquired
        assert not b.acquire_lease("run-b", NOW, 600).acquired
        ((pid, _),) = _lock_sessions(pg_url)
        _terminate(pg_url, pid)
        assert b.acquire_lease("run-b", NOW, 600).acquired
        # The old holder learns it at its next renewal and must not submit.
        assert not a.renew_lease("run-a", NOW, 600)
        assert not a.acquire_lease("run-a", NOW, 600).acquired
        assert b.renew_lease("run-b", NOW, 600)
    finally:
        a.close()
        b.close()


def test_pg_closing_the_holder_frees_the_lock(pg_url: str) -> None:
    a, b = Store.open(pg_url, migrate=False), Store.open(pg_url, migrate=False)
    try:
        assert a.acquire_lease("run-a", NOW, 600).acquired
        a.close()  # no release: a process ending without cleanup
        assert b.acquire_lease("run-b", NOW, 600).acquired
    finally:
        b.close()


def test_pg_a_killed_holder_process_is_taken_over_within_a_second(pg_url: str) -> None:
    code = (
        "import sys, time\n"
        "from datetime import UTC, datetime\n"
        "from hrsync.store.repo import Store\n"
        f"s = Store.open({pg_url!r}, migrate=False)\n"
        "assert s.acquire_lease('doomed-run', datetime.now(UTC), 3600).acquired\n"
        "print('held', flush=True)\n"
        "time.sleep(60)\n"
    )
    proc = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True)
    b = Store.open(pg_url, migrate=False)
    try:
        assert proc.stdout is not None and proc.stdout.readline().strip() == "held"
        turned_away = b.acquire_lease("run-b", datetime.now(UTC), 600)
        assert not turned_away.acquired and turned_away.holder == "doomed-run"
        assert turned_away.pid == proc.pid
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait(10)
        killed_at = time.monotonic()
        assert _acquire_within(b, "run-b", 5).acquired
        assert time.monotonic() - killed_at < 1.0
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        b.close()


def test_pg_a_released_lock_does_not_stay_in_the_pool(pg_url: str) -> None:
    a, b = Store.open(pg_url, migrate=False), Store.open(pg_url, migrate=False)
    try:
        for i in range(3):
            assert a.acquire_lease(f"run-{i}", NOW, 600).acquired
            a.release_lease(f"run-{i}")
        a.runs.recent(1)  # pooled connections at work
        assert _lock_sessions(pg_url) == []
        assert b.acquire_lease("run-b", NOW, 600).acquired
    finally:
        a.close()
        b.close()


def test_pg_another_run_of_the_same_store_is_turned_away(pg_url: str) -> None:
    a = Store.open(pg_url, migrate=False)
    try:
        assert a.acquire_lease("run-a", NOW, 600).acquired
        other = a.acquire_lease("run-b", NOW, 600)
        assert not other.acquired and other.holder == "run-a"
        assert not a.renew_lease("run-b", NOW, 600)
        a.release_lease("run-b")  # not the holder: changes nothing
        assert a.renew_lease("run-a", NOW, 600)
    finally:
        a.close()


# ------------------------------------------------ replicas starting together


def test_first_heartbeats_at_once_never_raise(database_url: str, store: Store) -> None:
    # Two replicas starting together both found no heartbeat row and both inserted it:
    # the second crashed at start with a unique-key violation.
    stores = [Store.open(database_url, migrate=False) for _ in range(8)]
    barrier = threading.Barrier(len(stores))
    errors: list[BaseException] = []

    def beat(i: int) -> None:
        try:
            barrier.wait(5)
            stores[i].heartbeat.beat(NOW, state="idle", detail={"replica": i})
        except BaseException as exc:
            errors.append(exc)

    threads = [threading.Thread(target=beat, args=(i,)) for i in range(len(stores))]
    try:
        for t in threads:
            t.start()
        for t in threads:
            t.join(30)
        assert errors == []
        hb = store.heartbeat.read()
        assert hb is not None and hb.beat_at == NOW and hb.state == "idle"
    finally:
        for s in stores:
            s.close()


def test_pg_replicas_migrating_a_new_database_together_all_start(postgres_url: str) -> None:
    code = f"from hrsync.store.repo import Store\nStore.open({postgres_url!r}).close()\n"
    procs = [
        subprocess.Popen([sys.executable, "-c", code], stderr=subprocess.PIPE, text=True)
        for _ in range(3)
    ]
    failures = []
    for proc in procs:
        _, err = proc.communicate(timeout=60)
        if proc.returncode != 0:
            failures.append([line for line in err.splitlines() if "Error" in line][:1])
    assert failures == []
    s = Store.open(postgres_url, migrate=False)
    try:
        assert s.runs.recent(1) == []  # the schema is there, once
    finally:
        s.close()
