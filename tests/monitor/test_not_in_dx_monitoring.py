"""People DX does not count yet, as the daemon tells them: the gauge
`hrsync_people{state="not_in_dx"}`, and one webhook message per person once they are
still not counted after `sync.not_in_dx_alert_days` (what fixes itself never pages)."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta

import httpx

from hrsync.core.settings import NotifySettings
from hrsync.monitor.gauges import read_state
from hrsync.monitor.metrics import Metrics
from hrsync.monitor.webhook import Notifier
from hrsync.store.repo import Store
from tests.monitor.exposition import sample

NOW = datetime(2026, 11, 27, 6, 0, tzinfo=UTC)
DAY = timedelta(days=1)


def test_the_gauge_counts_them_beside_the_people_of_the_export(store: Store) -> None:
    store.runs.start("r1", "schedule", NOW, dry_run=False)
    store.runs.finish(
        "r1", NOW, outcome="applied", exit_code=0, counts={}, reason=None, people_count=40
    )
    store.people.record_sent_people({"a@x.test": "1", "n@x.test": "2", "m@x.test": "3"}, NOW)
    store.people.set_counted({"n@x.test": (False, "ignored"), "m@x.test": (False, "ignored")}, NOW)
    m = Metrics()
    m.show(read_state(store), quarantined=False)
    text = m.exposition().decode()
    assert sample(text, 'hrsync_people{state="synced"}') == 40
    assert sample(text, 'hrsync_people{state="not_in_dx"}') == 2


def test_told_once_per_person_past_the_alert_days(store: Store) -> None:
    posts: list[dict[str, object]] = []

    def receive(request: httpx.Request) -> httpx.Response:
        posts.append(json.loads(request.content))
        return httpx.Response(200)

    notifier = Notifier(
        NotifySettings(webhook_url_env="HOOK"),
        store,
        environ={"HOOK": "http://hook.invalid/x"},
        transport=httpx.MockTransport(receive),
    )
    store.people.record_sent_people({"n@x.test": "2", "m@x.test": "3"}, NOW)
    store.people.set_counted({"n@x.test": (False, "ignored")}, NOW)
    # Within the alert days: it fixes itself (they join DX), so nothing pages.
    assert not notifier.after_people("r1", NOW + 13 * DAY, alert_days=14)
    assert notifier.after_people("r2", NOW + 15 * DAY, alert_days=14)
    (told,) = posts
    assert told["event"] == "not_in_dx" and told["count"] == 1
    # Still not counted, run after run: told once.
    assert not notifier.after_people("r3", NOW + 16 * DAY, alert_days=14)
    # Someone else passes the alert days later: a new message.
    store.people.set_counted({"m@x.test": (False, "ignored")}, NOW + 3 * DAY)
    assert notifier.after_people("r4", NOW + 18 * DAY, alert_days=14)
    assert len(posts) == 2 and posts[1]["count"] == 2
    # Left out of notify.on: never.
    quiet = Notifier(
        NotifySettings(webhook_url_env="HOOK", on=("refused",)),
        store,
        environ={"HOOK": "http://hook.invalid/x"},
        transport=httpx.MockTransport(receive),
    )
    assert not quiet.after_people("r5", NOW + 40 * DAY, alert_days=14)
