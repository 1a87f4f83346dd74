"""DX's preview of exactly a refused plan (issue 23): `hrsync sync --preview PLAN_ID`, and
the preview a daemon's refusal notification links to.

The preview is of the payload kept with the refused plan, not of a plan computed again:
what a person looks at in DX is what they approve. It is created once per plan id (its
URL is kept with the plan) and never inside a snapshot window: DX's preview is an import
of its own kind, and hrsync sends no import while a window is open.
"""

from __future__ import annotations

import contextlib
import json
from dataclasses import dataclass
from typing import cast

from hrsync import logs
from hrsync.clock import Clock, utcnow
from hrsync.config.loading import Settings
from hrsync.core.gate.guards import ATTRIBUTE_GUARDS, check_snapshots
from hrsync.core.report.render import render_deferral
from hrsync.dx.client import DxClient
from hrsync.dx.errors import DxDeferred, DxError, DxRejected
from hrsync.outcome import EXIT_USAGE, Outcome
from hrsync.store.repo import Store

log = logs.get_logger(__name__)

Payload = list[dict[str, object]]


@dataclass(frozen=True, slots=True)
class PlanPreview:
    exit_code: int
    text: str  # what a person reads
    url: str | None = None


def preview_plan(
    settings: Settings, store: Store, plan_id: str, *, clock: Clock = utcnow
) -> PlanPreview:
    """`sync --preview PLAN_ID`: the preview URL of exactly that refused plan."""
    stored = store.approvals.refused_plan(plan_id)
    payload = store.approvals.refused_plan_payload(plan_id)
    if stored is None or payload is None:
        return PlanPreview(
            EXIT_USAGE,
            f"hrsync: no refused plan {plan_id} in the state store: check the id the refusal "
            "printed, and that this command uses the daemon's state store",
        )
    if stored.guards and all(g in ATTRIBUTE_GUARDS for g in stored.guards):
        return PlanPreview(
            EXIT_USAGE,
            f"hrsync: plan {plan_id} changes people's attributes, and DX has no preview of "
            "attribute changes: the refusal (and `hrsync plan`) lists every change; approve "
            f"it with `hrsync approve {plan_id}` once they are what you meant",
        )
    if stored.preview_url:
        log.info("sync.preview", plan_id=plan_id, preview_url=stored.preview_url, reused=True)
        return PlanPreview(
            Outcome.PLANNED.exit_code,
            f"Preview of plan {plan_id} (made when it was refused): {stored.preview_url}\n",
            stored.preview_url,
        )
    client = DxClient.from_settings(settings)
    with contextlib.closing(client):
        try:
            deferral = check_snapshots(client.snapshots(), clock(), settings.sync.retro_window_days)
            if deferral is not None:
                log.warning("sync.deferred", kind=deferral.kind, plan_id=plan_id)
                return PlanPreview(Outcome.DEFERRED.exit_code, render_deferral(deferral))
            url = _send(client, store, plan_id, _payload(payload), clock)
            if url is None:
                return PlanPreview(
                    Outcome.FAILED.exit_code, "DX accepted the preview but gave no preview URL\n"
                )
        except DxDeferred as exc:
            return PlanPreview(Outcome.DEFERRED.exit_code, f"Deferred: {exc}\n")
        except DxRejected as exc:
            return PlanPreview(Outcome.REJECTED.exit_code, f"DX refused the preview: {exc}\n")
        except DxError as exc:
            return PlanPreview(Outcome.FAILED.exit_code, f"The preview failed: {exc}\n")
    return PlanPreview(Outcome.PLANNED.exit_code, f"Preview of plan {plan_id}: {url}\n", url)


def preview_for_notice(
    client: DxClient, store: Store, plan_id: str, payload: Payload, clock: Clock
) -> str | None:
    """The preview a refusal's notification links to: the one kept with the plan, else a
    new one. Called only by a run that found no window open; a preview DX does not
    create is logged and left out, never the run's failure."""
    stored = store.approvals.refused_plan(plan_id)
    if stored is not None and stored.preview_url:
        return stored.preview_url
    try:
        return _send(client, store, plan_id, payload, clock)
    except DxError as exc:
        log.warning("sync.preview_failed", plan_id=plan_id, error=str(exc)[:300])
        return None


def _send(
    client: DxClient, store: Store, plan_id: str, payload: Payload, clock: Clock
) -> str | None:
    accepted = client.preview(payload)
    url = accepted.preview_url
    if url is not None:
        store.approvals.save_preview_url(plan_id, url, clock())
    log.info("sync.preview", plan_id=plan_id, preview_url=url, import_id=accepted.import_id)
    return url


def _payload(text: str) -> Payload:
    return cast(Payload, json.loads(text))
