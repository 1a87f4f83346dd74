"""Desired teams against DX's current teams: what one `process` call would change (pure).

DX's `teams.list` shows names, parents and a contributor count, but no lead e-mail and
no member list. Names and parents are therefore judged against DX itself, while leads
and membership are judged against what hrsync last submitted and saw verified
(`last_submitted`). A team hrsync never verified has an unknown lead: the plan says so
instead of claiming to know what changes.

Names and parents are compared as `hrsync.core.gate.compare` says, the same way verifying
does after a submission.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any, ClassVar

from hrsync.core.gate.compare import DxTeams, compare, index_dx
from hrsync.core.teams.identity import TeamRow
from hrsync.core.text import parent_label, quoted
from hrsync.dx.models import DxTeam

# The log contract (docs/reference/log-events.md, `sync.finished.counts`): exactly these
# keys, in this order.
COUNT_KEYS: tuple[str, ...] = (
    "create",
    "rename",
    "move",
    "lead_change",
    "membership_change",
    "archive",
    "unchanged",
)


# ---------------------------------------------------------------- changes


@dataclass(frozen=True, slots=True)
class Create:
    kind: ClassVar[str] = "create"
    reference_id: str
    name: str
    parent_reference_id: str | None
    parent_name: str | None
    lead_email: str
    contributors: int
    # The contributors' e-mails, sorted: a first sync's membership, to review.
    members: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class Rename:
    kind: ClassVar[str] = "rename"
    reference_id: str
    old_name: str
    new_name: str


@dataclass(frozen=True, slots=True)
class Move:
    kind: ClassVar[str] = "move"
    reference_id: str
    name: str
    old_parent_name: str | None  # None: a root team
    new_parent_name: str | None
    old_parent_reference_id: str | None  # None: root, or a parent with no reference_id
    new_parent_reference_id: str | None


@dataclass(frozen=True, slots=True)
class LeadChange:
    """`old_lead` None: hrsync has no verified submission for this team (adopted, or the
    state store was lost), so the lead DX has now is unknown; members are unknown too."""

    kind: ClassVar[str] = "lead_change"
    reference_id: str
    name: str
    old_lead: str | None
    new_lead: str
    contributors: int
    # DX shows a lead other than the one hrsync set (changed by hand): set it back.
    drift: bool = False

    @property
    def old_lead_known(self) -> bool:
        return self.old_lead is not None


@dataclass(frozen=True, slots=True)
class MembershipChange:
    kind: ClassVar[str] = "membership_change"
    reference_id: str
    name: str
    added: tuple[str, ...]
    removed: tuple[str, ...]
    old_count: int
    new_count: int
    # DX changed the team after hrsync's last verified submission (by hand): members
    # may differ from what was sent, so they are sent again.
    drift: bool = False


@dataclass(frozen=True, slots=True)
class Archive:
    kind: ClassVar[str] = "archive"
    reference_id: str | None  # None: the team was never given one (web app?)
    name: str
    dx_id: str
    contributors: int
    note: str | None = None


@dataclass(frozen=True, slots=True)
class Unchanged:
    kind: ClassVar[str] = "unchanged"
    reference_id: str
    name: str


Change = Create | Rename | Move | LeadChange | MembershipChange | Archive | Unchanged


@dataclass(frozen=True, slots=True)
class Drift:
    """DX differs from the last verified submission although the export did not change:
    somebody edited DX by hand. The run corrects it and says so."""

    reference_id: str
    name: str
    details: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class SeenTeam:
    """What DX showed for a team right after hrsync's last verified submission."""

    manager_id: str | None
    last_changed_at: datetime | None


@dataclass(frozen=True, slots=True)
class Plan:
    changes: tuple[Change, ...]
    drift: tuple[Drift, ...]
    payload_digest: str
    desired_count: int
    # Bytes of the `teams` value as compact UTF-8 JSON (`payload_size`), for the 5 MB
    # guard: counted from the same encoding as the digest, not a second one.
    payload_bytes: int

    @property
    def counts(self) -> dict[str, int]:
        counts = dict.fromkeys(COUNT_KEYS, 0)
        for change in self.changes:
            counts[change.kind] += 1
        return counts

    @property
    def archives(self) -> list[Archive]:
        return [c for c in self.changes if isinstance(c, Archive)]

    @property
    def has_changes(self) -> bool:
        return any(not isinstance(c, Unchanged) for c in self.changes)

    def of_kind(self, kind: str) -> list[Change]:
        if kind not in COUNT_KEYS:
            raise ValueError(f"unknown change kind {kind!r}; known: {', '.join(COUNT_KEYS)}")
        return [c for c in self.changes if c.kind == kind]


# ---------------------------------------------------------------- payload identity


def _canonical_team(row: TeamRow) -> dict[str, Any]:
    payload = row.to_payload()
    payload["contributors"] = sorted(payload["contributors"])
    return payload


def canonical_payload(rows: Iterable[TeamRow]) -> bytes:
    """The desired rows as compact JSON in a canonical order (teams by reference_id,
    contributors sorted): equal payloads give equal bytes whatever order they came in.

    Its length is `payload_size`: reordering keys and list items changes no byte count.

    Text with nothing JSON escapes (no quote, backslash or control character: almost every
    export) is written out directly, ~3x faster than the encoder; `canonical_payload_json`
    is the encoder's way, the reference the fast one is tested against byte for byte."""
    ordered = sorted(rows, key=_by_reference)
    written = _written_out(ordered)
    # Nothing to escape if the text holds no control character (`isprintable` is False
    # for each, and for more, which only costs the encoder's way), no backslash, and
    # no quote beyond those the layout puts around keys and values.
    if written.isprintable() and "\\" not in written and written.count('"') == _quotes(ordered):
        return written.encode()
    return canonical_payload_json(ordered)


def canonical_payload_json(rows: Iterable[TeamRow]) -> bytes:
    """`canonical_payload` through the JSON encoder, for any text."""
    teams = [_canonical_team(row) for row in sorted(rows, key=_by_reference)]
    # Built just above from plain rows, so no cycle to look for: the encoder's check
    # costs ~15% of a 50,000-person plan's encoding (issue 12).
    return json.dumps(
        teams, sort_keys=True, separators=(",", ":"), ensure_ascii=False, check_circular=False
    ).encode()


def _by_reference(row: TeamRow) -> str:
    return row.reference_id


def _quotes(rows: Sequence[TeamRow]) -> int:
    """How many quotes `_written_out` puts around keys and values: six keys, three values
    always, the parent's two when set, and each contributor's."""
    return sum(
        18
        + 2 * len(r.contributors)
        + (r.parent_name is not None) * 2
        + (r.parent_reference_id is not None) * 2
        for r in rows
    )


def _written_out(rows: Sequence[TeamRow]) -> str:
    """The canonical JSON of `rows` (sorted by reference_id) whose text needs no escaping:
    each value between quotes as it is, the keys in sorted order."""
    return (
        "["
        + ",".join(
            [
                f'{{"contributors":{_strings(sorted(r.contributors))},"name":"{r.name}",'
                f'"parent_team_name":{_string_or_null(r.parent_name)},'
                f'"parent_team_reference_id":{_string_or_null(r.parent_reference_id)},'
                f'"reference_id":"{r.reference_id}","team_lead_email":"{r.lead_email}"}}'
                for r in rows
            ]
        )
        + "]"
    )


def _strings(values: Sequence[str]) -> str:
    return '["' + '","'.join(values) + '"]' if values else "[]"


def _string_or_null(value: str | None) -> str:
    return "null" if value is None else f'"{value}"'


def payload_digest(rows: Iterable[TeamRow]) -> str:
    """sha256 (hex) of `canonical_payload`: how the engine tells that the desired payload
    equals the last verified submission."""
    return hashlib.sha256(canonical_payload(rows)).hexdigest()


def payload_size(rows: Iterable[TeamRow]) -> int:
    """Bytes of the `teams` value as compact UTF-8 JSON: what DX's 5 MB limit counts."""
    teams = [row.to_payload() for row in rows]
    return len(json.dumps(teams, separators=(",", ":"), ensure_ascii=False).encode())


# ---------------------------------------------------------------- planning


def make_plan(
    desired: Sequence[TeamRow],
    current: Sequence[DxTeam],
    last_submitted: Mapping[str, TeamRow],
    *,
    unreferenced_dx: Sequence[DxTeam] = (),
    last_seen: Mapping[str, SeenTeam] | None = None,
) -> Plan:
    """Compare the desired rows with DX's teams.

    `current` is `teams.list`; `unreferenced_dx` are DX teams the caller keeps apart
    (for instance those with no reference_id): they are treated exactly like `current`,
    i.e. archived unless desired and usable as parents. `last_submitted` holds the rows
    hrsync last submitted and saw verified, by reference_id; `last_seen` what DX showed
    right after that submission. A team DX shows with another lead (`manager_id`) or a
    later `last_changed_at` was changed by hand since: that is drift, and the plan sends
    the team again (a lead change it waits for, or its members once more).
    """
    refs = [row.reference_id for row in desired]
    duplicates = sorted(ref for ref, n in Counter(refs).items() if n > 1)
    if duplicates:
        raise ValueError(f"desired teams share reference_ids: {', '.join(duplicates)}")

    dx = index_dx([*current, *unreferenced_dx])

    changes: list[Change] = []
    drift: list[Drift] = []
    for row in desired:
        matched = dx.by_ref.get(row.reference_id)
        last = last_submitted.get(row.reference_id)
        team_changes = _team_changes(row, matched, last, dx)
        if last is not None:
            found = _drift(row, matched, dx) if _same_payload(row, last) else ()
            seen = (last_seen or {}).get(row.reference_id)
            by_hand = _hand_edits(matched, seen)
            if found or by_hand:
                drift.append(Drift(row.reference_id, row.name, (*found, *by_hand)))
            if by_hand and matched is not None and seen is not None:
                team_changes = _correct_drift(row, last, matched, seen, team_changes)
        changes.extend(team_changes)

    desired_refs = set(refs)
    leaving = [t for t in dx.by_ref.values() if t.reference_id not in desired_refs]
    leaving += [t for t in dx.by_id.values() if t.reference_id is None]
    archives = [_archive(t, note=None) for t in leaving]
    archives += [_archive(t, note="another DX team has the same reference_id") for t in dx.shadowed]
    archives.sort(key=lambda a: (a.name.casefold(), a.dx_id))
    changes.extend(archives)
    encoded = canonical_payload(desired)
    return Plan(
        changes=tuple(changes),
        drift=tuple(drift),
        payload_digest=hashlib.sha256(encoded).hexdigest(),
        desired_count=len(desired),
        payload_bytes=len(encoded),
    )


def _team_changes(
    row: TeamRow, team: DxTeam | None, last: TeamRow | None, dx: DxTeams
) -> list[Change]:
    if team is None:
        return [
            Create(
                reference_id=row.reference_id,
                name=row.name,
                parent_reference_id=row.parent_reference_id,
                parent_name=row.parent_name,
                lead_email=row.lead_email,
                contributors=len(set(row.contributors)),
                members=tuple(sorted(set(row.contributors))),
            )
        ]
    found: list[Change] = [c for c in rename_and_move(row, team, dx) if c is not None]
    if last is None:
        found.append(_lead_change(row, None))
    else:
        if last.lead_email != row.lead_email:
            found.append(_lead_change(row, last.lead_email))
        before, after = set(last.contributors), set(row.contributors)
        if before != after:
            found.append(
                MembershipChange(
                    reference_id=row.reference_id,
                    name=row.name,
                    added=tuple(sorted(after - before)),
                    removed=tuple(sorted(before - after)),
                    old_count=len(before),
                    new_count=len(after),
                )
            )
    if not found:
        found.append(Unchanged(row.reference_id, row.name))
    return found


def _lead_change(row: TeamRow, old_lead: str | None, *, drift: bool = False) -> LeadChange:
    """`row`'s lead as a change from `old_lead` (None: the lead DX has is not known)."""
    return LeadChange(
        row.reference_id, row.name, old_lead, row.lead_email, len(set(row.contributors)), drift
    )


def rename_and_move(row: TeamRow, team: DxTeam, dx: DxTeams) -> tuple[Rename | None, Move | None]:
    """The rename and the move that give DX's `team` the row's name and parent (None where
    DX already has it). The plan proposes them; after a submission the check reports the
    ones DX has not taken yet (`confirmation.verify`). Built here only, so the plan and
    the check describe a difference the same way."""
    seen = compare(row, team, dx)
    rename = Rename(row.reference_id, seen.name, row.name) if seen.renamed else None
    move = (
        Move(
            reference_id=row.reference_id,
            name=row.name,
            old_parent_name=seen.parent.name,
            new_parent_name=row.parent_name,
            old_parent_reference_id=seen.parent.reference_id,
            new_parent_reference_id=row.parent_reference_id,
        )
        if seen.moved
        else None
    )
    return rename, move


def _same_payload(a: TeamRow, b: TeamRow) -> bool:
    # The dicts, not their JSON: two encodings per team were a visible part of a plan.
    return _canonical_team(a) == _canonical_team(b)


def _drift(row: TeamRow, team: DxTeam | None, dx: DxTeams) -> tuple[str, ...]:
    if team is None:
        return ("missing from DX (archived or deleted by hand?)",)
    details: list[str] = []
    seen = compare(row, team, dx)
    if seen.renamed:
        details.append(f"name in DX is {quoted(seen.name)}, last submitted {quoted(row.name)}")
    if seen.moved:
        details.append(
            f"parent in DX is {parent_label(seen.parent.name)}, "
            f"last submitted {parent_label(row.parent_name)}"
        )
    return tuple(details)


def _hand_edits(team: DxTeam | None, seen: SeenTeam | None) -> tuple[str, ...]:
    if team is None or seen is None:
        return ()
    details: list[str] = []
    if seen.manager_id is not None and team.manager_id != seen.manager_id:
        details.append(
            f"lead in DX is user {team.manager_id}, not {seen.manager_id} as hrsync set it"
        )
    if (
        seen.last_changed_at is not None
        and team.last_changed_at is not None
        and team.last_changed_at > seen.last_changed_at
    ):
        details.append(
            f"changed in DX at {team.last_changed_at.isoformat()}, after hrsync's last "
            f"verified submission ({seen.last_changed_at.isoformat()})"
        )
    return tuple(details)


def _correct_drift(
    row: TeamRow, last: TeamRow, team: DxTeam, seen: SeenTeam, changes: list[Change]
) -> list[Change]:
    """Make sure a team edited by hand is sent again, and its lead awaited when it moved."""
    kept: list[Change] = []
    for change in changes:
        if isinstance(change, Unchanged):
            continue
        # What DX holds was changed by hand: it may already be what HR now says, and
        # then DX shows no change to wait for. Send it, but do not wait for evidence.
        if isinstance(change, LeadChange) and change.old_lead_known:
            change = dataclasses.replace(change, old_lead=None)
        elif isinstance(change, MembershipChange):
            change = dataclasses.replace(change, drift=True)
        kept.append(change)
    lead_moved = seen.manager_id is not None and team.manager_id != seen.manager_id
    if lead_moved and not any(isinstance(c, LeadChange) for c in kept):
        kept.append(_lead_change(row, None, drift=True))
    if not kept:
        members = len(set(row.contributors))
        kept.append(
            MembershipChange(row.reference_id, row.name, (), (), team.contributors, members, True)
        )
    return kept


def awaited_refs(plan: Plan) -> list[str]:
    """Teams whose change teams.list cannot show directly, so verification waits for DX's
    `last_changed_at` to move: a lead change from a lead hrsync knows, or set back after
    a hand edit, and a membership change. A lead hrsync never knew may already be right,
    and members re-sent after a hand edit may already match: DX would show nothing."""
    awaited = (
        change.reference_id
        for change in plan.changes
        if (isinstance(change, LeadChange) and (change.old_lead_known or change.drift))
        or (isinstance(change, MembershipChange) and not change.drift)
    )
    # A team may have both a lead and a membership change: once each, in plan order (a
    # dict, as a list's `in` made this quadratic: ~2.6 s for 20,000 such teams).
    return list(dict.fromkeys(awaited))


def _archive(team: DxTeam, note: str | None) -> Archive:
    if team.reference_id is None and note is None:
        note = "no reference_id: created in the web app?"
    return Archive(team.reference_id, team.name, team.id, team.contributors, note)
