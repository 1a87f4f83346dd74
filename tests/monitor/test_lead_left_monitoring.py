"""A manager who left, as the daemon tells it: the gauges `hrsync_people{state="lead_left"}`
and `{state="no_team"}`, and one webhook message when HR has not re-pointed the people
after 3 days, one more when it has (never per run)."""

from __future__ import annotations

import dataclasses
import json
from datetime import UTC, datetime, timedelta

import httpx

from hrsync.commands.status import gather, render
from hrsync.core.settings import NotifySettings, Settings
from hrsync.monitor.gauges import read_state
from hrsync.monitor.metrics import Metrics
from hrsync.monitor.webhook import Notifier
from hrsync.store.repo import LeadLeftRecord, Store
from tests.monitor.exposition import sample

NOW = datetime(2026, 12, 1, 6, 0, tzinfo=UTC)
DAY = timedelta(days=1)
PAYMENTS = LeadLeftRecord("manager:E022", "Payments", "E022", "Kat", "tomas@x.test", 4)


def test_the_gauges_count_people_kept_for_a_manager_who_left_and_people_in_no_team(
    store: Store,
) -> None:
    store.runs.start("r1", "schedule", NOW, dry_run=False)
    store.runs.finish(
        "r1", NOW, outcome="applied", exit_code=0, counts={"no_team": 2}, reason=None,
        people_count=40,
    )  # fmt: skip
    store.leads_left.replace([PAYMENTS], NOW)
    m = Metrics()
    m.show(read_state(store), quarantined=False)
    text = m.exposition().decode()
    assert sample(text, 'hrsync_people{state="lead_left"}') == 4
    assert sample(text, 'hrsync_people{state="no_team"}') == 2


def test_told_once_past_the_alert_days_and_once_when_hr_re_points_them(store: Store) -> None:
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
    store.leads_left.replace([PAYMENTS], NOW)
    # HR may still re-point them: nothing pages.
    assert not notifier.after_leads_left("r1", NOW + 2 * DAY, alert_days=3)
    assert notifier.after_leads_left("r2", NOW + 3 * DAY, alert_days=3)
    (late,) = posts
    assert late["event"] == "lead_left" and late["late_count"] == 1
    # Still not re-pointed, run after run: told once.
    store.leads_left.replace([PAYMENTS], NOW + 4 * DAY)
    assert not notifier.after_leads_left("r3", NOW + 4 * DAY, alert_days=3)
    # HR re-points them: told once more, then forgotten.
    store.leads_left.replace([], NOW + 5 * DAY)
    assert notifier.after_leads_left("r4", NOW + 5 * DAY, alert_days=3)
    assert posts[1]["cleared"] == ["E022"] and posts[1]["late_count"] == 0
    assert not notifier.after_leads_left("r5", NOW + 6 * DAY, alert_days=3)
    assert store.leads_left.notices() == []


def test_status_names_the_stand_in_and_needs_a_person_past_the_alert_days(store: Store) -> None:
    store.runs.start("r1", "schedule", NOW, dry_run=False)
    store.runs.finish(
        "r1", NOW, outcome="applied", exit_code=0, counts={"no_team": 1}, reason=None,
        people_count=40,
    )  # fmt: skip
    store.leads_left.replace([PAYMENTS], NOW)
    settings = Settings()  # a manager who left is told after 3 days
    early = gather(settings, store, NOW + DAY)
    assert [a["reason"] for a in early["attention"]] == ["no_team"]
    assert early["leads_left"][0]["stand_in"] == "tomas@x.test"
    text = render(early)
    assert "ATTENTION:   no_team: 1 person kept from the export in no team" in text
    assert (
        "Lead left:   tomas@x.test stands in for Kat (E022) as lead of 'Payments' since "
        "2026-12-01 (4 people still name them)"
    ) in text
    one_left = dataclasses.replace(PAYMENTS, people=1)
    store.leads_left.replace([one_left], NOW)
    assert "since 2026-12-01 (1 person still names them)" in render(gather(settings, store, NOW))
    store.leads_left.replace([PAYMENTS], NOW)
    late = gather(settings, store, NOW + 3 * DAY)
    assert [a["reason"] for a in late["attention"]] == ["no_team", "lead_left"]
    assert "Kat (E022)" in late["attention"][1]["detail"]
