"""The plan for machines and reviewers: `plan --format json` (one document, its schema in
the repository's config/plan.schema.json), `plan --format tree` (the desired hierarchy
with each team's change marked), and `history --format json`.

The JSON lists every change in full (every member added or removed): it is where the
log's capped events point. The `schema` value changes only with an incompatible change
of the document; new keys may appear without one.
"""

from __future__ import annotations

import json
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from hrsync.core.command_lines import approve_command
from hrsync.core.gate.plan import (
    COUNT_KEYS,
    Archive,
    Change,
    Create,
    LeadChange,
    MembershipChange,
    Move,
    Rename,
)
from hrsync.core.gate.reporting_floor import UnderFloor, floor_document
from hrsync.core.listing import LIMIT
from hrsync.core.report.render import change_fields, team_name
from hrsync.core.text import plural, quoted
from hrsync.outcome import Outcome
from hrsync.terminal import one_line

if TYPE_CHECKING:
    from hrsync.core.gate.plan_ids import Approval
    from hrsync.core.people.joins import JoinReport
    from hrsync.core.people.second_tables import TableCount
    from hrsync.core.teams.held import Hold
    from hrsync.core.teams.identity import TeamRow
    from hrsync.core.teams.mapping import LeadLeft
    from hrsync.store.repo import RunRecord
    from hrsync.sync.results import SyncResult

PLAN_SCHEMA = "hrsync.plan/1"
HISTORY_SCHEMA = "hrsync.history/1"


# ---------------------------------------------------------------- JSON


def plan_document(
    result: SyncResult,
    config_path: Path | str | None = None,
    floor: UnderFloor | None = None,
) -> dict[str, Any]:
    """The run's plan as one JSON-ready document (see config/plan.schema.json); `floor`:
    its teams DX would leave out of the next snapshot's results."""
    plan = result.plan
    changes = [] if plan is None else [c for c in plan.changes if c.kind != "unchanged"]
    return {
        "schema": PLAN_SCHEMA,
        "run_id": result.run_id,
        "plan_id": result.plan_id,
        "outcome": result.outcome.value,
        "exit_code": result.exit_code,
        "reason": result.reason,
        "problems": list(result.problems),
        "people": result.people_count,
        "teams": None if plan is None else plan.desired_count,
        "counts": {
            **{key: (plan.counts if plan else {}).get(key, 0) for key in COUNT_KEYS},
            "held": len(result.held),
        },
        "changes": [change_document(c) for c in changes],
        "drift": [
            {"team": d.name, "reference_id": d.reference_id, "details": list(d.details)}
            for d in (plan.drift if plan else ())
        ],
        "guards": guard_document(result, config_path),
        "people_in_no_team": [
            {
                "employee_id": p.employee_id,
                "name": p.name,
                "email": p.email,
                "location": p.location,
                "reason": p.reason,
                "needs_person": p.needs_person,
            }
            for p in result.unplaced
        ],
        "leads_left": [lead_left_document(g, result.rows) for g in result.leads_left],
        "held": [held_document(h) for h in result.held],
        "attributes": attributes_document(result),
        "joins": [join_document(j) for j in result.joins],
        "fields": [
            {
                "field": p.field,
                "table": p.key,
                "column": p.column,
                "first_of": [{"name": s.name, "won": s.won} for s in p.sources],
                "empty": p.empty,
            }
            for p in result.precedence
        ],
        "sources": [source_document(s) for s in result.sources],
        "under_reporting_floor": floor_document(floor),
    }


def lead_left_document(gone: LeadLeft, rows: Sequence[TeamRow]) -> dict[str, Any]:
    """A manager who left while people still name them: their team, kept, and who stands
    in as its lead (null: nobody up the chain is kept, so their people are in no team)."""
    reference_id = next((r.reference_id for r in rows if r.key == gone.key), None)
    return {
        "key": gone.key,
        "team": gone.team or None,
        "reference_id": reference_id,
        "employee_id": gone.employee_id,
        "name": gone.name,
        "location": gone.location,
        "excluded_by": gone.why,
        "people": list(gone.reports),
        "stand_in": None
        if gone.stand_in_id is None
        else {
            "employee_id": gone.stand_in_id,
            "name": gone.stand_in_name,
            "email": gone.stand_in_email,
        },
    }


def source_document(count: TableCount) -> dict[str, Any]:
    """One source of the org, with `[[source.union]]` (the primary export first)."""
    return {
        "name": count.name,
        "export": count.export,
        "id_prefix": count.prefix,
        "attach_root_to": count.attach_root_to or None,
        "rows": count.rows,
        "people": count.kept,
    }


def join_document(report: JoinReport) -> dict[str, Any]:
    """One `[[source.join]]`: what it matched, and the table row each key took its values
    from (`rows_used`)."""
    return {
        "name": report.name,
        "table": report.table,
        "on": {"people": report.left, "table": report.right},
        "match": report.match,
        "table_rows": report.table_rows,
        "rows": report.rows,
        "matched": report.matched,
        "unmatched": report.unmatched_count,
        "several": report.several_count,
        "unmatched_examples": [{"location": u.location, "key": u.key} for u in report.unmatched],
        "several_examples": [{"location": u.location, "key": u.key} for u in report.several],
        "columns": list(report.columns),
        "rows_used": [
            {"key": r.key, "location": r.location, "people": r.people} for r in report.rows_used()
        ],
    }


def held_document(hold: Hold) -> dict[str, Any]:
    """A held person: their row, what is wrong with it, and what DX keeps for them."""
    person = hold.person
    return {
        "person": person.key,
        "employee_id": person.employee_id or None,
        "name": person.name,
        "location": person.location,
        "problems": [
            {"field": p.field, "value": p.value, "expected": p.expected} for p in person.problems
        ],
        "dx_email": hold.dx_email,
        "team": hold.team,
        "leads": list(hold.leads),
        "stood_in": [{"team": team, "lead": lead} for team, lead in hold.stood_in],
        "kept": hold.kept,
    }


def change_document(change: Change) -> dict[str, Any]:
    """One change: the same keys for every kind (null or empty where they do not apply)."""
    doc: dict[str, Any] = {
        "kind": change.kind,
        "team": team_name(change),
        "reference_id": change.reference_id,
        "from": None,
        "to": None,
        "members_added": [],
        "members_removed": [],
        "drift": bool(getattr(change, "drift", False)),
    }
    doc |= change_fields(change)
    match change:
        case Create():
            doc["members_added"] = list(change.members)
        case LeadChange():
            doc["contributors"] = change.contributors
        case MembershipChange():
            doc |= {
                "members_added": list(change.added),
                "members_removed": list(change.removed),
                "contributors_from": change.old_count,
                "contributors_to": change.new_count,
            }
    return doc


def guard_document(result: SyncResult, config_path: Path | str | None = None) -> dict[str, Any]:
    """What the gate decided: go, defer or refuse (or not reached: the run ended first)."""
    outcome = result.outcome
    if result.plan is None:
        decision = "not_reached"
    elif outcome is Outcome.REFUSED:
        decision = "refuse"
    elif outcome is Outcome.DEFERRED:
        decision = "defer"
    else:
        decision = "go"
    return {
        "decision": decision,
        "reason": result.reason if decision in ("refuse", "defer") else None,
        "resume_at": _iso(result.resume_at),
        "approve_with": result.action,
        "plan_id": result.plan_id,
        "approve_plan_with": (
            approve_command(result.plan_id, config_path)
            if decision == "refuse" and result.plan_id and result.action
            else None
        ),
        "approval": _approval_fields(result.approval),
    }


def _approval_fields(approval: Approval | None) -> dict[str, Any] | None:
    """Who let a plan past the guards (the same fields as `sync.finished.approval`)."""
    if approval is None:
        return None
    return {
        "plan_id": approval.plan_id,
        "by": approval.approved_by,
        "note": approval.note,
        "via": approval.via,
        "approved_at": _iso(approval.approved_at),
    }


def attributes_document(result: SyncResult) -> dict[str, Any] | None:
    attributes = result.attributes
    if attributes is None:
        return None
    plan = attributes.plan
    return {
        "outcome": attributes.outcome.value,
        "reason": attributes.reason,
        "counts": attributes.counts,
        "changes": [
            {"email": c.email, "values": dict(c.values), "previous": dict(c.previous)}
            for c in (plan.changes if plan else ())
        ],
        "held": [
            {"email": h.email, "error": h.error, "retry_at": _iso(h.retry_at)}
            for h in (plan.held if plan else ())
        ],
        "waiting": [
            {"email": w.email, "retry_at": _iso(w.retry_at)} for w in (plan.waiting if plan else ())
        ],
    }


def history_document(
    runs: Sequence[RunRecord], applied: Mapping[str, Approval] | None = None
) -> dict[str, Any]:
    """`applied`: the approval each run applied, by run id (who approved what it sent)."""
    applied = applied or {}
    return {
        "schema": HISTORY_SCHEMA,
        "runs": [
            {
                "id": r.id,
                "trigger": r.trigger,
                "started_at": _iso(r.started_at),
                "finished_at": _iso(r.finished_at),
                "outcome": r.outcome,
                "exit_code": r.exit_code,
                "dry_run": r.dry_run,
                "counts": dict(r.counts),
                "reason": r.reason,
                "plan_id": r.plan_id,
                "approval": _approval_fields(applied.get(r.id)),
            }
            for r in runs
        ],
    }


def dumps(document: Mapping[str, Any]) -> str:
    return json.dumps(document, indent=2, ensure_ascii=False)


def _iso(value: datetime | None) -> str | None:
    return None if value is None else value.astimezone(UTC).isoformat()


# ---------------------------------------------------------------- tree


def render_tree(result: SyncResult) -> str:
    """The desired hierarchy, indented, each team's change marked; archives after it."""
    rows = result.rows
    plan = result.plan
    if not rows and plan is None:
        return result.report or "no plan: the run ended before planning"
    marks: dict[str, list[str]] = defaultdict(list)
    for change in plan.changes if plan else ():
        if change.reference_id is not None and not isinstance(change, Archive):
            mark = _mark(change)
            if mark:
                marks[change.reference_id].append(mark)
    children: dict[str | None, list[TeamRow]] = defaultdict(list)
    ours = {row.reference_id for row in rows}
    for row in rows:
        parent = row.parent_reference_id if row.parent_reference_id in ours else None
        children[parent].append(row)
    lines: list[str] = []

    def walk(parent: str | None, depth: int) -> None:
        for row in sorted(children.get(parent, ()), key=lambda r: r.name.casefold()):
            outside = (
                f" (under {quoted(row.parent_name)}, not from the export)"
                if depth == 0 and row.parent_reference_id is not None and row.parent_name
                else ""
            )
            mark = f"  [{'; '.join(marks[row.reference_id])}]" if marks[row.reference_id] else ""
            lines.append(
                f"{'  ' * depth}{row.name} [{row.reference_id}] lead {row.lead_email}, "
                f"{plural(len(row.contributors), 'contributor')}{outside}{mark}"
            )
            walk(row.reference_id, depth + 1)

    if result.outcome is Outcome.REFUSED:
        # The tree alone reads as what DX will look like: say first that it will not.
        lines.append(f"Refused, nothing sent: {(result.reason or 'a guard').rstrip('.')}.")
        if result.action:
            lines.append(f"Check this plan, then approve it once with `{result.action}`.")
        lines.append("")
    walk(None, 0)
    archives = plan.archives if plan else []
    if archives:
        lines.append("")
        done = result.outcome is Outcome.APPLIED
        lines.append(f"{'Archived' if done else 'To archive'} (not in the export):")
        lines.extend(
            f"  - {quoted(a.name)} [{a.reference_id or 'no reference_id'}]" for a in archives
        )
    if result.held:
        lines.append("")
        lines.append(f"Held ({len(result.held)}), as DX last verifiably had them:")
        lines.extend(
            f"  ! {h.person.shown}, {h.person.location}: {h.kept}" for h in result.held[:LIMIT]
        )
        if len(result.held) > LIMIT:
            lines.append(f"  and {len(result.held) - LIMIT} more")
    lines.append("")
    lines.append(_counts_line(plan.counts if plan else {}))
    # One line per row: a line break in a name made in DX's web app is shown escaped.
    return "\n".join(map(one_line, lines))


def _mark(change: Change) -> str:
    match change:
        case Create():
            return "created"
        case Rename():
            return f"renamed from {quoted(change.old_name)}"
        case Move():
            old = quoted(change.old_parent_name) if change.old_parent_name else "the root"
            return f"moved from under {old}"
        case LeadChange():
            return f"lead {change.old_lead or 'unknown'} -> {change.new_lead}"
        case MembershipChange():
            return f"members +{len(change.added)} -{len(change.removed)}"
    return ""


def _counts_line(counts: Mapping[str, int]) -> str:
    shown: Iterable[str] = (f"{counts.get(k, 0)} {k.replace('_', ' ')}" for k in COUNT_KEYS)
    return "Plan: " + ", ".join(shown)
