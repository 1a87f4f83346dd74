"""Plans, refusals and deferrals as text a person reads (`hrsync plan`, `hrsync sync`).

Like a terraform plan: one line per change under a heading per kind (`+` create,
`~` rename, `>` move, `*` lead change, `±` membership, `-` archive), then the counts.
The plan lists archives in full: they are what an operator must check. A refusal lists
the first `LIST_CAP` of them and says where the rest are.
"""

from __future__ import annotations

import shlex
from pathlib import Path

from hrsync.core.guards import Deferral, Refusal
from hrsync.core.plan import LeadChange, Plan, describe, plural, quoted
from hrsync.dx.errors import DxRejected

LIST_CAP = 20

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
    return "\n".join(lines) + "\n"


def hrsync_command(config_path: Path | str | None, *args: str) -> str:
    """A command line a person can paste: the same `--config` as this run, quoted."""
    head = ["hrsync"] if config_path is None else ["hrsync", "--config", str(config_path)]
    return shlex.join([*head, *args])


def approval_command(refusal: Refusal, config_path: Path | str | None) -> str | None:
    """The manual run that applies the refused plan once; None when it cannot be."""
    flags = refusal.override_flags
    return None if flags is None else hrsync_command(config_path, "sync", *flags)


def preview_command(refusal: Refusal, config_path: Path | str | None) -> str | None:
    """The same run as a preview: DX shows the change and applies nothing. Without the
    override flags a preview is refused by the same guards."""
    flags = refusal.override_flags
    return None if flags is None else hrsync_command(config_path, "sync", "--preview", *flags)


def render_refusal(refusal: Refusal, config_path: Path | str | None = None) -> str:
    lines = ["Refused: nothing was sent to DX."]
    lines.extend(f"  - {trip.message}" for trip in refusal.trips)
    if refusal.archives:
        lines.append("")
        lines.append(f"Teams that would have been archived ({len(refusal.archives)}):")
        shown = refusal.archives[:LIST_CAP]
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
        lines.append(
            f"To see it in DX first, preview it with: {preview_command(refusal, config_path)}"
        )
        lines.append(f"If this is intended, apply it once with: {command}")
    return "\n".join(lines) + "\n"


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
