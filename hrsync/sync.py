"""One run, start to finish: the only orchestration (imperative shell).

read export -> people -> desired teams -> reference_ids -> plan -> gate ->
process -> verify. Each step's thinking lives in a pure module; this one only
moves data between them, DX and the store, and decides the run's outcome.

Crash safety: identities and the submission are written to the store before
the `process` call, each in its own committed transaction. A run that finds an
unfinished submission verifies it before planning anything new, so a restart
never resubmits blindly.
"""

from __future__ import annotations

import contextlib
import dataclasses
import os
import socket
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any, NoReturn

from hrsync import logs
from hrsync.config import Settings
from hrsync.confirm import (
    Poller,
    Target,
    confirm,
    resend_window_s,
    row_from_dict,
    teams_seen,
)
from hrsync.core.guards import (
    IMPORT_RUNNING_REASON,
    Defer,
    Refuse,
    check_snapshots,
    deferral_for_api_error,
    gate,
)
from hrsync.core.identity import Assignment, KnownIdentity, TeamRow, assign
from hrsync.core.mapping import MappingError, build_teams
from hrsync.core.people import Directory, read_people, template_columns
from hrsync.core.plan import (
    COUNT_KEYS,
    LeadChange,
    Plan,
    Rename,
    SeenTeam,
    awaited_refs,
    make_plan,
)
from hrsync.core.plan import payload_size as plan_payload_size
from hrsync.core.verify import awaiting_since, match_audit, parse_awaiting
from hrsync.dx.client import DxClient
from hrsync.dx.errors import (
    DxAuthError,
    DxDeferred,
    DxError,
    DxOutcomeUnknown,
    DxRejected,
    ImportInProgress,
)
from hrsync.dx.models import DxTeam
from hrsync.outcome import Outcome
from hrsync.render import (
    approval_command,
    describe,
    event_fields,
    rejection_reason,
    render_deferral,
    render_plan,
    render_refusal,
)
from hrsync.sources.base import SourceError, SourceUnavailable
from hrsync.sources.open import open_export
from hrsync.store.repo import Store, SubmissionRecord

Clock = Callable[[], datetime]
Sleep = Callable[[float], None]
PROCESS = "orgfiles.teamHierarchy.process"
PREVIEW = "orgfiles.teamHierarchy.preview"
# A crashed holder on another host blocks runs for at most this long; a live run renews
# the lease at every verification poll and step, so the TTL only has to outlast one step.
LEASE_TTL_S = 600.0
# Audit events carry whole seconds and server clocks drift: look a little further back.
AUDIT_SKEW = timedelta(seconds=120)

log = logs.get_logger("hrsync.sync")


def utcnow() -> datetime:
    return datetime.now(UTC)


@dataclass(frozen=True, slots=True)
class SyncRequest:
    trigger: str = "manual"  # manual | schedule | resume | startup
    dry_run: bool = False
    preview: bool = False
    allow_archive: int = 0
    allow_shrink: bool = False


@dataclass(frozen=True, slots=True)
class SyncResult:
    run_id: str
    outcome: Outcome
    counts: Mapping[str, int] = field(default_factory=dict)
    reason: str | None = None
    resume_at: datetime | None = None
    plan: Plan | None = None
    report: str = ""  # human-readable text for `hrsync plan` / `sync --dry-run`
    preview_url: str | None = None
    people_count: int | None = None

    @property
    def exit_code(self) -> int:
        return self.outcome.exit_code


@dataclass
class Engine:
    """Everything one run needs from the outside world, injectable for tests."""

    settings: Settings
    store: Store
    client_factory: Callable[[], DxClient] | None = None
    clock: Clock = utcnow
    sleep: Sleep = time.sleep
    verify_poll_s: float = 0.25
    verify_poll_max_s: float = 30.0
    environ: Mapping[str, str] | None = None
    # Set by the daemon on SIGTERM: the run stops at the end of its current step.
    stop: threading.Event | None = None

    def client(self) -> DxClient:
        if self.client_factory is not None:
            return self.client_factory()
        s = self.settings
        assert s.token is not None, "the DX token is checked when the config loads"
        return DxClient(
            s.dx.base_url,
            s.token,
            timeout_s=s.dx.timeout_s,
            max_requests_per_minute=s.dx.max_requests_per_minute,
        )


class _Finish(Exception):
    """Ends a run early with a decided outcome."""

    def __init__(self, result: SyncResult) -> None:
        self.result = result


def run_sync(
    settings: Settings,
    request: SyncRequest,
    *,
    store: Store,
    clock: Clock = utcnow,
    engine: Engine | None = None,
    stop: threading.Event | None = None,
) -> SyncResult:
    """One run: take the lease, record it, do it, record and log how it ended."""
    eng = engine or Engine(settings=settings, store=store, clock=clock, stop=stop)
    run_id = logs.new_run_id()
    started = time.monotonic()
    # A dry run or a preview changes nothing later runs rely on: it is recorded as
    # such, so it neither ends a failure streak nor grows an import backoff.
    operational = not (request.dry_run or request.preview)
    with logs.run_context(run_id, trigger=request.trigger):
        now = eng.clock()
        # A dry run writes nothing to DX: `hrsync plan` works while the daemon syncs.
        lease = (
            store.acquire_lease(_holder(run_id), now, LEASE_TTL_S) if not request.dry_run else None
        )
        if lease is not None and not lease.acquired:
            store.start_run(run_id, request.trigger, now, dry_run=not operational)
            result = SyncResult(
                run_id,
                Outcome.DEFERRED,
                counts=dict.fromkeys(COUNT_KEYS, 0),
                reason=(
                    f"another sync is running: {lease.holder} (pid {lease.pid} on "
                    f"{lease.host}, since {lease.acquired_at.isoformat()})"
                ),
                resume_at=now + timedelta(minutes=5),
            )
            _record(eng, request, result)
            _log_finished(result, request, started)
            return result
        try:
            store.start_run(run_id, request.trigger, now, dry_run=not operational)
            log.info("sync.started", dry_run=request.dry_run, preview=request.preview)
            try:
                result = _Run(eng, request, run_id).execute()
            except _Finish as finish:
                result = finish.result
            except Exception as exc:
                log.error("sync.crashed", error=str(exc), exc_info=True)
                result = SyncResult(run_id, Outcome.FAILED, reason=f"{type(exc).__name__}: {exc}")
            result = dataclasses.replace(
                result, counts={**dict.fromkeys(COUNT_KEYS, 0), **result.counts}
            )
            _record(eng, request, result)
        finally:
            if lease is not None:
                store.release_lease(_holder(run_id))
        _log_finished(result, request, started)
        return result


def _holder(run_id: str) -> str:
    return f"{socket.gethostname()}:{os.getpid()}:{run_id}"


def _record(eng: Engine, request: SyncRequest, result: SyncResult) -> None:
    now = eng.clock()
    eng.store.finish_run(
        result.run_id,
        now,
        outcome=result.outcome.value,
        exit_code=result.exit_code,
        counts=result.counts,
        reason=result.reason,
        plan_digest=result.plan.payload_digest if result.plan else None,
        people_count=result.people_count,
    )
    if request.dry_run or request.preview:
        return  # the daemon's deferral is not a dry run's business
    if result.outcome is Outcome.DEFERRED and result.resume_at:
        eng.store.add_deferral(result.run_id, result.reason or "deferred", result.resume_at, now)
    else:
        eng.store.resolve_deferrals(now)


def _log_finished(result: SyncResult, request: SyncRequest, started: float) -> None:
    fields: dict[str, Any] = {
        "outcome": result.outcome.value,
        "exit_code": result.exit_code,
        "counts": {k: result.counts.get(k, 0) for k in COUNT_KEYS},
        "duration_s": round(time.monotonic() - started, 3),
        "dry_run": request.dry_run,
    }
    if result.outcome is Outcome.DEFERRED:
        fields["resume_at"] = result.resume_at.isoformat() if result.resume_at else None
        fields["reason"] = result.reason
    elif result.reason is not None:
        fields["reason"] = result.reason
    if result.preview_url:
        fields["preview_url"] = result.preview_url
    level = "info" if result.exit_code == 0 else "warning"
    if result.outcome is Outcome.FAILED:
        level = "error"
    getattr(log, level)("sync.finished", **fields)


class _Run:
    """The steps of one run, sharing their inputs; each step may end it with _Finish."""

    def __init__(self, eng: Engine, request: SyncRequest, run_id: str) -> None:
        self.eng = eng
        self.s = eng.settings
        self.request = request
        self.run_id = run_id
        self.people_count: int | None = None

    def execute(self) -> SyncResult:
        with contextlib.closing(self.eng.client()) as client:
            self.client = client
            if not self.request.dry_run and not self.request.preview:
                self.recover_unfinished()
            directory = self.read_export()
            assignment, dx_teams, snapshots, plan = self.plan(directory)
            report = render_plan(plan)
            if not plan.has_changes:
                # Names and parents match DX; leads and members match what DX last
                # verifiably took: nothing to send.
                log.info("sync.in_sync", teams=plan.desired_count)
                if not (self.request.dry_run or self.request.preview):
                    self.eng.store.save_identities(assignment.identities, self.eng.clock())
                return self.result(Outcome.IN_SYNC, plan, report)
            self.renew_lease()
            rows = list(assignment.teams)
            payload = [r.to_payload() for r in rows]
            decision = gate(
                plan,
                snapshots=snapshots,
                now=self.eng.clock(),
                settings=self.s.sync,
                people_count=self.people_count or 0,
                last_accepted_people=self.eng.store.last_accepted_people_count(),
                current_team_count=len(dx_teams),
                payload_bytes=plan_payload_size(rows),
                allow_archive=self.request.allow_archive,
                allow_shrink=self.request.allow_shrink,
            )
            if isinstance(decision, Defer):
                text = render_deferral(decision.deferral)
                log.warning("sync.deferred", kind=decision.deferral.kind, detail=text)
                return self.result(
                    Outcome.DEFERRED,
                    plan,
                    report + "\n" + text,
                    reason=decision.deferral.reason,
                    resume_at=decision.deferral.resume_at,
                )
            if isinstance(decision, Refuse):
                refusal = decision.refusal
                text = render_refusal(refusal, self.s.config_path)
                for archive in refusal.archives:
                    log.warning(
                        "sync.refused.would_archive",
                        team=archive.name,
                        reference_id=archive.reference_id,
                    )
                log.warning(
                    "sync.refused",
                    guards=list(refusal.guards),
                    override=approval_command(refusal, self.s.config_path),
                    detail=text,
                )
                return self.result(
                    Outcome.REFUSED, plan, report + "\n" + text, reason=refusal.reason
                )
            if self.request.dry_run:
                return self.result(Outcome.PLANNED, plan, report)
            self.stop_point("before submitting", plan, report)
            if not self.renew_lease():
                raise _Finish(
                    self.result(
                        Outcome.FAILED,
                        plan,
                        report,
                        reason="lost the lease to another sync before submitting; nothing sent",
                    )
                )
            if self.request.preview:
                return self.preview(plan, payload, report)
            return self.submit(assignment, plan, payload, report, snapshots, dx_teams)

    # ------------------------------------------------------------ steps

    def renew_lease(self) -> bool:
        if self.request.dry_run:
            return True  # a dry run holds no lease: there is nothing to renew or lose
        renewed = self.eng.store.renew_lease(_holder(self.run_id), self.eng.clock(), LEASE_TTL_S)
        if not renewed:
            log.error("sync.lease_lost", detail="the lease expired and another sync took it")
        return renewed

    def stopping(self) -> bool:
        return self.eng.stop is not None and self.eng.stop.is_set()

    def stop_point(self, step: str, plan: Plan, report: str) -> None:
        """End the run here, having sent nothing, when a shutdown was asked for."""
        if self.stopping():
            log.warning("sync.stopped", step=step)
            raise _Finish(
                self.result(
                    Outcome.DEFERRED,
                    plan,
                    report,
                    reason=f"shutting down {step}; nothing was sent",
                    resume_at=self.eng.clock(),
                )
            )

    def result(
        self, outcome: Outcome, plan: Plan | None, report: str = "", **kw: Any
    ) -> SyncResult:
        return SyncResult(
            self.run_id,
            outcome,
            counts=plan.counts if plan else {},
            plan=plan,
            report=report,
            people_count=self.people_count,
            **kw,
        )

    def read_export(self) -> Directory:
        src = self.s.source
        try:
            export = open_export(src, environ=self.eng.environ)
            directory = read_people(
                export.name,
                export.columns,
                export.rows(),
                src.fields,
                self.s.filter,
                also_used=template_columns(self.s.mapping.team_name),
            )
        except SourceUnavailable as exc:
            # Not the export's fault: a failed run, retried on the next schedule.
            log.error("export.unavailable", detail=str(exc))
            raise _Finish(SyncResult(self.run_id, Outcome.FAILED, reason=str(exc))) from None
        except SourceError as exc:
            self.refuse_export([str(exc)])
        for warning in directory.warnings:
            log.warning("export.warning", detail=str(warning))
        if not directory.ok:
            self.refuse_export([str(p) for p in directory.problems])
        self.people_count = len(directory.people)
        log.info(
            "export.read",
            source=export.name,
            people=len(directory.people),
            excluded=directory.excluded,
        )
        return directory

    def refuse_export(self, problems: Sequence[str]) -> NoReturn:
        for problem in problems:
            log.error("export.problem", detail=problem)
        first = problems[0] if problems else "unknown problem"
        more = f" (and {len(problems) - 1} more)" if len(problems) > 1 else ""
        reason = f"export invalid: {first}{more}"
        report = "The export has problems; nothing was sent:\n" + "\n".join(
            f"  - {p}" for p in problems
        )
        raise _Finish(SyncResult(self.run_id, Outcome.REFUSED, reason=reason, report=report))

    def plan(self, directory: Directory) -> tuple[Assignment, list[DxTeam], Any, Plan]:
        try:
            team_map = build_teams(directory.people, self.s.mapping, self.s.source.fields)
        except MappingError as exc:
            self.refuse_export(exc.problems)
        if team_map.problems:
            self.refuse_export([str(p) for p in team_map.problems])
        for note in team_map.notes:
            log.info("mapping.note", detail=note)
        dx_teams = self.dx_call(self.client.teams)
        snapshots = self.dx_call(self.client.snapshots)
        known = self.eng.store.load_identities()
        # New ids are derived from the HR keys inside `assign`: the one place they are made.
        assignment = assign(team_map.teams, known, dx_teams)
        for decision in assignment.decisions:
            if decision.how != "known":
                log.info(
                    "identity.decision",
                    how=decision.how,
                    key=decision.key,
                    reference_id=decision.reference_id,
                    detail=decision.detail,
                )
        last = self.eng.store.last_verified_submission()
        last_rows = _rows_from_submission(last) if last else {}
        plan = make_plan(
            assignment.teams,
            dx_teams,
            last_rows,
            unreferenced_dx=assignment.unreferenced_dx,
            last_seen=_seen_of(last),
        )
        for change in plan.changes:
            if change.kind != "unchanged":
                log.info("plan.change", summary=describe(change), **event_fields(change))
        for drift in plan.drift:
            log.warning(
                "plan.drift",
                team=drift.name,
                reference_id=drift.reference_id,
                details=list(drift.details),
            )
        log.info("plan.ready", **plan.counts)
        return assignment, dx_teams, snapshots, plan

    def dx_call(self, fn: Callable[[], Any]) -> Any:
        try:
            return fn()
        except DxAuthError as exc:
            raise _Finish(SyncResult(self.run_id, Outcome.REJECTED, reason=str(exc))) from None
        except DxRejected as exc:
            raise _Finish(SyncResult(self.run_id, Outcome.REJECTED, reason=str(exc))) from None
        except DxError as exc:
            raise _Finish(SyncResult(self.run_id, Outcome.FAILED, reason=str(exc))) from None

    def preview(self, plan: Plan, payload: list[dict[str, Any]], report: str) -> SyncResult:
        try:
            accepted = self.client.preview(payload)
        except DxDeferred as exc:
            return self.deferred_by_api(exc, plan, report)
        except DxRejected as exc:
            return self.rejected(exc, plan, report, payload)
        except DxError as exc:
            return self.result(Outcome.FAILED, plan, report, reason=str(exc))
        url = accepted.preview_url
        log.info("sync.preview", preview_url=url, import_id=accepted.import_id)
        return self.result(Outcome.PLANNED, plan, report + f"\nPreview: {url}\n", preview_url=url)

    def submit(
        self,
        assignment: Assignment,
        plan: Plan,
        payload: list[dict[str, Any]],
        report: str,
        snapshots: Any,
        dx_teams: Sequence[DxTeam],
    ) -> SyncResult:
        store, now = self.eng.store, self.eng.clock()
        last = store.last_verified_submission()
        earlier = store.submissions_after(last.id if last else None)
        record = _submission_plan(assignment, plan, dx_teams, earlier)
        # Before the call: evidence of what is about to be sent, with the identities
        # to keep once DX may have it (not before: a rejected or deferred request must
        # not retire teams DX still has).
        sid = store.record_submission(
            self.run_id,
            PROCESS,
            payload,
            payload_digest=plan.payload_digest,
            plan=record,
            people_count=self.people_count or 0,
            now=now,
        )
        email = self.s.sync.notify_email
        log.info("sync.submitting", teams=len(payload), notify_email=email)
        # "sent": from here on DX may have it, so a restart waits for it, not resends.
        store.mark_submission(sid, "sent", self.eng.clock())
        ambiguous = False
        try:
            accepted = self.client.process(payload, email=email)
        except DxOutcomeUnknown as exc:
            ambiguous = True
            store.mark_submission(sid, "outcome_unknown", self.eng.clock(), detail=str(exc))
            store.save_identities(assignment.identities, self.eng.clock())
            log.warning("sync.outcome_unknown", detail=str(exc))
        except DxDeferred as exc:
            store.mark_submission(sid, "deferred", self.eng.clock(), detail=str(exc))
            return self.deferred_by_api(exc, plan, report, snapshots=snapshots)
        except DxRejected as exc:
            store.mark_submission(sid, "rejected", self.eng.clock(), detail=str(exc))
            return self.rejected(exc, plan, report, payload)
        except DxError as exc:
            store.mark_submission(sid, "failed", self.eng.clock(), detail=str(exc))
            return self.result(Outcome.FAILED, plan, report, reason=str(exc))
        else:
            store.mark_submission(sid, "accepted", self.eng.clock(), import_id=accepted.import_id)
            store.save_identities(assignment.identities, self.eng.clock())
            log.info("sync.accepted", import_id=accepted.import_id)
        return self.verify(sid, Target.of_record(record), plan, now, report, payload, ambiguous)

    def verify(
        self,
        sid: int,
        target: Target,
        plan: Plan,
        submitted_at: datetime,
        report: str,
        payload: list[dict[str, Any]],
        ambiguous: bool,
    ) -> SyncResult:
        store = self.eng.store

        def resend(attempt: int, reason: str) -> None:
            # The same submission record: a restart still finds it and verifies it.
            store.mark_submission(
                sid, "sent", self.eng.clock(), detail=f"resend {attempt}: {reason}"
            )
            try:
                accepted = self.client.process(payload, email=self.s.sync.notify_email)
            except DxOutcomeUnknown as exc:
                store.mark_submission(sid, "outcome_unknown", self.eng.clock(), detail=str(exc))
                raise
            store.mark_submission(sid, "accepted", self.eng.clock(), import_id=accepted.import_id)

        confirmation = confirm(
            self.poller(),
            target,
            ambiguous=ambiguous,
            verify_timeout_s=self.s.sync.verify_timeout_s,
            max_resends=self.s.sync.max_resends,
            resend=resend,
        )
        converged = confirmation.teams
        if self.stopping():
            # Left "accepted": the next start finds it unfinished and verifies it.
            log.warning("sync.stopped_verifying", submission=sid)
            return self.result(
                Outcome.UNVERIFIED,
                plan,
                report,
                reason="shutting down during verification; the next start verifies",
            )
        self.check_audit(plan, submitted_at, sid)
        if converged is not None:
            store.mark_submission(sid, "verified", self.eng.clock(), dx_seen=teams_seen(converged))
            return self.result(Outcome.APPLIED, plan, report)
        store.mark_submission(sid, "unverified", self.eng.clock())
        return self.result(
            Outcome.UNVERIFIED,
            plan,
            report,
            reason=(
                f"DX did not show the submitted hierarchy within "
                f"{self.s.sync.verify_timeout_s:g}s (sync.verify_timeout_s)"
                + (f" after {confirmation.resends} resends" if confirmation.resends else "")
                + (f"; {confirmation.note}" if confirmation.note else "")
            ),
        )

    def poller(self) -> Poller:
        def pause(seconds: float) -> bool:
            if self.eng.stop is not None:
                return self.eng.stop.wait(seconds)
            self.eng.sleep(seconds)
            return False

        return Poller(
            self.client,
            renew=self.renew_lease,
            stopping=self.stopping,
            pause=pause,
            poll_s=self.eng.verify_poll_s,
            poll_max_s=self.eng.verify_poll_max_s,
        )

    def check_audit(self, plan: Plan, submitted_at: datetime, sid: int) -> None:
        since = submitted_at - AUDIT_SKEW
        try:
            events = list(self.client.audit_trail(since=since))
        except DxError as exc:
            log.warning("verify.audit_unavailable", detail=str(exc))
            return
        # hrsync's own submissions just before this one leave events in the same window.
        earlier = [
            _plan_from_record(sub)
            for sub in self.eng.store.submissions_after(None, since=since - AUDIT_SKEW)
            if sub.id != sid
        ]
        match = match_audit(plan, events, since, earlier)
        for change, event in match.matched:
            log.info(
                "verify.audit_matched",
                change=change.kind,
                team=event.team,
                action=event.action,
                event_id=event.id,
            )
        for change in match.missing:
            log.warning("verify.audit_missing", change=change.kind, summary=describe(change))
        for event in match.unexpected:
            log.warning(
                "verify.audit_unexpected",
                team=event.team,
                action=event.action,
                actor=event.actor,
                event_id=event.id,
            )
        for event in match.earlier:
            log.info(
                "verify.audit_earlier", team=event.team, action=event.action, event_id=event.id
            )
        log.info(
            "verify.audit",
            matched=len(match.matched),
            missing=len(match.missing),
            unexpected=len(match.unexpected),
            earlier=len(match.earlier),
        )

    def deferred_by_api(
        self, exc: DxDeferred, plan: Plan, report: str, *, snapshots: Any = None
    ) -> SyncResult:
        now = self.eng.clock()
        if isinstance(exc, ImportInProgress):
            attempt = _import_attempts(self.eng.store) + 1
            deferral = deferral_for_api_error("import_in_progress", now, attempt, None)
        else:
            ours = (
                check_snapshots(snapshots, now, self.s.sync.retro_window_days)
                if snapshots is not None
                else None
            )
            deferral = deferral_for_api_error("snapshot_in_progress", now, 1, ours)
        log.warning("sync.deferred", kind=deferral.kind, detail=deferral.reason)
        return self.result(
            Outcome.DEFERRED, plan, report, reason=deferral.reason, resume_at=deferral.resume_at
        )

    def rejected(
        self,
        exc: DxRejected,
        plan: Plan,
        report: str,
        payload: Sequence[Mapping[str, Any]] = (),
    ) -> SyncResult:
        # Verbatim first: DX does not document error_details, so nothing is dropped.
        log.error(
            "sync.rejected",
            error=exc.error,
            message=exc.message,
            error_details=exc.error_details,
            status=exc.status,
        )
        headline = rejection_reason(exc, self.s.sync.notify_email)
        lines = [headline]
        for row in _named_rows(exc.error_details, payload):
            log.error("sync.rejected.row", **row)
            lines.append(
                f"  - row {row.get('index')}: team {row.get('team')!r} "
                f"(lead {row.get('lead')}): {row.get('field') or ''} {row.get('problem') or ''}"
            )
        text = "\n".join(lines)
        return self.result(Outcome.REJECTED, plan, report + "\n" + text, reason=headline)

    # ---------------------------------------------------- crash recovery

    def recover_unfinished(self) -> None:
        """Verify a submission an earlier run left unfinished, before planning anew."""
        store = self.eng.store
        pending = store.unfinished_submission()
        if pending is None:
            return
        log.warning(
            "sync.recovering",
            submission=pending.id,
            previous_run=pending.run_id,
            status=pending.status,
        )
        target = Target.of_record(pending.plan)
        plan = _plan_from_record(pending)
        # "pending": the earlier run died around the call, so DX may or may not have it;
        # "unverified": an earlier run already waited its full verify timeout. One look
        # decides both; if DX does not show it, planning below resubmits knowingly (and
        # DX answers import_in_progress if its import is still running). "sent" and
        # "outcome_unknown" (no answer came back) get the short window a lost answer
        # gets inside a run; only "accepted" is worth the full timeout.
        timeout = self.s.sync.verify_timeout_s
        if pending.status in ("pending", "unverified"):
            timeout = 0
        elif pending.status != "accepted":
            timeout = resend_window_s(timeout)
        converged = self.poller().wait(target, timeout)
        if self.stopping():
            # Not a verdict: leave the submission as it is for the next start.
            log.warning("sync.stopped", step="verifying an earlier submission")
            raise _Finish(
                self.result(
                    Outcome.DEFERRED,
                    None,
                    reason="shutting down while verifying an earlier submission",
                    resume_at=self.eng.clock(),
                )
            )
        since = pending.created_at
        self.check_audit(plan, since, pending.id)
        now = self.eng.clock()
        if converged is not None:
            store.mark_submission(pending.id, "verified", now, dx_seen=teams_seen(converged))
            # The earlier run may have died before keeping the ids DX now has.
            store.save_identities(_identities_of_record(pending.plan), now)
            log.info("sync.recovered", submission=pending.id, verified=True)
        else:
            store.mark_submission(pending.id, "superseded", now, detail="not shown by DX")
            log.warning("sync.recovered", submission=pending.id, verified=False)


def _named_rows(details: Any, payload: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """Rows DX named in `error_details`, joined with what we sent in them.

    The shape is not public; we recognise a list of objects carrying an index
    and/or a reference_id (under `rows`, `errors` or at the top) and skip the rest.
    """
    items: Any = details
    if isinstance(details, Mapping):
        items = details.get("rows") or details.get("errors") or []
    if not isinstance(items, list):
        return []
    by_ref = {str(t.get("reference_id")): (i, t) for i, t in enumerate(payload)}
    named: list[dict[str, Any]] = []
    for item in items:
        if not isinstance(item, Mapping):
            continue
        index: Any = item.get("index", item.get("row"))
        team: Mapping[str, Any] = {}
        if isinstance(index, int) and 0 <= index < len(payload):
            team = payload[index]
        ref = item.get("reference_id")
        if not team and ref is not None and str(ref) in by_ref:
            index, team = by_ref[str(ref)]
        named.append(
            {
                "index": index,
                "reference_id": ref if ref is not None else team.get("reference_id"),
                "team": team.get("name"),
                "lead": team.get("team_lead_email"),
                "field": item.get("field"),
                "problem": item.get("message") or item.get("error"),
            }
        )
    return named


def _import_attempts(store: Store) -> int:
    """Consecutive recent runs deferred by a running import (for the backoff)."""
    count = 0
    for run in store.recent_runs(20, operational_only=True):
        if run.outcome is None:  # this very run, still going
            continue
        if run.outcome == "deferred" and (run.reason or "").startswith(IMPORT_RUNNING_REASON):
            count += 1
        else:
            break
    return count


def _submission_plan(
    assignment: Assignment,
    plan: Plan,
    dx_teams: Sequence[DxTeam],
    earlier: Sequence[SubmissionRecord] = (),
) -> dict[str, Any]:
    rows, archived = assignment.teams, plan.archives
    payload_rows = {r.reference_id: r.to_payload() for r in rows}
    earlier_awaited = [
        (
            {r["reference_id"]: _payload_only(r) for r in sub.plan.get("rows", [])},
            parse_awaiting(sub.plan.get("awaiting_change", {})),
        )
        for sub in earlier
    ]
    awaiting = awaiting_since(awaited_refs(plan), payload_rows, dx_teams, earlier_awaited)
    return {
        "awaiting_change": {ref: when.isoformat() for ref, when in awaiting.items()},
        "identities": [_identity_to_dict(i) for i in assignment.identities],
        "rows": [{"key": r.key, **r.to_payload()} for r in rows],
        "archived_refs": [a.reference_id for a in archived if a.reference_id],
        "archived_dx_ids": [a.dx_id for a in archived],
        "renames": [dataclasses.asdict(c) for c in plan.changes if isinstance(c, Rename)],
        "lead_changes": [dataclasses.asdict(c) for c in plan.changes if isinstance(c, LeadChange)],
        "counts": plan.counts,
        "digest": plan.payload_digest,
    }


def _payload_only(row: Mapping[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in row.items() if k != "key"}


def _seen_of(sub: SubmissionRecord | None) -> dict[str, SeenTeam]:
    if sub is None:
        return {}
    return {
        ref: SeenTeam(
            manager_id=seen.get("manager_id"),
            last_changed_at=(
                datetime.fromisoformat(seen["last_changed_at"])
                if seen.get("last_changed_at")
                else None
            ),
        )
        for ref, seen in sub.dx_seen.items()
    }


def _identity_to_dict(identity: KnownIdentity) -> dict[str, Any]:
    return {
        "key": identity.key,
        "reference_id": identity.reference_id,
        "name": identity.name,
        "parent_key": identity.parent_key,
        "lead_email": identity.lead_email,
        "members": sorted(identity.members),
        "retired": identity.retired,
    }


def _identities_of_record(record: Mapping[str, Any]) -> list[KnownIdentity]:
    return [
        KnownIdentity(
            key=d["key"],
            reference_id=d["reference_id"],
            name=d["name"],
            parent_key=d.get("parent_key"),
            lead_email=d.get("lead_email"),
            members=frozenset(d.get("members", [])),
            retired=bool(d.get("retired")),
        )
        for d in record.get("identities", [])
    ]


def _rows_from_submission(sub: SubmissionRecord) -> dict[str, TeamRow]:
    rows = sub.plan.get("rows") or sub.payload
    return {r["reference_id"]: row_from_dict(r) for r in rows}


def _plan_from_record(sub: SubmissionRecord) -> Plan:
    changes: list[Any] = [Rename(**r) for r in sub.plan.get("renames", [])]
    changes += [LeadChange(**c) for c in sub.plan.get("lead_changes", [])]
    return Plan(
        changes=tuple(changes),
        drift=(),
        payload_digest=sub.payload_digest,
        desired_count=len(sub.plan.get("rows", [])),
    )


__all__ = ["Engine", "SyncRequest", "SyncResult", "run_sync"]
