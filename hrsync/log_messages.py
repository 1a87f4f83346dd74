"""The `message` of every log line: one short human sentence per event code, made from
the event's own fields.

Log platforms show `message` as the line itself (Datadog's Content column, Kibana's
Discover, Cloud Logging's summary line); `event` stays the stable code that scripts and
alerts match. `MESSAGES` is the one table of those sentences. A code missing from it, a
field missing from an event, or a value of an unexpected type still gives a sentence:
`message_for` never raises, since it runs inside logging.

The sentence is one line, at most `MAX_MESSAGE` characters; a long value shows its start,
a list its first `LIST_SHOWN` items and how many more. Scrubbing secrets is the logging
setup's job (`hrsync.logs`), which builds the message from fields it already scrubbed
and scrubs the sentence again.
"""

from __future__ import annotations

import re
import string
from collections.abc import Callable, Mapping
from typing import Any

from hrsync.words import name_and_id, plural, plural_of

MAX_MESSAGE = 240  # a line in a log viewer, not a report
MAX_VALUE = 100  # one value inside the sentence
LIST_SHOWN = 3
MISSING = "?"  # a field the event did not carry

Fields = Mapping[str, Any]


class _Fields(dict[str, Any]):
    """An event's fields for a template; records the fields a template asked for and the
    event did not carry (the test that every call site gives what its sentence reads)."""

    def __init__(self, fields: Fields) -> None:
        super().__init__(fields)
        self.missing: set[str] = set()

    def __missing__(self, key: str) -> Any:
        self.missing.add(key)
        return _Missing()


class _Missing:
    def __str__(self) -> str:
        return MISSING


def short(value: Any, limit: int = MAX_VALUE) -> str:
    """One value as a person reads it: the first line of a text, a list's first items."""
    if isinstance(value, _Missing):
        return MISSING
    if value is None:
        return "none"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, float):
        return f"{value:g}"
    if isinstance(value, Mapping):
        items = [f"{k} {short(v, limit // 2)}" for k, v in list(value.items())[:LIST_SHOWN]]
        return _listed(items, len(value))
    if isinstance(value, list | tuple | set | frozenset):
        values = list(value)
        return _listed([short(v, limit // 2) for v in values[:LIST_SHOWN]], len(values))
    text = str(value).strip()
    first = text.split("\n", 1)[0].strip()
    cut = len(first) < len(text)
    if len(first) > limit:
        first, cut = first[: limit - 1].rstrip(), True
    return first + "…" if cut else first


def _listed(items: list[str], total: int) -> str:
    if total == 0:
        return "none"
    more = total - len(items)
    return ", ".join(items) + (f" and {more} more" if more > 0 else "")


def one_line(text: str, limit: int = MAX_MESSAGE) -> str:
    """`text` on one line: control characters and runs of whitespace become one space."""
    # Cut first: a 50-line refusal is not cleaned whole to keep 240 characters of it.
    head = text[: limit * 2]
    cleaned = " ".join("".join(c if c.isprintable() else " " for c in head).split())
    if len(cleaned) > limit or len(head) < len(text):
        cleaned = cleaned[: limit - 1].rstrip() + "…"
    return cleaned


def counted(value: Any, word: str) -> str:
    """A count and its noun, in the singular for one: `1 person`, `3 people`, `? people`
    for a count the event did not carry."""
    if isinstance(value, int) and not isinstance(value, bool):
        return plural(value, word)
    return f"{short(value)} {plural_of(word)}"


# `{total:count(person)}`: the count with its noun, `1 person` or `2 people`.
_COUNT_SPEC = re.compile(r"count\((\w+)\)")


class _Formatter(string.Formatter):
    def format_field(self, value: Any, format_spec: str) -> str:
        # `{detail:full}`: a value that is the sentence itself may take the whole line.
        if format_spec == "full":
            return short(value, MAX_MESSAGE)
        if (noun := _COUNT_SPEC.fullmatch(format_spec)) is not None:
            return counted(value, noun[1])
        return short(value) if not format_spec else format(value, format_spec)


_FORMATTER = _Formatter()


def _run(fields: Fields) -> str:
    run_id = fields.get("run_id")
    return f" (run {short(run_id)})" if run_id else ""


# What each count of a plan is called in a sentence, done and to do (`sync.finished`,
# `plan.ready`, a sync's summary): (key, done: one, many; to do: one, many).
_CHANGE_WORDS = (
    ("create", "created", "created", "to create", "to create"),
    ("rename", "renamed", "renamed", "to rename", "to rename"),
    ("move", "moved", "moved", "to move", "to move"),
    ("lead_change", "lead change", "lead changes", "lead change", "lead changes"),
    (
        "membership_change",
        "membership change",
        "membership changes",
        "membership change",
        "membership changes",
    ),
    ("archive", "archived", "archived", "to archive", "to archive"),
)


def changes_said(counts: Any, *, planned: bool = False) -> str:
    """A plan's counts in words: `1 created, 2 lead changes` once done, `1 to create, 2
    lead changes` while to do; `no changes` when there are none."""
    if not isinstance(counts, Mapping):
        return "no counts"
    parts = []
    for key, *words in _CHANGE_WORDS:
        count = counts.get(key)
        if count:
            done_one, done_many, to_do_one, to_do_many = words
            one, many = (to_do_one, to_do_many) if planned else (done_one, done_many)
            parts.append(f"{short(count)} {one if count == 1 else many}")
    return ", ".join(parts) if parts else "no changes"


def _sync_finished(f: _Fields) -> str:
    outcome = short(f["outcome"])
    run = "dry run" if f.get("dry_run") else "sync"
    if outcome in ("applied", "planned"):
        text = f"{run} {outcome}: {changes_said(f.get('counts'), planned=outcome == 'planned')}"
    elif outcome == "in_sync":
        text = f"{run} in_sync: DX already matches"
    elif outcome == "deferred":
        text = f"{run} deferred until {short(f.get('resume_at'))}: {short(f.get('reason'))}"
    else:
        text = f"{run} {outcome}: {short(f.get('reason'), MAX_MESSAGE)}"
    return text + _run(f)


def _sync_started(f: _Fields) -> str:
    kind = "preview" if f.get("preview") else "dry run" if f.get("dry_run") else "sync"
    return f"{kind} started" + _run(f)


def _sync_refused(f: _Fields) -> str:
    reason = f.get("reason") or f"guards {short(f['guards'])}"
    return f"sync refused plan {short(f['plan_id'])}: {short(reason, MAX_MESSAGE)}"


def _plan_ready(f: _Fields) -> str:
    return f"plan ready: {changes_said(f, planned=True)}, {short(f.get('unchanged', 0))} unchanged"


_SKIP_REASONS = {"run_in_progress": "a run is still going", "stopping": "the daemon is stopping"}


def _run_skipped(f: _Fields) -> str:
    reason = short(f["reason"])
    return f"{short(f['trigger'])} run skipped: {_SKIP_REASONS.get(reason, reason)}"


def _stopping(f: _Fields) -> str:
    going = " while a run is going" if f.get("run_in_progress") else ""
    return f"daemon stopping{going} (grace {short(f['grace_s'])} s)"


def _recovered(f: _Fields) -> str:
    if f.get("verified"):
        return f"an earlier run's submission {short(f['submission'])} is verified: DX shows it"
    return f"an earlier run's submission {short(f['submission'])} is not in DX: planning anew"


def _lead_left(f: _Fields) -> str:
    lead = short(f["lead"])
    who = name_and_id(short(f.get("lead_name") or ""), lead)
    # With their row gone, their name is not known: the id stands alone, said as whose.
    who = (f"manager {who}" if who == lead else who) + f" left ({short(f['why'])})"
    if f.get("stand_in") is None:
        return f"{who}: nobody up the chain is kept, {counted(f['people'], 'person')} in no team"
    return (
        f"{who}: {short(f['team'])} is led by {short(f['stand_in'])} until HR re-points "
        f"its {counted(f['people'], 'person')}"
    )


def _export_warning(f: _Fields) -> str:
    # The detail names its kind already ("warning: people.csv line 4: …").
    detail = short(f.get("detail"), MAX_MESSAGE)
    return f"export {detail}" if detail.startswith("warning: ") else f"export warning: {detail}"


def _deferred(f: _Fields) -> str:
    return f"sync deferred: {short(f.get('detail') or f.get('kind'), MAX_MESSAGE)}"


def _notify_failed(f: _Fields) -> str:
    kind = f"the {short(f.get('notify_event'))} notification" if f.get("notify_event") else ""
    why = f.get("error") or (f"HTTP {short(f.get('status'))}" if f.get("status") else "")
    text = f"the webhook did not take {kind or 'a notification'}"
    return f"{text}: {short(why)}" if why else text


_DROP_KINDS = ("aborted", "timed_out", "over_cap", "too_large", "accept_failed")


def _http_dropped(f: _Fields) -> str:
    counts = [f"{short(f.get(kind))} {kind.replace('_', ' ')}" for kind in _DROP_KINDS if kind in f]
    since = f" in the last {short(f.get('in_last_s'))} s" if f.get("in_last_s") else ""
    return f"listener connections dropped{since}: {', '.join(counts) or '?'}"


def _with_detail(head: str) -> Callable[[_Fields], str]:
    """`head`, then the event's `detail` when it has one."""

    def build(f: _Fields) -> str:
        text = _FORMATTER.vformat(head, (), f)
        detail = f.get("detail")
        return f"{text}: {short(detail, MAX_MESSAGE)}" if detail else text

    return build


# Event code → a template (`{field}` placeholders) or a function of the fields. Codes are
# those of docs/reference/log-events.md; tests/test_log_messages.py checks every code
# the package emits has an entry and every call site carries the fields it reads.
# A count with its noun is written `{total:count(person)}` (`1 person`, `2 people`),
# never `{total} people`, which reads `1 people`.
MESSAGES: dict[str, str | Callable[[_Fields], str]] = {
    # a run
    "sync.started": _sync_started,
    "sync.finished": _sync_finished,
    "sync.crashed": "the run crashed: {error}",
    "sync.stopped": "run stopped by a signal: {step}",
    "sync.stopped_verifying": "run stopped while verifying submission {submission}; "
    "the next start verifies it",
    "sync.lease_lost": "the run lost its lease and sends nothing more: {detail}",
    "sync.in_sync": "DX already matches the {teams:count(team)}: nothing to send",
    "sync.deferred": _deferred,
    "sync.refused": _sync_refused,
    "sync.refused.would_archive": "the refused plan would have archived team {team} "
    "({reference_id})",
    "sync.refused_pending": "a refusal still waits for a person: {reason}; approve {action}",
    "sync.rejected": "DX rejected the hierarchy ({error}, HTTP {status}): {dx_message}",
    "sync.rejected.row": "DX rejected row {index}: team {team} (lead {lead}): {field} {problem}",
    "sync.preview": "DX made a preview of the plan: {preview_url}",
    "sync.preview_failed": "DX made no preview for refused plan {plan_id}: {error}",
    "sync.submitting": "sending {teams:count(team)} to DX",
    "sync.accepted": "DX accepted the hierarchy as import {import_id}",
    "sync.outcome_unknown": "no usable answer from DX to the submission: {detail}",
    "sync.resent": "sent the same payload again (attempt {attempt} of {max_resends}): {reason}",
    "sync.resend_import_running": "resend {attempt} answered import_in_progress: "
    "an earlier one arrived",
    "sync.resend_failed": "could not send the payload again (attempt {attempt}): {detail}",
    "sync.recovering": "an earlier run ({previous_run}) died after submitting: verifying "
    "its submission {submission} ({status}) first",
    "sync.recovered": _recovered,
    "sync.held": "{total:count(person)} held for a problem in their own row (see {see})",
    "sync.person_held": "{person} ({name}) held: {detail:full}",
    "sync.lead_substituted": "DX does not know {lead}, lead of {team}: {substitute} stands in",
    "sync.refusal_unread": (
        "DX refused the hierarchy ({error}) without naming a row it can be read from:"
        " stand-ins for {suspects:count(lead)} DX may not know, and the hierarchy sent again"
    ),
    "sync.not_in_dx": "{count:count(person)} sent, not counted by DX yet: {people}",
    "verify.counted_forgotten": "DX counts fewer in {teams} than it was known to count: "
    "{count:count(person)} not known again",
    "sync.not_in_dx_undecided": "DX does not count {not_counted} of {sent} sent to {team}; "
    "which, it cannot tell yet: {candidates}",
    "sync.joined_dx": "{count:count(person)} joined DX: {people}",
    "sync.recheck_not_in_dx": "sending the hierarchy again: {count:count(person)} not in DX yet",
    "sync.approval_honoured": "plan {plan_id} let past the guards: approved by {approved_by}",
    "sync.guards_overridden": "plan {plan_id} let past the guards by {by} ({flags})",
    "sync.approval_extended": "the approval of plan {plan_id} by {approved_by} now expires "
    "at {expires_at}: a snapshot window defers the run to {resume_at}",
    "sync.approval_too_old": "the approval of plan {plan_id} by {approved_by} is too old "
    "for this daemon: not honoured",
    "sync.approval_from_the_future": "the approval of plan {plan_id} by {approved_by} is "
    "dated {approved_at}, after this runner's clock: not honoured",
    "sync.approval_not_matching": _with_detail(
        "the pending approval by {approved_by} is for plan {approved_plan_id}, not {plan_id}"
    ),
    "sync.approval_already_applied": "plan {plan_id} was already applied by another run",
    "sync.quarantined": "quarantined after {failures} failed runs in a row; "
    "next attempt at {next_attempt_at}",
    "sync.quarantine_skip": "{trigger} run skipped: quarantined after {failures} failures "
    "until {next_attempt_at}",
    "sync.quarantine_cleared": "the quarantine is over after {failures} failed runs: {outcome}",
    # the export
    "source.opened": "export opened: {source} ({format})",
    "source.fetched": "export fetched: {pages:count(page)}, {bytes:count(byte)}",
    "source.page": "read export page {page} ({bytes} bytes)",
    "source.retry": "trying export page {page} again in {delay_s} s (attempt {attempt}): {detail}",
    "source.note": "{detail:full}",
    "source.unreadable": "source unreadable: {detail:full}",
    "source.oauth2_token": "got an OAuth2 access token, valid for {expires_in_s} s",
    "source.oauth2_refresh": "the OAuth2 token was renewed before export page {page}",
    "export.read": "export read: {people:count(person)} ({excluded} excluded)",
    "export.unavailable": "the export could not be read: {detail:full}",
    "export.problem": "export problem: {detail:full}",
    "export.warning": _export_warning,
    "mapping.note": "{detail:full}",
    "mapping.people_in_no_team": "{total:count(person)} from the export in no team (see {see})",
    "mapping.person_in_no_team": "{person} ({name}) is in no team: {reason}",
    "mapping.lead_left": _lead_left,
    "mapping.lead_without_reports": "nobody in or below {unit} has reports: {person} leads it",
    # the plan
    "identity.decision": "team {key} gets reference_id {reference_id} ({how})",
    "plan.change": "{summary:full}",
    "plan.members": "members of team {team}",
    "plan.drift": "team {team} was edited in DX by hand ({details}): this run corrects it",
    "plan.ready": _plan_ready,
    # verifying
    "verify.converged": "DX shows the submission (look {attempt}): {detail}",
    "verify.counts_settled": "DX's contributor counts read again once settled: {detail}",
    "verify.waiting": "waiting for DX to show the submission (look {attempt}): {detail}",
    "verify.watching": "watching {teams} a little longer (look {attempt}): {detail}",
    "verify.read_failed": "could not read DX's teams (look {attempt}): {detail}",
    "verify.no_evidence": "{detail:full}",
    "verify.contributors_unknown": "DX counts {counted} of the {sent} contributors sent to {team}",
    "verify.audit": "audit trail: {matched} matched, {missing} missing, {unexpected} "
    "unexpected, {earlier} of an earlier submission",
    "verify.audit_matched": "audit event {event_id} ({action} on {team}) matches the "
    "planned {change}",
    "verify.audit_missing": "no audit event for the planned {change}: {summary}",
    "verify.audit_unexpected": "unexpected audit event {event_id}: {action} on {team} by {actor}",
    "verify.audit_earlier": "audit event {event_id} ({action} on {team}) is of an "
    "earlier submission",
    "verify.audit_unavailable": "DX's audit trail could not be read: {detail}",
    # user attributes
    "attributes.planned": "attribute {attribute}: {new} to set, {changed} to change, "
    "{cleared} to clear, {confirmed} confirmed",
    "attributes.held": "{people:count(person)}'s attribute values not sent again after DX "
    "refused them: {first}",
    "attributes.sending": "sending attribute values of {people:count(person)} "
    "({values:count(value)})",
    "attributes.progress": "attribute calls: {sent} of {total} sent ({percent}%), "
    "{updated} updated, {failed} failed",
    "attributes.sent": "attribute values sent for {people:count(person)}: {updated} updated, "
    "{failed} failed",
    "attributes.failed": "DX refused the attribute values of {person}: {error}",
    "attributes.waiting": "{people:count(person)}'s attribute values wait until DX counts them "
    "(not DX users yet): {first}",
    "attributes.skipped": "attribute step skipped: {reason}",
    "attributes.refused": "attribute step refused: {reason}",
    "attributes.guard_overridden": "{flag} let attribute changes through: {reasons}",
    "attributes.rejected": "DX rejected the attribute calls ({error}): the token needs "
    "the {scope} scope",
    "attributes.stopped": "attribute step stopped by a signal after {sent} calls, {remaining} left",
    "attributes.failed_step": "attribute step stopped after {sent} calls, {remaining} left: "
    "{error}",
    "attributes.crashed": "the attribute step crashed (the hierarchy's outcome stands): {error}",
    # approvals
    "approval.recorded": "plan {plan_id} approved by {approved_by}, until {expires_at}",
    # the daemon
    "daemon.started": "daemon started: schedule {schedule} ({timezone}), next run at "
    "{next_run_time}",
    "daemon.signal": "received {signal}",
    "daemon.stopping": _stopping,
    "daemon.stopped": "daemon stopped",
    "daemon.grace_expired": "the run was cut off after the {grace_s} s shutdown grace",
    "daemon.catch_up": "a scheduled run at {missed} was missed while down: syncing now",
    "daemon.run_skipped": _run_skipped,
    "daemon.run_crashed": "the {trigger} run crashed: {error}",
    "daemon.store_unavailable": "the state store is unavailable: {error}",
    "daemon.heartbeat_failed": "could not write the heartbeat: {error}",
    "daemon.heartbeat_skipped": "heartbeat of {scheduled_at} skipped: the previous one "
    "was still being written",
    "daemon.monitor_failed": "could not update the metrics or the webhook: {error}",
    "daemon.http_listening": "serving /healthz, /readyz and /metrics on {listen}",
    "daemon.http_error": "endpoint {path} failed: {error}",
    "daemon.http_dropped": _http_dropped,
    "daemon.run_overdue": "the {trigger} run has run {running_s} s, past every bound of a run "
    "({limit_s} s): /readyz says not ready until it ends",
    "daemon.retry_scheduled": "the unverified run is retried at {retry_at}: {reason}",
    "daemon.resume_registered": "the deferred run resumes at {resume_at}: {reason}",
    "daemon.pre_snapshot_scheduled": "checking for pending changes at {run_at}, before "
    "snapshot {snapshot_id} ({scheduled_for})",
    "daemon.approval_found": "a new approval of plan {plan_ids} by {approved_by}: syncing now",
    "daemon.standby": "{trigger} run left to {holder}, which holds the lease",
    "daemon.standby_over": "the lease holder {holder} ended its run: {outcome}",
    "daemon.takeover": "the run of lease holder {holder} died unfinished: syncing now",
    # notifications
    "notify.sent": "the webhook took the {notify_event} notification",
    "notify.failed": _notify_failed,
    "notify.insecure_url": "the webhook URL in {variable} is plain http:// to {host}: no "
    "notification is sent",
    "notify.no_url": "{variable} (notify.webhook_url_env) is unset or empty: no notifications",
    # DX's API
    "dx.response": "DX answered {method} with HTTP {status}",
    "dx.retry": "calling {method} again in {delay_s} s (attempt {attempt}): {reason}",
    "dx.audit_trail.older_than_since": "read DX's audit trail back to the run's start "
    "({pages} pages)",
    "dx.audit_trail.cursor_repeated": "DX's audit trail repeated a cursor after {pages} "
    "pages: stopped reading",
    "dx.audit_trail.page_cap": "DX's audit trail has more than {max_pages} pages: stopped reading",
    # the state store, the process, the log itself
    "join.read": "{join}: {rows:count(row)} read, {matched} of {of:count(person)} matched "
    "({unmatched} without a match, {several} with several)",
    "fields.first_of": "{detail} (how many values each column of the list gave)",
    "join.baseline_kept": _with_detail(
        "in sync, but a join matched far fewer people than last time: its baseline is kept"
    ),
    "union.read": "{union}: {rows:count(row)} read from {source}, {people:count(person)} kept",
    "union.baseline_kept": _with_detail(
        "in sync, but a source has far fewer people than last time: its baseline is kept"
    ),
    "db.upgraded": "database upgraded from {before} to {after}",
    "db.pruned": "history from before {before} pruned (state.keep_days = {keep_days})",
    "db.prune_failed": "could not prune history older than {keep_days} days: {error}",
    "files.not_private": "{path} is mode {mode}, open to others: {fix}",
    "config.deprecated": "{detail}",
    "db.up_to_date": "database already at {after}",
    "hrsync.crashed": "hrsync crashed: {error}",
    "log.capped": "{at_debug} more {kind} events went to debug ({total} in all): see {see}",
    # the simulator (a fake DX for trials and tests)
    "simulator.request": "simulator: {method} answered {status}",
    "simulator.import_accepted": "simulator: import {import_id} accepted ({teams:count(team)})",
    "simulator.import_applied": "simulator: import {import_id} applied",
    "simulator.client_gone": "simulator: the client left before the answer to {path}",
    "simulator.internal_error": "simulator: internal error answering {path}",
}


def render(event: str, fields: Fields) -> tuple[str, set[str]]:
    """The sentence for `event` and the fields it wanted that `fields` lacks."""
    view = _Fields(fields)
    entry = MESSAGES.get(event)
    if entry is None:
        text = _fallback(event, view)
    elif isinstance(entry, str):
        text = _FORMATTER.vformat(entry, (), view)
    else:
        text = entry(view)
    return one_line(text), view.missing


def message_for(event: str, fields: Fields) -> str:
    """One line for a person: never empty, never raising."""
    try:
        text, _ = render(event, fields)
    except Exception:  # a message is never worth a lost log line
        text = ""
    return text or one_line(str(event)) or "log event"


def _fallback(event: str, fields: Fields) -> str:
    # A code without an entry (a test's, a new one): its own detail, or the code itself.
    detail = fields.get("detail") or fields.get("summary")
    return f"{event}: {short(detail, MAX_MESSAGE)}" if detail else event


__all__ = [
    "LIST_SHOWN",
    "MAX_MESSAGE",
    "MESSAGES",
    "changes_said",
    "message_for",
    "one_line",
    "render",
    "short",
]
