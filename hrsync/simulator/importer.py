"""Applying an accepted team hierarchy import: DX's full replacement."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from hrsync.simulator.records import HierarchyRow, TeamRecord, UserRecord


@dataclass(frozen=True, slots=True)
class AuditDraft:
    """An audit event before it gets its id and sequence number."""

    team: str
    action: str
    metadata: dict[str, Any]


def user_json(user: UserRecord) -> dict[str, str]:
    return {"id": user.id, "name": user.name, "email": user.email}


def apply_import(
    teams: dict[str, TeamRecord],
    rows: Sequence[HierarchyRow],
    users_by_email: Mapping[str, UserRecord],
    users_by_id: Mapping[str, UserRecord],
    at: datetime,
    mint_team_id: Callable[[], str],
) -> list[AuditDraft]:
    """Make ``teams`` (id -> record, archived ones included) match ``rows``.

    Teams are matched by reference_id (an archived team with that reference_id is
    restored, keeping its id and history); unmatched rows become new teams; every
    active team the rows do not mention, including teams without a reference_id, is
    archived. Contributors DX does not know are dropped silently. Returns the audit
    events for renames and lead changes, in the order they happened.
    """
    by_reference = _teams_by_reference(teams)
    team_for_row: dict[str, TeamRecord] = {}
    drafts: list[AuditDraft] = []
    for row in rows:
        lead = users_by_email[row.lead_email.casefold()]
        members = _known_members(row.contributors, users_by_email)
        existing = by_reference.get(row.reference_id)
        if existing is None:
            team = TeamRecord(
                id=mint_team_id(),
                name=row.name,
                reference_id=row.reference_id,
                parent_id=None,
                manager_id=lead.id,
                member_emails=members,
                last_changed_at=at,
            )
            teams[team.id] = team
        else:
            team = existing
            changed = not team.active
            if team.name != row.name:
                drafts.append(
                    AuditDraft(team.name, "change_name", {"from": team.name, "to": row.name})
                )
                team.name = row.name
                changed = True
            if team.manager_id != lead.id:
                before = users_by_id.get(team.manager_id)
                drafts.append(
                    AuditDraft(
                        team.name,
                        "change_manager",
                        {
                            "from": user_json(before) if before is not None else None,
                            "to": user_json(lead),
                        },
                    )
                )
                team.manager_id = lead.id
                changed = True
            if team.member_emails != members:
                team.member_emails = members
                changed = True
            team.archived_at = None
            if changed:
                team.last_changed_at = at
        team_for_row[row.reference_id] = team
    for row in rows:
        team = team_for_row[row.reference_id]
        parent_id = team_for_row[row.parent_reference_id].id if row.parent_reference_id else None
        if team.parent_id != parent_id:
            team.parent_id = parent_id
            team.last_changed_at = at
    kept = {team.id for team in team_for_row.values()}
    for team in teams.values():
        if team.active and team.id not in kept:
            team.archived_at = at
            team.last_changed_at = at
    return drafts


def _teams_by_reference(teams: Mapping[str, TeamRecord]) -> dict[str, TeamRecord]:
    """Active teams win over archived ones; among archived, the latest archived wins."""
    found: dict[str, TeamRecord] = {}
    for team in teams.values():
        if team.reference_id is None:
            continue
        current = found.get(team.reference_id)
        if current is None or _preference(team) > _preference(current):
            found[team.reference_id] = team
    return found


def _preference(team: TeamRecord) -> tuple[int, datetime]:
    if team.archived_at is None:
        return (1, team.last_changed_at)
    return (0, team.archived_at)


def _known_members(emails: Sequence[str], users_by_email: Mapping[str, UserRecord]) -> list[str]:
    members: list[str] = []
    for email in emails:
        user = users_by_email.get(email.casefold())
        if user is not None and user.email not in members:
            members.append(user.email)
    return members
