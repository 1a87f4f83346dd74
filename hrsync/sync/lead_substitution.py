"""A lead DX does not know yet: plan again in the same run with the nearest lead above
standing in (the rule is core/teams/substitutes.py).

DX refuses a whole import when a row's `team_lead_email` is not a DX user. How it says
which row is not public, so its answer is read whatever its shape
(core/confirmation/refusal_details.py). When it names leads, they are stood in for; when it names a
row for another field, the refusal stands; when it names nothing that can be read (a
message only), the new leads, those DX has never shown as users (never accepted as a
lead, not known to be counted: the store's dx_people), are stood in for. The run plans
again and sends that instead, at most `MAX_REPLANS` times and only while there is a lead
not yet stood in for; when DX refuses that too, its refusal stands, as loud as before.
A later run plans with the real lead again, so the lead takes over in the first run
after they join DX.
"""

from __future__ import annotations

import dataclasses

from hrsync import logs
from hrsync.core.confirmation.refusal_details import read_refusal, suspected_leads
from hrsync.core.report.render import render_plan, render_substitutes
from hrsync.core.teams.substitutes import LeadSubstitute, substitute_leads
from hrsync.dx.errors import DxRejected
from hrsync.logcap import log_each
from hrsync.sync.context import Run
from hrsync.sync.planning import plan_rows
from hrsync.sync.results import Planned, StandIns

log = logs.get_logger(__name__)

# Each plan again settles every lead DX named; a second covers a stand-in DX refuses too.
MAX_REPLANS = 2


def with_substitutes(run: Run, planned: Planned, refusal: DxRejected) -> Planned | None:
    """`planned` again with stand-ins for the leads DX named, or None when DX's refusal
    is anything else (or cannot be read): then it stands."""
    if planned.stand_ins.replans >= MAX_REPLANS:
        return None
    if refusal.error != "invalid_rows":
        return None  # a cycle, a size, an address: nothing a stand-in lead mends
    sent = planned.assignment.teams
    refusal_read = read_refusal(refusal.error_details, refusal.message, sent)
    suspects = suspected_leads(refusal_read, sent, shown_users(run))
    if suspects is None:
        return None  # DX named a row for something a stand-in does not mend
    before = {s.lead_email.casefold() for s in planned.substitutes}
    if not {lead.casefold() for lead in suspects} - before:
        return None  # nobody left to stand in for: what DX refuses is something else
    if refusal_read.names_nothing:
        log.warning(
            "sync.refusal_unread",
            error=refusal.error,
            suspects=len(suspects),
            see="the sync.lead_substituted events",
        )
    unknown = set(suspects) | {s.lead_email for s in planned.substitutes}
    hr_rows = planned.stand_ins.hr_rows or planned.assignment.teams
    substituted = substitute_leads(hr_rows, unknown)
    if substituted is None:
        return None  # a top team's lead: nobody above can stand in
    rows, substitutes = substituted
    log_each(log, "sync.lead_substituted", substitutes, LeadSubstitute.log_fields, "warning")
    plan = plan_rows(run, rows, planned.dx_teams, planned.assignment.unreferenced_dx)
    return dataclasses.replace(
        planned,
        assignment=dataclasses.replace(planned.assignment, teams=rows),
        plan=plan,
        report=render_plan(plan) + render_substitutes(substitutes) + planned.notes,
        stand_ins=StandIns(substitutes, planned.stand_ins.replans + 1, hr_rows),
    )


def shown_users(run: Run) -> frozenset[str]:
    """E-mails (casefolded) DX has shown to be its users: leads it took in the last
    hierarchy it verifiably took, and people it is known to count."""
    shown = {
        email.casefold() for email, person in run.store.people.dx_people().items() if person.counted
    }
    last = run.store.submissions.last_verified()
    if last is not None:
        shown.update(row.lead_email.casefold() for row in last.plan.rows)
    return frozenset(shown)
