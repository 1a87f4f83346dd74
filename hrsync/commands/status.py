"""`hrsync status`: one screen for a person, from the state store only (nothing is sent).

Heartbeat, last run and last success, what needs attention and the command that resolves
it, the pending deferral, the next scheduled run. `--format json` prints the same as one
JSON document. The log goes to stderr (startup's reporting commands), never stdout.
"""

from __future__ import annotations

import argparse
import json
from datetime import UTC, datetime, timedelta
from typing import Any

from hrsync.clock import utcnow
from hrsync.commands.output import show
from hrsync.commands.startup import load_local, open_store
from hrsync.config.loading import Settings
from hrsync.core import defaults
from hrsync.core.command_lines import approve_command, hrsync_command
from hrsync.core.confirmation.dx_users import NotCounted, overdue, undecided_from_evidence
from hrsync.core.gate.reporting_floor import floor_document, floor_lines
from hrsync.core.gate.snapshot_ahead import describe, readiness, waiting_text
from hrsync.core.listing import LIMIT, capped
from hrsync.core.report.notify import SUCCESS
from hrsync.core.text import name_and_id, plural
from hrsync.daemon.cron import next_cron_fire
from hrsync.outcome import EXIT_OK
from hrsync.store.repo import RunRecord, Store

SCHEMA = 1


def status(args: argparse.Namespace) -> int:
    settings = load_local(args)
    store = open_store(settings, existing=True)
    try:
        document = gather(settings, store, utcnow())
    finally:
        store.close()
    if args.format == "json":
        show(json.dumps(document, indent=2, sort_keys=True))
    else:
        show(render(document))
    return EXIT_OK


def gather(settings: Settings, store: Store, now: datetime) -> dict[str, Any]:
    beat = store.heartbeat.read()
    # However far back: a window of recent runs lost a refusal or the last success behind
    # a long series of deferrals (a lease held for days).
    last = next((r for r in store.runs.recent(50, operational_only=True) if r.outcome), None)
    success = store.runs.newest(SUCCESS)
    pending = store.deferrals.pending()
    config = settings.command_config
    attention: list[dict[str, str | None]] = []
    if beat is not None and beat.quarantined_since is not None:
        attention.append(
            {
                "reason": "quarantined",
                "detail": f"{beat.consecutive_failures} failed runs in a row since "
                f"{_iso(beat.quarantined_since)}; scheduled runs back off",
                "command": hrsync_command(config, "history"),
            }
        )
    decisive = store.runs.decisive()
    waiting = decisive.waiting_on if decisive is not None else None
    if decisive is not None and waiting is not None:
        attention.append(
            {
                "reason": waiting,
                "detail": decisive.reason,
                "command": decisive.action or _resolve(waiting, config),
                # A refused plan's id, and the command approving exactly it (issue 23).
                "plan_id": decisive.plan_id if waiting == "refused" else None,
                "approve": approve_command(decisive.plan_id, config)
                if waiting == "refused" and decisive.plan_id and decisive.action
                else None,
            }
        )
    ignored = not_counted(store)
    late = overdue(ignored, now, alert_days=defaults.NOT_IN_DX_ALERT_DAYS)
    if late:
        attention.append(
            {
                "reason": "not_in_dx",
                "detail": f"{plural(len(late), 'person')} not counted by "
                f"DX for more than {defaults.NOT_IN_DX_ALERT_DAYS:g} days: "
                f"{capped(p.email for p in late)}",
                "command": hrsync_command(config, "explain", late[0].email),
            }
        )
    no_team = last.counts.get("no_team", 0) if last is not None else 0
    if no_team:
        attention.append(
            {
                "reason": "no_team",
                "detail": f"{plural(no_team, 'person')} kept from the export in no team, "
                "not meant to be (DX does not have them): give them a manager in HR",
                "command": hrsync_command(config, "plan"),
            }
        )
    leads_left = store.leads_left.current()
    alert = timedelta(days=defaults.LEAD_LEFT_ALERT_DAYS)
    overdue_left = [r for r in leads_left if r.stand_in and r.since and now - r.since >= alert]
    if overdue_left:
        attention.append(
            {
                "reason": "lead_left",
                "detail": f"{plural(len(overdue_left), 'manager')} left more than "
                f"{defaults.LEAD_LEFT_ALERT_DAYS:g} days ago and people still name them in HR: "
                + capped(name_and_id(r.lead_name, r.lead) for r in overdue_left),
                "command": hrsync_command(config, "plan"),
            }
        )
    outlook = _snapshot_outlook(settings, store, now)
    return {
        "schema": SCHEMA,
        "now": _iso(now),
        "heartbeat": None
        if beat is None
        else {
            "state": beat.state,
            "at": _iso(beat.beat_at),
            "age_s": round((now - beat.beat_at).total_seconds(), 1),
            "running": beat.running(now, settings.sync.healthcheck_max_age_s),
            "host": beat.host,
            "pid": beat.pid,
            "run": _run_in_progress(beat.detail, now),
        },
        "last_run": _run(last),
        "last_success": _run(success),
        "attention": attention,
        "deferral": None
        if pending is None
        else {
            "reason": pending.reason,
            "until": _iso(pending.resume_at),
            "waiting": outlook["waiting"],
        },
        "next_snapshot": outlook["next_snapshot"],
        "next_scheduled_run": _iso(
            next_cron_fire(settings.sync.schedule, settings.sync.timezone, now)
        ),
        "schedule": settings.sync.schedule,
        "timezone": settings.sync.timezone,
        # As DX has them since the last success: each until the real lead joins DX.
        "stand_in_leads": [s.shown() for s in (success.substitutes if success else ())],
        # Each until their row is fixed in HR; DX keeps what it last verifiably had.
        "held": [
            {
                "person": h.person,
                "name": h.name or None,
                "location": h.location,
                "detail": h.detail,
                "since": _iso(h.since) if h.since else None,
            }
            for h in sorted(store.people.held_people().values(), key=lambda h: (h.since, h.person))
        ],
        # Managers who left while people still name them: each team kept with a stand-in
        # lead (null: nobody up the chain is kept) until HR re-points the people.
        "leads_left": [
            {
                "team": r.team or None,
                "lead": r.lead,
                "lead_name": r.lead_name,
                "stand_in": r.stand_in or None,
                "people": r.people,
                "since": _iso(r.since) if r.since else None,
            }
            for r in leads_left
        ],
        # People DX ignored (not DX users yet), longest first: placed once they join DX.
        "not_in_dx": [{"email": p.email, "since": _iso(p.since)} for p in ignored],
        # Teams DX counts fewer in than sent where it cannot be told yet whom it ignores.
        "not_in_dx_undecided": [
            u.fields() for u in undecided_from_evidence(store.people.undecided())
        ],
        # Approved plans the daemon will apply while the plan it computes is the same.
        "approvals": [
            {
                "plan_id": a.plan_id,
                "by": a.approved_by,
                "at": _iso(a.approved_at),
                "expires_at": _iso(a.expires_at),
                "note": a.note,
            }
            for a in store.approvals.pending(now)
        ],
    }


def _snapshot_outlook(settings: Settings, store: Store, now: datetime) -> dict[str, Any]:
    """The next snapshot and what it means for DX (core.snapshot_ahead), and what a
    deferred run's plan holds back."""
    last = store.snapshot_outlook.last_run_outlook()
    waiting = waiting_text(last) if last is not None else None
    seen = store.snapshot_outlook.next_snapshot()
    if seen is None or seen.snapshot is None:
        return {"waiting": waiting, "next_snapshot": None}
    ready = readiness(last, settings.command_config)
    # The teams as the last run planned them: those DX leaves out of the snapshot's results.
    floor = store.snapshot_outlook.teams_under_floor()
    return {
        "waiting": waiting,
        "next_snapshot": {
            "id": seen.snapshot.snapshot_id,
            "scheduled_for": seen.snapshot.day.isoformat(),
            "starts_at": _iso(seen.snapshot.starts_at),
            "read_at": _iso(seen.read_at),
            "ready": ready.ready,
            "blockers": list(ready.blockers),
            "command": ready.command,
            "text": describe(seen.snapshot, ready, now),
            "under_floor": floor_document(floor),
            "under_floor_text": floor_lines(floor),
        },
    }


def not_counted(store: Store) -> list[NotCounted]:
    """The people DX does not count, from the store, longest first."""
    found = [NotCounted(p.email, p.since) for p in store.people.not_counted()]
    return sorted(found, key=lambda p: (p.since, p.email))


def _resolve(outcome: str | None, config: Any) -> str:
    # A refusal's own approval command is stored with its run; these are for the others.
    if outcome == "unverified":
        return hrsync_command(config, "sync")  # verifies the submission before anything new
    if outcome == "rejected":
        return hrsync_command(config, "check")
    return hrsync_command(config, "plan")


def _run(run: RunRecord | None) -> dict[str, Any] | None:
    if run is None:
        return None
    counts = {k: v for k, v in run.counts.items() if v}
    return {
        "id": run.id,
        "trigger": run.trigger,
        "outcome": run.outcome,
        "started_at": _iso(run.started_at),
        "finished_at": _iso(run.finished_at) if run.finished_at else None,
        "counts": counts,
        "people": run.people_count,
        "reason": run.reason,
        "plan_id": run.plan_id,
    }


def _run_in_progress(detail: dict[str, Any], now: datetime) -> dict[str, Any] | None:
    """The run the heartbeat says is in progress: since when, for how long, its trigger."""
    started = detail.get("run_started_at")
    if not started:
        return None
    running_s = (now - datetime.fromisoformat(started)).total_seconds()
    return {
        "started_at": started,
        "running_s": round(running_s, 1),
        "trigger": detail.get("run_trigger"),
    }


def render(doc: dict[str, Any]) -> str:
    lines: list[str] = []
    beat = doc["heartbeat"]
    if beat is None:
        lines.append("Daemon:      no heartbeat: `hrsync run` has not started on this store")
    else:
        run = beat.get("run")
        running = (
            f" (a {run['trigger']} sync for {run['running_s']:.0f} s, since {run['started_at']})"
            if run
            else ""
        )
        # A heartbeat this old is a daemon that died, whatever state it last wrote.
        stale = "" if beat.get("running") or beat["state"] == "stopped" else " (not running)"
        lines.append(
            f"Daemon:      {beat['state']}{stale}{running}, heartbeat {beat['age_s']:.0f}s ago "
            f"({beat['at']}, pid {beat['pid']} on {beat['host']})"
        )
    for label, key in (("Last run", "last_run"), ("Succeeded", "last_success")):
        run = doc[key]
        if run is None:
            lines.append(f"{label + ':':<13}none")
            continue
        counts = " ".join(f"{k}={v}" for k, v in run["counts"].items()) or "no changes"
        people = f", {run['people']} people" if run["people"] is not None else ""
        lines.append(
            f"{label + ':':<13}{run['outcome']} at {run['finished_at'] or run['started_at']} "
            f"({counts}{people})"
        )
    if doc["attention"]:
        for item in doc["attention"]:
            lines.append(f"ATTENTION:   {item['reason']}: {item['detail'] or ''}".rstrip())
            lines.append(f"  resolve:   {item['command']}")
            if item.get("approve"):
                lines.append(
                    f"  approve:   {item['approve']} (the daemon then applies exactly this plan)"
                )
    elif doc["held"]:
        # No run failed, but fixing a held row is a person's job (the webhook told of it).
        count = len(doc["held"])
        rows = "row" if count == 1 else "rows"
        lines.append(f"Attention:   {plural(count, 'person')} held: HR to fix their {rows} (below)")
    else:
        lines.append("Attention:   nothing needs a person")
    for item in doc["stand_in_leads"][:LIMIT]:
        lines.append(
            f"Stand-in:    {item['stands_in']} leads {item['team']!r} until {item['lead']} joins DX"
        )
    if len(doc["stand_in_leads"]) > LIMIT:
        lines.append(f"             and {len(doc['stand_in_leads']) - LIMIT} more stand-ins")
    held = doc["held"]
    for item in held[:LIMIT]:
        lines.append(
            f"Held:        {name_and_id(item['name'] or '', item['person'])} since "
            f"{item['since'][:10]}, {item['location']}: "
            f"{item['detail']}"
        )
    if len(held) > LIMIT:
        lines.append(f"             and {len(held) - LIMIT} more held")
    for item in doc["leads_left"][:LIMIT]:
        since = (item["since"] or "")[:10]
        who = name_and_id(item["lead_name"] or "", item["lead"])
        lines.append(
            f"Lead left:   {item['stand_in']} stands in for {who} as lead of {item['team']!r} "
            f"since {since} ({plural(item['people'], 'person')} still "
            f"{'names' if item['people'] == 1 else 'name'} them)"
            if item["stand_in"]
            else f"Lead left:   {who} since {since}: nobody up the chain is kept, "
            f"{plural(item['people'], 'person')} in no team"
        )
    if len(doc["leads_left"]) > LIMIT:
        lines.append(f"             and {len(doc['leads_left']) - LIMIT} more")
    waiting = doc["not_in_dx"]
    if waiting:
        lines.append(
            f"Not in DX:   {plural(len(waiting), 'person')} DX does not "
            f"count yet, placed once they join DX: {capped(p['email'] for p in waiting)}"
        )
    for item in doc["not_in_dx_undecided"][:LIMIT]:
        lines.append(
            f"Not told:    DX does not count {item['not_counted']} of {item['sent']} sent to "
            f"{item['team']!r}; which, it cannot tell yet: {capped(item['candidates'])}"
        )
    if len(doc["not_in_dx_undecided"]) > LIMIT:
        lines.append(f"             and {len(doc['not_in_dx_undecided']) - LIMIT} more teams")
    for item in doc["approvals"]:
        note = f" ({item['note']})" if item["note"] else ""
        lines.append(
            f"Approved:    plan {item['plan_id']} by {item['by']} at {item['at']}{note}, "
            f"pending until {item['expires_at']}"
        )
    deferral = doc["deferral"]
    lines.append(
        f"Deferred:    until {deferral['until']}: {deferral['reason']}"
        if deferral
        else "Deferred:    no"
    )
    if deferral and deferral.get("waiting"):
        lines.append(f"Waiting:     {deferral['waiting']}")
    snapshot = doc.get("next_snapshot")
    shown = snapshot["text"] if snapshot else "no next snapshot scheduled"
    lines.append(f"Snapshot:    {shown}")
    if snapshot and not snapshot["ready"] and snapshot["command"]:
        lines.append(f"  resolve:   {snapshot['command']}")
    for number, line in enumerate(snapshot.get("under_floor_text") or [] if snapshot else []):
        lines.append(f"  {'small:' if number == 0 else '':<11}{line.strip()}")
    schedule = f"schedule {doc['schedule']!r} in {doc['timezone']}"
    if beat is not None and beat.get("running"):
        lines.append(f"Next run:    {doc['next_scheduled_run']} ({schedule})")
    else:
        lines.append(
            f"Next run:    none while no daemon runs (`hrsync run`; its {schedule} would run "
            f"at {doc['next_scheduled_run']})"
        )
    return "\n".join(lines)


def _iso(value: datetime) -> str:
    return value.astimezone(UTC).isoformat(timespec="seconds")
