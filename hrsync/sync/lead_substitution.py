"""A lead DX does not know yet: plan again in the same run with the nearest lead above
standing in (`mapping.lead_not_in_dx = "next_manager"`; the rule is core/substitutes.py).

DX refuses a whole import when a row's `team_lead_email` is not a DX user, and names the
row. When every row it names is such a lead, and the rows can be read, the run plans
again with stand-ins and sends that instead, at most `MAX_REPLANS` times; anything else
DX refused stays a rejection, as loud as before. A later run plans with the real lead
again, so the lead takes over in the first run after they join DX.
"""

from __future__ import annotations

import dataclasses

from hrsync import logs
from hrsync.core.render import render_plan, render_substitutes
from hrsync.core.substitutes import LeadSubstitute, substitute_leads
from hrsync.dx.errors import DxRejected
from hrsync.logcap import capped
from hrsync.sync.context import Planned, Run
from hrsync.sync.error_outcomes import named_rows
from hrsync.sync.planning import plan_rows

log = logs.get_logger(__name__)

# Each plan again settles every lead DX named; a second covers a stand-in DX refuses too.
MAX_REPLANS = 2


def with_substitutes(run: Run, planned: Planned, refusal: DxRejected) -> Planned | None:
    """`planned` again with stand-ins for the leads DX named, or None when DX's refusal
    is anything else (or cannot be read): then it stands."""
    if run.settings.mapping.lead_not_in_dx != "next_manager" or planned.replans >= MAX_REPLANS:
        return None
    named = named_rows(refusal.error_details, planned.payload())
    if not named or any(row["field"] != "team_lead_email" for row in named):
        return None
    leads = [row["lead"] for row in named]
    if not all(isinstance(lead, str) for lead in leads):
        return None  # a named row we cannot match to what we sent
    unknown = {str(lead) for lead in leads} | {s.lead_email for s in planned.substitutes}
    hr_rows = planned.hr_rows or planned.assignment.teams
    substituted = substitute_leads(hr_rows, unknown)
    if substituted is None:
        return None  # a top team's lead: nobody above can stand in
    rows, substitutes = substituted
    with capped(log, "sync.lead_substituted") as events:
        for substitute in substitutes:
            events.emit(LeadSubstitute.log_fields, substitute, "warning")
    plan = plan_rows(run, rows, planned.dx_teams, planned.assignment.unreferenced_dx)
    return dataclasses.replace(
        planned,
        assignment=dataclasses.replace(planned.assignment, teams=rows),
        plan=plan,
        report=render_plan(plan) + render_substitutes(substitutes) + planned.notes,
        substitutes=substitutes,
        replans=planned.replans + 1,
        hr_rows=hr_rows,
    )
