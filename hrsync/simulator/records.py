"""The simulator's state, as plain mutable records (the core owns and locks them)."""

from __future__ import annotations

import base64
from dataclasses import dataclass, field
from datetime import date, datetime
from typing import Any, Final, Literal

# DX's root teams carry parent_id "LTE" (base64 of "-1") and their ancestors start with it.
ROOT_SENTINEL: Final = "LTE"

ORG_TOKEN: Final = "account_web_api_token"
PERSONAL_TOKEN: Final = "personal_access_token"
TOKEN_KINDS: Final = frozenset({ORG_TOKEN, PERSONAL_TOKEN})


def opaque_id(number: int) -> str:
    """DX-looking ids: the unpadded base64 of a decimal number (``50877`` -> ``NTA4Nzc``)."""
    return base64.b64encode(str(number).encode("ascii")).decode("ascii").rstrip("=")


class IdMint:
    """Hands out fresh opaque ids from a counter, skipping any already taken."""

    def __init__(self, start: int) -> None:
        self._next = start
        self._taken: set[str] = set()

    def reserve(self, existing_id: str) -> None:
        self._taken.add(existing_id)

    def mint(self) -> str:
        while True:
            candidate = opaque_id(self._next)
            self._next += 1
            if candidate not in self._taken:
                self._taken.add(candidate)
                return candidate


@dataclass(slots=True)
class UserRecord:
    id: str
    name: str
    email: str
    attributes: dict[str, str] = field(default_factory=dict)


@dataclass(slots=True)
class TokenRecord:
    value: str
    kind: str
    scopes: frozenset[str]
    user_email: str | None = None
    api_key_id: str | None = None


@dataclass(slots=True)
class ApiKeyRecord:
    id: str
    name: str
    scopes: tuple[str, ...]
    created_at: datetime
    last_used_at: datetime | None = None


@dataclass(slots=True)
class TeamRecord:
    id: str
    name: str
    reference_id: str | None
    parent_id: str | None  # None: a root team (shown with the sentinel parent id)
    manager_id: str
    member_emails: list[str]  # canonical e-mails of users DX knows, in request order
    last_changed_at: datetime
    archived_at: datetime | None = None
    # Until `count_shown_at`, teams.list still shows `count_before` contributors: DX's
    # counts may trail an import (hrsync.simulator.variation).
    count_before: int = 0
    count_shown_at: datetime | None = None

    def contributor_count(self, now: datetime) -> int:
        if self.count_shown_at is not None and now < self.count_shown_at:
            return self.count_before
        return len(self.member_emails)

    @property
    def active(self) -> bool:
        return self.archived_at is None


@dataclass(slots=True)
class SnapshotRecord:
    id: str
    scheduled_for: date
    completed_at: datetime | None
    deleted_at: datetime | None
    completed_count: int = 0
    total_count: int = 0


@dataclass(frozen=True, slots=True)
class AuditRecord:
    seq: int  # order of recording; newest first means highest seq first
    id: str
    actor: str
    team: str
    action: str
    metadata: dict[str, Any]
    created: datetime
    shown_at: datetime | None = None  # when teams.auditTrail lists it (None: at `created`)

    def shown(self, now: datetime) -> bool:
        return now >= (self.shown_at or self.created)


@dataclass(frozen=True, slots=True)
class HierarchyRow:
    """One validated HierarchyTeam of an orgfiles request."""

    index: int
    name: str
    reference_id: str
    lead_email: str
    parent_reference_id: str | None
    parent_name: str | None
    contributors: tuple[str, ...]


@dataclass(slots=True)
class ImportRecord:
    id: str
    kind: Literal["process", "preview"]
    accepted_at: datetime
    rows: tuple[HierarchyRow, ...]
    actor: str
    email: str | None = None
    due_at: datetime | None = None  # process only: when the import completes
    applied_at: datetime | None = None


@dataclass(frozen=True, slots=True)
class Notification:
    """The e-mail `process` promises to the `email` address when an import ends."""

    email: str
    import_id: str
    outcome: Literal["succeeded", "failed"]
    at: datetime
