"""A submission as the store keeps it: its status, and what was recorded before `process`.

The run writes a `SubmittedPlan` before the HTTP call, so a restart can verify what may
have reached DX instead of guessing. Its JSON shape (the `plan_json` column) is the one
earlier versions wrote: a store written by them is read by this one.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from enum import StrEnum
from typing import Any

from hrsync.core.gate.plan import LeadChange, Rename, SeenTeam
from hrsync.core.teams.identity import KnownIdentity, TeamRow


class SubmissionStatus(StrEnum):
    """Where a submission stands; the value is what the `status` column holds."""

    PENDING = "pending"  # recorded, not sent yet (a crash here: DX may or may not have it)
    SENT = "sent"  # from here on DX may have it
    ACCEPTED = "accepted"
    OUTCOME_UNKNOWN = "outcome_unknown"  # no answer came back
    VERIFIED = "verified"  # DX showed all of it
    UNVERIFIED = "unverified"  # the run gave up waiting; DX may still apply it
    SUPERSEDED = "superseded"  # a later run found DX showing none of it and planned anew
    REJECTED = "rejected"
    DEFERRED = "deferred"
    FAILED = "failed"


# May have reached DX without being verified: the next run looks before planning.
UNFINISHED = frozenset(
    {
        SubmissionStatus.PENDING,
        SubmissionStatus.SENT,
        SubmissionStatus.ACCEPTED,
        SubmissionStatus.OUTCOME_UNKNOWN,
        SubmissionStatus.UNVERIFIED,
    }
)
# DX answered these without taking the request.
NEVER_REACHED_DX = frozenset(
    {SubmissionStatus.REJECTED, SubmissionStatus.DEFERRED, SubmissionStatus.FAILED}
)


@dataclass(frozen=True, slots=True)
class SubmittedPlan:
    """What a submission asked of DX, recorded before the call."""

    rows: tuple[TeamRow, ...]
    archived_refs: tuple[str, ...] = ()
    archived_dx_ids: tuple[str, ...] = ()
    # Teams whose new lead or members teams.list cannot show: reference_id -> DX's
    # last_changed_at before the submission; done once DX reports a later one.
    awaiting_change: Mapping[str, datetime] = field(default_factory=dict)
    # Teams holding people DX is not known to count, with DX's last_changed_at before the
    # submission: watched for a short while (who DX counts), never waited for.
    watching: Mapping[str, datetime] = field(default_factory=dict)
    # Kept once DX may have the submission (not before: a rejected request must not
    # retire teams DX still has).
    identities: tuple[KnownIdentity, ...] = ()
    renames: tuple[Rename, ...] = ()
    lead_changes: tuple[LeadChange, ...] = ()
    counts: Mapping[str, int] = field(default_factory=dict)
    digest: str = ""

    def payload_rows(self) -> dict[str, dict[str, Any]]:
        """The rows as sent, by reference_id."""
        return {r.reference_id: r.to_payload() for r in self.rows}

    def to_json(self) -> str:
        # `watching` only when there is any: a record without it reads as earlier ones do.
        watching = (
            {"watching": {ref: at.isoformat() for ref, at in self.watching.items()}}
            if self.watching
            else {}
        )
        return json.dumps(
            {
                **watching,
                "awaiting_change": {
                    ref: at.isoformat() for ref, at in self.awaiting_change.items()
                },
                "identities": [_identity_to_dict(i) for i in self.identities],
                "rows": [{"key": r.key, **r.to_payload()} for r in self.rows],
                "archived_refs": list(self.archived_refs),
                "archived_dx_ids": list(self.archived_dx_ids),
                "renames": [dataclasses.asdict(c) for c in self.renames],
                "lead_changes": [dataclasses.asdict(c) for c in self.lead_changes],
                "counts": dict(self.counts),
                "digest": self.digest,
            },
            separators=(",", ":"),
        )

    @classmethod
    def from_json(
        cls,
        text: str,
        payload: Sequence[Mapping[str, Any]] | Callable[[], Sequence[Mapping[str, Any]]] = (),
    ) -> SubmittedPlan:
        """`payload`: the rows as sent, for records older than the `rows` key; a callable
        is called only then (the payload of a large org is megabytes of JSON)."""
        d: Mapping[str, Any] = json.loads(text or "{}")
        rows = d.get("rows") or (payload() if callable(payload) else payload)
        return cls(
            rows=tuple(_row_from_dict(r) for r in rows),
            archived_refs=tuple(d.get("archived_refs", ())),
            archived_dx_ids=tuple(d.get("archived_dx_ids", ())),
            awaiting_change={
                ref: datetime.fromisoformat(str(at))
                for ref, at in d.get("awaiting_change", {}).items()
            },
            watching={
                ref: datetime.fromisoformat(str(at)) for ref, at in d.get("watching", {}).items()
            },
            identities=tuple(_identity_from_dict(i) for i in d.get("identities", ())),
            renames=tuple(Rename(**r) for r in d.get("renames", ())),
            lead_changes=tuple(LeadChange(**c) for c in d.get("lead_changes", ())),
            counts=dict(d.get("counts", {})),
            digest=str(d.get("digest", "")),
        )


def seen_to_json(seen: Mapping[str, SeenTeam]) -> str:
    return json.dumps(
        {
            ref: {
                "manager_id": s.manager_id,
                "last_changed_at": s.last_changed_at.isoformat() if s.last_changed_at else None,
            }
            for ref, s in seen.items()
        },
        separators=(",", ":"),
    )


def seen_from_json(text: str | None) -> dict[str, SeenTeam]:
    values: Mapping[str, Mapping[str, Any]] = json.loads(text) if text else {}
    return {
        ref: SeenTeam(
            manager_id=s.get("manager_id"),
            last_changed_at=(
                datetime.fromisoformat(s["last_changed_at"]) if s.get("last_changed_at") else None
            ),
        )
        for ref, s in values.items()
    }


def _row_from_dict(d: Mapping[str, Any]) -> TeamRow:
    return TeamRow(
        key=str(d.get("key", "")),
        reference_id=str(d["reference_id"]),
        name=str(d["name"]),
        lead_email=str(d["team_lead_email"]),
        parent_reference_id=d.get("parent_team_reference_id"),
        parent_name=d.get("parent_team_name"),
        contributors=tuple(d.get("contributors", ())),
    )


def _identity_to_dict(identity: KnownIdentity) -> dict[str, Any]:
    # Every field under its own name, as `renames` are kept; the members in one stable
    # order.
    return identity._asdict() | {"members": sorted(identity.members)}


def _identity_from_dict(d: Mapping[str, Any]) -> KnownIdentity:
    members: Iterable[str] = d.get("members", ())
    return KnownIdentity(
        key=d["key"],
        reference_id=d["reference_id"],
        name=d["name"],
        parent_key=d.get("parent_key"),
        lead_email=d.get("lead_email"),
        members=tuple(sorted(set(members))),
        retired=bool(d.get("retired")),
    )


def status_values(statuses: frozenset[SubmissionStatus]) -> list[str]:
    """The statuses as the store writes them, in a stable order (for SQL's IN)."""
    return sorted(s.value for s in statuses)
