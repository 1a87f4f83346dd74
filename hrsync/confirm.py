"""Confirming a submission with DX: polling `teams.list`, and resending the same payload
when DX's answer was lost and DX shows nothing of it (imperative shell).

The judgement of one `teams.list` reply is `verify.check_convergence` (pure); this module
only polls, waits and resends. A resend is always the payload of the same submission
record: a different payload is never sent without planning again.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from hrsync import logs
from hrsync.core.identity import TeamRow
from hrsync.core.verify import check_convergence, parse_awaiting
from hrsync.dx.client import DxClient
from hrsync.dx.errors import DxError, DxOutcomeUnknown, ImportInProgress
from hrsync.dx.models import DxTeam

log = logs.get_logger("hrsync.confirm")

# The first verification window after an ambiguous answer is this share of
# sync.verify_timeout_s, capped: long enough for a normal import to show, short enough
# that a lost request is sent again within the run instead of waiting out the timeout.
RESEND_WINDOW_SHARE = 0.1
RESEND_WINDOW_MAX_S = 60.0


def resend_window_s(verify_timeout_s: float) -> float:
    return min(RESEND_WINDOW_MAX_S, verify_timeout_s * RESEND_WINDOW_SHARE)


@dataclass(frozen=True, slots=True)
class Target:
    """What DX must show once a submission is applied."""

    rows: tuple[TeamRow, ...]
    archived_refs: tuple[str, ...]
    archived_ids: tuple[str, ...]
    # Teams whose new lead or members teams.list cannot show: reference_id -> DX's
    # last_changed_at before the submission; done once DX reports a later one.
    awaiting_change: Mapping[str, datetime]

    @classmethod
    def of_record(cls, record: Mapping[str, Any]) -> Target:
        return cls(
            rows=tuple(row_from_dict(r) for r in record.get("rows", [])),
            archived_refs=tuple(record.get("archived_refs", [])),
            archived_ids=tuple(record.get("archived_dx_ids", [])),
            awaiting_change=parse_awaiting(record.get("awaiting_change", {})),
        )


def row_from_dict(d: Mapping[str, Any]) -> TeamRow:
    return TeamRow(
        key=str(d.get("key", "")),
        reference_id=str(d["reference_id"]),
        name=str(d["name"]),
        lead_email=str(d["team_lead_email"]),
        parent_reference_id=d.get("parent_team_reference_id"),
        parent_name=d.get("parent_team_name"),
        contributors=tuple(d.get("contributors", [])),
    )


@dataclass
class Poller:
    """Polls teams.list with backoff until DX shows a target."""

    client: DxClient
    renew: Callable[[], object]
    stopping: Callable[[], bool]
    pause: Callable[[float], bool]  # sleeps; True when a stop was asked for meanwhile
    poll_s: float
    poll_max_s: float

    def wait(self, target: Target, timeout_s: float) -> list[DxTeam] | None:
        """DX's teams once they show `target`; None at the timeout. 0 looks once."""
        deadline = time.monotonic() + timeout_s
        delay = self.poll_s
        attempt = 0
        while True:
            attempt += 1
            self.renew()
            try:
                current = self.client.teams()
            except DxError as exc:
                log.warning("verify.read_failed", attempt=attempt, detail=str(exc))
            else:
                convergence = check_convergence(
                    target.rows,
                    target.archived_refs,
                    current,
                    archived_dx_ids=target.archived_ids,
                    awaiting_change=target.awaiting_change,
                )
                if convergence.converged:
                    log.info("verify.converged", attempt=attempt, detail=convergence.summary())
                    for u in convergence.contributors_uncounted:
                        log.warning(
                            "verify.contributors_unknown",
                            team=u.name,
                            reference_id=u.reference_id,
                            sent=u.sent,
                            counted=u.counted,
                        )
                    return current
                log.info("verify.waiting", attempt=attempt, detail=convergence.summary())
            if time.monotonic() + delay > deadline or self.stopping():
                return None
            if self.pause(delay):
                return None
            delay = min(delay * 2, self.poll_max_s)


@dataclass(frozen=True, slots=True)
class Confirmation:
    teams: list[DxTeam] | None  # DX's teams once it showed the submission; None: not shown
    resends: int
    note: str | None = None  # why it stopped short, when it did


def confirm(
    poller: Poller,
    target: Target,
    *,
    ambiguous: bool,
    verify_timeout_s: float,
    max_resends: int,
    resend: Callable[[int, str], Any],
) -> Confirmation:
    """Wait for DX to show `target`; after an ambiguous answer, send the same payload again.

    `resend(n, reason)` sends the submission's own payload once more and returns normally
    when DX accepted it; it raises what the client raises. An accepted resend or DX's
    `import_in_progress` proves a request arrived: from then on the run waits for the
    rest of `verify_timeout_s` like after any accepted request.
    """
    started = time.monotonic()
    resends = 0
    while True:
        remaining = max(0.0, verify_timeout_s - (time.monotonic() - started))
        window = min(remaining, resend_window_s(verify_timeout_s)) if ambiguous else remaining
        shown = poller.wait(target, window)
        if shown is not None:
            return Confirmation(shown, resends)
        if poller.stopping():
            return Confirmation(None, resends, "stopping")
        if not ambiguous or resends >= max_resends:
            if ambiguous and time.monotonic() - started < verify_timeout_s:
                # No resend left: the earlier requests may still be applied; wait it out.
                ambiguous = False
                continue
            return Confirmation(None, resends)
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
            return _rest(poller, target, started, verify_timeout_s, resends, str(exc))
        else:
            ambiguous = False


def _rest(
    poller: Poller,
    target: Target,
    started: float,
    verify_timeout_s: float,
    resends: int,
    note: str,
) -> Confirmation:
    remaining = max(0.0, verify_timeout_s - (time.monotonic() - started))
    return Confirmation(poller.wait(target, remaining), resends, note)


def teams_seen(teams: Sequence[DxTeam]) -> dict[str, dict[str, str | None]]:
    """What DX showed right after a verified submission, per reference_id: the lead's DX
    id and last_changed_at, for telling later hand edits from our own changes."""
    return {
        t.reference_id: {
            "manager_id": t.manager_id,
            "last_changed_at": t.last_changed_at.isoformat() if t.last_changed_at else None,
        }
        for t in teams
        if t.reference_id is not None
    }
