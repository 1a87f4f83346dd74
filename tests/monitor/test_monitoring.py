"""The daemon's metrics, endpoints, webhook sender and `status`, in process: a real SQLite
store, a real HTTP listener and a real local webhook receiver (no mocks of our modules)."""

from __future__ import annotations

import json
import re
import socket
import threading
import urllib.error
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime, timedelta
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
from structlog.testing import capture_logs

from hrsync.core.attributes import AttributeOutcome
from hrsync.core.gate.plan import Plan
from hrsync.core.report.notify import observe
from hrsync.core.settings import NotifySettings, Settings, SyncSettings
from hrsync.core.teams.substitutes import LeadSubstitute
from hrsync.monitor.endpoints import Endpoints
from hrsync.monitor.gauges import read_state
from hrsync.monitor.metrics import Metrics
from hrsync.monitor.webhook import Notifier
from hrsync.outcome import Outcome
from hrsync.store.repo import HeldRecord, Store
from hrsync.sync.results import AttributeResult, Planned, Reading, StandIns, SyncResult
from tests.monitor.exposition import sample

NOW = datetime(2026, 11, 22, 6, 0, tzinfo=UTC)
ROOT = Path(__file__).resolve().parents[2]

# A plan that changes nothing: what a result holds once the run planned.
NO_CHANGE = Plan((), (), "0" * 64, 0, 0)


def record(
    store: Store, run_id: str, outcome: str, at: datetime, exit_code: int = 0, **extra: Any
) -> None:
    store.runs.start(run_id, "schedule", at, dry_run=False)
    store.runs.finish(
        run_id,
        at + timedelta(seconds=5),
        outcome=outcome,
        exit_code=exit_code,
        counts={},
        reason=None,
        **extra,
    )


# ------------------------------------------------------------------ metrics


def test_each_metrics_has_its_own_registry() -> None:
    a, b = Metrics(), Metrics()
    a.dx_request("teams.list", "ok")
    assert (
        sample(
            a.exposition().decode(), 'hrsync_dx_requests_total{method="teams.list",outcome="ok"}'
        )
        == 1
    )
    assert (
        sample(
            b.exposition().decode(), 'hrsync_dx_requests_total{method="teams.list",outcome="ok"}'
        )
        is None
    )


def finish(m: Metrics, result: SyncResult, *, duration_s: float = 1.0) -> str:
    """Tell `m` this process made a run; its exposition after."""
    m.run_finished(result, duration_s=duration_s)
    return m.exposition().decode()


def shown(store: Store, *, quarantined: bool = False) -> str:
    """The exposition of a daemon whose state gauges were just read from `store`."""
    m = Metrics()
    m.show(read_state(store), quarantined=quarantined)
    return m.exposition().decode()


def test_the_counters_are_this_processs_runs() -> None:
    m = Metrics()
    finish(m, SyncResult("r1", Outcome.REFUSED, reason="too many archives"), duration_s=2.0)
    text = finish(
        m, SyncResult("r2", Outcome.APPLIED, planned=Planned(NO_CHANGE, reading=Reading(40)))
    )
    assert sample(text, 'hrsync_runs_total{outcome="refused"}') == 1
    assert sample(text, 'hrsync_runs_total{outcome="applied"}') == 1
    assert sample(text, "hrsync_run_duration_seconds_count") == 2
    # How things stand is not a run's to say: the state store's (`show`).
    assert sample(text, "hrsync_last_success_timestamp_seconds") == 0
    assert sample(text, 'hrsync_people{state="synced"}') == 0


def test_a_refusal_raises_attention_and_a_success_clears_it(store: Store) -> None:
    record(store, "r1", "refused", NOW)
    text = shown(store)
    ended = NOW + timedelta(seconds=5)
    assert sample(text, 'hrsync_attention_required{reason="refused"}') == 1
    assert sample(text, 'hrsync_last_run_timestamp_seconds{outcome="refused"}') == ended.timestamp()
    assert sample(text, "hrsync_last_success_timestamp_seconds") == 0
    # a deferral in between says nothing about the refusal: it stays
    until = NOW + timedelta(hours=1)
    record(store, "r2", "deferred", NOW + timedelta(minutes=1))
    store.deferrals.add("r2", "snapshot", until, NOW + timedelta(minutes=1))
    text = shown(store)
    assert sample(text, 'hrsync_attention_required{reason="refused"}') == 1
    assert sample(text, "hrsync_deferred_until_timestamp_seconds") == until.timestamp()
    record(store, "r3", "applied", NOW + timedelta(minutes=2), people_count=40)
    store.deferrals.resolve(NOW + timedelta(minutes=2))
    text = shown(store)
    assert sample(text, 'hrsync_attention_required{reason="refused"}') == 0
    assert sample(text, "hrsync_deferred_until_timestamp_seconds") == 0
    success = NOW + timedelta(minutes=2, seconds=5)
    assert sample(text, "hrsync_last_success_timestamp_seconds") == success.timestamp()
    assert sample(text, 'hrsync_people{state="synced"}') == 40
    # A failure short of quarantine leaves it as it was; the quarantine is the daemon's.
    record(store, "f1", "failed", NOW + timedelta(minutes=3))
    text = shown(store, quarantined=True)
    assert sample(text, 'hrsync_attention_required{reason="refused"}') == 0
    assert sample(text, 'hrsync_attention_required{reason="quarantined"}') == 1


def test_the_attribute_step_counts_its_people_by_outcome() -> None:
    m = Metrics()
    for run_id, updated, failed in (("a1", 3, 1), ("a2", 2, 0)):
        attributes = AttributeResult(
            AttributeOutcome.APPLIED, updated=updated, unchanged=5, failed=failed
        )
        text = finish(m, SyncResult(run_id, Outcome.APPLIED, attributes=attributes))
    assert sample(text, 'hrsync_attribute_updates_total{outcome="updated"}') == 5
    assert sample(text, 'hrsync_attribute_updates_total{outcome="unchanged"}') == 10
    assert sample(text, 'hrsync_attribute_updates_total{outcome="failed"}') == 1


def test_the_gauges_are_read_from_the_store(store: Store) -> None:
    record(store, "a1", "applied", NOW - timedelta(days=1), people_count=12)
    record(store, "r1", "refused", NOW)
    resume = NOW + timedelta(hours=3)
    store.deferrals.add("r1", "snapshot", resume, NOW)
    text = shown(store)
    ended = NOW - timedelta(days=1) + timedelta(seconds=5)
    assert sample(text, "hrsync_last_success_timestamp_seconds") == ended.timestamp()
    assert sample(text, 'hrsync_last_run_timestamp_seconds{outcome="applied"}') == ended.timestamp()
    assert sample(text, 'hrsync_attention_required{reason="refused"}') == 1
    assert sample(text, "hrsync_deferred_until_timestamp_seconds") == resume.timestamp()
    assert sample(text, 'hrsync_people{state="synced"}') == 12


def test_a_restarted_daemon_still_raises_attention_for_a_refused_attribute_step(
    store: Store,
) -> None:
    # The hierarchy applied, the attribute step was refused: the run's exit code says so,
    # as `hrsync status` reads it. A restart must not clear what a person must approve.
    record(store, "a1", "applied", NOW, exit_code=Outcome.REFUSED.exit_code)
    text = shown(store)
    assert sample(text, 'hrsync_attention_required{reason="refused"}') == 1
    assert (
        sample(text, "hrsync_last_success_timestamp_seconds")
        == (NOW + timedelta(seconds=5)).timestamp()
    )


def test_every_metric_is_documented_and_the_alert_rules_name_real_ones() -> None:
    names = {
        m.name + ("_total" if m.type == "counter" else "") for m in Metrics().registry.collect()
    }
    page = (ROOT / "docs" / "reference" / "metrics.md").read_text(encoding="utf-8")
    for name in names:
        assert f"`{name}" in page, f"{name} is not documented in docs/reference/metrics.md"
    alerts = (ROOT / "deploy" / "alerts" / "rules.yml").read_text(encoding="utf-8")
    used = set(re.findall(r"hrsync_[a-z_]+", alerts))
    assert used and used <= names


# ---------------------------------------------------------------- endpoints


def get(url: str) -> tuple[int, str]:
    try:
        with urllib.request.urlopen(url, timeout=5) as response:
            return response.status, response.read().decode()
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read().decode()


def test_endpoints_answer_each_probe_and_503_with_the_reason() -> None:
    healthy = [True]
    m = Metrics()
    server = Endpoints(
        "127.0.0.1:0",
        health=lambda: (healthy[0], "ok" if healthy[0] else "stale"),
        ready=lambda: (False, "not ready: quarantined"),
        metrics=m.exposition,
    )
    server.start()
    try:
        base = f"http://{server.address}"
        assert get(base + "/healthz") == (200, "ok\n")
        assert get(base + "/readyz") == (503, "not ready: quarantined\n")
        healthy[0] = False
        assert get(base + "/healthz")[0] == 503
        status, text = get(base + "/metrics")
        assert status == 200 and "hrsync_runs_total" in text
        assert get(base + "/nothing")[0] == 404
    finally:
        server.stop()


def test_an_endpoint_that_breaks_answers_503_and_says_so_in_the_log_once() -> None:
    def broken() -> bytes:
        raise RuntimeError("registry gone")

    server = Endpoints(
        "127.0.0.1:0",
        health=lambda: (True, "ok"),
        ready=lambda: (True, "ready"),
        metrics=broken,
    )
    server.start()
    try:
        with capture_logs() as logs:
            for _ in range(3):
                status, text = get(f"http://{server.address}/metrics")
                assert status == 503 and "RuntimeError: registry gone" in text
        errors = [e for e in logs if e["event"] == "daemon.http_error"]
        # Once, not per scrape: a scrape every 15 s would bury everything else.
        assert len(errors) == 1
        assert errors[0]["path"] == "/metrics" and "registry gone" in errors[0]["error"]
        assert errors[0]["log_level"] == "warning"
    finally:
        server.stop()


# ----------------------------------------------------------------- webhook


@contextmanager
def receiver(status: int = 200) -> Iterator[tuple[str, list[dict[str, Any]]]]:
    got: list[dict[str, Any]] = []

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            got.append(json.loads(self.rfile.read(int(self.headers["Content-Length"]))))
            self.send_response(status)
            self.send_header("Content-Length", "0")
            self.end_headers()

        def log_message(self, format: str, *args: object) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/hook/s3cret-path", got
    finally:
        server.shutdown()
        server.server_close()


def refused(run_id: str, digest: str = "d1") -> Any:
    return observe(run_id, "refused", quarantined=False, plan_digest=digest, reason="r")


def test_a_refusal_three_times_notifies_once_then_recovered(store: Store) -> None:
    with receiver() as (url, got):
        notifier = Notifier(NotifySettings(webhook_url_env="HOOK"), store, environ={"HOOK": url})
        for i in range(3):
            notifier.after_run(refused(f"r{i}"), NOW + timedelta(minutes=i))
        assert [n["event"] for n in got] == ["refused"]
        # a new notifier (a restarted daemon) remembers through the store
        again = Notifier(NotifySettings(webhook_url_env="HOOK"), store, environ={"HOOK": url})
        again.after_run(refused("r9"), NOW + timedelta(hours=1))
        assert len(got) == 1
        again.after_run(refused("r10", "d2"), NOW + timedelta(hours=2))  # another plan
        again.after_run(observe("a1", "applied", quarantined=False), NOW + timedelta(hours=3))
        assert [n["event"] for n in got] == ["refused", "refused", "recovered"]
        assert got[0]["text"].startswith("hrsync refused to sync")


def test_an_attribute_step_waiting_for_a_person_raises_attention_and_notifies(
    store: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The hierarchy applied, the attribute step was refused (exit 4): in the daemon only the
    # log said so. It is a refusal like any other for whoever watches the alerts.
    from hrsync.monitor.reporting import Monitor

    with receiver() as (url, got):
        monkeypatch.setenv("HOOK", url)
        monitor = Monitor(
            Settings(notify=NotifySettings(webhook_url_env="HOOK")), store, lambda: NOW
        )
        refused_step = AttributeResult(
            AttributeOutcome.REFUSED, reason="attributes: 300 changes, over the limit of 100"
        )
        result = SyncResult(
            "r1", Outcome.APPLIED, reason=refused_step.reason, attributes=refused_step
        )
        # As the run recorded itself: the hierarchy's outcome, the refusal's exit code.
        record(store, "r1", "applied", NOW - timedelta(seconds=5), exit_code=4)
        monitor.run_finished(result, 1.0, quarantined=False)
        text = monitor.metrics.exposition().decode()
        assert sample(text, 'hrsync_attention_required{reason="refused"}') == 1
        # The hierarchy did apply: that is still a success, and counted as applied.
        assert sample(text, "hrsync_last_success_timestamp_seconds") == NOW.timestamp()
        assert sample(text, 'hrsync_runs_total{outcome="applied"}') == 1
        assert [n["event"] for n in got] == ["refused"]
        assert "300 changes" in got[0]["text"]
        record(store, "r2", "in_sync", NOW)
        monitor.run_finished(SyncResult("r2", Outcome.IN_SYNC), 1.0, quarantined=False)
        text = monitor.metrics.exposition().decode()
        assert sample(text, 'hrsync_attention_required{reason="refused"}') == 0
        assert [n["event"] for n in got] == ["refused", "recovered"]


def test_a_failed_post_is_logged_without_the_url_and_retried_next_run(
    store: Store, capsys: pytest.CaptureFixture[str]
) -> None:
    from hrsync import logs

    logs.configure("json", "info", None)
    with receiver(status=500) as (url, got):
        notifier = Notifier(NotifySettings(webhook_url_env="HOOK"), store, environ={"HOOK": url})
        assert notifier.after_run(refused("r1"), NOW) is None
        assert len(got) == 1  # posted, and answered 500
        assert store.notifications.state() is None  # not remembered: the next run tries again
    with receiver() as (url2, got2):
        notifier = Notifier(NotifySettings(webhook_url_env="HOOK"), store, environ={"HOOK": url2})
        assert notifier.after_run(refused("r2"), NOW) is not None
        assert len(got2) == 1
    unreachable = Notifier(
        NotifySettings(webhook_url_env="HOOK"),
        store,
        environ={"HOOK": "http://127.0.0.1:9/hook/s3cret-path"},
    )
    assert unreachable.after_run(refused("r3", "d3"), NOW) is None
    out = capsys.readouterr()
    assert "notify.failed" in out.out + out.err
    assert "s3cret-path" not in out.out + out.err


def test_no_url_in_the_named_variable_is_said_and_nothing_is_sent(store: Store) -> None:
    assert Notifier.configured(NotifySettings(), store) is None
    settings = Settings(notify=NotifySettings(webhook_url_env="HRSYNC_TEST_UNSET_HOOK"))
    assert Notifier.configured(settings.notify, store) is None


# ------------------------------------------------------------------ status


def test_status_names_attention_the_approval_and_the_next_run(store: Store) -> None:
    from hrsync.commands.status import gather, render

    settings = Settings(sync=SyncSettings(schedule="0 6 * * *"), config_path=Path("/etc/h.toml"))
    record(store, "a1", "applied", NOW - timedelta(days=1), people_count=12)
    record(store, "r1", "refused", NOW, action="hrsync --config /etc/h.toml sync --allow-archive 3")
    doc = gather(settings, store, NOW + timedelta(minutes=1))
    assert doc["last_run"]["outcome"] == "refused"
    assert doc["last_success"]["outcome"] == "applied"
    (item,) = doc["attention"]
    assert item["reason"] == "refused"
    assert item["command"] == "hrsync --config /etc/h.toml sync --allow-archive 3"
    assert doc["next_scheduled_run"] == "2026-11-23T06:00:00+00:00"
    assert doc["heartbeat"] is None and doc["deferral"] is None
    text = render(doc)
    assert "ATTENTION:   refused" in text and "--allow-archive 3" in text
    # Each label is followed by a space, aligned with the others (was "Last success:applied").
    assert "Last run:    refused at " in text and "Succeeded:   applied at " in text
    record(store, "a2", "in_sync", NOW + timedelta(hours=1))
    assert gather(settings, store, NOW + timedelta(hours=2))["attention"] == []


def test_status_keeps_a_refusal_and_the_last_success_behind_many_deferrals(
    store: Store,
) -> None:
    from hrsync.commands.status import gather

    settings = Settings(sync=SyncSettings(schedule="0 6 * * *"), config_path=Path("/etc/h.toml"))
    record(store, "a1", "applied", NOW - timedelta(days=30))
    record(store, "r1", "refused", NOW - timedelta(days=20), action="hrsync sync --allow-archive 3")
    for i in range(60):
        record(store, f"d{i}", "deferred", NOW - timedelta(days=10) + timedelta(minutes=i))
    doc = gather(settings, store, NOW)
    assert doc["last_run"]["outcome"] == "deferred"
    assert doc["last_success"]["outcome"] == "applied"
    (item,) = doc["attention"]
    assert item["reason"] == "refused" and item["command"] == "hrsync sync --allow-archive 3"


def test_status_names_an_attribute_step_a_person_must_approve(store: Store) -> None:
    from hrsync.commands.status import gather

    settings = Settings(sync=SyncSettings(schedule="0 6 * * *"), config_path=Path("/etc/h.toml"))
    store.runs.start("a1", "schedule", NOW, dry_run=False)
    # The hierarchy applied; the attribute step was refused: the run ended with exit 4.
    store.runs.finish(
        "a1",
        NOW,
        outcome="applied",
        exit_code=Outcome.REFUSED.exit_code,
        counts={},
        reason="attributes: 300 changes, over the limit of 100",
        action="hrsync --config /etc/h.toml sync --allow-attribute-changes",
    )
    doc = gather(settings, store, NOW)
    assert doc["last_success"]["outcome"] == "applied"
    (item,) = doc["attention"]
    assert item["reason"] == "refused" and "300 changes" in (item["detail"] or "")
    assert item["command"] == "hrsync --config /etc/h.toml sync --allow-attribute-changes"


def test_a_restart_keeps_a_refusal_and_the_last_success_behind_many_other_runs(
    store: Store,
) -> None:
    # A deferral says nothing new about a refusal or the last success: however many came
    # since (a lease held for days), a restart must not report them gone.
    record(store, "a1", "applied", NOW - timedelta(days=30))
    record(store, "r1", "refused", NOW - timedelta(days=20))
    for i in range(520):
        record(store, f"d{i}", "deferred", NOW - timedelta(days=10) + timedelta(minutes=i))
    text = shown(store)
    applied_end = NOW - timedelta(days=30) + timedelta(seconds=5)
    refused_end = NOW - timedelta(days=20) + timedelta(seconds=5)
    assert sample(text, 'hrsync_attention_required{reason="refused"}') == 1
    assert sample(text, "hrsync_last_success_timestamp_seconds") == applied_end.timestamp()
    assert sample(text, 'hrsync_last_run_timestamp_seconds{outcome="applied"}') == (
        applied_end.timestamp()
    )
    assert sample(text, 'hrsync_last_run_timestamp_seconds{outcome="refused"}') == (
        refused_end.timestamp()
    )


# ------------------------------------------------------------ stand-in leads

STAND_IN_FOR_NINA = LeadSubstitute("ref-n", "Newcomers", "nina@x.com", "ada@x.com")
STAND_IN_FOR_OMAR = LeadSubstitute("ref-o", "Ops", "omar@x.com", "ada@x.com")


def test_stand_in_leads_are_told_once_when_they_begin_and_once_when_they_end(
    store: Store,
) -> None:
    """A team led by a stand-in is news when it begins and when it ends, not every run,
    and a restarted daemon remembers what it told (through the store)."""
    runs = [
        ("s1", (STAND_IN_FOR_NINA,)),
        ("s2", (STAND_IN_FOR_NINA,)),  # the same: quiet
        ("s3", (STAND_IN_FOR_NINA, STAND_IN_FOR_OMAR)),  # Omar's begins
        ("s4", (STAND_IN_FOR_OMAR,)),  # Nina joined DX: hers ends
        ("s5", ()),  # Omar's ends
    ]
    with receiver() as (url, got):
        for i, (run_id, substitutes) in enumerate(runs):
            at = NOW + timedelta(hours=i)
            record(store, run_id, "applied", at, substitutes=substitutes)
            # a new notifier each run: as a daemon restarted between runs
            notifier = Notifier(
                NotifySettings(webhook_url_env="HOOK"), store, environ={"HOOK": url}
            )
            notifier.after_success(run_id, substitutes, at)
        told = [([s["lead"] for s in n["started"]], [s["lead"] for s in n["ended"]]) for n in got]
    assert told == [
        (["nina@x.com"], []),
        (["omar@x.com"], []),
        ([], ["nina@x.com"]),
        ([], ["omar@x.com"]),
    ]
    assert all(n["event"] == "stand_in" for n in got)
    assert "ada@x.com stands in for nina@x.com" in got[0]["text"]


def test_stand_in_leads_are_not_told_when_left_out_of_notify_on(store: Store) -> None:
    with receiver() as (url, got):
        record(store, "s1", "applied", NOW, substitutes=(STAND_IN_FOR_NINA,))
        settings = NotifySettings(webhook_url_env="HOOK", on=("refused", "recovered"))
        Notifier(settings, store, environ={"HOOK": url}).after_success(
            "s1", (STAND_IN_FOR_NINA,), NOW
        )
    assert got == []


def test_a_stand_in_message_that_was_not_delivered_is_told_after_the_next_run(
    store: Store,
) -> None:
    with receiver(status=500) as (url, got):
        record(store, "s1", "applied", NOW, substitutes=(STAND_IN_FOR_NINA,))
        notifier = Notifier(NotifySettings(webhook_url_env="HOOK"), store, environ={"HOOK": url})
        assert notifier.after_success("s1", (STAND_IN_FOR_NINA,), NOW) is None
    with receiver() as (url, got):
        record(store, "s2", "in_sync", NOW + timedelta(hours=1), substitutes=(STAND_IN_FOR_NINA,))
        notifier = Notifier(NotifySettings(webhook_url_env="HOOK"), store, environ={"HOOK": url})
        assert (
            notifier.after_success("s2", (STAND_IN_FOR_NINA,), NOW + timedelta(hours=1)) is not None
        )
    assert [[s["lead"] for s in n["started"]] for n in got] == [["nina@x.com"]]


def test_the_daemons_monitor_tells_of_stand_ins_after_a_success(
    store: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    from hrsync.monitor.reporting import Monitor

    with receiver() as (url, got):
        monkeypatch.setenv("HOOK", url)
        monitor = Monitor(
            Settings(notify=NotifySettings(webhook_url_env="HOOK")), store, lambda: NOW
        )
        record(store, "s1", "applied", NOW, substitutes=(STAND_IN_FOR_NINA,))
        stood_in = Planned(NO_CHANGE, stand_ins=StandIns((STAND_IN_FOR_NINA,)))
        result = SyncResult("s1", Outcome.APPLIED, planned=stood_in)
        monitor.run_finished(result, 1.0, quarantined=False)
        assert [(n["event"], len(n["started"])) for n in got] == [("stand_in", 1)]
        # A run that did not succeed says nothing of stand-ins (it sent none).
        record(store, "s2", "refused", NOW, exit_code=4)
        monitor.run_finished(SyncResult("s2", Outcome.REFUSED, reason="r"), 1.0, quarantined=False)
        assert [n["event"] for n in got] == ["stand_in", "refused"]


# ------------------------------------------------------------ held people

CARL = HeldRecord("E901", "people.csv line 42", "Work Email must not be empty", name="Carl Jensen")
EVA = HeldRecord("E905", "people.csv line 44", "Manager ID must be … matches nobody")


def test_held_people_are_told_once_when_held_and_once_when_cleared(store: Store) -> None:
    """Run after run with the same person held is one message, not one a run; a failed
    POST is told after the next run; a hold that ends is told once more."""
    runs = [
        ("h1", [CARL], 200),
        ("h2", [CARL], 200),  # the same: quiet
        ("h3", [CARL, EVA], 500),  # Eva's hold begins, but the webhook fails …
        ("h4", [CARL, EVA], 200),  # … so it is told now
        ("h5", [EVA], 200),  # Carl's row was fixed
        ("h6", [EVA], 200),
    ]
    told = []
    for i, (run_id, held, status) in enumerate(runs):
        at = NOW + timedelta(days=i)
        store.people.replace_held(held, at)
        with receiver(status=status) as (url, got):
            notifier = Notifier(
                NotifySettings(webhook_url_env="HOOK"), store, environ={"HOOK": url}
            )
            notifier.after_held(run_id, at)
        if status == 200:
            told.extend(
                (n["run_id"], [p["person"] for p in n["started"]], n["cleared"]) for n in got
            )
    assert told == [("h1", ["E901"], []), ("h4", ["E905"], []), ("h5", [], ["E901"])]


def test_a_held_notice_names_the_row_the_problem_and_the_command(store: Store) -> None:
    store.people.replace_held([CARL], NOW)
    with receiver() as (url, got):
        settings = NotifySettings(webhook_url_env="HOOK", format="slack")
        Notifier(settings, store, environ={"HOOK": url}).after_held("h1", NOW)
    (message,) = got
    # Named as people know them: an HR system's ids (Entra's are GUIDs) mean nothing to a
    # DX admin reading the channel.
    assert "Carl Jensen (E901), people.csv line 42: Work Email must not be empty" in message["text"]
    assert "hrsync explain E901" in message["text"]
    assert message["text"].startswith("1 person held for a problem of their own HR row")


def test_held_people_are_not_told_when_left_out_of_notify_on(store: Store) -> None:
    store.people.replace_held([CARL], NOW)
    with receiver() as (url, got):
        settings = NotifySettings(webhook_url_env="HOOK", on=("refused",))
        Notifier(settings, store, environ={"HOOK": url}).after_held("h1", NOW)
    assert got == []


def test_status_lists_held_people_with_the_day_their_hold_began(store: Store) -> None:
    from hrsync.commands.status import gather, render

    store.people.replace_held([CARL], NOW - timedelta(days=3))
    doc = gather(Settings(sync=SyncSettings(schedule="0 6 * * *")), store, NOW)
    assert doc["held"] == [
        {
            "person": "E901",
            "name": "Carl Jensen",
            "location": "people.csv line 42",
            "detail": "Work Email must not be empty",
            "since": "2026-11-19T06:00:00+00:00",
        }
    ]
    assert (
        "Held:        Carl Jensen (E901) since 2026-11-19, people.csv line 42: Work Email"
    ) in render(doc)
    # Fixing the row is a person's job (the webhook told of it): not "nothing needs a person".
    assert "Attention:   1 person held: HR to fix their row (below)" in render(doc)
    assert "nothing needs a person" not in render(doc)


def test_the_people_gauge_counts_held_people_from_the_store(store: Store) -> None:
    record(store, "r1", "applied", NOW, people_count=40)
    store.people.replace_held([CARL], NOW)
    text = shown(store)
    assert sample(text, 'hrsync_people{state="held"}') == 1
    assert sample(text, 'hrsync_people{state="synced"}') == 40
    # A run that never read the export says nothing of who is held.
    record(store, "r2", "failed", NOW + timedelta(hours=1))
    assert sample(shown(store), 'hrsync_people{state="held"}') == 1
    store.people.replace_held([], NOW + timedelta(hours=2))
    assert sample(shown(store), 'hrsync_people{state="held"}') == 0


def test_metrics_carry_the_build_and_the_process() -> None:
    """`hrsync_build_info` says which release a replica runs (an upgrade half rolled out
    shows as two versions); the process metrics (memory, open files, start time) are what
    a dashboard and the fresh-deployment alert read."""
    import platform

    from hrsync import __version__

    text = Metrics().exposition().decode()
    build = f'hrsync_build_info{{python="{platform.python_version()}",version="{__version__}"}}'
    assert sample(text, build) == 1.0, text[:2000]
    for name in ("process_start_time_seconds", "process_resident_memory_bytes"):
        value = sample(text, name)
        assert value is not None and value > 0, name
    assert (sample(text, "process_open_fds") or 0) >= 1


def _raw(address: str, request: bytes) -> bytes:
    host, _, port = address.rpartition(":")
    with socket.create_connection((host, int(port)), timeout=5) as sock:
        sock.sendall(request)
        answer = b""
        while chunk := sock.recv(65536):
            answer += chunk
    return answer


def test_only_the_exact_paths_are_served_and_http_0_9_is_refused() -> None:
    # `//metrics` was read as `/metrics`, and a request line without a version (HTTP/0.9)
    # got the metrics without a status line or headers.
    server = Endpoints(
        "127.0.0.1:0",
        health=lambda: (True, "ok"),
        ready=lambda: (True, "ok"),
        metrics=Metrics().exposition,
    )
    server.start()
    try:
        for path in ("//metrics", "//healthz", "///metrics"):
            answer = _raw(server.address, f"GET {path} HTTP/1.1\r\nHost: x\r\n\r\n".encode())
            assert answer.split(b"\r\n", 1)[0].endswith(b" 404 Not Found"), answer[:200]
        old = _raw(server.address, b"GET /metrics\r\n\r\n")
        assert b"hrsync_runs_total" not in old, old[:200]
        assert old.startswith(b"HTTP/1.") and b" 400 " in old.split(b"\r\n", 1)[0], old[:200]
    finally:
        server.stop()


@pytest.mark.parametrize(
    ("state", "age_s", "running"),
    [("idle", 10, True), ("stopped", 10, False), ("idle", 3 * 3600, False)],
)
def test_status_says_no_run_comes_while_no_daemon_runs(
    store: Store, state: str, age_s: int, running: bool
) -> None:
    # "Next run: tomorrow 06:00" under a daemon that stopped (or died) is a promise
    # nobody keeps: the run only comes once a daemon runs again.
    from hrsync.commands.status import gather, render

    store.heartbeat.beat(NOW - timedelta(seconds=age_s), state=state)
    text = render(gather(Settings(sync=SyncSettings(schedule="0 6 * * *")), store, NOW))
    (line,) = [ln for ln in text.splitlines() if ln.startswith("Next run:")]
    assert line.startswith("Next run:    none while no daemon runs") is not running, line
    assert "2026-11-23T06:00:00+00:00" in line, line
    stale = state != "stopped" and not running
    assert ("(not running)" in text.splitlines()[0]) is stale, text
