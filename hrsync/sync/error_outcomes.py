"""DX's errors as the run's outcomes.

DxAuthError, DxRejected on a read   -> rejected (a token or scope to fix)
DxError on a read                   -> failed (DX unreachable after retries, a bug)
DxDeferred on a write               -> deferred (snapshot live, import running)
DxRejected on a write               -> rejected, with the rows DX named
DxError on a write                  -> failed
DxOutcomeUnknown on process         -> not an outcome: the run verifies (confirm.py)
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import NoReturn, TypeVar

from hrsync import logs
from hrsync.core.guards import check_snapshots, deferral_for_api_error
from hrsync.core.render import rejection_reason
from hrsync.dx.errors import DxAuthError, DxDeferred, DxError, DxRejected, ImportInProgress
from hrsync.logcap import capped
from hrsync.outcome import Outcome
from hrsync.store.repo import Store
from hrsync.sync.context import Planned, Run, end

log = logs.get_logger(__name__)

T = TypeVar("T")


def dx_read(run: Run, read: Callable[[], T]) -> T:
    """A read from DX, or the end of the run when DX refuses or cannot be reached."""
    try:
        return read()
    except (DxAuthError, DxRejected) as exc:
        end(run, Outcome.REJECTED, reason=str(exc))
    except DxError as exc:
        end(run, Outcome.FAILED, reason=str(exc))


def end_deferred_by_dx(run: Run, exc: DxDeferred, planned: Planned) -> NoReturn:
    """DX said a snapshot or an import is running: defer until it should be over."""
    now = run.clock()
    if isinstance(exc, ImportInProgress):
        attempt = import_attempts(run.store) + 1
        deferral = deferral_for_api_error("import_in_progress", now, attempt, None)
    else:
        ours = check_snapshots(planned.snapshots, now, run.settings.sync.retro_window_days)
        deferral = deferral_for_api_error("snapshot_in_progress", now, 1, ours)
    log.warning("sync.deferred", kind=deferral.kind, detail=deferral.reason)
    end(
        run,
        Outcome.DEFERRED,
        planned,
        reason=deferral.reason,
        resume_at=deferral.resume_at,
        defer_kind=deferral.kind,
    )


def end_rejected(run: Run, exc: DxRejected, planned: Planned) -> NoReturn:
    """DX refused the request: its words verbatim, then each row it named."""
    # Verbatim first: DX does not document error_details, so nothing is dropped.
    log.error(
        "sync.rejected",
        error=exc.error,
        # `message` is the log line's own sentence (hrsync.log_messages): DX's words
        # are `dx_message`.
        dx_message=exc.message,
        error_details=exc.error_details,
        status=exc.status,
    )
    headline = rejection_reason(exc, run.settings.sync.notify_email)
    lines = [headline]
    with capped(log, "sync.rejected.row", see="the run's report (hrsync sync prints it)") as rows:
        for row in named_rows(exc.error_details, planned.payload()):
            rows.emit(lambda row: row, row, "error")
            lines.append(
                f"  - row {row.get('index')}: team {row.get('team')!r} "
                f"(lead {row.get('lead')}): {row.get('field') or ''} {row.get('problem') or ''}"
            )
    end(
        run,
        Outcome.REJECTED,
        planned,
        report=planned.report + "\n" + "\n".join(lines),
        reason=headline,
    )


def named_rows(details: object, payload: Sequence[Mapping[str, object]]) -> list[dict[str, object]]:
    """Rows DX named in `error_details` (untyped JSON), joined with what we sent in them.

    The shape is not public; we recognise a list of objects carrying an index
    and/or a reference_id (under `rows`, `errors` or at the top) and skip the rest.
    """
    items = details
    if isinstance(details, Mapping):
        items = details.get("rows") or details.get("errors") or []
    if not isinstance(items, list):
        return []
    by_ref = {str(t.get("reference_id")): (i, t) for i, t in enumerate(payload)}
    named: list[dict[str, object]] = []
    for item in items:
        if not isinstance(item, Mapping):
            continue
        index: object = item.get("index", item.get("row"))
        team: Mapping[str, object] = {}
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


def import_attempts(store: Store) -> int:
    """Consecutive recent runs deferred by a running import (for the backoff)."""
    count = 0
    for run in store.recent_runs(20, operational_only=True):
        if run.outcome is None:  # this very run, still going
            continue
        if run.defer_kind == "import_in_progress":
            count += 1
        else:
            break
    return count
