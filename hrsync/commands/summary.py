"""The paragraph `hrsync sync` ends with on a terminal: what happened, the counts, whether
DX was seen to take it, and what to do next. Not on a pipe: there the log (JSON) and
`sync.finished` say it for machines."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from hrsync.core.attributes import AttributeOutcome
from hrsync.core.command_lines import hrsync_command
from hrsync.core.gate.guards import STOPPED_VERIFYING
from hrsync.log_messages import changes_said
from hrsync.outcome import Outcome

if TYPE_CHECKING:
    from hrsync.sync.results import SyncRequest, SyncResult

_ATTRIBUTES_NEED_A_PERSON = (
    AttributeOutcome.REFUSED,
    AttributeOutcome.REJECTED,
    AttributeOutcome.FAILED,
)


def human_summary(
    result: SyncResult,
    config_path: Path | str | None = None,
    request: SyncRequest | None = None,
    daemon_seen: bool = True,
    log_shown: bool = True,
) -> str:
    """One paragraph (a few sentences, no list) for the person who ran `hrsync sync`;
    `request`: what they asked for, so the command offered next is the one that works;
    `log_shown`: the run's log is above (false on a terminal, where only its short warning
    and error lines are)."""

    def command(*words: str) -> str:
        return hrsync_command(config_path, *words)

    approvals = _approval_flags(request)
    what = changes_said(result.counts, planned=result.outcome is not Outcome.APPLIED)
    people = f" from {result.people_count} people" if result.people_count is not None else ""
    teams = f"{result.plan.desired_count} teams{people}" if result.plan is not None else "no plan"
    reason = f" Reason: {result.reason}." if result.reason else ""
    action = result.action
    match result.outcome:
        case Outcome.APPLIED:
            head = f"Applied: {what} ({teams}); DX was seen to take every change (verified)."
            nxt = (
                "Nothing to do; the daemon keeps it in step."
                if daemon_seen
                else f"Nothing to do now; `{command('run')}` (the daemon) keeps it in step."
            )
        case Outcome.IN_SYNC:
            head = f"In sync: DX already matches the export ({teams}); nothing was sent."
            nxt = "Nothing to do."
        case Outcome.PLANNED if result.preview_url:
            head = (
                f"Previewed in DX, nothing applied: {what} ({teams}). "
                f"The preview: {result.preview_url}"
            )
            nxt = f"Run `{command('sync', *approvals)}` to apply it."
        case Outcome.PLANNED:
            head = f"Planned, nothing sent: {what} ({teams})."
            nxt = f"Run `{command('sync', *approvals)}` to apply it."
        case Outcome.DEFERRED if result.defer_kind == STOPPED_VERIFYING:
            head = (
                f"Sent, not verified yet: {what} ({teams}); DX accepted it and the run "
                "stopped while verifying."
            )
            nxt = "Nothing to do: the next run verifies it before sending anything."
        case Outcome.DEFERRED:
            when = result.resume_at.isoformat(timespec="minutes") if result.resume_at else "later"
            head = f"Deferred, nothing sent: {what} ({teams}).{reason}"
            nxt = (
                f"The daemon tries again at {when} (or run `{command('sync')}` after it); "
                "nothing to do unless it keeps deferring."
                if daemon_seen
                else f"No daemon runs to try again (`{command('run')}`): run "
                f"`{command('sync')}` after {when}."
            )
        case Outcome.REFUSED:
            head = f"Refused, nothing sent: {what} ({teams}).{reason}"
            nxt = (
                f"Check the plan (`{command('plan')}`), then approve it once with `{action}`."
                if action
                else f"Fix the export or the settings, then run `{command('sync')}` again."
            )
        case Outcome.UNVERIFIED:
            head = (
                f"Sent but not verified: {what} ({teams}); DX accepted the import but did not "
                f"show every change in time.{reason}"
            )
            nxt = f"Run `{command('sync')}` again later; it checks DX before sending anything."
        case Outcome.REJECTED:
            head = f"Rejected by DX: {what} ({teams}).{reason}"
            nxt = "Fix what DX named above (the token, its scopes or the rows), then sync again."
        case _:
            head = f"Failed: {what} ({teams}).{reason}"
            where = (
                "See the log above"
                if log_shown
                else f"`{command('sync', '-v')}` shows the run's log, `{command('history')}` "
                "its record"
            )
            nxt = f"{where}; `{command('check')}` tests the settings, the export and DX."
    attributes = result.attributes
    extra = (
        f" User attributes: {attributes.outcome.value} ({attributes.updated} updated, "
        f"{attributes.failed} failed)."
        if attributes is not None and attributes.outcome.value != "skipped"
        else ""
    )
    if (
        attributes is not None
        and attributes.outcome in _ATTRIBUTES_NEED_A_PERSON
        and attributes.reason
        and result.outcome in (Outcome.APPLIED, Outcome.IN_SYNC, Outcome.PLANNED)
    ):
        # These heads carry no reason: without it a refused attribute step (exit 4) would
        # end on "Nothing to do".
        needs = f"The attribute step needs you: {attributes.reason.rstrip('.')}."
        nxt = f"{nxt} {needs}" if result.outcome is Outcome.PLANNED else needs
    if result.held:
        count = len(result.held)
        first = result.held[0].person
        extra += (
            f" {count} {'person is' if count == 1 else 'people are'} held for a problem of "
            f"their own row (first: {first.shown}, {first.location}); DX keeps what it last "
            f"had for them until HR fixes the row (`{command('plan')}` lists them)."
        )
    if result.not_in_dx:
        extra += (
            f" DX does not count {len(result.not_in_dx)} of the people sent (not DX users "
            f"yet; first: {result.not_in_dx[0]}): not a failure, placed once they join DX."
        )
    for undecided in result.not_in_dx_undecided[:3]:
        extra += f" {undecided.sentence()}."
    if len(result.not_in_dx_undecided) > 3:
        extra += f" And {len(result.not_in_dx_undecided) - 3} more such teams (`hrsync status`)."
    return f"{head}{extra} {nxt} (run {result.run_id}, exit {result.exit_code})"


def _approval_flags(request: SyncRequest | None) -> list[str]:
    """The guards a dry run or preview was let past: the sync that applies its plan needs
    the same, or it is refused."""
    if request is None:
        return []
    flags = []
    if request.allow_archive:
        flags += ["--allow-archive", str(request.allow_archive)]
    if request.allow_shrink:
        flags.append("--allow-shrink")
    if request.allow_held is not None:
        flags += ["--allow-held", str(request.allow_held)]
    if request.allow_attribute_changes:
        flags.append("--allow-attribute-changes")
    return flags
