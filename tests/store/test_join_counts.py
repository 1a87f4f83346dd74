"""Each join's counts as the last accepted run saw them (issue 26): the join guard's
baseline, kept per run, on SQLite and PostgreSQL."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from hrsync.core.people.second_tables import TableCount
from hrsync.store.repo import Store
from hrsync.store.submission_record import SubmissionStatus, SubmittedPlan

NOW = datetime(2026, 12, 1, 6, 0, tzinfo=UTC)
DEPARTMENTS = TableCount.join("departments", 107, 106)
OKTA = TableCount.join("okta", 107, 100)


def finish(
    store: Store,
    run_id: str,
    hours: int,
    outcome: str,
    joins: tuple[TableCount, ...] | None,
    *,
    dry_run: bool = False,
) -> None:
    store.runs.start(run_id, "schedule", NOW + timedelta(hours=hours), dry_run=dry_run)
    store.runs.finish(
        run_id,
        NOW + timedelta(hours=hours, minutes=1),
        outcome=outcome,
        exit_code=0,
        counts={},
        reason=None,
        people_count=107,
        join_counts=joins,
    )


def test_the_last_accepted_runs_join_counts_are_kept(store: Store) -> None:
    assert store.runs.last_accepted_join_counts() == {}
    finish(store, "a", 0, "applied", (DEPARTMENTS, OKTA))
    assert store.runs.last_accepted_join_counts() == {"departments": DEPARTMENTS, "okta": OKTA}
    # A refused run, a dry run: not accepted.
    finish(store, "b", 1, "refused", (TableCount.join("departments", 107, 3),))
    finish(store, "c", 2, "in_sync", (TableCount.join("departments", 107, 4),), dry_run=True)
    assert store.runs.last_accepted_join_counts()["departments"] == DEPARTMENTS


def test_an_accepted_run_whose_joins_were_not_trusted_leaves_the_baseline(store: Store) -> None:
    finish(store, "a", 0, "applied", (DEPARTMENTS,))
    finish(store, "b", 1, "in_sync", None)  # in sync while a join matched far less
    assert store.runs.last_accepted_join_counts() == {"departments": DEPARTMENTS}
    finish(store, "c", 2, "in_sync", ())  # no join configured any more
    assert store.runs.last_accepted_join_counts() == {}


def test_a_submission_verified_later_counts_as_accepted(store: Store) -> None:
    finish(store, "a", 0, "applied", (DEPARTMENTS,))
    later = TableCount.join("departments", 120, 119)
    finish(store, "b", 1, "unverified", (later,))
    sid = store.submissions.record(
        "b", SubmittedPlan(rows=(), digest="d"), people_count=120, now=NOW
    )
    assert store.runs.last_accepted_join_counts() == {"departments": DEPARTMENTS}
    store.submissions.mark(sid, SubmissionStatus.VERIFIED, NOW + timedelta(hours=3))
    assert store.runs.last_accepted_join_counts() == {"departments": later}
