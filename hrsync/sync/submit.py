"""The stage that talks to DX's import: `preview` (sync --preview) or `submit` (`process`,
recorded in the store first; what follows DX's answer is in confirm.py).
"""

from __future__ import annotations

import dataclasses
from typing import NoReturn

from hrsync import logs
from hrsync.core.confirmation.dx_users import unawaited, watched
from hrsync.core.confirmation.verify import awaiting_since
from hrsync.core.gate.plan import LeadChange, Rename, awaited_refs
from hrsync.dx.errors import DxDeferred, DxError, DxOutcomeUnknown, DxRejected
from hrsync.outcome import Outcome
from hrsync.store.submission_record import SubmissionStatus, SubmittedPlan
from hrsync.sync.approval_step import applied
from hrsync.sync.context import Run, Submitted, end
from hrsync.sync.error_outcomes import end_deferred_by_dx, end_rejected
from hrsync.sync.lead_substitution import with_substitutes
from hrsync.sync.planning import end_when_in_sync
from hrsync.sync.results import Planned

log = logs.get_logger(__name__)


def preview(run: Run, planned: Planned) -> NoReturn:
    """`sync --preview`: DX's preview call instead of `process`; always ends the run."""
    try:
        accepted = run.client.preview(planned.payload())
    except DxDeferred as exc:
        end_deferred_by_dx(run, exc, planned)
    except DxRejected as exc:
        preview(run, _planned_again(run, planned, exc))
    except DxError as exc:
        end(run, Outcome.FAILED, planned, reason=str(exc))
    url = accepted.preview_url
    log.info("sync.preview", preview_url=url, import_id=accepted.import_id)
    shown = dataclasses.replace(planned, preview_url=url)
    end(run, Outcome.PLANNED, shown, report=planned.report + f"\nPreview: {url}\n")


def submit(run: Run, planned: Planned) -> Submitted:
    """submit: record the submission, then `process`; DX's answer decides what follows."""
    store, now = run.store, run.clock()
    record = _submitted_plan(run, planned)
    # Before the call: evidence of what is about to be sent, with the identities to keep
    # once DX may have it (not before: a rejected or deferred request must not retire
    # teams DX still has).
    sid = store.submissions.record(run.run_id, record, people_count=planned.people_count, now=now)
    email = run.settings.sync.notify_email
    payload = planned.payload()
    log.info("sync.submitting", teams=len(payload), notify_email=email)
    # "sent": from here on DX may have it, so a restart waits for it, not resends.
    store.submissions.mark(sid, SubmissionStatus.SENT, run.clock())
    try:
        accepted = run.client.process(payload, email=email)
    except DxOutcomeUnknown as exc:
        store.submissions.mark(sid, SubmissionStatus.OUTCOME_UNKNOWN, run.clock(), detail=str(exc))
        store.identities.save(planned.assignment.identities, run.clock())
        # DX may or may not have it: the approval is applied once DX shows the plan or
        # takes a resend (confirm.verify), or a later run finds it shown (recovery). Left
        # pending meanwhile, it cannot be applied twice: once DX has the plan, a run
        # computes nothing to send, or another plan with another id.
        log.warning("sync.outcome_unknown", detail=str(exc))
        return Submitted(planned, sid, record, now, ambiguous=True)
    except DxDeferred as exc:
        store.submissions.mark(sid, SubmissionStatus.DEFERRED, run.clock(), detail=str(exc))
        end_deferred_by_dx(run, exc, planned)
    except DxRejected as exc:
        store.submissions.mark(sid, SubmissionStatus.REJECTED, run.clock(), detail=str(exc))
        return submit(run, _planned_again(run, planned, exc))
    except DxError as exc:
        store.submissions.mark(sid, SubmissionStatus.FAILED, run.clock(), detail=str(exc))
        end(run, Outcome.FAILED, planned, reason=str(exc))
    store.submissions.mark(
        sid, SubmissionStatus.ACCEPTED, run.clock(), import_id=accepted.import_id
    )
    store.identities.save(planned.assignment.identities, run.clock())
    applied(run, planned)
    log.info("sync.accepted", import_id=accepted.import_id)
    return Submitted(planned, sid, record, now, ambiguous=False)


def _planned_again(run: Run, planned: Planned, refusal: DxRejected) -> Planned:
    """The plan with stand-ins for leads DX does not know yet, to send instead; or the end
    of the run: rejected when that is not what DX refused, in sync when DX already has
    the stand-ins."""
    again = with_substitutes(run, planned, refusal)
    if again is None:
        end_rejected(run, refusal, planned)
    end_when_in_sync(run, again)
    return again


def _submitted_plan(run: Run, planned: Planned) -> SubmittedPlan:
    plan, rows = planned.plan, planned.assignment.teams
    last = run.store.submissions.last_verified()
    # Submissions since the last verified one may still be applied by DX any moment.
    earlier = [
        (sub.plan.payload_rows(), sub.plan.awaiting_change)
        for sub in run.store.submissions.after(last.id if last else None)
    ]
    # People DX is not known to count hold up nothing: a team whose only change adds or
    # removes such people is watched and its count checked by range, not waited for.
    known = {email: person.counted for email, person in run.store.people.dx_people().items()}
    skipped = unawaited(plan, known)
    refs = [ref for ref in awaited_refs(plan) if ref not in skipped]
    payload_rows = {r.reference_id: r.to_payload() for r in rows}
    awaiting = awaiting_since(refs, payload_rows, planned.dx_teams, earlier)
    watching = awaiting_since(
        [ref for ref in watched(rows, known) if ref not in awaiting],
        payload_rows,
        planned.dx_teams,
    )
    if blind := [ref for ref in refs if ref not in awaiting]:
        # teams.list shows neither a lead's e-mail nor members: without DX's
        # last_changed_at, "applied" for these teams rests on no evidence.
        names = {r.reference_id: r.name for r in rows}
        log.warning(
            "verify.no_evidence",
            teams=[names.get(ref, ref) for ref in blind],
            detail="DX gives no last_changed_at for these teams: their new lead or members "
            "cannot be verified; the run may end applied before DX applied them",
        )
    return SubmittedPlan(
        rows=tuple(rows),
        archived_refs=tuple(a.reference_id for a in plan.archives if a.reference_id),
        archived_dx_ids=tuple(a.dx_id for a in plan.archives),
        awaiting_change=awaiting,
        watching=watching,
        identities=tuple(planned.assignment.identities),
        renames=tuple(c for c in plan.changes if isinstance(c, Rename)),
        lead_changes=tuple(c for c in plan.changes if isinstance(c, LeadChange)),
        counts=plan.counts,
        digest=plan.payload_digest,
    )
