"""DX's errors as the run's outcomes.

DxAuthError, DxRejected on a read   -> rejected (a token or scope to fix)
DxError on a read                   -> failed (DX unreachable after retries, a bug)
DxDeferred on a write               -> deferred (snapshot live, import running)
DxRejected on a write               -> rejected, with the rows DX named (read whatever
                                       the shape of its details:
                                       core/confirmation/refusal_details.py)
DxError on a write                  -> failed
DxOutcomeUnknown on process         -> not an outcome: the run verifies (confirm.py)
"""

from __future__ import annotations

from collections.abc import Callable
from typing import NoReturn, TypeVar

from hrsync import logs
from hrsync.core.confirmation.refusal_details import NamedRow, read_refusal
from hrsync.core.gate.guards import check_snapshots, deferral_for_api_error
from hrsync.core.report.render import rejection_reason
from hrsync.dx.errors import DxAuthError, DxDeferred, DxError, DxRejected, ImportInProgress
from hrsync.logcap import capped
from hrsync.outcome import Outcome
from hrsync.store.repo import Store
from hrsync.sync.context import Run, end
from hrsync.sync.results import Planned

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
    refusal = read_refusal(exc.error_details, exc.message, planned.assignment.teams)
    with capped(log, "sync.rejected.row", see="the run's report (hrsync sync prints it)") as rows:
        for row in refusal.rows:
            rows.emit(NamedRow.log_fields, row, "error")
            lines.append(
                f"  - row {row.index}: team {row.team!r} (lead {row.lead}): "
                f"{row.field or ''} {row.problem or ''}".rstrip()
            )
    end(
        run,
        Outcome.REJECTED,
        planned,
        report=planned.report + "\n" + "\n".join(lines),
        reason=headline,
    )


def import_attempts(store: Store) -> int:
    """Consecutive recent runs deferred by a running import (for the backoff)."""
    count = 0
    for run in store.runs.recent(20, operational_only=True):
        if run.outcome is None:  # this very run, still going
            continue
        if run.defer_kind == "import_in_progress":
            count += 1
        else:
            break
    return count
