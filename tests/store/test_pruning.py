"""Retention (issue 27, finding 5): history older than `state.keep_days` is pruned, in one
transaction, never what the guards, the daemon or a person still need: the last
accepted run and submission (the shrink guard's baseline), unfinished submissions, the
failure streak, the newest run of each outcome, pending approvals and their plans,
identities, held people. On SQLite and PostgreSQL (the `store` fixture runs both); the
time is passed in."""

from __future__ import annotations

import random
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from sqlalchemy import func, select, text

from hrsync.core.gate.guards import TURNED_AWAY
from hrsync.core.gate.plan_ids import PlanSummary
from hrsync.core.gate.snapshot_ahead import NextSnapshot
from hrsync.core.report.notify import ATTENTION, SUCCESS, Sent
from hrsync.core.teams.identity import KnownIdentity, TeamRow
from hrsync.dx.methods import PROCESS
from hrsync.outcome import Outcome
from hrsync.store import tables
from hrsync.store.repo import HeldRecord, Store
from hrsync.store.submission_record import SubmissionStatus, SubmittedPlan

NOW = datetime(2030, 6, 1, 6, 0, tzinfo=UTC)
DAY = timedelta(days=1)
KEEP = 180 * DAY
BEFORE = NOW - KEEP
ROW = TeamRow("k1", "hrsync-1", "A", "a@example.test", None, None, ("b@example.test",))
SUMMARY = PlanSummary(
    guards=("max_archive",), archives=("A",), people=10, last_accepted_people=12, current_teams=3
)


def run(
    store: Store,
    run_id: str,
    age: timedelta,
    outcome: str | None,
    *,
    dry_run: bool = False,
    people: int | None = None,
    defer_kind: str | None = None,
    plan_id: str | None = None,
) -> None:
    started = NOW - age
    store.runs.start(run_id, "schedule", started, dry_run=dry_run)
    if outcome is not None:
        store.runs.finish(
            run_id,
            started + timedelta(minutes=1),
            outcome=outcome,
            exit_code=0,
            counts={},
            reason=f"reason of {run_id}",
            people_count=people,
            defer_kind=defer_kind,
            plan_id=plan_id,
        )


def submit(store: Store, run_id: str, status: SubmissionStatus, *, method: str = PROCESS) -> int:
    started = store.runs.get(run_id)
    assert started is not None
    plan = SubmittedPlan(rows=(ROW,), digest=f"digest-{run_id}")
    sid = store.submissions.record(
        run_id, plan, people_count=7, now=started.started_at, method=method
    )
    if status is not SubmissionStatus.PENDING:
        store.submissions.mark(sid, status, started.started_at)
    return sid


def refuse(store: Store, plan_id: str, run_id: str, age: timedelta) -> None:
    store.approvals.save_refused_plan(
        plan_id,
        run_id=run_id,
        now=NOW - age,
        payload_digest="p",
        summary=SUMMARY,
        payload_json="[]",
    )


def count(store: Store, table: Any) -> int:
    with store.engine.connect() as c:
        return int(c.execute(select(func.count()).select_from(table)).scalar_one())


def run_ids(store: Store) -> set[str]:
    with store.engine.connect() as c:
        return {r for (r,) in c.execute(select(tables.runs.c.id))}


def test_history_older_than_the_cutoff_goes_and_the_rest_stays(store: Store) -> None:
    for i in range(5):
        run(store, f"old-{i}", 300 * DAY - i * DAY, "in_sync", people=40)
        submit(store, f"old-{i}", SubmissionStatus.SUPERSEDED)
        store.deferrals.add(f"old-{i}", "snapshot window", NOW - 299 * DAY, NOW - 300 * DAY)
    run(store, "recent", 10 * DAY, "applied", people=40)
    submit(store, "recent", SubmissionStatus.VERIFIED)
    store.deferrals.add("recent", "import running", NOW - 9 * DAY, NOW - 10 * DAY)
    store.deferrals.resolve(NOW - 9 * DAY)
    pruned = store.pruning.prune(BEFORE)
    # in_sync's newest run stays (what `status` shows as the last success of its kind);
    # the other old runs, their submissions and deferrals go.
    assert run_ids(store) == {"old-4", "recent"}
    assert count(store, tables.submissions) == 1
    assert count(store, tables.deferrals) == 1
    assert pruned == {
        "runs": 4,
        "submissions": 5,
        "deferrals": 5,
        "approvals": 0,
        "refused_plans": 0,
    }
    # Pruning again finds nothing more.
    assert set(store.pruning.prune(BEFORE).values()) == {0}


def test_the_shrink_guards_baseline_stays_however_old(store: Store) -> None:
    run(store, "accepted-longer-ago", 400 * DAY, "applied", people=50)
    run(store, "accepted-long-ago", 350 * DAY, "applied", people=45)
    older = submit(store, "accepted-long-ago", SubmissionStatus.VERIFIED)
    run(store, "verified-long-ago", 300 * DAY, "unverified", people=55)
    newest = submit(store, "verified-long-ago", SubmissionStatus.VERIFIED)
    for i in range(3):
        run(store, f"deferred-{i}", (200 + i) * DAY, "deferred")
    before = (store.runs.last_accepted_people_count(), store.submissions.last_verified())
    store.pruning.prune(BEFORE)
    assert (store.runs.last_accepted_people_count(), store.submissions.last_verified()) == before
    assert store.runs.last_accepted_people_count() == 7  # the verified submission's people
    assert run_ids(store) == {"accepted-long-ago", "verified-long-ago", "deferred-0"}
    with store.engine.connect() as c:
        assert {i for (i,) in c.execute(select(tables.submissions.c.id))} == {newest}
    assert older != newest


def test_unfinished_submissions_and_those_dx_may_still_apply_stay(store: Store) -> None:
    run(store, "verified", 400 * DAY, "applied", people=3)
    verified = submit(store, "verified", SubmissionStatus.VERIFIED)
    run(store, "after", 390 * DAY, "unverified")
    after = submit(store, "after", SubmissionStatus.SUPERSEDED)
    run(store, "rejected", 385 * DAY, "rejected")
    submit(store, "rejected", SubmissionStatus.REJECTED)  # never reached DX: may go
    run(store, "crashed", 380 * DAY, None)
    pending = submit(store, "crashed", SubmissionStatus.PENDING)
    store.pruning.prune(BEFORE)
    with store.engine.connect() as c:
        kept = {sid for (sid,) in c.execute(select(tables.submissions.c.id))}
    assert kept == {verified, after, pending}
    assert {"verified", "after", "crashed"} <= run_ids(store)


def test_without_a_verified_submission_those_that_never_reached_dx_still_go(
    store: Store,
) -> None:
    run(store, "rejected", 400 * DAY, "rejected")
    submit(store, "rejected", SubmissionStatus.REJECTED)
    run(store, "failed", 390 * DAY, "failed")
    submit(store, "failed", SubmissionStatus.FAILED)
    run(store, "unverified", 380 * DAY, "unverified")
    kept = submit(store, "unverified", SubmissionStatus.SUPERSEDED)  # DX may have it
    assert store.pruning.prune(BEFORE)["submissions"] == 2
    with store.engine.connect() as c:
        assert {i for (i,) in c.execute(select(tables.submissions.c.id))} == {kept}


def test_the_failure_streak_stays_whole(store: Store) -> None:
    run(store, "ok", 400 * DAY, "applied", people=3)
    for i in range(6):
        run(store, f"failed-{i}", (390 - i) * DAY, "failed")
    streak = [r.id for r in store.runs.consecutive_failures()]
    store.pruning.prune(BEFORE)
    assert [r.id for r in store.runs.consecutive_failures()] == streak
    assert len(streak) == 6


def test_pending_approvals_and_their_plans_stay_old_ones_go(store: Store) -> None:
    run(store, "refused-old", 400 * DAY, "refused", plan_id="aaaa0001")
    refuse(store, "aaaa0001", "refused-old", 400 * DAY)
    run(store, "refused-new", 300 * DAY, "refused", plan_id="bbbb0002")  # newest refusal
    refuse(store, "bbbb0002", "refused-new", 300 * DAY)
    refuse(store, "cccc0003", "refused-new", 250 * DAY)  # approved, pending
    refuse(store, "dddd0004", "refused-new", 260 * DAY)  # approved long ago, expired
    refuse(store, "eeee0005", "refused-new", 10 * DAY)  # refused recently
    pending = store.approvals.add(
        "cccc0003", approved_by="ana", note=None, now=NOW - 200 * DAY, expires_at=NOW + DAY
    )
    store.approvals.add(
        "dddd0004", approved_by="ana", note=None, now=NOW - 259 * DAY, expires_at=NOW - 250 * DAY
    )
    applied = store.approvals.add(
        "bbbb0002", approved_by="bo", note=None, now=NOW - 5 * DAY, expires_at=NOW + DAY
    )
    assert store.approvals.mark_applied(applied.id, "refused-new", NOW - 4 * DAY)
    store.pruning.prune(BEFORE)
    assert [a.id for a in store.approvals.pending(NOW)] == [pending.id]
    assert {a.plan_id for a in store.approvals.recent()} == {"cccc0003", "bbbb0002"}
    with store.engine.connect() as c:
        plans = {p for (p,) in c.execute(select(tables.refused_plans.c.plan_id))}
    # Kept: a pending approval's, a recent approval's and the newest refused run's plan,
    # and one refused within the window; gone: the rest.
    assert plans == {"bbbb0002", "cccc0003", "eeee0005"}


def test_identities_people_and_single_rows_are_never_pruned(store: Store) -> None:
    identity = KnownIdentity(
        key="k1", reference_id="hrsync-1", name="A", parent_key=None, lead_email=None, members=()
    )
    store.identities.save([identity], NOW - 1000 * DAY)
    store.people.replace_held(
        [HeldRecord("E9", "people.csv line 9", "blank e-mail")], NOW - 900 * DAY
    )
    store.people.record_sent_people({"a@example.test": "E1"}, NOW - 900 * DAY)
    run(store, "told", 800 * DAY, "refused")
    run(store, "later", 700 * DAY, "refused")
    store.notifications.save_state(Sent("refused", "d", NOW - 800 * DAY, "told"), "stand_in")
    store.snapshot_outlook.save_next_snapshot(
        NextSnapshot("s1", NOW.date()), NOW - 800 * DAY, "told"
    )
    store.heartbeat.beat(NOW - 800 * DAY, state="idle", detail={})
    store.pruning.prune(BEFORE)
    assert [i.reference_id for i in store.identities.load()] == ["hrsync-1"]
    assert list(store.people.held_people()) == ["E9"]
    assert list(store.people.dx_people()) == ["a@example.test"]
    # The run the webhook last told of stand-ins stays: it says what was told.
    assert run_ids(store) == {"told", "later"}
    assert store.heartbeat.read() is not None


def test_a_pending_deferrals_run_stays(store: Store) -> None:
    run(store, "window", 400 * DAY, "deferred", defer_kind="snapshot_window")
    run(store, "newer", 390 * DAY, "deferred", defer_kind="import_in_progress")
    store.deferrals.add("window", "snapshot window", NOW + DAY, NOW - 400 * DAY)
    end = store.snapshot_outlook.window_deferral_end()
    store.pruning.prune(BEFORE)
    assert store.snapshot_outlook.window_deferral_end() == end is not None
    assert run_ids(store) == {"window", "newer"}


def test_pruning_is_one_transaction(store: Store) -> None:
    # The last table pruned refuses: nothing the prune deleted before stays deleted.
    run(store, "old", 400 * DAY, "refused", plan_id="aaaa0001")
    run(store, "old-2", 390 * DAY, "refused", plan_id="bbbb0002")
    refuse(store, "cccc0003", "old", 400 * DAY)
    store.deferrals.add("old", "snapshot window", NOW - 399 * DAY, NOW - 400 * DAY)
    store.deferrals.resolve(NOW - 399 * DAY)
    postgres = store.engine.dialect.name == "postgresql"
    with store.engine.begin() as c:
        if postgres:
            c.execute(
                text(
                    "CREATE FUNCTION refuse() RETURNS trigger AS $$ BEGIN "
                    "RAISE EXCEPTION 'refused by the test'; END $$ LANGUAGE plpgsql"
                )
            )
            c.execute(
                text(
                    "CREATE TRIGGER no_prune BEFORE DELETE ON refused_plans "
                    "FOR EACH ROW EXECUTE FUNCTION refuse()"
                )
            )
        else:
            c.execute(
                text(
                    "CREATE TRIGGER no_prune BEFORE DELETE ON refused_plans "
                    "BEGIN SELECT RAISE(ABORT, 'refused by the test'); END"
                )
            )
    counts = {t.name: count(store, t) for t in (tables.runs, tables.deferrals)}
    with pytest.raises(Exception, match="refused by the test"):
        store.pruning.prune(BEFORE)
    assert {t.name: count(store, t) for t in (tables.runs, tables.deferrals)} == counts
    assert counts == {"runs": 2, "deferrals": 1}


# ---------------------------------------------- whatever the history: the same answers


def answers(store: Store) -> dict[str, Any]:
    """What the guards, the daemon, `status`, readiness and the webhook read back."""
    last = store.submissions.last_verified()
    unfinished = store.submissions.unfinished()
    pending_deferral = store.deferrals.pending()
    told = store.notifications.state("stand_in")
    outcomes = [o.value for o in Outcome]
    sets = [(o,) for o in outcomes] + [SUCCESS, (*ATTENTION, *SUCCESS), tuple(outcomes)]
    newest = {}
    for chosen in sets:
        for skip in (False, True):
            found = store.runs.newest(chosen, skip_turned_away=skip)
            newest[(chosen, skip)] = found.id if found else None
    pending = store.approvals.pending(NOW)
    return {
        "last_accepted_people": store.runs.last_accepted_people_count(),
        "streak": [r.id for r in store.runs.consecutive_failures()],
        "newest": newest,
        "last_verified": last.id if last else None,
        "unfinished": unfinished.id if unfinished else None,
        "after_verified": [s.id for s in store.submissions.after(last.id if last else None)],
        "pending_approvals": [a.id for a in pending],
        "their_plans": sorted(store.approvals.refused_plans({a.plan_id for a in pending})),
        "pending_deferral": pending_deferral.id if pending_deferral else None,
        "window_end": store.snapshot_outlook.window_deferral_end(),
        "outlook": store.snapshot_outlook.last_run_outlook(),
        "told": store.runs.get(told.run_id) if told and told.run_id else None,
        "newest_operational": [r.id for r in store.runs.recent(1, operational_only=True)][:1],
        "identities": store.identities.load(),
        "held": store.people.held_people(),
    }


def random_history(store: Store, seed: int) -> None:
    rng = random.Random(seed)
    outcomes = [o.value for o in Outcome if o is not Outcome.PLANNED]
    statuses = list(SubmissionStatus)
    ids: list[str] = []
    for i in range(60):
        run_id = f"r{i:03d}"
        age = timedelta(days=rng.uniform(0, 400))
        outcome = rng.choice([*outcomes, "failed", "failed", None])
        plan_id = f"{i:08x}" if outcome == "refused" else None
        run(
            store,
            run_id,
            age,
            outcome,
            dry_run=rng.random() < 0.15,
            people=rng.choice([None, rng.randint(1, 99)]),
            defer_kind=rng.choice([None, TURNED_AWAY, "snapshot_window"])
            if outcome == "deferred"
            else None,
            plan_id=plan_id,
        )
        ids.append(run_id)
        if rng.random() < 0.5:
            submit(store, run_id, rng.choice(statuses), method=rng.choice([PROCESS, PROCESS, "p"]))
        if plan_id is not None:
            refuse(store, plan_id, run_id, age)
            if rng.random() < 0.5:
                approved = NOW - timedelta(days=rng.uniform(0, 400))
                store.approvals.add(
                    plan_id,
                    approved_by="ana",
                    note=None,
                    now=approved,
                    expires_at=approved + timedelta(days=rng.choice([3, 300, 500])),
                )
        if rng.random() < 0.2:
            resume = NOW - age + timedelta(hours=rng.uniform(-5, 5) * 24 * 30)
            store.deferrals.add(run_id, "why", resume, NOW - age)
    if rng.random() < 0.5:
        store.deferrals.resolve(NOW - DAY)
    store.notifications.save_state(Sent("ok", "d", NOW, rng.choice(ids)), "stand_in")
    store.people.replace_held([HeldRecord("E1", "line 2", "blank e-mail")], NOW - 500 * DAY)


@pytest.mark.parametrize("seed", range(4))
def test_pruning_changes_no_answer_anything_reads_back(store: Store, seed: int) -> None:
    random_history(store, seed)
    before = answers(store)
    runs_before = count(store, tables.runs)
    pruned = store.pruning.prune(BEFORE)
    assert answers(store) == before
    assert pruned["runs"] > 0 and count(store, tables.runs) == runs_before - pruned["runs"]
