"""Changes, plans, refusals and deferrals as a person reads them (the shell's presentation).

`describe` says one change as a sentence and `event_fields` gives its fields for the one
log event per change (`plan.change`). The plan is like a terraform plan: one line per
change under a heading per kind (`+` create, `~` rename, `>` move, `*` lead change,
`±` membership, `-` archive), then the counts. The plan lists archives in full: they are
what an operator must check. A refusal lists the first `LIMIT` of them (core.listing's
cap on every list a person reads) and says where the rest are; a log event lists the
first `LIMIT` e-mails of a membership change.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, TypeVar

from hrsync.core.command_lines import approve_command, hrsync_command
from hrsync.core.gate.guards import Deferral, Refusal
from hrsync.core.gate.plan import (
    Archive,
    Change,
    Create,
    LeadChange,
    MembershipChange,
    Move,
    Plan,
    Rename,
    Unchanged,
)
from hrsync.core.listing import LIMIT, capped
from hrsync.core.people import UnknownManager
from hrsync.core.teams.held import Hold
from hrsync.core.teams.mapping import LeadLeft, Unplaced
from hrsync.core.teams.substitutes import LeadSubstitute
from hrsync.core.text import parent_label, plural, quoted
from hrsync.dx.errors import DxRejected
from hrsync.terminal import one_line

T = TypeVar("T")

# A sentence about one change names fewer e-mails than other lists: it is one plan line.
DESCRIBE_CAP = 5

# ---------------------------------------------------------------- one change


def _ref_label(reference_id: str | None) -> str:
    return "no reference_id" if reference_id is None else reference_id


def describe(change: Change, *, emails: bool = True) -> str:
    """One line a person reads: what happens to which team. `emails=False` leaves out
    the members' e-mails (a log at info holds none)."""
    match change:
        case Create():
            return (
                f"create {quoted(change.name)} [{change.reference_id}] under "
                f"{parent_label(change.parent_name)}, lead {change.lead_email}, "
                f"{plural(change.contributors, 'contributor')}"
            )
        case Rename():
            old, new = quoted(change.old_name), quoted(change.new_name)
            return f"rename {old} -> {new} [{change.reference_id}]"
        case Move():
            return (
                f"move {quoted(change.name)} [{change.reference_id}] "
                f"from {parent_label(change.old_parent_name)} "
                f"to {parent_label(change.new_parent_name)}"
            )
        case LeadChange():
            if change.drift:
                return (
                    f"lead of {quoted(change.name)} [{change.reference_id}] was changed in DX "
                    f"by hand: will set lead {change.new_lead} again"
                )
            if change.old_lead is None:
                return (
                    f"lead of {quoted(change.name)} [{change.reference_id}] unknown to hrsync "
                    f"(no verified submission yet): will set lead {change.new_lead} "
                    f"and {plural(change.contributors, 'contributor')}"
                )
            return (
                f"change lead of {quoted(change.name)} [{change.reference_id}]: "
                f"{change.old_lead} -> {change.new_lead}"
            )
        case MembershipChange():
            if change.drift and not (change.added or change.removed):
                return (
                    f"members of {quoted(change.name)} [{change.reference_id}] may have been "
                    f"changed in DX by hand (DX counts {change.old_count}): will send "
                    f"{plural(change.new_count, 'contributor')} again"
                )
            parts = [
                f"members of {quoted(change.name)} [{change.reference_id}]: "
                f"+{len(change.added)} -{len(change.removed)} "
                f"({change.old_count} -> {plural(change.new_count, 'contributor')})"
            ]
            if change.added and emails:
                parts.append(f"added {capped(change.added, limit=DESCRIBE_CAP)}")
            if change.removed and emails:
                parts.append(f"removed {capped(change.removed, limit=DESCRIBE_CAP)}")
            if change.drift:
                parts.append("DX was changed by hand since hrsync's last verified submission")
            return "; ".join(parts)
        case Archive():
            line = (
                f"archive {quoted(change.name)} [{_ref_label(change.reference_id)}] "
                f"(DX id {change.dx_id}, {plural(change.contributors, 'contributor')})"
            )
            return f"{line}: {change.note}" if change.note else line
        case Unchanged():
            return f"unchanged {quoted(change.name)} [{change.reference_id}]"


def _capped(emails: Sequence[str]) -> list[str]:
    return list(emails[:LIMIT])


def team_name(change: Change) -> str:
    """The team a change is about, by the name it has after the change."""
    return change.new_name if isinstance(change, Rename) else change.name


def change_fields(change: Change) -> dict[str, Any]:
    """What a change of each kind carries besides its team, under the names both its log
    event (`event_fields`) and its JSON document (`plan --format json`) give them."""
    match change:
        case Create():
            return {
                "parent": change.parent_name,
                "parent_reference_id": change.parent_reference_id,
                "lead": change.lead_email,
                "contributors": change.contributors,
            }
        case Rename():
            return {"from": change.old_name, "to": change.new_name}
        case Move():
            return {
                "from": change.old_parent_name,
                "to": change.new_parent_name,
                "from_reference_id": change.old_parent_reference_id,
                "to_reference_id": change.new_parent_reference_id,
            }
        case LeadChange():
            return {
                "from": change.old_lead,
                "to": change.new_lead,
                "lead_known": change.old_lead_known,
            }
        case Archive():
            return {"dx_id": change.dx_id, "contributors": change.contributors, "note": change.note}
    return {}  # a membership change's fields differ between the two; unchanged has none


def event_fields(change: Change, *, emails: bool = True) -> dict[str, object]:
    """Key-value fields for the one log event per change (`plan.change`). The readable
    line is `describe(change)`, kept out of here so callers can name that field.
    `emails=False` leaves out the members' e-mails (their counts stay)."""
    fields: dict[str, object] = {
        "change": change.kind,
        "reference_id": change.reference_id,
        "team": team_name(change),
        **change_fields(change),
    }
    match change:
        case LeadChange():
            fields["drift"] = change.drift
        case MembershipChange():
            fields |= {
                "added_count": len(change.added),
                "removed_count": len(change.removed),
                **(
                    {"added": _capped(change.added), "removed": _capped(change.removed)}
                    if emails
                    else {}
                ),
                "from_count": change.old_count,
                "to_count": change.new_count,
                "drift": change.drift,
            }
    return fields


# ---------------------------------------------------------------- reports

_SECTIONS: tuple[tuple[str, str, str], ...] = (
    ("create", "+", "Create"),
    ("rename", "~", "Rename"),
    ("move", ">", "Move"),
    ("lead_change", "*", "Lead change"),
    ("membership_change", "±", "Membership change"),
    ("archive", "-", "Archive"),
)


def counts_line(plan: Plan) -> str:
    c = plan.counts
    return (
        f"Plan: {c['create']} to create, {c['rename']} to rename, {c['move']} to move, "
        f"{plural(c['lead_change'], 'lead change')}, "
        f"{plural(c['membership_change'], 'membership change')}, "
        f"{c['archive']} to archive, {c['unchanged']} unchanged."
    )


def _joined(lines: Sequence[str]) -> str:
    """A report's lines as its text. Each is one line: a line break inside one came with
    a value (a team name made in DX's web app) and is shown escaped, not followed."""
    return "".join(f"{one_line(line)}\n" for line in lines)


def render_plan(plan: Plan) -> str:
    if not plan.has_changes:
        unchanged = plural(plan.counts["unchanged"], "team")
        return f"No changes: DX matches the export ({unchanged} unchanged). Nothing to send.\n"
    lines: list[str] = []
    for kind, symbol, title in _SECTIONS:
        changes = plan.of_kind(kind)
        if not changes:
            continue
        lines.append(f"{title} ({len(changes)}):")
        lines.extend(f"  {symbol} {describe(change)}" for change in changes)
        lines.append("")
    if plan.drift:
        lines.append(f"Drift: DX was edited by hand ({len(plan.drift)}); this run corrects it:")
        for drift in plan.drift:
            details = "; ".join(drift.details)
            lines.append(f"  ! {quoted(drift.name)} [{drift.reference_id}]: {details}")
        lines.append("")
    unknown = sum(1 for c in plan.changes if isinstance(c, LeadChange) and c.old_lead is None)
    if unknown:
        lines.append(
            f"Note: {plural(unknown, 'team')} with a lead and members hrsync has not verified "
            "yet (adopted, or a new state store); DX shows no lead e-mails or member lists."
        )
        lines.append("")
    lines.append(counts_line(plan))
    return _joined(lines)


def approval_command(refusal: Refusal, config_path: Path | str | None) -> str | None:
    """The manual run that applies the refused plan once; None when it cannot be."""
    flags = refusal.override_flags
    return None if flags is None else hrsync_command(config_path, "sync", *flags)


def preview_command(refusal: Refusal, config_path: Path | str | None) -> str | None:
    """A preview: DX shows the change and applies nothing. With the refusal's plan id,
    exactly that refused plan (`sync --preview PLAN_ID`), not the export as it is by the
    time it is pasted; else the same run with the override flags, without which the
    same guards refuse the preview."""
    if refusal.plan_id is not None:
        return hrsync_command(config_path, "sync", "--preview", refusal.plan_id)
    flags = refusal.override_flags
    return None if flags is None else hrsync_command(config_path, "sync", "--preview", *flags)


def render_refusal(refusal: Refusal, config_path: Path | str | None = None) -> str:
    lines = ["Refused: nothing was sent to DX."]
    lines.extend(f"  - {trip.message}" for trip in refusal.trips)
    if refusal.archives:
        lines.append("")
        lines.append(f"Teams that would have been archived ({len(refusal.archives)}):")
        shown = refusal.archives[:LIMIT]
        for archive in shown:
            ref = archive.reference_id or "no reference_id"
            people = plural(archive.contributors, "contributor")
            note = f"; {archive.note}" if archive.note else ""
            lines.append(f"  - {quoted(archive.name)} [{ref}] ({people}{note})")
        if len(refusal.archives) > len(shown):
            lines.append(
                f"  … and {len(refusal.archives) - len(shown)} more (every one: "
                f"{hrsync_command(config_path, 'plan')}, or the sync.refused.would_archive "
                "events in the log)"
            )
    lines.append("")
    command = approval_command(refusal, config_path)
    if command is None:
        blocking = ", ".join(t.guard for t in refusal.trips if t.override is None)
        lines.append(
            f"This cannot be overridden ({blocking}): fix the export or the configuration "
            "and run again."
        )
    else:
        if refusal.plan_id is not None:
            lines.append(
                f"Plan {refusal.plan_id}: to approve exactly this plan (the daemon applies it "
                "while the plan it computes is unchanged), run: "
                f"{approve_command(refusal.plan_id, config_path)}"
            )
        lines.append(
            f"To see it in DX first, preview it with: {preview_command(refusal, config_path)}"
        )
        lines.append(f"If this is intended, apply it once with: {command}")
    return _joined(lines)


def rejection_reason(exc: DxRejected, notify_email: str | None) -> str:
    """One line for DX's refusal, naming our setting where DX's answer is about one."""
    if exc.error == "invalid_email":
        # DX's own words name neither the key nor the address.
        return f"DX refused sync.notify_email {notify_email!r}: {exc}"
    return f"DX refused the request: {exc}"


def render_deferral(deferral: Deferral) -> str:
    return (
        f"Deferred: nothing was sent to DX. {deferral.reason}.\n"
        f"Next attempt at {deferral.resume_at.isoformat()}.\n"
    )


def _section(header: str, items: Sequence[T], line: Callable[[T], str]) -> str:
    """A report section: its header, a line for each of the first LIMIT items, then how
    many more; nothing when there are no items."""
    if not items:
        return ""
    lines = [header, *map(line, items[:LIMIT])]
    if len(items) > LIMIT:
        lines.append(f"  and {len(items) - LIMIT} more")
    return _joined(lines)


def render_substitutes(substitutes: Sequence[LeadSubstitute]) -> str:
    """The section of `sync` for teams whose lead DX does not know yet: who stands in."""
    return _section(
        f"Leads DX does not know yet ({len(substitutes)}): the nearest lead above stands in:",
        substitutes,
        lambda s: (
            f"  ~ {quoted(s.team)} [{s.reference_id}]: {s.substitute_email} stands in "
            f"for {s.lead_email} until they join DX"
        ),
    )


def render_held(holds: Sequence[Hold]) -> str:
    """The section of `plan` and `check` for people held for a problem of their own row:
    each with their row, what is wrong, and where DX keeps them meanwhile."""
    return _section(
        f"Held ({len(holds)}): a problem of their own row; DX keeps what it last verifiably "
        "had for them, everyone else is synced:",
        holds,
        lambda h: f"  ! {h.person.shown}, {h.person.location}: {h.person.detail_shown}; {h.kept}",
    )


def render_source_notes(notes: Sequence[str]) -> str:
    """The section of `plan` for the reader's notes on the export (an answer of exactly a
    round page size may be one page of more)."""
    if not notes:
        return ""
    return "Export notes:\n" + "".join(f"  - {one_line(note)}\n" for note in notes[:LIMIT])


def render_unplaced(unplaced: Sequence[Unplaced]) -> str:
    """The section of `plan` and `check` for people in no team: how many, then the
    first of them with their line and why (nobody leaves DX without a word)."""
    return _section(
        f"People in no team ({len(unplaced)}): kept from the export, but neither lead nor member:",
        unplaced,
        lambda person: f"  - {person}",
    )


def render_leads_left(gone: Sequence[LeadLeft]) -> str:
    """The section of `plan` for managers who left while people still name them: each
    team kept with its stand-in lead, or the people left in no team when nobody can
    stand in."""
    return _section(
        f"Managers who left ({len(gone)}): their teams stay until HR re-points their people:",
        gone,
        lambda entry: f"  - {entry}",
    )


def render_unknown_managers(unknown: Sequence[UnknownManager]) -> str:
    """The section of `plan` and `check` for managers absent from the export
    (`source.unknown_manager = "top"`): each, with how many people report to it."""
    people = sum(u.reports for u in unknown)
    return _section(
        f'Managers not in the export ({len(unknown)}; source.unknown_manager = "top"): '
        f"{plural(people, 'person')} reporting to them "
        f"{'is' if people == 1 else 'are'} top of the org:",
        sorted(unknown, key=lambda u: (-u.reports, u.value)),
        lambda u: f"  ? {u.field} {u.value!r}: {plural(u.reports, 'person')} (first at {u.first})",
    )
