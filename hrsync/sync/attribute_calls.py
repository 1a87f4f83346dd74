"""The attribute step's calls: one `users.attributes.update` per changed person.

Each answer is written to the store as it comes, so a run that stops (SIGTERM, between
calls), loses DX or its lease keeps everything DX confirmed; the next run sends the rest.
A person DX refuses is counted and logged (`attributes.failed`), never more than that,
unless DX refuses every one of enough people sent (`refused_every`): then the step fails
with one reason. An answer naming an unknown user is no failure: that person is not a DX
user yet, which is learned (the store's `dx_people`, and their failure, so the next runs
do not ask again for a day) and told as waiting.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TextIO

from hrsync import logs
from hrsync.core.attributes import (
    AttributeOutcome,
    AttributePlan,
    Failure,
    PersonChange,
    Progress,
    names_unknown_user,
    read_result,
    refused_every,
)
from hrsync.core.confirmation.dx_users import changed, from_attribute_answers
from hrsync.core.text import plural
from hrsync.dx.errors import DxAuthError, DxError, DxRejected
from hrsync.dx.methods import USER_ATTRIBUTES_UPDATE
from hrsync.logcap import Capped
from hrsync.store.attribute_values import AttributeStore
from hrsync.sync.context import Run

log = logs.get_logger(__name__)

SCOPE = "users:write"


@dataclass(frozen=True)
class Sent:
    """How the calls ended: the outcome, the people DX confirmed, the people it refused."""

    outcome: AttributeOutcome
    updated: int
    failures: dict[str, str]  # e-mail -> error, this run
    reason: str | None = None
    waiting: tuple[str, ...] = ()  # e-mails DX named no user this run: not failures


def send(run: Run, store: AttributeStore, plan: AttributePlan, progress_to: TextIO | None) -> Sent:
    """One `users.attributes.update` per changed person, each answer stored as it comes."""
    total = len(plan.changes)
    started = run.clock()
    progress = Progress(total, started)
    bar = _Bar(progress_to if progress_to is not None else sys.stderr, total)
    updated = 0
    failures: dict[str, str] = {}
    # One event per person who failed, up to the log's cap per kind, then one summary.
    failed_log = Capped(log, "attributes.failed", see="hrsync history")
    log.info("attributes.sending", people=total, values=plan.values_to_send)

    # Whom DX answered for (a DX user) and whom it does not know: evidence of who DX counts.
    found: list[str] = []
    not_found: list[str] = []

    def result(outcome: AttributeOutcome, reason: str | None = None) -> Sent:
        bar.close()
        failed_log.close()
        learn_from_answers(run, found, not_found)
        return Sent(outcome, updated, failures, reason, tuple(not_found))

    # The hierarchy step may have ended because another sync took the lease.
    if not run.renew_lease():
        return result(
            AttributeOutcome.FAILED,
            "attributes: another sync holds the lease; nothing sent, the next run sends it",
        )
    for done, change in enumerate(plan.changes):
        if run.stopping():
            reason = (
                f"stopped (SIGTERM) after {done} of {plural(total, 'call')}; what DX "
                "confirmed is kept and the next run sends the rest"
            )
            log.warning("attributes.stopped", sent=done, remaining=total - done)
            return result(AttributeOutcome.FAILED, reason)
        try:
            user = run.client.update_user_attributes(change.email, change.values)
        except DxAuthError as exc:
            reason = (
                f"attributes rejected: DX refused {USER_ATTRIBUTES_UPDATE} ({_dx_words(exc)}); "
                f"the token must be valid and carry the {SCOPE} scope: add it to the API key"
            )
            log.error("attributes.rejected", error=exc.error, dx_message=exc.message, scope=SCOPE)
            return result(AttributeOutcome.REJECTED, reason)
        except DxRejected as exc:
            # About this person (an e-mail DX does not know, a value it will not take).
            if names_unknown_user(exc.error):
                # Not a DX user yet: kept as a failure so no run asks again for a day,
                # but told as waiting, not as refused.
                not_found.append(change.email)
                failure = Failure(_dx_words(exc), run.clock(), change.digest)
                store.record(change.email, {}, run.clock(), failure=failure)
            else:
                _failed(run, store, change, _dx_words(exc), failures, failed_log)
        except DxError as exc:
            log.error("attributes.failed_step", error=str(exc), sent=done, remaining=total - done)
            return result(
                AttributeOutcome.FAILED,
                f"attributes: DX could not be reached after {done} of {plural(total, 'call')} "
                f"({exc}); what DX confirmed is kept and the next run sends the rest",
            )
        else:
            found.append(change.email)
            answer = read_result(change.values, user)
            if answer.ok:
                store.record(change.email, answer.confirmed, run.clock())
                updated += 1
            else:
                store.record(
                    change.email,
                    answer.confirmed,
                    run.clock(),
                    failure=Failure("; ".join(answer.problems), run.clock(), change.digest),
                )
                _log_failed(change.email, "; ".join(answer.problems), failures, failed_log)
        bar.update(done + 1)
        now = run.clock()
        if progress.due(done + 1, now):
            elapsed = (now - started).total_seconds()
            log.info(
                "attributes.progress",
                sent=done + 1,
                total=total,
                percent=round(100 * (done + 1) / total),
                updated=updated,
                failed=len(failures),
                elapsed_s=round(elapsed, 1),
            )
            # A first run of 10,000 people outlasts the lease's TTL: renew it as we go.
            if not run.renew_lease():
                return result(
                    AttributeOutcome.FAILED,
                    f"attributes: the lease was lost after {done + 1} of "
                    f"{plural(total, 'call')}; the next run sends the rest",
                )
    log.info("attributes.sent", people=total, updated=updated, failed=len(failures))
    known = max((count.confirmed for count in plan.counts), default=0)
    if refused_every(total, updated, len(failures), unknown=len(not_found), known=known):
        # Not one person's problem: an attribute name or value DX takes from nobody, or an
        # export whose e-mails DX knows none of, is a setting to fix, and an "applied" step
        # would hide it behind per-person warnings.
        first = (
            next(iter(failures.values()))
            if failures
            else f"no DX user with the e-mail {not_found[0]!r}"
        )
        return result(
            AttributeOutcome.FAILED,
            f"attributes: DX refused every one of the {total} people sent "
            f"(e.g. {first}); check the [attributes] names and values, and that the "
            "export's e-mails are those of DX's users",
        )
    return result(AttributeOutcome.APPLIED)


def learn_from_answers(run: Run, found: Sequence[str], not_found: Sequence[str]) -> None:
    """What the answers say of who DX counts, kept for the people the hierarchy sent."""
    if not found and not not_found:
        return
    known = {email: person.counted for email, person in run.store.people.dx_people().items()}
    verdicts = from_attribute_answers(found, not_found, when=run.clock().date().isoformat())
    run.store.people.set_counted(
        {e: (v.counted, v.evidence) for e, v in changed(known, verdicts).items()}, run.clock()
    )


def _failed(
    run: Run,
    store: AttributeStore,
    change: PersonChange,
    error: str,
    failures: dict[str, str],
    failed_log: Capped,
) -> None:
    store.record(change.email, {}, run.clock(), failure=Failure(error, run.clock(), change.digest))
    _log_failed(change.email, error, failures, failed_log)


def _log_failed(email: str, error: str, failures: dict[str, str], failed_log: Capped) -> None:
    failures[email] = error
    failed_log.emit(
        lambda failed: {
            "person": failed[0],
            "error": failed[1],
            "detail": "retried when this person's values change, or after a day",
        },
        (email, error),
        "warning",
    )


def _dx_words(exc: DxRejected) -> str:
    parts = [exc.error or "error"]
    if exc.message:
        parts.append(exc.message)
    return ": ".join(parts)


class _Bar:
    """A one-line progress bar, on a terminal only (the log has the progress events)."""

    WIDTH = 30

    def __init__(self, out: TextIO, total: int) -> None:
        self._out = out
        self._total = total
        self._on = total > 1 and _isatty(out)
        self._shown = -1

    def update(self, done: int) -> None:
        if not self._on:
            return
        filled = done * self.WIDTH // self._total
        if filled == self._shown and done != self._total:
            return
        self._shown = filled
        bar = "#" * filled + "." * (self.WIDTH - filled)
        self._out.write(f"\rattributes [{bar}] {done}/{self._total}")
        self._out.flush()

    def close(self) -> None:
        if self._on and self._shown >= 0:
            self._out.write("\n")
            self._out.flush()


def _isatty(out: TextIO) -> bool:
    try:
        return out.isatty()
    except (AttributeError, ValueError):
        return False
