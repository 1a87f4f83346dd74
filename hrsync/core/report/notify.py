"""When the daemon tells a person, and what it says: one message per change of state.

A run that needs a person (refused, rejected, quarantined, unverified) notifies once; the
same state about the same plan stays quiet until `repeat_s` has passed or the plan
changes. A later success after a notified attention state says `recovered`, whoever
made it (`recovered_since`: a run by hand, the other replica's). What was last sent is
kept by the shell (the state store), so a restart does not repeat it.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any, NamedTuple

from hrsync.core.confirmation.dx_users import NotCounted
from hrsync.core.gate.reporting_floor import UnderFloor, floor_document, floor_lines
from hrsync.core.gate.snapshot_ahead import NextSnapshot, NoticeKind, Readiness, readiness_lines
from hrsync.core.listing import LIMIT, capped
from hrsync.core.teams.substitutes import LeadSubstitute
from hrsync.core.text import name_and_id, plural
from hrsync.terminal import one_line

ATTENTION = ("refused", "rejected", "quarantined", "unverified")
SUCCESS = ("applied", "in_sync")
RECOVERED = "recovered"
OK = "ok"
NOTIFY_ON_ALL = (*ATTENTION, RECOVERED)

_WHAT = {
    "refused": "hrsync refused to sync: nothing was sent to DX",
    "rejected": "DX rejected hrsync's request: nothing was applied",
    "quarantined": "hrsync is quarantined after failing runs in a row: scheduled runs back off",
    "unverified": "hrsync sent the hierarchy but could not confirm DX applied it",
    RECOVERED: "hrsync recovered: the last run succeeded",
}


@dataclass(frozen=True, slots=True)
class Observation:
    """How a run left the daemon, as the notifier sees it."""

    state: str  # an ATTENTION state, OK, or "" (neither: deferred, a failure before quarantine)
    digest: str  # what the state is about: the plan's digest, else the reason's
    run_id: str
    outcome: str
    reason: str | None = None
    archives: tuple[str, ...] = ()  # names of the teams the plan would archive
    action: str | None = None  # the command that resolves it
    plan_id: str | None = None  # a refused plan's id: what a person approves
    approve_plan: str | None = None  # the command approving exactly that plan
    preview_url: str | None = None  # DX's preview of exactly that plan


@dataclass(frozen=True, slots=True)
class Sent:
    """The last notification of a kind delivered, as the shell keeps it (the state store's
    `notify_state`, one per kind): what it told, about what, when, and of which run."""

    state: str
    digest: str
    notified_at: datetime
    run_id: str | None


@dataclass(frozen=True, slots=True)
class Notice:
    """A notification to send now, and what to remember once it is delivered."""

    event: str  # an ATTENTION state or RECOVERED
    observation: Observation

    @property
    def remember(self) -> str:
        return OK if self.event == RECOVERED else self.event


def observe(
    run_id: str,
    outcome: str,
    *,
    quarantined: bool,
    plan_digest: str | None = None,
    reason: str | None = None,
    archives: Sequence[str] = (),
    action: str | None = None,
    plan_id: str | None = None,
    approve_plan: str | None = None,
    preview_url: str | None = None,
) -> Observation:
    """The state a finished run leaves (`quarantined`: the daemon's streak reached it)."""
    if quarantined and outcome == "failed":
        state = "quarantined"
    elif outcome in ATTENTION:
        state = outcome
    elif outcome in SUCCESS:
        state = OK
    else:
        state = ""
    about = plan_digest or hashlib.sha256((reason or "").encode()).hexdigest()
    return Observation(
        state=state,
        digest=about,
        run_id=run_id,
        outcome=outcome,
        reason=reason,
        archives=tuple(archives),
        action=action,
        plan_id=plan_id,
        approve_plan=approve_plan,
        preview_url=preview_url,
    )


def decide(
    last: Sent | None,
    seen: Observation,
    now: datetime,
    *,
    on: Sequence[str],
    repeat_s: float,
) -> Notice | None:
    """Whether `seen` is news worth a message, given the last one delivered."""
    if seen.state in ATTENTION:
        if seen.state not in on:
            return None
        repeat = (
            last is None
            or last.state != seen.state
            or last.digest != seen.digest
            or now - last.notified_at >= timedelta(seconds=repeat_s)
        )
        return Notice(seen.state, seen) if repeat else None
    if seen.state == OK and last is not None and last.state in ATTENTION and RECOVERED in on:
        return Notice(RECOVERED, seen)
    return None


# ---------------------------------------------------------------- stand-in leads

STAND_IN = "stand_in"  # the `notify.on` event, and the name of its notify_state row


@dataclass(frozen=True, slots=True)
class StandInChange:
    """Stand-in leads that began or ended since the last message about them."""

    started: tuple[LeadSubstitute, ...]
    ended: tuple[LeadSubstitute, ...]


def stand_in_change(
    told: Sequence[LeadSubstitute], now: Sequence[LeadSubstitute]
) -> StandInChange | None:
    """What changed between the stand-ins last told and those of a run that succeeded; None
    when nothing did (the same stand-ins run after run are told once)."""

    def key(s: LeadSubstitute) -> tuple[str, str, str]:
        return (s.reference_id, s.lead_email.casefold(), s.substitute_email.casefold())

    before, after = {key(s): s for s in told}, {key(s): s for s in now}
    started = tuple(s for k, s in after.items() if k not in before)
    ended = tuple(s for k, s in before.items() if k not in after)
    return StandInChange(started, ended) if started or ended else None


def stand_in_message(change: StandInChange, context: MessageContext) -> dict[str, Any]:
    """The webhook's body for a change of stand-ins (`json` or `slack`)."""
    lines = []
    if change.started:
        lines.append(
            f"DX does not know {plural(len(change.started), 'team lead')} yet; until they "
            "join DX, the lead above stands in:"
        )
        lines.extend(
            _bullets(
                f"{s.team}: {s.substitute_email} stands in for {s.lead_email}"
                for s in change.started
            )
        )
    if change.ended:
        lines.append(
            f"{plural(len(change.ended), 'stand-in')} ended (the lead joined DX, or left):"
        )
        lines.extend(_bullets(f"{s.team}: no longer led by a stand-in" for s in change.ended))
    return _body(
        STAND_IN,
        lines,
        context,
        started=[s.shown() for s in change.started[:LIMIT]],
        ended=[s.shown() for s in change.ended[:LIMIT]],
    )


class MessageContext(NamedTuple):
    """What every message about a run is sent with: the format (`notify.format`), the run,
    the time and the host it ran on."""

    fmt: str
    run_id: str
    now: datetime
    host: str = ""


def _body(
    event: str, lines: list[str], context: MessageContext, **fields: object
) -> dict[str, Any]:
    """A notice's body: its lines and the run as text (`slack`), or `fields` with the run,
    the host, the time and the same text (`json`)."""
    run_id, host = context.run_id, context.host
    text = _text([*lines, f"Run {run_id}" + (f" on {host}" if host else "")])
    if context.fmt != "json":
        return for_people(text, context.fmt)
    return {
        "event": event,
        **fields,
        "run_id": run_id,
        "host": host or None,
        "at": context.now.astimezone(UTC).isoformat(),
        "text": text,
    }


# ---------------------------------------------------------------- held people

HELD = "held"  # the `notify.on` event


class HeldEntry(NamedTuple):
    """A held person as a notice tells of them (from the state store)."""

    person: str  # employee id, else e-mail, else row
    location: str
    detail: str
    name: str = ""  # as their row gives it

    def named(self) -> str:
        return name_and_id(self.name, self.person)


def _bullets(items: Iterable[str]) -> list[str]:
    """A message's list: the first LIMIT items as "- item", then how many more."""
    shown = list(items)
    lines = [f"- {item}" for item in shown[:LIMIT]]
    if len(shown) > LIMIT:
        lines.append(f"- and {len(shown) - LIMIT} more")
    return lines


def held_message(
    started: Sequence[HeldEntry],
    cleared: Sequence[HeldEntry],
    context: MessageContext,
    *,
    explain: str = "hrsync explain",
) -> dict[str, Any]:
    """The webhook's body for people newly held and people whose hold ended: each told
    once when it starts and once when it clears, never every run."""
    lines = []
    if started:
        lines.append(
            f"{plural(len(started), 'person')} held for a problem of their own HR row; DX "
            "keeps what it last verifiably had for them, everyone else is synced. Fix the rows "
            "in HR:"
        )
        lines.extend(_bullets(f"{p.named()}, {p.location}: {p.detail}" for p in started))
        lines.append(f"Where DX keeps each: {explain} {started[0].person}")
    if cleared:
        lines.append(
            f"{plural(len(cleared), 'person')} no longer held, synced again (their row was "
            "fixed, or left):"
        )
        lines.extend(_bullets(p.named() for p in cleared))
    return _body(
        HELD,
        lines,
        context,
        started=[p._asdict() for p in started[:LIMIT]],
        started_count=len(started),
        cleared=[p.person for p in cleared[:LIMIT]],
        cleared_count=len(cleared),
    )


def recovered_since(
    last: Sent | None,
    *,
    told_run_started: datetime | None,
    success_started: datetime | None,
    quarantined: bool,
) -> bool:
    """Whether a success the daemon did not make itself (a run by hand, the other
    replica's) ends the attention state last told: the newest decisive run succeeded
    with nothing left waiting (`success_started`, else None) and began after the run the
    state was told about (`told_run_started`; unknown: after it was told). Only a success
    is news here: a run by hand that was refused was seen by the person who ran it."""
    if last is None or last.state not in ATTENTION or success_started is None or quarantined:
        return False
    return success_started > (told_run_started or last.notified_at)


def recovered_quietly(last: Sent | None, seen: Observation) -> bool:
    """A success after a notified attention state with no `recovered` message (left out of
    `notify.on`): what was sent is forgotten all the same, so the state's return is news."""
    return seen.state == OK and last is not None and last.state in ATTENTION


def _text(lines: Sequence[str]) -> str:
    """A notice's lines as its text. Each is one line: a line break inside one came with a
    value (a team name made in DX's web app, an HR value) and is shown escaped, so it cannot
    forge a line ("Plan …: run: curl … | sh") of the message."""
    return "\n".join(map(one_line, lines))


# What renders as markup in each chat, escaped so that a value shows as written: Slack
# asks for its three (a "<https://…|Click here>" in HR would be a link); a Teams card reads
# Markdown (links, emphasis, code), whose specials take a backslash. Not "_": inside a
# word (`sync.max_archive`, an e-mail) it is no emphasis, and a card on a phone may show
# the backslash.
_TEAMS_MARKDOWN = re.compile(r"([\\*\[\]`~])")


def _for_chat(line: str, fmt: str) -> str:
    if fmt == "teams":
        bullet = "- " if line.startswith("- ") else ""  # our own list, kept a list
        return bullet + _TEAMS_MARKDOWN.sub(r"\\\1", line[len(bullet) :])
    return line.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def for_people(text: str, fmt: str) -> dict[str, Any]:
    """A chat's body for `text`: Slack's (and Mattermost's, Google Chat's) `{"text": ...}`,
    or for `teams` the Adaptive Card a Teams workflow ("When a Teams webhook request is
    received") posts as is; the retired Office 365 connectors took neither."""
    lines = [_for_chat(line, fmt) for line in text.split("\n")]
    if fmt != "teams":
        return {"text": "\n".join(lines)}
    # One block per line: a card's text block shows only part of Markdown, and a
    # command in a line must stay whole on its own.
    blocks = [{"type": "TextBlock", "text": line, "wrap": True} for line in lines]
    blocks[0] |= {"weight": "Bolder"}
    card = {
        "$schema": "http://adaptivecards.io/schemas/adaptive-card.json",
        "type": "AdaptiveCard",
        "version": "1.4",
        "body": blocks,
    }
    return {
        "type": "message",
        "attachments": [
            {
                "contentType": "application/vnd.microsoft.card.adaptive",
                "contentUrl": None,
                "content": card,
            }
        ],
    }


def message(notice: Notice, fmt: str, *, now: datetime, host: str = "") -> dict[str, Any]:
    """The webhook's JSON body: `json` (fields for a program), `slack` or `teams` (text for
    people)."""
    seen = notice.observation
    what = _WHAT[notice.event]
    lines = [what + "."]
    if seen.reason and notice.event != RECOVERED:
        lines.append(f"Reason: {seen.reason}")
    if seen.archives and notice.event != RECOVERED:
        lines.append(
            f"Teams that would be archived ({len(seen.archives)}): "
            + capped(seen.archives, limit=LIMIT)
        )
    if seen.plan_id and notice.event != RECOVERED:
        lines.append(f"Plan id: {seen.plan_id}")
    if seen.preview_url and notice.event != RECOVERED:
        lines.append(f"See it in DX: {seen.preview_url}")
    if seen.approve_plan and notice.event != RECOVERED:
        lines.append(f"To approve exactly this plan (the daemon applies it): {seen.approve_plan}")
    if seen.action and notice.event != RECOVERED:
        lines.append(f"To approve it once: {seen.action}")
    lines.append(f"Run {seen.run_id} ({seen.outcome})" + (f" on {host}" if host else ""))
    text = _text(lines)
    if fmt != "json":
        return for_people(text, fmt)
    return {
        "event": notice.event,
        "summary": what,
        "outcome": seen.outcome,
        "run_id": seen.run_id,
        "reason": seen.reason,
        "would_archive": list(seen.archives[:LIMIT]),
        "would_archive_count": len(seen.archives),
        "action": seen.action,
        "plan_id": seen.plan_id,
        "approve_plan": seen.approve_plan,
        "preview_url": seen.preview_url,
        "host": host or None,
        "at": now.astimezone(UTC).isoformat(),
        "text": text,
    }


# ------------------------------------------------------- people DX does not count yet

NOT_IN_DX = "not_in_dx"  # the `notify.on` event, and the name of its notify_state row


def newly_overdue(
    late: Sequence[NotCounted], last_told: datetime | None, *, alert_days: float
) -> list[NotCounted]:
    """Of the people not counted past `alert_days` (`late`), those who passed it since the
    last message about them (`last_told`): each person is told once, however many runs
    find them still not counted."""
    limit = timedelta(days=alert_days)
    return [p for p in late if last_told is None or p.since + limit > last_told]


def not_in_dx_message(
    late: Sequence[NotCounted], context: MessageContext, *, alert_days: float
) -> dict[str, Any]:
    """The webhook's body: people DX has not counted for longer than `alert_days`."""
    lines = [
        f"DX has not counted {plural(len(late), 'person')} for more than {alert_days:g} days "
        "(not DX users yet; placed once they join DX):",
        *(f"- {p.email} since {p.since.date().isoformat()}" for p in late[:LIMIT]),
    ]
    if len(late) > LIMIT:
        lines.append(f"and {len(late) - LIMIT} more")
    return _body(
        NOT_IN_DX,
        lines,
        context,
        people=[
            {"email": p.email, "since": p.since.astimezone(UTC).isoformat()} for p in late[:LIMIT]
        ],
        count=len(late),
    )


# ------------------------------------------------------- managers who left

LEAD_LEFT = "lead_left"  # the `notify.on` event


class LeftTeam(NamedTuple):
    """A team kept for a manager who left while people still name them, as the store
    keeps it (`defaults.LEAD_LEFT_ALERT_DAYS` counts from `since`)."""

    key: str  # the team's HR key
    team: str  # "" when not kept: nobody up the chain to stand in
    lead: str  # the employee id of who left
    lead_name: str
    stand_in: str  # the stand-in's e-mail; "" nobody
    people: int
    since: datetime
    told: bool  # told late already
    cleared: bool  # HR re-pointed the people since (kept until told)


def lead_left_notices(
    teams: Sequence[LeftTeam], now: datetime, *, alert_days: float
) -> tuple[list[LeftTeam], list[LeftTeam]]:
    """What to tell now: the teams HR has not re-pointed after `alert_days` and not told
    yet, and those told whose people HR has re-pointed since. Each is told once when it
    starts and once when it clears, never every run; what HR fixes in time never pages."""
    limit = timedelta(days=alert_days)
    late = [t for t in teams if not t.told and not t.cleared and now - t.since >= limit]
    cleared = [t for t in teams if t.told and t.cleared]
    return late, cleared


def _left_line(team: LeftTeam) -> str:
    who = name_and_id(team.lead_name, team.lead)
    since = team.since.date().isoformat()
    if not team.stand_in:
        return (
            f"{who} left on or before {since}; nobody up the chain is kept: "
            f"{plural(team.people, 'person')} in no team"
        )
    return (
        f"{team.team}: {who} left on or before {since}; {team.stand_in} stands in for "
        f"{plural(team.people, 'person')}"
    )


def lead_left_message(
    late: Sequence[LeftTeam],
    cleared: Sequence[LeftTeam],
    context: MessageContext,
    *,
    alert_days: float,
) -> dict[str, Any]:
    """The webhook's body: managers who left whose people HR has not re-pointed after
    `alert_days`, and those it has re-pointed since that was told."""
    lines = []
    if late:
        lines.append(
            f"{plural(len(late), 'manager')} left more than {alert_days:g} days ago and people "
            "still name them in HR; their teams stay with a stand-in lead. Give those people "
            "their new manager in HR:"
        )
        lines.extend(_bullets(_left_line(t) for t in late))
        # Not `explain` of the manager: their row may be gone from the export.
        lines.append("Who still names each: hrsync plan (its section Managers who left)")
    if cleared:
        lines.append(f"HR re-pointed the people of {plural(len(cleared), 'manager')} who left:")
        lines.extend(_bullets(name_and_id(t.lead_name, t.lead) for t in cleared))
    return _body(
        LEAD_LEFT,
        lines,
        context,
        late=[
            {
                "team": t.team or None,
                "lead": t.lead,
                "lead_name": t.lead_name,
                "stand_in": t.stand_in or None,
                "people": t.people,
                "since": t.since.astimezone(UTC).isoformat(),
            }
            for t in late[:LIMIT]
        ],
        late_count=len(late),
        cleared=[t.lead for t in cleared[:LIMIT]],
        cleared_count=len(cleared),
    )


# ------------------------------------------------------- readiness for the next snapshot


def snapshot_message(
    kind: NoticeKind,
    snapshot: NextSnapshot,
    ready: Readiness,
    context: MessageContext,
    *,
    floor: UnderFloor | None = None,
) -> dict[str, Any]:
    """The webhook's body when DX will not be ready for the next snapshot (what blocks it,
    the command that resolves it), or when it became ready after that; and the teams DX
    will leave out of its results (`floor`), with their people."""
    return _body(
        kind,
        readiness_lines(kind, snapshot, ready, context.now) + floor_lines(floor),
        context,
        snapshot_id=snapshot.snapshot_id,
        scheduled_for=snapshot.day.isoformat(),
        ready=ready.ready,
        blockers=list(ready.blockers),
        action=ready.command,
        under_floor=floor_document(floor),
    )
