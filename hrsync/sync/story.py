"""One run, start to finish: the story, told by `run_sync` in the order of the data flow
(docs/explanation/architecture.md).

    lease → record → recover → read → map → assign → plan → gate → submit → confirm
          → attributes (sync/attribute_step.py) → record → sync.finished

Each stage is a function in stages.py or confirm.py over the run's context; a stage
ends the run by raising `RunEnded` with its result, and nothing else does. This module
takes and releases the lease, records the run's start and its end (the run's outcome,
and the daemon's deferral: written here only), and logs `sync.finished`, exactly once.
"""

from __future__ import annotations

import contextlib
import dataclasses
import os
import socket
import threading
import time
from datetime import timedelta

from hrsync import logs
from hrsync.clock import Clock, utcnow
from hrsync.config.loading import Settings
from hrsync.core.gate.guards import TURNED_AWAY
from hrsync.core.gate.plan import COUNT_KEYS
from hrsync.core.listing import LIMIT, capped
from hrsync.core.people.second_tables import JOIN, UNION
from hrsync.dx.client import DxClient, DxObserver
from hrsync.gcpause import collector_paused
from hrsync.outcome import Outcome
from hrsync.store.repo import Store
from hrsync.sync.attribute_step import attributes_outcome, with_attributes
from hrsync.sync.confirm import recover_unfinished, verify
from hrsync.sync.context import DEFAULT_PACING, LEASE_TTL_S, Mapped, Pacing, Run
from hrsync.sync.results import (
    ATTRIBUTE_COUNT_KEYS,
    PEOPLE_COUNT_KEYS,
    RunEnded,
    SyncRequest,
    SyncResult,
)
from hrsync.sync.stages import assign_and_plan, gate_plan, preview, read_and_map, submit

log = logs.get_logger(__name__)


def run_sync(
    settings: Settings,
    request: SyncRequest,
    *,
    store: Store,
    clock: Clock = utcnow,
    stop: threading.Event | None = None,
    pacing: Pacing = DEFAULT_PACING,
    observer: DxObserver | None = None,
) -> SyncResult:
    """One run: take the lease, record it, do it, record and log how it ended.
    `observer` (the daemon's metrics) is told of every DX call."""
    run_id = logs.new_run_id()
    holder = f"{socket.gethostname()}:{os.getpid()}:{run_id}"
    started = time.monotonic()
    with logs.run_context(run_id, trigger=request.trigger):
        now = clock()
        # A dry run writes nothing to DX: `hrsync plan` works while the daemon syncs.
        lease = None if request.dry_run else store.acquire_lease(holder, now, LEASE_TTL_S)
        store.runs.start(run_id, request.trigger, now, dry_run=not request.operational)
        try:
            if lease is not None and not lease.acquired:
                result = SyncResult(
                    run_id,
                    Outcome.DEFERRED,
                    reason=(
                        f"another sync is running: {lease.holder} (pid {lease.pid} on "
                        f"{lease.host}, since {lease.acquired_at.isoformat()})"
                    ),
                    resume_at=now + timedelta(minutes=5),
                    defer_kind=TURNED_AWAY,
                )
            else:
                log.info("sync.started", dry_run=request.dry_run, preview=request.preview)
                try:
                    client = DxClient.from_settings(settings, observer=observer)
                    with contextlib.closing(client):
                        result = _story(
                            Run(
                                settings,
                                store,
                                client,
                                clock,
                                request,
                                run_id,
                                holder,
                                stop,
                                pacing,
                            )
                        )
                except Exception as exc:
                    log.error("sync.crashed", error=str(exc), exc_info=True)
                    result = SyncResult(
                        run_id, Outcome.FAILED, reason=f"{type(exc).__name__}: {exc}"
                    )
            attributes = result.attributes
            if attributes is not None and attributes.reason:
                attributes = dataclasses.replace(attributes, reason=logs.scrub(attributes.reason))
            result = dataclasses.replace(
                result,
                # The reasons are stored, printed and sent: a secret an error quoted is
                # masked here, whatever raised it.
                reason=logs.scrub(result.reason) if result.reason else result.reason,
                attributes=attributes,
                counts={
                    **dict.fromkeys((*COUNT_KEYS, *PEOPLE_COUNT_KEYS, *ATTRIBUTE_COUNT_KEYS), 0),
                    **result.counts,
                },
            )
            record_end(store, clock, request, result)
        finally:
            if lease is not None and lease.acquired:
                store.release_lease(holder)
        _log_finished(result, request, started)
        return result


def _story(run: Run) -> SyncResult:
    """The hierarchy's stages, then the attribute step, whatever the hierarchy's ending."""
    hierarchy, mapped = _hierarchy(run)
    return with_attributes(run, hierarchy, mapped)


def _hierarchy(run: Run) -> tuple[SyncResult, Mapped | None]:
    """The hierarchy's stages in order, until the one that decides how it ends (every
    path ends in `end`: `verify` never returns); and what was read and mapped, if the
    run got that far, for the attribute step."""
    mapped: Mapped | None = None
    try:
        recover_unfinished(run)
        # The GC pause, once, around the stages that build the org's million objects.
        with collector_paused():
            mapped = read_and_map(run)
            planned = assign_and_plan(run, mapped)
        planned = gate_plan(run, planned)
        if run.request.preview:
            preview(run, planned)
        verify(run, submit(run, planned))
    except RunEnded as ended:
        return ended.result, mapped
    raise AssertionError("verify always ends the run")  # pragma: no cover


def record_end(store: Store, clock: Clock, request: SyncRequest, result: SyncResult) -> None:
    """The run's end in the store; the daemon's deferral is written here and only here."""
    now = clock()
    store.runs.finish(
        result.run_id,
        now,
        outcome=result.outcome.value,
        exit_code=result.exit_code,
        counts=result.counts,
        reason=result.reason,
        plan_digest=result.plan.payload_digest if result.plan else None,
        people_count=result.people_count,
        action=result.action,
        defer_kind=result.defer_kind,
        substitutes=result.substitutes,
        plan_id=result.plan_id,
        # The export read, its joins trusted: the join guard's baseline when accepted.
        join_counts=tuple(join.count for join in result.joins)
        if result.people_count is not None and JOIN not in result.untrusted
        else None,
        # Likewise each source's counts, with `[[source.union]]` (none without).
        source_counts=result.sources
        if result.people_count is not None and result.sources and UNION not in result.untrusted
        else None,
    )
    if not request.operational:
        return  # the daemon's deferral is not a dry run's business
    if result.defer_kind == "lease_held":
        # The run holding the lease writes its own end; a deferral it keeps (a snapshot
        # window's) is not this run's to replace with a few minutes, nor to resolve.
        return
    if result.outcome is Outcome.DEFERRED and result.resume_at:
        store.deferrals.add(result.run_id, result.reason or "deferred", result.resume_at, now)
    else:
        store.deferrals.resolve(now)


def _log_finished(result: SyncResult, request: SyncRequest, started: float) -> None:
    fields: dict[str, object] = {
        "outcome": result.outcome.value,
        "exit_code": result.exit_code,
        "counts": {
            k: result.counts.get(k, 0)
            for k in (*COUNT_KEYS, *PEOPLE_COUNT_KEYS, *ATTRIBUTE_COUNT_KEYS)
        },
        "attributes_outcome": attributes_outcome(result),
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
    if result.held:
        fields["held"] = [
            {"person": h.person.key, "location": h.person.location, "detail": h.person.detail}
            for h in result.held[:LIMIT]
        ]
    if result.not_in_dx:
        fields["not_in_dx"] = capped(result.not_in_dx)
    if result.not_in_dx_undecided:
        fields["not_in_dx_undecided"] = [u.fields() for u in result.not_in_dx_undecided[:LIMIT]]
    if result.substitutes:
        fields["lead_substitutes"] = [s.log_fields() for s in result.substitutes]
    if result.plan_id:
        fields["plan_id"] = result.plan_id
    if result.approval is not None:
        # Who let this plan past the guards: the audit of an approval or of override flags.
        approval = result.approval
        fields["approval"] = {
            "plan_id": approval.plan_id,
            "by": approval.approved_by,
            "note": approval.note,
            "via": approval.via,
            "approved_at": approval.approved_at.isoformat(),
        }
    level = "info" if result.exit_code == 0 else "warning"
    if result.outcome is Outcome.FAILED:
        level = "error"
    getattr(log, level)("sync.finished", **fields)
