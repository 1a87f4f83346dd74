"""A desired row against DX's team (pure): the one comparison planning and verifying share.

DX's `teams.list` shows a team's name and parent (and a contributor count, no lead
e-mail, no members). Whether DX's team has a row's name and parent is decided here only,
so the plan (what to change, what drifted) and the check after a submission (did DX
take it) cannot disagree about what "the same" means.

Parents are compared by reference_id: a DX team's `parent_id` is looked up among the DX
teams given, and that team's reference_id is the parent. A `parent_id` that names no
given team (DX's root sentinel, or nothing) means a root team.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from hrsync.core.teams.identity import TeamRow
from hrsync.dx.models import DxTeam


@dataclass(frozen=True, slots=True)
class DxParent:
    """Where a DX team hangs: `dx_id` None means root."""

    dx_id: str | None
    reference_id: str | None
    name: str | None

    @property
    def is_root(self) -> bool:
        return self.dx_id is None


ROOT = DxParent(None, None, None)


@dataclass(frozen=True, slots=True)
class DxTeams:
    """DX's teams indexed once.

    `by_id`: a team listed twice counts once. `by_ref`: when several teams share a
    reference_id, the one with the smallest id holds it; the others are `shadowed`
    (by id), so no caller picks a different one.
    """

    by_id: Mapping[str, DxTeam]
    by_ref: Mapping[str, DxTeam]
    shadowed: tuple[DxTeam, ...]

    def parent_of(self, team: DxTeam) -> DxParent:
        """The parent of `team` among these teams; root when `parent_id` names none of
        them (DX sends a sentinel id for root teams). `ancestors` is not used: it may
        start with a sentinel and may include the team itself."""
        if team.parent_id is None or team.parent_id == team.id:
            return ROOT
        parent = self.by_id.get(team.parent_id)
        if parent is None:
            return ROOT
        return DxParent(parent.id, parent.reference_id, parent.name)


def index_dx(teams: Iterable[DxTeam]) -> DxTeams:
    by_id: dict[str, DxTeam] = {}
    for team in teams:
        by_id.setdefault(team.id, team)
    by_ref: dict[str, DxTeam] = {}
    shadowed: list[DxTeam] = []
    for team in sorted(by_id.values(), key=lambda t: t.id):
        if team.reference_id is None:
            continue
        if team.reference_id in by_ref:
            shadowed.append(team)
        else:
            by_ref[team.reference_id] = team
    return DxTeams(by_id, by_ref, tuple(shadowed))


@dataclass(frozen=True, slots=True)
class Comparison:
    """DX's team beside the row: what DX shows, and whether it differs from the row."""

    name: str  # DX's name
    parent: DxParent  # DX's parent
    renamed: bool  # DX's name is not the row's
    moved: bool  # DX's parent is not the row's


def compare(row: TeamRow, team: DxTeam, teams: DxTeams) -> Comparison:
    parent = teams.parent_of(team)
    if row.parent_reference_id is None:
        same_parent = parent.is_root
    else:
        same_parent = not parent.is_root and parent.reference_id == row.parent_reference_id
    return Comparison(team.name, parent, team.name != row.name, not same_parent)
