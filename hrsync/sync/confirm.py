"""After `process`: does DX show the submission? Polling, resends, the audit trail, and
the recovery of a submission an earlier run left unfinished.

The judgement of one `teams.list` reply is `verify.check_convergence` and of the audit
trail `verify.match_audit` (pure); this module polls, waits, resends and logs. A resend
is always the payload of the same submission record: a different payload is never sent
without planning again.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import NoReturn

from hrsync import logs
from hrsync.core.confirmation.dx_users import (
    COUNTS_SETTLE_S,
    Known,
    count_ranges,
    counts_short,
    import_visible,
    unexplained,
)
from hrsync.core.confirmation.verify import Convergence, check_convergence, match_audit
from hrsync.core.gate.compare import index_dx
from hrsync.core.gate.guards import STOPPED_VERIFYING
from hrsync.core.gate.plan import Plan, SeenTeam, payload_size
from hrsync.core.listing import capped as capped_list
from hrsync.core.report.render import describe
from hrsync.core.teams.identity import TeamRow
from hrsync.dx.errors import DxError, DxOutcomeUnknown, ImportInProgress
from hrsync.dx.models import DxTeam
from hrsync.logcap import log_each
from hrsync.outcome import Outcome
from hrsync.store.repo import SubmissionRecord
from hrsync.store.submission_record import SubmissionStatus, SubmittedPlan
from hrsync.sync.approval_step import applied
from hrsync.sync.context import Run, Submitted, end
from hrsync.sync.not_in_dx import counted_by_email, forget_contradicted, learn_people
from hrsync.sync.results import Uncounted

log = logs.get_logger(__name__)

# The first verification window after an ambiguous answer is this share of
# sync.verify_timeout_s, capped: long enough for a normal import to show, short enough
# that a lost request is sent again within the run instead of waiting out the timeout.
RESEND_WINDOW_SHARE = 0.1
RESEND_WINDOW_MAX_S = 60.0
# Audit events carry whole seconds and server clocks drift: look a little further back.
AUDIT_SKEW = timedelta(seconds=120)
# DX may list an import's audit events a little after teams.list shows the import: read
# again for this long before calling a change's event missing.
AUDIT_WAIT_S = 10.0
_NOBODY: Known = {}


def resend_window_s(verify_timeout_s: float) -> float:
    return min(RESEND_WINDOW_MAX_S, verify_timeout_s * RESEND_WINDOW_SHARE)


# ------------------------------------------------------------------- the confirm stage


def verify(run: Run, submitted: Submitted) -> NoReturn:
    """confirm: wait for DX to show the submission (resending after a lost answer),
    check the audit trail, and end the run applied or unverified."""
    store, sid, planned = run.store, submitted.submission_id, submitted.planned
    settings = run.settings.sync
    # DX took the plan when it answered `process`: its approval is applied then, and
    # only then (submit); a lost answer leaves that to a resend DX takes, or to DX
    # showing the plan.
    taken = not submitted.ambiguous

    def took() -> None:
        nonlocal taken
        if not taken:
            taken = True
            applied(run, planned)

    def resend(attempt: int, reason: str) -> None:
        # The same submission record: a restart still finds it and verifies it.
        store.submissions.mark(
            sid, SubmissionStatus.SENT, run.clock(), detail=f"resend {attempt}: {reason}"
        )
        try:
            accepted = run.client.process(planned.payload(), email=settings.notify_email)
        except DxOutcomeUnknown as exc:
            store.submissions.mark(
                sid, SubmissionStatus.OUTCOME_UNKNOWN, run.clock(), detail=str(exc)
            )
            raise
        store.submissions.mark(
            sid, SubmissionStatus.ACCEPTED, run.clock(), import_id=accepted.import_id
        )
        took()

    known = counted_by_email(store)
    confirmation = confirm(
        run, submitted.record, ambiguous=submitted.ambiguous, resend=resend, known=known
    )
    if run.stopping():
        # Left "accepted": the next start finds it unfinished and verifies it. Not a
        # verdict, so deferred (resumed at once), not `unverified`, which pages: a rolling
        # restart during the verification window is routine and mends itself.
        log.warning("sync.stopped_verifying", submission=sid)
        end(
            run,
            Outcome.DEFERRED,
            planned,
            reason="shutting down during verification; the next start verifies",
            resume_at=run.clock(),
            defer_kind=STOPPED_VERIFYING,
        )
    check_audit(run, planned.plan, submitted.submitted_at, sid)
    if confirmation.teams is not None:
        store.submissions.mark(
            sid, SubmissionStatus.VERIFIED, run.clock(), dx_seen=teams_seen(confirmation.teams)
        )
        took()
        counted, settled = _settled_counts(run, planned.assignment.teams, confirmation.teams)
        missing, undecided = learn_people(
            run,
            planned,
            planned.assignment.teams,
            counted,
            submitted.submitted_at,
            known,
            settled=settled,
        )
        end(run, Outcome.APPLIED, planned, uncounted=Uncounted(missing, undecided))
    store.submissions.mark(sid, SubmissionStatus.UNVERIFIED, run.clock())
    if confirmation.last is not None:
        forget_contradicted(run, planned.assignment.teams, confirmation.last, known)
    end(
        run,
        Outcome.UNVERIFIED,
        planned,
        reason=(
            f"DX did not show the submitted hierarchy within "
            f"{settings.verify_timeout_s:g}s (sync.verify_timeout_s)"
            + (f" after {confirmation.resends} resends" if confirmation.resends else "")
            + (f"; {confirmation.note}" if confirmation.note else "")
        ),
    )


# ------------------------------------------------------------- recovery after a crash


def recover_unfinished(run: Run) -> None:
    """Verify a submission an earlier run left unfinished, before planning anew."""
    if not run.request.operational:
        return
    store = run.store
    pending = store.submissions.unfinished()
    if pending is None:
        return
    log.warning(
        "sync.recovering",
        submission=pending.id,
        previous_run=pending.run_id,
        status=pending.status.value,
    )
    # "pending": the earlier run died around the call, so DX may or may not have it;
    # "unverified": an earlier run already waited its full verify timeout. One look
    # decides both; if DX does not show it, planning resubmits knowingly (and DX answers
    # import_in_progress if its import is still running). "sent" and "outcome_unknown"
    # (no answer came back) get the short window a lost answer gets inside a run; only
    # "accepted" is worth the full timeout.
    timeout = run.settings.sync.verify_timeout_s
    if pending.status in (SubmissionStatus.PENDING, SubmissionStatus.UNVERIFIED):
        timeout = 0
    elif pending.status is not SubmissionStatus.ACCEPTED:
        timeout = resend_window_s(timeout)
    converged = wait_until_shown(run, pending.plan, timeout, known=counted_by_email(store))
    if run.stopping():
        # Not a verdict: leave the submission as it is for the next start.
        log.warning("sync.stopped", step="verifying an earlier submission")
        end(
            run,
            Outcome.DEFERRED,
            reason="shutting down while verifying an earlier submission",
            resume_at=run.clock(),
        )
    check_audit(run, plan_of(pending), pending.created_at, pending.id)
    now = run.clock()
    if converged is not None:
        store.submissions.mark(
            pending.id, SubmissionStatus.VERIFIED, now, dx_seen=teams_seen(converged)
        )
        # The earlier run may have died before keeping the ids DX now has.
        store.identities.save(pending.plan.identities, now)
        # An approval that run let past the guards is applied now that DX shows its plan
        # (the run's answer from DX was lost, so it left the approval pending).
        store.approvals.mark_plan_applied(pending.run_id, now)
        log.info("sync.recovered", submission=pending.id, verified=True)
    else:
        store.submissions.mark(
            pending.id, SubmissionStatus.SUPERSEDED, now, detail="not shown by DX"
        )
        log.warning("sync.recovered", submission=pending.id, verified=False)


# ------------------------------------------------------------------ polling, resending


def wait_until_shown(
    run: Run,
    target: SubmittedPlan,
    timeout_s: float,
    *,
    settle_until: float | None = None,
    known: Known = _NOBODY,
    differs: list[Convergence] | None = None,
) -> list[DxTeam] | None:
    """DX's teams once they show `target`; None at the timeout or a stop. 0 looks once.

    Until `settle_until` (a `time.monotonic()` value), a reply showing everything waited
    for is looked at again while the teams `target` watches (people DX is not known to
    count) are untouched and nothing else shows that DX took the import: their counts
    say who DX counts only once it did. Never past the timeout, and never a failure.
    `differs` is given what the last reply showing something else differed in."""
    deadline = time.monotonic() + timeout_s
    delay = run.pacing.poll_s
    # Counts of teams holding people whose DX status is not known: checked by range.
    ranges = count_ranges(target.rows, known, target.awaiting_change)
    attempt = 0
    shown: tuple[list[DxTeam], Convergence] | None = None  # converged, still settling
    while True:
        attempt += 1
        run.renew_lease()
        try:
            current = run.client.teams()
        except DxError as exc:
            log.warning("verify.read_failed", attempt=attempt, detail=str(exc))
        else:
            convergence = check_convergence(
                target.rows,
                target.archived_refs,
                current,
                archived_dx_ids=target.archived_dx_ids,
                awaiting_change=target.awaiting_change,
                watching=target.watching,
                count_ranges=ranges,
            )
            shown = None
            if convergence.converged:
                settling = (
                    settle_until is not None
                    and time.monotonic() < settle_until
                    and convergence.unsettled
                    and not convergence.import_shown
                    and not import_visible(target.counts)
                )
                if not settling:
                    return _converged(convergence, current, target, known, attempt)
                shown = (current, convergence)
                log.info(
                    "verify.watching",
                    attempt=attempt,
                    teams=capped_list(convergence.unsettled, limit=5),
                    detail="DX shows the submission; watching teams holding people DX "
                    "is not known to count, to learn whom it counts",
                )
            else:
                log.info("verify.waiting", attempt=attempt, detail=convergence.summary())
                if differs is not None:
                    differs[:] = [convergence]
        wait = delay
        if shown is not None and settle_until is not None:
            wait = min(delay, max(0.0, settle_until - time.monotonic()))
        if time.monotonic() + wait > deadline or run.stopping() or _pause(run, wait):
            return _converged(shown[1], shown[0], target, known, attempt) if shown else None
        delay = min(delay * 2, run.pacing.poll_max_s)


def _converged(
    convergence: Convergence,
    current: list[DxTeam],
    target: SubmittedPlan,
    known: Known,
    attempt: int,
) -> list[DxTeam]:
    log.info("verify.converged", attempt=attempt, detail=convergence.summary())
    # A shortfall people DX is not known to count explain is theirs (sync.not_in_dx);
    # one they do not explain means DX lacks someone it counted before.
    lacking = unexplained(convergence.contributors_uncounted, target.rows, known)
    log_each(
        log,
        "verify.contributors_unknown",
        lacking,
        lambda u: {
            "team": u.name,
            "reference_id": u.reference_id,
            "sent": u.sent,
            "counted": u.counted,
        },
        "warning",
        see="DX's teams",
    )
    return current


def _settled_counts(
    run: Run, rows: Sequence[TeamRow], shown: Sequence[DxTeam]
) -> tuple[Sequence[DxTeam], bool]:
    """The teams whose counts say whom DX counts, and whether they are settled. When DX
    shows a team counting fewer than were sent, its counts are read again
    `COUNTS_SETTLE_S` later (DX may show a count a moment after the import); if that read
    fails, or a stop is asked for, the first read is kept as not settled."""
    if not counts_short(rows, shown):
        return shown, True
    if _pause(run, COUNTS_SETTLE_S):
        return shown, False
    try:
        settled = run.client.teams()
    except DxError as exc:
        log.warning("verify.read_failed", attempt=0, detail=str(exc))
        return shown, False
    dx = index_dx(settled).by_ref
    short = [
        len(set(row.contributors)) - team.contributors
        for row in rows
        if (team := dx.get(row.reference_id)) is not None
        and team.contributors < len(set(row.contributors))
    ]
    log.info(
        "verify.counts_settled",
        detail=f"{sum(short)} contributors in {len(short)} teams not counted by DX "
        "(e-mails DX does not know)",
    )
    return settled, True


def _pause(run: Run, seconds: float) -> bool:
    """Sleep; True when a stop was asked for meanwhile."""
    if run.stop is not None:
        return run.stop.wait(seconds)
    time.sleep(seconds)
    return False


@dataclass(frozen=True, slots=True)
class Confirmation:
    teams: list[DxTeam] | None  # DX's teams once it showed the submission; None: not shown
    resends: int
    note: str | None = None  # why it stopped short, when it did
    last: Convergence | None = None  # what DX's last reply differed in, when it timed out


def confirm(
    run: Run,
    target: SubmittedPlan,
    *,
    ambiguous: bool,
    resend: Callable[[int, str], None],
    known: Known = _NOBODY,
) -> Confirmation:
    """Wait for DX to show `target`; after an ambiguous answer, send the same payload again.

    `resend(n, reason)` sends the submission's own payload once more and returns normally
    when DX accepted it; it raises what the client raises. An accepted resend or DX's
    `import_in_progress` proves a request arrived: from then on the run waits for the
    rest of `sync.verify_timeout_s` like after any accepted request.

    Teams holding people DX is not known to count (`known`) are watched for the first
    share of the timeout a lost answer gets (`resend_window_s`), never waited for.
    """
    verify_timeout_s = run.settings.sync.verify_timeout_s
    max_resends = run.settings.sync.max_resends
    started = time.monotonic()
    settle_until = started + resend_window_s(verify_timeout_s)
    resends = 0
    differs: list[Convergence] = []  # DX's last reply not showing it, for the reason

    def remaining() -> float:
        return max(0.0, verify_timeout_s - (time.monotonic() - started))

    while True:
        window = min(remaining(), resend_window_s(verify_timeout_s)) if ambiguous else remaining()
        shown = wait_until_shown(
            run, target, window, settle_until=settle_until, known=known, differs=differs
        )
        if shown is not None:
            return Confirmation(shown, resends)
        if run.stopping():
            return Confirmation(None, resends, "stopping")
        if not ambiguous or resends >= max_resends:
            if ambiguous and time.monotonic() - started < verify_timeout_s:
                # No resend left: the earlier requests may still be applied; wait it out.
                ambiguous = False
                continue
            last = differs[0] if differs else None
            return Confirmation(None, resends, last.summary() if last else None, last)
        if not run.renew_lease():
            # Another sync holds the lease and may be submitting: ours is sent no more.
            return Confirmation(None, resends, "the lease was lost: not sent again")
        resends += 1
        reason = "DX's answer was lost and DX shows none of the submission"
        log.warning("sync.resent", attempt=resends, max_resends=max_resends, reason=reason)
        try:
            resend(resends, reason)
        except ImportInProgress:
            log.info("sync.resend_import_running", attempt=resends)
            ambiguous = False
        except DxOutcomeUnknown as exc:
            log.warning("sync.outcome_unknown", detail=str(exc), resend=resends)
        except DxError as exc:
            # Anything else (DX unreachable after retries, a snapshot starting) leaves
            # the earlier requests' fate open: keep looking until the timeout.
            log.warning("sync.resend_failed", attempt=resends, detail=str(exc))
            last_look = wait_until_shown(
                run, target, remaining(), settle_until=settle_until, known=known
            )
            return Confirmation(last_look, resends, str(exc))
        else:
            ambiguous = False


def teams_seen(teams: Sequence[DxTeam]) -> dict[str, SeenTeam]:
    """What DX showed right after a verified submission, per reference_id: the lead's DX
    id and last_changed_at, for telling later hand edits from our own changes."""
    return {
        t.reference_id: SeenTeam(manager_id=t.manager_id, last_changed_at=t.last_changed_at)
        for t in teams
        if t.reference_id is not None
    }


# ---------------------------------------------------------------------- audit trail


def plan_of(record: SubmissionRecord) -> Plan:
    """The part of a recorded submission's plan the audit trail can show."""
    return Plan(
        changes=(*record.plan.renames, *record.plan.lead_changes),
        drift=(),
        payload_digest=record.payload_digest,
        desired_count=len(record.plan.rows),
        payload_bytes=payload_size(record.plan.rows),
    )


def check_audit(run: Run, plan: Plan, submitted_at: datetime, submission_id: int) -> None:
    """Match DX's audit events since the submission to its changes, and log the match."""
    since = submitted_at - AUDIT_SKEW
    # hrsync's own submissions just before this one leave events in the same window.
    earlier = [
        plan_of(sub)
        for sub in run.store.submissions.after(None, since=since - AUDIT_SKEW)
        if sub.id != submission_id
    ]
    give_up_at, delay = time.monotonic() + AUDIT_WAIT_S, run.pacing.poll_s
    while True:
        try:
            events = list(run.client.audit_trail(since=since))
        except DxError as exc:
            log.warning("verify.audit_unavailable", detail=str(exc))
            return
        match = match_audit(plan, events, since, earlier)
        if not match.missing or time.monotonic() + delay > give_up_at or _pause(run, delay):
            break
        delay = min(delay * 2, run.pacing.poll_max_s)
    log_each(
        log,
        "verify.audit_matched",
        match.matched,
        lambda pair: {
            "change": pair[0].kind,
            "team": pair[1].team,
            "action": pair[1].action,
            "event_id": pair[1].id,
        },
        see="DX's audit trail",
    )
    log_each(
        log,
        "verify.audit_missing",
        match.missing,
        lambda c: {"change": c.kind, "summary": describe(c, emails=False)},
        "warning",
    )
    log_each(
        log,
        "verify.audit_unexpected",
        match.unexpected,
        lambda e: {
            "team": e.team,
            "action": e.action,
            "actor": e.actor,
            "event_id": e.id,
        },
        "warning",
        see="DX's audit trail",
    )
    log_each(
        log,
        "verify.audit_earlier",
        match.earlier,
        lambda e: {"team": e.team, "action": e.action, "event_id": e.id},
        see="DX's audit trail",
    )
    log.info(
        "verify.audit",
        matched=len(match.matched),
        missing=len(match.missing),
        unexpected=len(match.unexpected),
        earlier=len(match.earlier),
    )
