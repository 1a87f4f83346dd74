"""People to desired teams: the manager-chain and department strategies (pure).

CONTRACT: `DesiredTeam` is what identity assignment consumes.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class DesiredTeam:
    key: str  # stable HR key: "manager:<lead employee_id>" or "department:<unit path or id>"
    name: str
    lead_email: str
    lead_employee_id: str | None
    parent_key: str | None  # None for a root team
    contributors: tuple[str, ...]  # sorted unique e-mails
