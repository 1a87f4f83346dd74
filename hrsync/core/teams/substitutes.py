"""A team whose lead DX does not know yet, led for now by the nearest lead above (pure).

DX takes a team's lead only when the lead is a DX user; people often join DX days after
HR lists them. When DX names such rows (`invalid_rows` on `team_lead_email`), the team
is led by the lead of its parent team, and if DX does not know that one either, by the
next one up. Rows come parents first, so a parent's lead is settled before its children
look at it. The team keeps its name, members and reference_id; only the lead stands in.
A top team has nobody above it: then there is no substitute, and DX's refusal stands.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from typing import NamedTuple

from hrsync.core.teams.identity import TeamRow


class LeadSubstitute(NamedTuple):
    reference_id: str
    team: str
    lead_email: str  # the lead HR names, whom DX does not know yet
    substitute_email: str  # who leads the team in DX until they join

    def log_fields(self) -> dict[str, str]:
        """As the log tells it (`sync.lead_substituted`, `sync.finished.lead_substitutes`)."""
        return {
            "team": self.team,
            "reference_id": self.reference_id,
            "lead": self.lead_email,
            "substitute": self.substitute_email,
        }

    def shown(self) -> dict[str, str]:
        """As `hrsync status` and the webhook show it to a person."""
        return {
            "team": self.team,
            "reference_id": self.reference_id,
            "lead": self.lead_email,
            "stands_in": self.substitute_email,
        }


def substitute_leads(
    rows: Sequence[TeamRow], unknown_leads: Collection[str]
) -> tuple[tuple[TeamRow, ...], tuple[LeadSubstitute, ...]] | None:
    """`rows` (parents before children) with each lead in `unknown_leads` (e-mails, any
    case) replaced by the nearest lead above; None when a team with such a lead has no
    team above it."""
    unknown = {email.casefold() for email in unknown_leads}
    settled: dict[str, TeamRow] = {}
    out: list[TeamRow] = []
    substitutes: list[LeadSubstitute] = []
    for row in rows:
        if row.lead_email.casefold() in unknown:
            parent = settled.get(row.parent_reference_id or "")
            if parent is None:
                return None
            # The parent's lead is already one DX knows (substituted itself if need be).
            substitutes.append(
                LeadSubstitute(row.reference_id, row.name, row.lead_email, parent.lead_email)
            )
            row = row._replace(lead_email=parent.lead_email)
        settled[row.reference_id] = row
        out.append(row)
    return tuple(out), tuple(substitutes)
