"""What the stages of one run share: the run's context, the products each stage hands to
the next, and `end`, the one way a stage ends the run (the result types are
`hrsync.sync.results`).

A stage is a function over the frozen `Run` and the product of the stage before it; it
returns its own product, or ends the run by raising `RunEnded` (through `end`), which
carries the decided `SyncResult`. Nothing else ends a run early.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass
from datetime import datetime
from typing import Literal, NoReturn, TypedDict, Unpack

from hrsync import logs
from hrsync.clock import Clock
from hrsync.config.loading import Settings
from hrsync.core.gate.guards import DeferralKind
from hrsync.core.people import Directory
from hrsync.core.teams.mapping import TeamMap
from hrsync.dx.client import DxClient
from hrsync.outcome import Outcome
from hrsync.store.repo import Store
from hrsync.store.submission_record import SubmittedPlan
from hrsync.sync.results import Planned, Reading, RunEnded, SyncRequest, SyncResult, Uncounted

# A crashed holder on another host blocks runs for at most this long; a live run renews
# the lease at every verification poll and step, so the TTL only has to outlast one step.
LEASE_TTL_S = 600.0

log = logs.get_logger(__name__)


@dataclass(frozen=True, slots=True)
class Pacing:
    """How often DX is polled while verifying: fast in in-process tests and benchmarks."""

    poll_s: float = 0.25
    poll_max_s: float = 30.0


DEFAULT_PACING = Pacing()


@dataclass(frozen=True, slots=True)
class Run:
    """One run's context: what every stage may use."""

    settings: Settings
    store: Store
    client: DxClient
    clock: Clock
    request: SyncRequest
    run_id: str
    holder: str  # the lease holder's name
    stop: threading.Event | None = None  # set by the daemon on SIGTERM
    pacing: Pacing = DEFAULT_PACING

    def stopping(self) -> bool:
        return self.stop is not None and self.stop.is_set()

    def renew_lease(self) -> bool:
        """Extend the lease; False (logged) when it expired and another sync took it."""
        if self.request.dry_run:
            return True  # a dry run holds no lease: there is nothing to renew or lose
        renewed = self.store.renew_lease(self.holder, self.clock(), LEASE_TTL_S)
        if not renewed:
            log.error("sync.lease_lost", detail="the lease expired and another sync took it")
        return renewed


@dataclass(frozen=True, slots=True)
class Mapped:
    """read → map: what reading the export found, and the teams its people make."""

    source: str  # the export's name, for the log
    team_map: TeamMap
    reading: Reading  # the people, held, unplaced, joins, lists and sources as they went
    # The reader's notes on the export (e.g. exactly a round page size of records).
    source_notes: tuple[str, ...] = ()

    @property
    def directory(self) -> Directory:
        directory = self.reading.directory
        assert directory is not None, "a mapped export has its people"
        return directory


class Ending(TypedDict, total=False):
    """How a stage ends the run, besides its outcome and plan: `SyncResult`'s own fields."""

    report: str
    reason: str | None
    resume_at: datetime | None
    action: str | None
    problems: tuple[str, ...]
    defer_kind: DeferralKind | Literal["stopped_verifying"] | None
    uncounted: Uncounted


@dataclass(frozen=True, slots=True)
class Submitted:
    """submit: the recorded submission and how DX answered it."""

    planned: Planned
    submission_id: int
    record: SubmittedPlan
    submitted_at: datetime
    ambiguous: bool  # DX's answer was lost: it may or may not have the request


def end(
    run: Run, outcome: Outcome, planned: Planned | None = None, **ending: Unpack[Ending]
) -> NoReturn:
    """End the run here with `outcome` and the plan it ran, if it had one; `ending`: the
    rest of the `SyncResult` (`reason`, `resume_at`, `action`, `uncounted` …); `report`
    defaults to the plan's. The counts are the plan's and the people's."""
    counts: dict[str, int] = {}
    if planned is not None:
        ending.setdefault("report", planned.report)
        uncounted = ending.get("uncounted") or Uncounted()
        counts = {
            **planned.plan.counts,
            "held": len(planned.holds),
            "not_in_dx": len(uncounted.emails),
            # In no team and not meant to be: lost to DX until a person acts.
            "no_team": sum(1 for u in planned.reading.unplaced if u.needs_person),
        }
    raise RunEnded(SyncResult(run.run_id, outcome, counts, planned=planned, **ending))
