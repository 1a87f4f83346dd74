"""The daemon's webhook: one POST per change of state (decided by hrsync.core.report.notify).

The URL comes from the environment variable `notify.webhook_url_env` names; it is a
secret (Slack and Teams URLs carry their credential), registered with hrsync.logs so it
never shows in a log line. A failed POST is logged and not remembered, so the next run's
notification carries the news again; it never fails or holds up a run for long.
"""

from __future__ import annotations

import os
import socket
import threading
from collections.abc import Mapping, Sequence
from datetime import datetime, timedelta

import httpx

from hrsync import logs
from hrsync.capped_body import ACCEPT_ENCODING, BodyRefused, TooLarge, iter_capped
from hrsync.config.plain_http import IN_CLEAR, plain_http_host
from hrsync.core.confirmation.dx_users import NotCounted, overdue
from hrsync.core.gate.snapshot_ahead import (
    SNAPSHOT_NOTICE,
    NextSnapshot,
    NoticeKind,
    Readiness,
    Told,
    readiness_notice,
)
from hrsync.core.report.notify import (
    HELD,
    LEAD_LEFT,
    NOT_IN_DX,
    OK,
    RECOVERED,
    STAND_IN,
    HeldEntry,
    LeftTeam,
    MessageContext,
    Notice,
    Observation,
    Sent,
    StandInChange,
    decide,
    held_message,
    lead_left_message,
    lead_left_notices,
    message,
    newly_overdue,
    not_in_dx_message,
    recovered_quietly,
    snapshot_message,
    stand_in_change,
    stand_in_message,
)
from hrsync.core.settings import NotifySettings
from hrsync.core.teams.substitutes import LeadSubstitute
from hrsync.secret import is_variable_name
from hrsync.store.leads_left import LATE
from hrsync.store.repo import Store

log = logs.get_logger(__name__)

# Per phase (connect, send, answer): a webhook that hangs holds the daemon's run thread at
# most about 7 s, once per change of state.
TIMEOUT = httpx.Timeout(connect=2.0, write=2.0, read=3.0, pool=1.0)
# httpx's read timeout restarts with every byte, so a receiver answering a byte at a time
# held the run thread as long as it liked; the POST as a whole gets this long.
DEADLINE_S = 7.0
# hrsync needs only the answer's status: Slack and Teams answer a few bytes ("ok"), and
# what is over this is not a webhook's answer (the POST counts as failed).
MAX_ANSWER_BYTES = 64 * 1024


class Notifier:
    def __init__(
        self,
        settings: NotifySettings,
        store: Store,
        *,
        environ: Mapping[str, str] | None = None,
        transport: httpx.BaseTransport | None = None,
        deadline_s: float = DEADLINE_S,
    ) -> None:
        self.settings = settings
        self._deadline_s = deadline_s
        self.store = store
        env = os.environ if environ is None else environ
        self._url = env.get(settings.webhook_url_env, "").strip() or None
        self._transport = transport
        if self._url is not None:
            logs.register_secret(self._url)

    @classmethod
    def configured(cls, settings: NotifySettings, store: Store) -> Notifier | None:
        """None when no webhook is set; a named but empty variable is said once, loudly."""
        if not settings.webhook_url_env:
            return None
        notifier = cls(settings, store)
        if notifier._url is None:
            variable = settings.webhook_url_env
            log.error(
                "notify.no_url",
                variable=variable if is_variable_name(variable) else "(not a name; not shown)",
                detail="notify.webhook_url_env names an environment variable that is empty "
                "or unset: no notification will be sent",
            )
            return None
        host = plain_http_host(notifier._url)
        if host and not settings.allow_insecure_http:
            # Sent over plain http://, the URL (its path is the credential) and every
            # message would cross the network in clear: better no message than that.
            log.error(
                "notify.insecure_url",
                variable=settings.webhook_url_env,
                host=host,
                detail=f"the webhook URL is plain http:// to {host}; it {IN_CLEAR}: no "
                "notification will be sent; use https://, or set dx.allow_insecure_http "
                "= true for a network you trust",
            )
            return None
        return notifier

    def after_run(self, seen: Observation, now: datetime) -> Notice | None:
        """Send what `seen` calls for; the notice delivered, or None."""
        return self.tell(self.store.notifications.state(), seen, now)

    def tell(self, last: Sent | None, seen: Observation, now: datetime) -> Notice | None:
        """Send what `seen` calls for after `last` (the state as read); the notice
        delivered, or None. A success may be seen by two at once (the replica that ran
        it and another's heartbeat): the end of an attention state is claimed from
        exactly `last` (store.notifications.claim_state), so one of them tells it."""
        notice = decide(last, seen, now, on=self.settings.on, repeat_s=self.settings.repeat_s)
        ok = Sent(OK, seen.digest, now, seen.run_id)
        if notice is None:
            if last is not None and recovered_quietly(last, seen):
                self.store.notifications.claim_state(last, ok)
            return None
        claimed = last if notice.event == RECOVERED else None
        if claimed is not None and not self.store.notifications.claim_state(claimed, ok):
            return None  # told by the other
        body = message(notice, self.settings.format, now=now, host=socket.gethostname())
        if not self._post(body, notice.event):
            if claimed is not None:  # not delivered: the next success tells it again
                self.store.notifications.claim_state(ok, claimed)
            return None
        if claimed is None:
            self.store.notifications.save_state(
                Sent(notice.remember, seen.digest, now, seen.run_id)
            )
        log.info("notify.sent", notify_event=notice.event, run_id=seen.run_id)
        return notice

    def after_success(
        self, run_id: str, substitutes: Sequence[LeadSubstitute], now: datetime
    ) -> StandInChange | None:
        """After a run that succeeded with these stand-in leads: tell of those that began or
        ended since the last message about them (the run it was about is kept in the
        store, so a restart does not repeat it)."""
        if STAND_IN not in self.settings.on:
            return None
        last = self.store.notifications.state(STAND_IN)
        told = self.store.runs.get(last.run_id) if last and last.run_id else None
        change = stand_in_change(told.substitutes if told else (), substitutes)
        if change is None:
            return None
        body = stand_in_message(change, self._context(run_id, now))
        if not self._post(body, STAND_IN):
            return None
        self.store.notifications.save_state(Sent(STAND_IN, STAND_IN, now, run_id), STAND_IN)
        log.info("notify.sent", notify_event=STAND_IN, run_id=run_id)
        return change

    def after_held(self, run_id: str, now: datetime) -> bool:
        """Tell of people newly held and of holds that ended, each once (what was told is
        kept in the store, so a failed POST is told again after the next run)."""
        if HELD not in self.settings.on:
            return False
        pending = self.store.people.held_notices()
        if not pending.started and not pending.cleared:
            return False
        body = held_message(
            [HeldEntry(r.person, r.location, r.detail, r.name) for r in pending.started],
            [HeldEntry(r.person, r.location, r.detail, r.name) for r in pending.cleared],
            self._context(run_id, now),
        )
        if not self._post(body, HELD):
            return False
        self.store.people.held_told(pending)
        log.info("notify.sent", notify_event=HELD, run_id=run_id)
        return True

    def after_leads_left(self, run_id: str, now: datetime, *, alert_days: float) -> bool:
        """Tell once of managers who left whose people HR has not re-pointed after
        `alert_days`, and once when it has (what was told is kept in the store, so a
        restart does not repeat it and a failed POST is told after the next run)."""
        if LEAD_LEFT not in self.settings.on:
            return False
        rows = self.store.leads_left.notices()
        teams = [
            LeftTeam(
                r.team_key,
                r.team,
                r.lead,
                r.lead_name,
                r.stand_in,
                r.people,
                r.since or now,
                r.notified == LATE,
                r.cleared_at is not None,
            )
            for r in rows
        ]
        late, cleared = lead_left_notices(teams, now, alert_days=alert_days)
        if not late and not cleared:
            return False
        body = lead_left_message(late, cleared, self._context(run_id, now), alert_days=alert_days)
        if not self._post(body, LEAD_LEFT):
            return False
        self.store.leads_left.told([t.key for t in late], [t.key for t in cleared])
        log.info("notify.sent", notify_event=LEAD_LEFT, run_id=run_id)
        return True

    def after_people(self, run_id: str, now: datetime, *, alert_days: float) -> bool:
        """Tell once of the people DX has not counted for longer than `alert_days` who
        passed it since the last message about them (what fixes itself does not page).
        True when a message went out."""
        if NOT_IN_DX not in self.settings.on:
            return False
        waiting = [NotCounted(p.email, p.since) for p in self.store.people.not_counted()]
        late = overdue(waiting, now, alert_days=alert_days)
        last = self.store.notifications.state(NOT_IN_DX)
        if not newly_overdue(late, last.notified_at if last else None, alert_days=alert_days):
            return False
        body = not_in_dx_message(late, self._context(run_id, now), alert_days=alert_days)
        if not self._post(body, NOT_IN_DX):
            return False
        self.store.notifications.save_state(Sent(NOT_IN_DX, NOT_IN_DX, now, run_id), NOT_IN_DX)
        log.info("notify.sent", notify_event=NOT_IN_DX, run_id=run_id, people=len(late))
        return True

    def after_snapshot(
        self,
        run_id: str,
        now: datetime,
        snapshot: NextSnapshot | None,
        ready: Readiness,
        *,
        hours: float,
    ) -> NoticeKind | None:
        """Tell once that DX will not be ready for the next snapshot, and once more when
        it becomes ready (what was told, about which snapshot, is kept in the store)."""
        last = self.store.notifications.state(SNAPSHOT_NOTICE)
        told = Told(last.digest, last.state) if last else None
        # Read only within `hours` of the snapshot: it loads every team the store keeps.
        near = snapshot is not None and snapshot.starts_at - now <= timedelta(hours=hours)
        floor = self.store.snapshot_outlook.teams_under_floor() if near else None
        small = floor is not None and bool(floor.teams)
        kind = readiness_notice(told, snapshot, ready, now, hours=hours, small_teams=small)
        if kind is None or snapshot is None:
            return None
        remember = Sent(kind, snapshot.snapshot_id, now, run_id)
        if kind not in self.settings.on:
            # Left out of `notify.on`: remembered all the same, so the next change is news.
            self.store.notifications.save_state(remember, SNAPSHOT_NOTICE)
            return None
        body = snapshot_message(
            kind,
            snapshot,
            ready,
            self._context(run_id, now),
            floor=floor,
        )
        if not self._post(body, kind):
            return None
        self.store.notifications.save_state(remember, SNAPSHOT_NOTICE)
        log.info("notify.sent", notify_event=kind, run_id=run_id, snapshot_id=snapshot.snapshot_id)
        return kind

    def _context(self, run_id: str, now: datetime) -> MessageContext:
        return MessageContext(self.settings.format, run_id, now, socket.gethostname())

    def _post(self, body: Mapping[str, object], event: str) -> bool:
        assert self._url is not None
        try:
            status = self._post_within_deadline(self._url, body)
        except BodyRefused as refused:
            # Not a webhook's answer (Slack's is "ok"): nothing shows it got the message.
            too_large = isinstance(refused, TooLarge)
            cap = ", the most hrsync reads of a webhook's answer" if too_large else ""
            log.warning(
                "notify.failed",
                notify_event=event,
                error="too_large" if too_large else "unreadable_answer",
                detail=f"the webhook (${self.settings.webhook_url_env}, named by "
                f"notify.webhook_url_env) {refused}{cap}; retried after the next run",
            )
            return False
        except TimeoutError:
            log.warning(
                "notify.failed",
                notify_event=event,
                error="deadline",
                detail=f"the webhook did not answer within the {self._deadline_s:g} s deadline; "
                "retried after the next run",
            )
            return False
        except httpx.HTTPError as exc:
            # httpx names the URL in its messages: say only what kind of failure it was.
            log.warning(
                "notify.failed",
                notify_event=event,
                error=type(exc).__name__,
                detail="the webhook could not be reached; retried after the next run",
            )
            return False
        if status >= 300:
            log.warning(
                "notify.failed",
                notify_event=event,
                status=status,
                detail="the webhook refused the message; retried after the next run",
            )
            return False
        return True

    def _post_within_deadline(self, url: str, body: Mapping[str, object]) -> int:
        """The status of the POST's answer, read whole (at most `MAX_ANSWER_BYTES` of
        it, decoded); TimeoutError when it is not complete by the deadline.

        The POST runs in a thread of its own, so the run thread waits only until the
        deadline; a POST still going then is left to end on its own timeouts (closing the
        client closes its connection), holding nothing of the daemon's.
        """
        done: list[int | BaseException] = []
        client = httpx.Client(
            timeout=TIMEOUT,
            transport=self._transport,
            headers={"Accept-Encoding": ACCEPT_ENCODING},
        )

        def post() -> None:
            try:
                with client.stream("POST", url, json=dict(body)) as response:
                    for _ in iter_capped(response, MAX_ANSWER_BYTES):
                        pass  # only the status counts; the rest is read to end the exchange
                    done.append(response.status_code)
            except BaseException as exc:  # handed to the run thread below
                done.append(exc)

        worker = threading.Thread(target=post, name="hrsync-webhook", daemon=True)
        worker.start()
        worker.join(self._deadline_s)
        client.close()
        if not done:
            raise TimeoutError
        result = done[0]
        if isinstance(result, BaseException):
            raise result
        return result
