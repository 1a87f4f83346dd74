"""The run's vocabulary, shared by every stage and by what reads a run's result (the
daemon, the monitor, the commands): the request, the result, the attribute step's result,
and `RunEnded`, the control-flow exception a stage ends the run with.

A leaf of the `sync` room: it imports only the core and the outcome, so nothing that
reads a result pulls in the run's machinery, and no stage imports another for a type.
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
from hrsync.core.people.joins import JoinReport
from hrsync.core.people.precedence import PrecedenceReport
from hrsync.core.people.union import SourceCount
from hrsync.core.teams.held import Hold
from hrsync.core.teams.identity import TeamRow
from hrsync.core.teams.mapping import LeadLeft, Unplaced
from hrsync.core.teams.substitutes import LeadSubstitute
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
    attributes: AttributeResult | None = None  # the attribute step, once it ran
    # People kept from the export but in no team, with why (the plan's section).
    unplaced: tuple[Unplaced, ...] = ()
    # Managers who left while people still name them: each team kept, and its stand-in.
    leads_left: tuple[LeadLeft, ...] = ()
    # People held for a problem of their own row, and where DX keeps them.
    held: tuple[Hold, ...] = ()
    # The desired teams with their reference_ids, once planned (`plan --format tree|json`).
    rows: tuple[TeamRow, ...] = ()
    # Teams whose lead DX does not know yet, and who stands in for them in what was sent.
    substitutes: tuple[LeadSubstitute, ...] = ()
    action: str | None = None  # the command a person runs to resolve it (a refusal's approval)
    problems: tuple[str, ...] = ()  # every problem of a refused export, one line per kind
    # What deferred the run, as `core.guards` names it (the import back-off counts
    # `import_in_progress`; a run the lease turned away is `lease_held`); None when not
    # deferred, or deferred by a shutdown.
    defer_kind: DeferralKind | Literal["lease_held"] | None = None
    # The people sent whom DX does not count yet (their e-mails, sorted): named, not failed.
    not_in_dx: tuple[str, ...] = ()
    # Teams where DX counts fewer than sent and whom it does not count cannot be told yet.
    not_in_dx_undecided: tuple[Undecided, ...] = ()
    # The plan's id when a guard refused it, or an approval or override flags let it past.
    plan_id: str | None = None
    # What let it past the guards: a person's approval, or this run's flags (via "sync").
    approval: Approval | None = None
    # Each `[[source.join]]` as the run read it (`check`, `plan --format json`), and whether
    # its counts may be the join guard's next baseline (not when a run in sync skipped
    # the guard while a join matched far less).
    joins: tuple[JoinReport, ...] = ()
    joins_trusted: bool = True
    # Each `[source.fields]` precedence list: how often each of its columns gave the value.
    precedence: tuple[PrecedenceReport, ...] = ()
    # With `[[source.union]]`: each source's rows and people, and whether they may be the
    # per-source shrink guard's next baseline (as the joins').
    sources: tuple[SourceCount, ...] = ()
    sources_trusted: bool = True

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
