"""The Store's shape: a few bases, its parts as attributes sharing one engine."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

from hrsync.store.repo import Store
from hrsync.store.sessions import StoreSessions

NOW = datetime(2026, 11, 2, 6, 0, tzinfo=UTC)
NAMES = (
    "runs",
    "submissions",
    "identities",
    "deferrals",
    "heartbeat",
    "notifications",
    "people",
    "leads_left",
    "approvals",
    "snapshot_outlook",
    "pruning",
)


def test_the_store_has_at_most_three_bases() -> None:
    # The parts are held, not inherited: a caller's line names the part it asks, and a
    # part's method cannot shadow another's.
    assert len(Store.__bases__) <= 3
    assert len(Store.__mro__) <= 4  # the bases' own bases count as well
    assert not issubclass(Store, StoreSessions)


def test_every_part_is_an_attribute_on_the_same_engine(tmp_path: Path) -> None:
    store = Store.open(f"sqlite:///{tmp_path / 'state.db'}")
    try:
        parts = {name: getattr(store, name) for name in NAMES}
        assert all(isinstance(part, StoreSessions) for part in parts.values())
        assert {id(part.engine) for part in parts.values()} == {id(store.engine)}
        assert len({id(part) for part in parts.values()}) == len(NAMES)
    finally:
        store.close()


def test_the_snapshot_outlook_reads_the_other_parts_it_was_given(tmp_path: Path) -> None:
    # It builds on runs and deferrals: what they record is what it reads back.
    store = Store.open(f"sqlite:///{tmp_path / 'state.db'}")
    try:
        store.runs.start("r1", "schedule", NOW, dry_run=False)
        store.runs.finish(
            "r1",
            NOW,
            outcome="deferred",
            exit_code=0,
            counts={},
            reason="snapshot",
            defer_kind="snapshot_window",
        )
        store.deferrals.add("r1", "snapshot", NOW + timedelta(hours=2), NOW)
        assert store.snapshot_outlook.window_deferral_end() == NOW + timedelta(hours=2)
        outlook = store.snapshot_outlook.last_run_outlook()
        assert outlook is not None and outlook.resume_at == NOW + timedelta(hours=2)
    finally:
        store.close()
