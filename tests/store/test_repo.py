"""The state store's queries: runs, submissions, identities, deferrals, heartbeat.

The lease has its own file, test_lease.py.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from sqlalchemy import text

from hrsync.core.gate.plan import SeenTeam
from hrsync.core.teams.identity import KnownIdentity, TeamRow
from hrsync.dx.methods import PROCESS
from hrsync.store.repo import Store
from hrsync.store.submission_record import SubmissionStatus, SubmittedPlan

NOW = datetime(2026, 11, 2, 6, 0, tzinfo=UTC)


def test_sqlite_is_wal_with_foreign_keys_and_busy_timeout(tmp_path: Path) -> None:
    store = Store.open(f"sqlite:///{tmp_path / 'state.db'}")
    with store.engine.connect() as c:
        assert c.exec_driver_sql("PRAGMA journal_mode").scalar() == "wal"
        assert c.exec_driver_sql("PRAGMA foreign_keys").scalar() == 1
        assert c.exec_driver_sql("PRAGMA busy_timeout").scalar() == 30000
    store.close()


def test_foreign_keys_are_enforced(store: Store) -> None:
    with pytest.raises(Exception, match=r"(?i)foreign key"):
        store.submissions.record(
            "no-such-run", SubmittedPlan(rows=(), digest="d"), people_count=0, now=NOW
        )


def test_timestamps_come_back_utc_aware(store: Store) -> None:
    store.runs.start("r1", "manual", NOW, dry_run=False)
    run = store.runs.recent()[0]
    assert run.started_at == NOW
    assert run.started_at.tzinfo is not None
    with store.engine.connect() as c:
        raw = c.execute(text("select started_at from runs")).scalar()
    assert str(raw).startswith("2026-11-02 06:00:00")


def test_naive_datetimes_are_refused(store: Store) -> None:
    with pytest.raises(Exception, match="naive datetime"):
        store.runs.start("r1", "manual", datetime(2026, 1, 1), dry_run=False)


def test_non_utc_input_is_stored_as_utc(store: Store) -> None:
    from zoneinfo import ZoneInfo

    berlin = datetime(2026, 11, 2, 7, 0, tzinfo=ZoneInfo("Europe/Berlin"))
    store.runs.start("r1", "manual", berlin, dry_run=False)
    assert store.runs.recent()[0].started_at == NOW


def test_runs_finish_and_history_is_newest_first(store: Store) -> None:
    for i in range(3):
        store.runs.start(f"r{i}", "schedule", NOW + timedelta(hours=i), dry_run=False)
    store.runs.finish(
        "r1",
        NOW + timedelta(hours=1, minutes=1),
        outcome="applied",
        exit_code=0,
        counts={"create": 2},
        reason=None,
        people_count=40,
    )
    runs = store.runs.recent()
    assert [r.id for r in runs] == ["r2", "r1", "r0"]
    assert runs[1].counts == {"create": 2}
    assert store.runs.last_accepted_people_count() == 40


def test_what_deferred_a_run_is_kept_as_data(store: Store) -> None:
    """The import back-off counts runs deferred by a running import from this column;
    the reason's wording is free to change."""
    store.runs.start("d", "schedule", NOW, dry_run=False)
    store.runs.finish(
        "d", NOW, outcome="deferred", exit_code=3, counts={}, reason="any words",
        defer_kind="import_in_progress",
    )  # fmt: skip
    store.runs.start("e", "schedule", NOW + timedelta(minutes=1), dry_run=False)
    store.runs.finish("e", NOW, outcome="applied", exit_code=0, counts={}, reason=None)
    kinds = [(r.id, r.defer_kind) for r in store.runs.recent()]
    assert kinds == [("e", None), ("d", "import_in_progress")]


def test_last_accepted_people_ignores_refused_and_dry_runs(store: Store) -> None:
    store.runs.start("a", "manual", NOW, dry_run=False)
    store.runs.finish(
        "a", NOW, outcome="applied", exit_code=0, counts={}, reason=None, people_count=80
    )
    store.runs.start("b", "manual", NOW + timedelta(1), dry_run=False)
    store.runs.finish(
        "b", NOW, outcome="refused", exit_code=4, counts={}, reason="shrink", people_count=10
    )
    store.runs.start("c", "manual", NOW + timedelta(2), dry_run=True)
    store.runs.finish(
        "c", NOW, outcome="in_sync", exit_code=0, counts={}, reason=None, people_count=5
    )
    assert store.runs.last_accepted_people_count() == 80


def test_consecutive_failures_counts_the_unbroken_streak(store: Store) -> None:
    outcomes = ["applied", "failed", "failed", "failed"]
    for i, outcome in enumerate(outcomes):
        store.runs.start(f"r{i}", "schedule", NOW + timedelta(hours=i), dry_run=False)
        store.runs.finish(f"r{i}", NOW, outcome=outcome, exit_code=1, counts={}, reason=f"x{i}")
    assert [r.id for r in store.runs.consecutive_failures()] == ["r3", "r2", "r1"]


def test_submission_lifecycle(store: Store) -> None:
    store.runs.start("r1", "manual", NOW, dry_run=False)
    row = TeamRow("k1", "hrsync-1", "A", "a@example.test", None, None, ("b@example.test",))
    plan = SubmittedPlan(rows=(row,), counts={"create": 1}, digest="abc")
    sid = store.submissions.record("r1", plan, people_count=3, now=NOW)
    unfinished = store.submissions.unfinished()
    assert unfinished is not None and unfinished.id == sid
    assert unfinished.status is SubmissionStatus.PENDING
    assert unfinished.plan == plan and unfinished.payload_digest == "abc"
    assert unfinished.method == PROCESS
    store.submissions.mark(sid, SubmissionStatus.ACCEPTED, NOW, import_id="imp-1")
    seen = {"hrsync-1": SeenTeam("u-1", NOW)}
    store.submissions.mark(sid, SubmissionStatus.VERIFIED, NOW + timedelta(minutes=1), dx_seen=seen)
    assert store.submissions.unfinished() is None
    verified = store.submissions.last_verified()
    assert verified is not None and verified.import_id == "imp-1"
    assert verified.verified_at == NOW + timedelta(minutes=1)
    assert verified.dx_seen == seen


def ident(
    key: str, ref: str, *, retired: bool = False, members: tuple[str, ...] = ()
) -> KnownIdentity:
    return KnownIdentity(key, ref, f"team {key}", None, "lead@example.test", members, retired)


def test_identities_round_trip_and_rekey(store: Store) -> None:
    store.identities.save(
        [
            ident("manager:1", "hrsync-a", members=("x@e.t", "y@e.t")),
            ident("manager:2", "hrsync-b"),
        ],
        NOW,
    )
    # Continuity: the team led by 1 is now led by 3; 2's team retired; keys swap rows.
    store.identities.save(
        [ident("manager:3", "hrsync-a"), ident("manager:2", "hrsync-b", retired=True)],
        NOW + timedelta(days=1),
    )
    loaded = {i.reference_id: i for i in store.identities.load()}
    assert loaded["hrsync-a"].key == "manager:3"
    assert loaded["hrsync-b"].retired


def test_key_swap_between_two_rows(store: Store) -> None:
    store.identities.save([ident("k1", "r1"), ident("k2", "r2")], NOW)
    store.identities.save([ident("k2", "r1"), ident("k1", "r2")], NOW)
    loaded = {i.reference_id: i.key for i in store.identities.load()}
    assert loaded == {"r1": "k2", "r2": "k1"}


def test_deferrals_newest_supersedes(store: Store) -> None:
    store.deferrals.add(None, "snapshot", NOW + timedelta(days=3), NOW)
    store.deferrals.add(None, "import", NOW + timedelta(minutes=2), NOW + timedelta(minutes=1))
    pending = store.deferrals.pending()
    assert pending is not None and pending.reason == "import"
    store.deferrals.resolve(NOW + timedelta(minutes=3))
    assert store.deferrals.pending() is None


def test_heartbeat(store: Store) -> None:
    assert store.heartbeat.read() is None
    store.heartbeat.beat(NOW, state="idle", detail={"next_run": "tomorrow"})
    hb = store.heartbeat.read()
    assert hb is not None and hb.beat_at == NOW and hb.state == "idle"
    assert hb.detail == {"next_run": "tomorrow"}


def test_saving_the_same_identities_only_moves_last_seen(store: Store) -> None:
    members = ("a@e.t", "b@e.t")
    store.identities.save([ident("k1", "r1", members=members), ident("k2", "r2")], NOW)
    later = NOW + timedelta(days=1)
    statements: list[str] = []

    from sqlalchemy import event

    def record(conn: object, cursor: object, statement: str, *args: object) -> None:
        statements.append(statement)

    event.listen(store.engine, "before_cursor_execute", record)
    try:
        store.identities.save([ident("k1", "r1", members=members), ident("k2", "r2")], later)
    finally:
        event.remove(store.engine, "before_cursor_execute", record)
    writes = [s for s in statements if s.lstrip().upper().startswith(("UPDATE", "INSERT"))]
    assert len(writes) == 1 and "last_seen" in writes[0]
    with store.engine.connect() as c:
        seen = c.execute(text("select last_seen from team_identities")).scalars().all()
    assert all(str(v).startswith("2026-11-03") for v in seen)


def test_retire_and_return(store: Store) -> None:
    store.identities.save([ident("k1", "r1")], NOW)
    store.identities.save([ident("k1", "r1", retired=True)], NOW + timedelta(days=1))
    (retired,) = store.identities.load()
    assert retired.retired
    store.identities.save([ident("k1", "r1")], NOW + timedelta(days=2))
    (back,) = store.identities.load()
    assert not back.retired
