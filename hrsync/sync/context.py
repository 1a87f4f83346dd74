"""What the stages of one run share: the run's context, the products each stage hands to
the next, and `end`, the one way a stage ends the run (the result types are
`hrsync.sync.results`).

A stage is a function over the frozen `Run` and the product of the stage before it; it
returns its own product, or ends the run by raising `RunEnded` (through `end`), which
carries the decided `SyncResult`. Nothing else ends a run early.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import NoReturn

from hrsync import logs
from hrsync.clock import Clock
from hrsync.config.loading import Settings
from hrsync.core.confirmation.dx_users import Undecided
from hrsync.core.gate.guards import DeferralKind
from hrsync.core.gate.plan import Plan
from hrsync.core.gate.plan_ids import Approval
from hrsync.core.people import Directory
from hrsync.core.people.joins import JoinReport
from hrsync.core.people.precedence import PrecedenceReport
from hrsync.core.people.second_tables import Kind, TableCount
from hrsync.core.teams.held import Hold
from hrsync.core.teams.identity import Assignment, TeamRow
from hrsync.core.teams.mapping import LeadLeft, TeamMap, Unplaced
from hrsync.core.teams.substitutes import LeadSubstitute
from hrsync.dx.client import DxClient
from hrsync.dx.models import DxTeam, Snapshot
from hrsync.outcome import Outcome
from hrsync.store.repo import Store
from hrsync.store.submission_record import SubmittedPlan
from hrsync.sync.results import RunEnded, SyncRequest, SyncResult

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
    """read → map: the people of the export and the teams they make."""

    source: str  # the export's name, for the log
    directory: Directory
    team_map: TeamMap
    holds: tuple[Hold, ...] = ()  # the held people, and where DX keeps them
    # The reader's notes on the export (e.g. exactly a round page size of records).
    source_notes: tuple[str, ...] = ()
    joins: tuple[JoinReport, ...] = ()  # each `[[source.join]]` as it went
    precedence: tuple[PrecedenceReport, ...] = ()  # each precedence list as it went
    # With `[[source.union]]`: each source's rows and people (the primary's first).
    sources: tuple[TableCount, ...] = ()

    @property
    def people_count(self) -> int:
        return len(self.directory.people)


@dataclass(frozen=True, slots=True)
class Planned:
    """assign → plan: the teams with their reference_ids, and what would change in DX."""

    people_count: int
    assignment: Assignment
    dx_teams: tuple[DxTeam, ...]
    snapshots: tuple[Snapshot, ...]
    plan: Plan
    report: str
    unplaced: tuple[Unplaced, ...] = ()  # people in no team, with why
    leads_left: tuple[LeadLeft, ...] = ()  # managers who left, their teams and stand-ins
    holds: tuple[Hold, ...] = ()  # people held for a problem of their own row
    notes: str = ""  # the report's sections after the plan (unknown managers, unplaced)
    # Leads DX does not know yet and who stands in (sync/lead_substitution.py), and how
    # many times the run planned again for them.
    substitutes: tuple[LeadSubstitute, ...] = ()
    replans: int = 0
    hr_rows: tuple[TeamRow, ...] = ()  # the rows as HR makes them, once a lead stands in
    directory: Directory | None = None  # the export's people (employee ids by e-mail)
    # Set by the gate: the plan's id when a guard refused it or was let past, and what
    # let it past (a person's approval, or this run's override flags).
    plan_id: str | None = None
    approval: Approval | None = None
    joins: tuple[JoinReport, ...] = ()  # each `[[source.join]]` as it went
    precedence: tuple[PrecedenceReport, ...] = ()  # each precedence list as it went
    sources: tuple[TableCount, ...] = ()  # with `[[source.union]]`: each source's size
    # The kinds of second table whose counts may not be their guard's next baseline
    # (SyncResult's).
    untrusted: frozenset[Kind] = frozenset()

    def payload(self) -> list[dict[str, object]]:
        return [r.to_payload() for r in self.assignment.teams]


@dataclass(frozen=True, slots=True)
class Submitted:
    """submit: the recorded submission and how DX answered it."""

    planned: Planned
    submission_id: int
    record: SubmittedPlan
    submitted_at: datetime
    ambiguous: bool  # DX's answer was lost: it may or may not have the request


def end(
    run: Run,
    outcome: Outcome,
    planned: Planned | None = None,
    *,
    report: str | None = None,
    reason: str | None = None,
    resume_at: datetime | None = None,
    preview_url: str | None = None,
    action: str | None = None,
    problems: Sequence[str] = (),
    defer_kind: DeferralKind | None = None,
    not_in_dx: Sequence[str] = (),
    undecided: Sequence[Undecided] = (),
) -> NoReturn:
    """End the run here with `outcome`; `report` defaults to the plan's. `not_in_dx`: the
    people sent whom DX does not count yet (`counts.not_in_dx`); `undecided`: the teams
    where DX counts fewer than sent and hrsync cannot tell whom yet."""
    plan = planned.plan if planned is not None else None
    raise RunEnded(
        SyncResult(
            run.run_id,
            outcome,
            counts={
                **plan.counts,
                "held": len(planned.holds),
                "not_in_dx": len(not_in_dx),
                # In no team and not meant to be: lost to DX until a person acts.
                "no_team": sum(1 for u in planned.unplaced if u.needs_person),
            }
            if plan is not None and planned is not None
            else {},
            reason=reason,
            resume_at=resume_at,
            plan=plan,
            report=report if report is not None else (planned.report if planned else ""),
            preview_url=preview_url,
            people_count=planned.people_count if planned is not None else None,
            unplaced=planned.unplaced if planned is not None else (),
            leads_left=planned.leads_left if planned is not None else (),
            held=planned.holds if planned is not None else (),
            rows=tuple(planned.assignment.teams) if planned is not None else (),
            substitutes=planned.substitutes if planned is not None else (),
            action=action,
            problems=tuple(problems),
            defer_kind=defer_kind,
            not_in_dx=tuple(not_in_dx),
            not_in_dx_undecided=tuple(undecided),
            plan_id=planned.plan_id if planned is not None else None,
            approval=planned.approval if planned is not None else None,
            joins=planned.joins if planned is not None else (),
            precedence=planned.precedence if planned is not None else (),
            sources=planned.sources if planned is not None else (),
            untrusted=planned.untrusted if planned is not None else frozenset(),
        )
    )
