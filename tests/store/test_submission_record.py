"""The submission record's JSON: a round trip, and records written by earlier versions."""

from __future__ import annotations

import dataclasses
import json
from datetime import UTC, datetime
from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st

from hrsync.core.gate.plan import LeadChange, Rename, SeenTeam
from hrsync.core.teams.identity import KnownIdentity, TeamRow
from hrsync.store.repo import Store
from hrsync.store.submission_record import (
    NEVER_REACHED_DX,
    UNFINISHED,
    SubmissionStatus,
    SubmittedPlan,
    seen_from_json,
    seen_to_json,
)

AT = datetime(2026, 11, 2, 6, 0, tzinfo=UTC)
ROW = TeamRow("k1", "hrsync-1", "Platform", "a@x.test", "hrsync-0", "Eng", ("b@x.test",))
FULL = SubmittedPlan(
    rows=(ROW,),
    archived_refs=("hrsync-9",),
    archived_dx_ids=("t-9",),
    awaiting_change={"hrsync-1": AT},
    identities=(KnownIdentity("k1", "hrsync-1", "Platform", "k0", "a@x.test", ("b",)),),
    renames=(Rename("hrsync-1", "Infra", "Platform"),),
    lead_changes=(LeadChange("hrsync-1", "Platform", "c@x.test", "a@x.test", 1),),
    counts={"create": 0, "rename": 1},
    digest="abc",
)


def test_a_recorded_plan_reads_back_equal() -> None:
    assert SubmittedPlan.from_json(FULL.to_json()) == FULL


def test_the_json_keeps_the_shape_earlier_versions_wrote() -> None:
    d = json.loads(FULL.to_json())
    assert set(d) == {
        "awaiting_change",
        "identities",
        "rows",
        "archived_refs",
        "archived_dx_ids",
        "renames",
        "lead_changes",
        "counts",
        "digest",
    }
    assert d["rows"][0] == {"key": "k1", **ROW.to_payload()}
    assert d["awaiting_change"] == {"hrsync-1": AT.isoformat()}


def test_a_record_older_than_the_rows_key_takes_its_rows_from_the_payload() -> None:
    plan = SubmittedPlan.from_json('{"counts": {}}', [ROW.to_payload()])
    (row,) = plan.rows
    assert row.reference_id == "hrsync-1" and row.contributors == ("b@x.test",)
    assert plan.identities == () and plan.awaiting_change == {}


def test_every_status_is_either_unfinished_final_or_never_sent() -> None:
    assert UNFINISHED.isdisjoint(NEVER_REACHED_DX)
    assert SubmissionStatus("outcome_unknown") is SubmissionStatus.OUTCOME_UNKNOWN
    assert {s.value for s in SubmissionStatus} == {
        "pending",
        "sent",
        "accepted",
        "outcome_unknown",
        "verified",
        "unverified",
        "superseded",
        "rejected",
        "deferred",
        "failed",
    }


@given(
    st.dictionaries(
        st.text(min_size=1, max_size=8),
        st.tuples(
            st.none() | st.text(max_size=8),
            st.none() | st.datetimes(timezones=st.just(UTC)),
        ),
        max_size=5,
    )
)
def test_what_dx_showed_reads_back_equal(
    values: dict[str, tuple[str | None, datetime | None]],
) -> None:
    seen = {ref: SeenTeam(m, at) for ref, (m, at) in values.items()}
    assert seen_from_json(seen_to_json(seen)) == seen
    assert seen_from_json(None) == {}


def test_the_watched_teams_are_kept_only_when_there_are_any() -> None:
    watched = dataclasses.replace(FULL, watching={"hrsync-1": AT})
    assert SubmittedPlan.from_json(watched.to_json()).watching == {"hrsync-1": AT}
    assert "watching" not in json.loads(FULL.to_json())
    assert SubmittedPlan.from_json(FULL.to_json()).watching == {}


def test_the_payload_is_read_only_for_a_record_older_than_the_rows_key() -> None:
    def payload() -> list[dict[str, object]]:
        raise AssertionError("a record with its rows needs no payload")

    assert SubmittedPlan.from_json(FULL.to_json(), payload) == FULL
    old = SubmittedPlan.from_json('{"counts": {}}', lambda: [ROW.to_payload()])
    assert old.rows[0].reference_id == "hrsync-1"


def test_the_last_verified_plan_reads_the_same_from_a_fresh_store(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'state.db'}"
    store = Store.open(url)
    try:
        store.runs.start("run-1", "manual", AT, dry_run=False)
        sid = store.submissions.record("run-1", FULL, people_count=2, now=AT)
        store.submissions.mark(sid, SubmissionStatus.VERIFIED, AT)
        first = store.submissions.last_verified()
        again = store.submissions.last_verified()
        assert first is not None and again is not None
        assert again.plan is first.plan  # parsed once a store
        assert again.status is SubmissionStatus.VERIFIED
    finally:
        store.close()
    fresh = Store.open(url)
    try:
        read = fresh.submissions.last_verified()
        assert read is not None and read.plan == FULL
    finally:
        fresh.close()
