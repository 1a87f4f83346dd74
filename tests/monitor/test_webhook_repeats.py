"""The webhook's repeats: with `recovered` left out of `notify.on`, a success after a
notified attention state was not remembered, so the same state coming back (the same
plan, or the same reason) within `repeat_s` was never sent: nobody heard of it."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

import httpx

from hrsync.core.report.notify import observe
from hrsync.core.settings import NotifySettings
from hrsync.monitor.webhook import Notifier
from hrsync.store.repo import Store

NOW = datetime(2026, 11, 22, 12, 0, tzinfo=UTC)


def test_an_attention_state_returning_after_an_unannounced_recovery_is_sent_again(
    tmp_path: Path,
) -> None:
    posts: list[httpx.Request] = []

    def receive(request: httpx.Request) -> httpx.Response:
        posts.append(request)
        return httpx.Response(200)

    store = Store.open(f"sqlite:///{tmp_path / 'state.db'}")
    try:
        notifier = Notifier(
            NotifySettings(webhook_url_env="HOOK", on=("rejected",)),
            store,
            environ={"HOOK": "http://hook.invalid/x"},
            transport=httpx.MockTransport(receive),
        )
        rejected = observe("r1", "rejected", quarantined=False, reason="token revoked")
        assert notifier.after_run(rejected, NOW) is not None
        applied = observe("r2", "applied", quarantined=False, plan_digest="p")
        assert notifier.after_run(applied, NOW + timedelta(hours=1)) is None
        again = observe("r3", "rejected", quarantined=False, reason="token revoked")
        notice = notifier.after_run(again, NOW + timedelta(hours=2))
        assert notice is not None and notice.event == "rejected"
        assert len(posts) == 2
    finally:
        store.close()


def test_recovered_quietly_is_a_success_after_an_attention_state() -> None:
    from hrsync.core.report.notify import Sent, recovered_quietly

    ok = observe("r", "applied", quarantined=False, plan_digest="p")
    assert recovered_quietly(Sent("rejected", "d", NOW, "r0"), ok)
    assert not recovered_quietly(Sent("ok", "d", NOW, "r0"), ok)
    assert not recovered_quietly(None, ok)
    failed = observe("r", "failed", quarantined=False, reason="x")
    assert not recovered_quietly(Sent("rejected", "d", NOW, "r0"), failed)
