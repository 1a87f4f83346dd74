"""Each source's counts as the last accepted run saw them (issue 26, `[[source.union]]`):
the per-source shrink guard's baseline, kept per run as the join counts are, on SQLite
and PostgreSQL."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from hrsync.core.people.second_tables import TableCount
from hrsync.store.repo import Store
from hrsync.store.submission_record import SubmissionStatus, SubmittedPlan

NOW = datetime(2026, 12, 1, 6, 0, tzinfo=UTC)
PRIMARY = TableCount.source("source", 90, 88)
ACQ = TableCount.source("acq", 10, 10)


def finish(
    store: Store,
    run_id: str,
    hours: int,
    outcome: str,
    sources: tuple[TableCount, ...] | None,
    *,
    dry_run: bool = False,
    joins: tuple[TableCount, ...] | None = None,
) -> None:
    store.runs.start(run_id, "schedule", NOW + timedelta(hours=hours), dry_run=dry_run)
    store.runs.finish(
        run_id,
        NOW + timedelta(hours=hours, minutes=1),
        outcome=outcome,
        exit_code=0,
        counts={},
        reason=None,
        people_count=98,
        join_counts=joins,
        source_counts=sources,
    )


def test_the_last_accepted_runs_source_counts_are_kept(store: Store) -> None:
    assert store.runs.last_accepted_source_counts() == {}
    finish(store, "a", 0, "applied", (PRIMARY, ACQ))
    assert store.runs.last_accepted_source_counts() == {"source": PRIMARY, "acq": ACQ}
    # A refused run, a dry run: not accepted.
    finish(store, "b", 1, "refused", (PRIMARY, TableCount.source("acq", 1, 1)))
    finish(store, "c", 2, "in_sync", (PRIMARY, TableCount.source("acq", 2, 2)), dry_run=True)
    assert store.runs.last_accepted_source_counts()["acq"] == ACQ


def test_an_accepted_run_whose_sources_were_not_trusted_leaves_the_baseline(
    store: Store,
) -> None:
    finish(store, "a", 0, "applied", (PRIMARY, ACQ))
    finish(store, "b", 1, "in_sync", None)  # in sync while a source shrank far
    assert store.runs.last_accepted_source_counts() == {"source": PRIMARY, "acq": ACQ}
    finish(store, "c", 2, "in_sync", ())  # no union configured any more
    assert store.runs.last_accepted_source_counts() == {}


def test_join_and_source_counts_are_kept_apart(store: Store) -> None:
    departments = TableCount.join("departments", 98, 97)
    finish(store, "a", 0, "applied", (PRIMARY, ACQ), joins=(departments,))
    finish(store, "b", 1, "applied", None, joins=(TableCount.join("departments", 98, 98),))
    assert store.runs.last_accepted_source_counts() == {"source": PRIMARY, "acq": ACQ}
    assert store.runs.last_accepted_join_counts()["departments"].matched == 98
    assert store.runs.last_accepted_people_count() == 98


def test_a_submission_verified_later_counts_as_accepted(store: Store) -> None:
    finish(store, "a", 0, "applied", (PRIMARY, ACQ))
    later = (PRIMARY, TableCount.source("acq", 12, 12))
    finish(store, "b", 1, "unverified", later)
    sid = store.submissions.record(
        "b", SubmittedPlan(rows=(), digest="d"), people_count=100, now=NOW
    )
    assert store.runs.last_accepted_source_counts()["acq"] == ACQ
    store.submissions.mark(sid, SubmissionStatus.VERIFIED, NOW + timedelta(hours=3))
    assert store.runs.last_accepted_source_counts()["acq"] == later[1]
