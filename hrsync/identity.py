"""Stable reference_ids for teams: assignment, continuity and adoption (pure).

CONTRACT: `TeamRow` is one HierarchyTeam of the payload; `KnownIdentity`
is what the store keeps per team.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True, slots=True)
class KnownIdentity:
    key: str  # HR key
    reference_id: str
    name: str
    parent_key: str | None
    lead_email: str | None
    members: frozenset[str]
    retired: bool = False


@dataclass(frozen=True, slots=True)
class TeamRow:
    """One HierarchyTeam, exactly as `orgfiles.teamHierarchy.*` takes it, plus our key."""

    key: str
    reference_id: str
    name: str
    lead_email: str
    parent_reference_id: str | None
    parent_name: str | None
    contributors: tuple[str, ...]

    def to_payload(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "reference_id": self.reference_id,
            "team_lead_email": self.lead_email,
            "parent_team_reference_id": self.parent_reference_id,
            "parent_team_name": self.parent_name,
            "contributors": list(self.contributors),
        }
