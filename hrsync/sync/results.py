"""The run's vocabulary, shared by every stage and by what reads a run's result (the
daemon, the monitor, the commands): the request, what reading the export found
(`Reading`), the plan a run made (`Planned`), the result, the attribute step's result,
and `RunEnded`, the control-flow exception a stage ends the run with.

The result holds the plan it ran, and the plan what reading found, each as one value:
a new finding is a field of the record it belongs to, not copied into every record a
stage hands on (tests/test_architecture.py keeps each to a dozen fields).

A leaf of the `sync` room: it imports only the core, DX's models and the outcome, so
nothing that reads a result pulls in the run's machinery, and no stage imports another
for a type.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Literal

from hrsync.core.attributes import AttributeOutcome, AttributePlan, more_serious
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
from hrsync.core.teams.mapping import LeadLeft, Unplaced
from hrsync.core.teams.substitutes import LeadSubstitute
from hrsync.dx.models import DxTeam, Snapshot
from hrsync.outcome import Outcome

# The attribute step's counts, beside the hierarchy's (`core.plan.COUNT_KEYS`).
ATTRIBUTE_COUNT_KEYS = ("attributes_updated", "attributes_unchanged", "attributes_failed")
# People the run could not sync as HR says (held: a problem of their own row), and people
# the hierarchy sent whom DX does not count (not DX users yet); each listed in the result.
# no_team: people in no team who are not meant to be (each needs a person).
PEOPLE_COUNT_KEYS = ("held", "not_in_dx", "no_team")


@dataclass(frozen=True, slots=True)
class SyncRequest:
    trigger: str = "manual"  # manual | schedule | resume | startup | approval
    dry_run: bool = False
    preview: bool = False
    allow_archive: int = 0
    allow_shrink: bool = False
    allow_attribute_changes: bool = False  # manual runs only: past the attribute guard
    allow_held: int | None = None  # manual runs only: hold up to N people past the guard

    @property
    def operational(self) -> bool:
        """A dry run or a preview changes nothing later runs rely on: it neither ends a
        failure streak, grows an import backoff, nor touches the daemon's deferral."""
        return not (self.dry_run or self.preview)


@dataclass(frozen=True, slots=True)
class Reading:
    """What reading the export found besides its teams, as one value from the reading
    stage to the run's result: the people, those held or in no team, the managers who
    left, how each join, precedence list and source went, and whether the joins' and
    sources' counts may be their guards' next baselines."""

    people_count: int = 0  # the people read (the held not counted)
    directory: Directory | None = None  # the export's people (employee ids by e-mail)
    holds: tuple[Hold, ...] = ()  # people held for a problem of their own row
    unplaced: tuple[Unplaced, ...] = ()  # people in no team, with why
    leads_left: tuple[LeadLeft, ...] = ()  # managers who left, their teams and stand-ins
    joins: tuple[JoinReport, ...] = ()  # each `[[source.join]]` as it went
    precedence: tuple[PrecedenceReport, ...] = ()  # each precedence list as it went
    sources: tuple[TableCount, ...] = ()  # with `[[source.union]]`: each source's size
    # The kinds of second table (joins, sources) whose counts may not be their guard's
    # next baseline: a run in sync skipped the guards while one fell far.
    untrusted: frozenset[Kind] = frozenset()


@dataclass(frozen=True, slots=True)
class StandIns:
    """Leads DX does not know yet and who stands in (sync/lead_substitution.py)."""

    substitutes: tuple[LeadSubstitute, ...] = ()
    replans: int = 0  # how many times the run planned again for them
    hr_rows: tuple[TeamRow, ...] = ()  # the rows as HR makes them, once a lead stands in


@dataclass(frozen=True, slots=True)
class Planned:
    """assign → plan: the teams with their reference_ids, and what would change in DX."""

    plan: Plan
    assignment: Assignment = field(default_factory=lambda: Assignment((), (), (), ()))
    dx_teams: tuple[DxTeam, ...] = ()
    snapshots: tuple[Snapshot, ...] = ()
    report: str = ""
    notes: str = ""  # the report's sections after the plan (unknown managers, unplaced)
    reading: Reading = Reading()
    stand_ins: StandIns = StandIns()
    # Set by the gate: the plan's id when a guard refused it or was let past, and what
    # let it past (a person's approval, or this run's override flags).
    plan_id: str | None = None
    approval: Approval | None = None
    preview_url: str | None = None  # DX's preview of exactly this plan, once made

    def payload(self) -> list[dict[str, object]]:
        return [r.to_payload() for r in self.assignment.teams]

    @property
    def people_count(self) -> int:
        return self.reading.people_count

    @property
    def directory(self) -> Directory | None:
        return self.reading.directory

    @property
    def holds(self) -> tuple[Hold, ...]:
        return self.reading.holds

    @property
    def joins(self) -> tuple[JoinReport, ...]:
        return self.reading.joins

    @property
    def sources(self) -> tuple[TableCount, ...]:
        return self.reading.sources

    @property
    def substitutes(self) -> tuple[LeadSubstitute, ...]:
        return self.stand_ins.substitutes


@dataclass(frozen=True, slots=True)
class Uncounted:
    """The people sent whom DX does not count yet (their e-mails, sorted: named, not
    failed), and the teams where DX counts fewer than sent and whom cannot be told yet."""

    emails: tuple[str, ...] = ()
    undecided: tuple[Undecided, ...] = ()


@dataclass(frozen=True, slots=True)
class SyncResult:
    run_id: str
    outcome: Outcome
    counts: Mapping[str, int] = field(default_factory=dict)
    reason: str | None = None
    resume_at: datetime | None = None
    report: str = ""  # human-readable text for `hrsync plan` / `sync --dry-run`
    # The plan the run ran, once it had one (what reading found travels in it).
    planned: Planned | None = None
    attributes: AttributeResult | None = None  # the attribute step, once it ran
    action: str | None = None  # the command a person runs to resolve it (a refusal's approval)
    problems: tuple[str, ...] = ()  # every problem of a refused export, one line per kind
    # What deferred the run, as `core.guards` names it (the import back-off counts
    # `import_in_progress`; a run the lease turned away is `lease_held`, one stopped while
    # verifying what it sent `stopped_verifying`); None when not deferred, or deferred by a
    # shutdown before sending.
    defer_kind: DeferralKind | Literal["lease_held", "stopped_verifying"] | None = None
    uncounted: Uncounted = Uncounted()

    # What the run planned and read, for what reads a result (all empty before a plan).

    @property
    def plan(self) -> Plan | None:
        return self.planned.plan if self.planned is not None else None

    @property
    def reading(self) -> Reading | None:
        return self.planned.reading if self.planned is not None else None

    @property
    def people_count(self) -> int | None:
        return self.planned.people_count if self.planned is not None else None

    @property
    def preview_url(self) -> str | None:
        return self.planned.preview_url if self.planned is not None else None

    @property
    def unplaced(self) -> tuple[Unplaced, ...]:
        return self.planned.reading.unplaced if self.planned is not None else ()

    @property
    def leads_left(self) -> tuple[LeadLeft, ...]:
        return self.planned.reading.leads_left if self.planned is not None else ()

    @property
    def held(self) -> tuple[Hold, ...]:
        return self.planned.holds if self.planned is not None else ()

    @property
    def rows(self) -> tuple[TeamRow, ...]:
        """The desired teams with their reference_ids (`plan --format tree|json`)."""
        return self.planned.assignment.teams if self.planned is not None else ()

    @property
    def substitutes(self) -> tuple[LeadSubstitute, ...]:
        return self.planned.substitutes if self.planned is not None else ()

    @property
    def joins(self) -> tuple[JoinReport, ...]:
        return self.planned.joins if self.planned is not None else ()

    @property
    def precedence(self) -> tuple[PrecedenceReport, ...]:
        return self.planned.reading.precedence if self.planned is not None else ()

    @property
    def sources(self) -> tuple[TableCount, ...]:
        return self.planned.sources if self.planned is not None else ()

    @property
    def untrusted(self) -> frozenset[Kind]:
        return self.planned.reading.untrusted if self.planned is not None else frozenset()

    @property
    def approval(self) -> Approval | None:
        """What let the plan past the guards: a person's approval, or this run's flags."""
        return self.planned.approval if self.planned is not None else None

    @property
    def plan_id(self) -> str | None:
        """The plan's id when a guard refused it, or an approval or flags let it past;
        else a refused attribute step's, which a person approves the same way."""
        if self.planned is not None and self.planned.plan_id is not None:
            return self.planned.plan_id
        attributes = self.attributes
        if attributes is not None and attributes.outcome is AttributeOutcome.REFUSED:
            return attributes.plan_id
        return None

    @property
    def not_in_dx(self) -> tuple[str, ...]:
        return self.uncounted.emails

    @property
    def not_in_dx_undecided(self) -> tuple[Undecided, ...]:
        return self.uncounted.undecided

    @property
    def overall(self) -> Outcome:
        """The more serious of the hierarchy's and the attribute step's outcomes: what the
        run ends with for a person (exit code, attention, notifications). `outcome` stays
        the hierarchy's own (history, guards, the last success)."""
        if self.attributes is None:
            return self.outcome
        return Outcome(more_serious(self.outcome.value, self.attributes.outcome.value))

    @property
    def exit_code(self) -> int:
        return self.overall.exit_code


@dataclass(frozen=True)
class AttributeResult:
    outcome: AttributeOutcome
    updated: int = 0  # people whose call DX confirmed in full
    unchanged: int = 0  # people with nothing to send
    failed: int = 0  # people DX refused this run, or held after an earlier refusal
    reason: str | None = None
    plan: AttributePlan | None = None
    report: str = ""
    failures: Mapping[str, str] = field(default_factory=dict)  # e-mail -> error, this run
    action: str | None = None  # the command that approves a refused step
    # People not sent because DX does not count them yet (known before, or answered so
    # this run), by e-mail: named, never a failure.
    waiting: tuple[str, ...] = ()
    plan_id: str | None = None  # a refused step's plan id: what a person approves

    @property
    def counts(self) -> dict[str, int]:
        return dict(
            zip(ATTRIBUTE_COUNT_KEYS, (self.updated, self.unchanged, self.failed), strict=True)
        )


class RunEnded(Exception):
    """Control flow, not an error: a stage decided how the run ends. Raised only through
    `hrsync.sync.context.end`; caught only by the story, which records and logs `result`."""

    def __init__(self, result: SyncResult) -> None:
        super().__init__(result.outcome.value)
        self.result = result
