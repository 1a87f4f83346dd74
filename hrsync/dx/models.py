"""Typed replies of the DX Web API.

Parsers are liberal: unknown fields are ignored, optional fields may be
missing or null, so a server that adds fields does not break us.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any


@dataclass(frozen=True, slots=True)
class DxUser:
    id: str
    name: str
    email: str


@dataclass(frozen=True, slots=True)
class WhoAmI:
    auth_token_type: str  # personal_access_token | account_web_api_token
    account_name: str
    user: DxUser | None
    team_name: str | None


@dataclass(frozen=True, slots=True)
class ApiKey:
    id: str
    name: str
    scopes: tuple[str, ...]
    created_at: datetime | None
    last_used_at: datetime | None


@dataclass(frozen=True, slots=True)
class DxTeam:
    """A team as `teams.list` returns it."""

    id: str
    name: str
    parent_id: str | None
    reference_id: str | None
    manager_id: str | None = None
    contributors: int = 0
    is_parent: bool = False
    ancestors: tuple[str, ...] = ()
    last_changed_at: datetime | None = None


@dataclass(frozen=True, slots=True)
class Snapshot:
    id: str
    scheduled_for: str | None
    completed_at: datetime | None
    deleted_at: datetime | None
    completed_count: int = 0
    total_count: int = 0


@dataclass(frozen=True, slots=True)
class AuditEvent:
    id: str
    actor: str
    team: str
    action: str  # change_name | change_manager | anything newer
    created: datetime
    before: Any = None  # metadata.from: a name, or {id, name, email}
    after: Any = None  # metadata.to
    metadata: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class ImportAccepted:
    """Success of `process` / `preview`: DX says little beyond `ok`."""

    import_id: str | None
    preview_url: str | None
    raw: dict[str, Any] = field(default_factory=dict)
