"""Retries under injected faults: reads retry, writes are never sent twice."""

from __future__ import annotations

import socket
from typing import Any

import pytest
import structlog

from hrsync.dx.client import DxClient
from hrsync.dx.errors import DxOutcomeUnknown, DxUnavailable
from hrsync.dx.retry import RetryPolicy
from hrsync.secret import Secret
from hrsync.simulator.faults import Fault
from hrsync.simulator.server import RunningSimulator
from tests.dx.conftest import ORG_TOKEN, ClientFactory, FakeTime, default_hierarchy

PROCESS = "orgfiles.teamHierarchy.process"
PREVIEW = "orgfiles.teamHierarchy.preview"


def calls(sim: RunningSimulator, method: str) -> list[Any]:
    return [r for r in sim.dx.requests if r.method_name == method]


def test_429_waits_as_long_as_retry_after_says(
    sim: RunningSimulator, make_client: ClientFactory, fake_time: FakeTime
) -> None:
    sim.dx.add_fault(Fault(method="teams.list", kind="429", count=2, retry_after_s=7.0))
    teams = make_client().teams()
    assert len(teams) == 4
    assert fake_time.sleeps == [7.0, 7.0]
    assert [r.status for r in calls(sim, "teams.list")] == [429, 429, 200]


def test_429_without_retry_after_backs_off_exponentially(
    sim: RunningSimulator, make_client: ClientFactory, fake_time: FakeTime
) -> None:
    sim.dx.add_fault(Fault(method="teams.list", kind="429", count=3, retry_after_s=None))
    make_client().teams()
    # jitter fixed at 0.5: half of 0.5, 1, 2 seconds
    assert fake_time.sleeps == [0.25, 0.5, 1.0]


@pytest.mark.parametrize("kind", ["500", "503", "drop", "html"])
def test_reads_retry_through_server_errors_and_drops(
    sim: RunningSimulator, make_client: ClientFactory, fake_time: FakeTime, kind: str
) -> None:
    sim.dx.add_fault(Fault(method="snapshots.list", kind=kind, count=1))  # type: ignore[arg-type]
    assert {s.id for s in make_client().snapshots()} == {"snap-q1", "snap-cancelled"}
    assert len(calls(sim, "snapshots.list")) == 2
    assert fake_time.sleeps == [0.25]


def test_gives_up_after_max_attempts(
    sim: RunningSimulator, make_client: ClientFactory, fake_time: FakeTime
) -> None:
    sim.dx.add_fault(Fault(method="teams.list", kind="503", count=50))
    client = make_client(retry=RetryPolicy(max_attempts=4, jitter=lambda: 0.5))
    with structlog.testing.capture_logs() as logs, pytest.raises(DxUnavailable) as caught:
        client.teams()
    assert len(calls(sim, "teams.list")) == 4
    assert len(fake_time.sleeps) == 3
    assert caught.value.status == 503
    assert "gave up after 4 attempts" in str(caught.value)
    retries = [entry for entry in logs if entry["event"] == "dx.retry"]
    assert [r["attempt"] for r in retries] == [1, 2, 3]
    assert all(r["method"] == "teams.list" and r["reason"] for r in retries)
    assert [r["delay_s"] for r in retries] == fake_time.sleeps
    assert ORG_TOKEN not in repr(logs)


def test_proxy_page_that_never_clears_names_status_and_first_bytes(
    sim: RunningSimulator, make_client: ClientFactory
) -> None:
    sim.dx.add_fault(Fault(method="teams.list", kind="html", count=50))
    with pytest.raises(DxUnavailable) as caught:
        make_client().teams()
    assert "HTTP 502" in str(caught.value) and "<title>502 Bad Gateway</title>" in str(caught.value)


def test_retry_after_beyond_the_deadline_is_capped_then_gives_up(
    sim: RunningSimulator, make_client: ClientFactory, fake_time: FakeTime
) -> None:
    sim.dx.add_fault(Fault(method="teams.list", kind="429", count=10, retry_after_s=100.0))
    client = make_client(retry=RetryPolicy(deadline_s=150.0, jitter=lambda: 0.5))
    with pytest.raises(DxUnavailable) as caught:
        client.teams()
    assert fake_time.sleeps == [100.0, pytest.approx(50.0)]
    assert caught.value.error == "too_many_requests" and caught.value.status == 429
    assert len(calls(sim, "teams.list")) == 3


def test_audit_trail_page_is_retried_without_losing_the_cursor(
    sim: RunningSimulator, make_client: ClientFactory
) -> None:
    client = make_client()
    for name in ("One", "Two", "Three"):
        client.process(default_hierarchy(platform_name=name))
        sim.dx.advance(5)
        client.teams()
    expected = [e["id"] for e in sim.dx.audit_events()]
    sim.dx.add_fault(Fault(method="teams.auditTrail", kind="500", count=1))
    assert [e.id for e in client.audit_trail()] == expected


# --- writes: never sent twice once they may have arrived -------------------------------


@pytest.mark.parametrize("kind", ["drop", "drop_after_send", "500", "503", "html"])
def test_process_failing_after_sending_is_outcome_unknown_and_not_resent(
    sim: RunningSimulator, make_client: ClientFactory, fake_time: FakeTime, kind: str
) -> None:
    sim.dx.add_fault(Fault(method=PROCESS, kind=kind, count=1))  # type: ignore[arg-type]
    with pytest.raises(DxOutcomeUnknown) as caught:
        make_client().process(default_hierarchy(platform_name="Renamed"))
    assert caught.value.method == PROCESS
    assert "verify" in str(caught.value)
    assert len(calls(sim, PROCESS)) == 1
    assert fake_time.sleeps == []


def test_dropped_answer_after_dx_accepted_the_import(
    sim: RunningSimulator, make_client: ClientFactory
) -> None:
    sim.dx.add_fault(Fault(method=PROCESS, kind="drop_after_send", count=1))
    client = make_client()
    with pytest.raises(DxOutcomeUnknown):
        client.process(default_hierarchy(platform_name="Renamed"))
    # DX did act: verifying (not resubmitting) finds the change.
    sim.dx.advance(5)
    assert "Renamed" in {t.name for t in client.teams()}
    assert len(calls(sim, PROCESS)) == 1


def test_preview_is_not_resent_after_a_drop(
    sim: RunningSimulator, make_client: ClientFactory
) -> None:
    sim.dx.add_fault(Fault(method=PREVIEW, kind="drop", count=1))
    with pytest.raises(DxOutcomeUnknown):
        make_client().preview(default_hierarchy())
    assert len(calls(sim, PREVIEW)) == 1


def test_process_rate_limited_before_processing_is_resent(
    sim: RunningSimulator, make_client: ClientFactory, fake_time: FakeTime
) -> None:
    sim.dx.add_fault(Fault(method=PROCESS, kind="429", count=1, retry_after_s=3.0))
    accepted = make_client().process(default_hierarchy())
    assert accepted.import_id
    assert [r.status for r in calls(sim, PROCESS)] == [429, 200]
    assert fake_time.sleeps == [3.0]
    assert len(sim.dx.imports) == 1


def test_process_read_timeout_is_outcome_unknown(
    sim: RunningSimulator, fake_time: FakeTime
) -> None:
    sim.dx.add_fault(Fault(method=PROCESS, kind="latency", count=1, latency_s=1.2))
    with (
        DxClient(
            sim.base_url,
            Secret(ORG_TOKEN),
            timeout_s=0.4,
            clock=fake_time.clock,
            sleep=fake_time.sleep,
        ) as client,
        pytest.raises(DxOutcomeUnknown, match="ReadTimeout"),
    ):
        client.process(default_hierarchy())
    assert len(calls(sim, PROCESS)) == 1


def test_read_timeout_on_a_read_is_retried(sim: RunningSimulator, fake_time: FakeTime) -> None:
    sim.dx.add_fault(Fault(method="teams.list", kind="latency", count=1, latency_s=1.2))
    with DxClient(
        sim.base_url,
        Secret(ORG_TOKEN),
        timeout_s=0.4,
        clock=fake_time.clock,
        sleep=fake_time.sleep,
    ) as client:
        assert len(client.teams()) == 4
    assert len(calls(sim, "teams.list")) == 2


def closed_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
    return port


def test_unreachable_dx_is_unavailable_and_a_write_there_was_never_sent(
    fake_time: FakeTime,
) -> None:
    base = f"http://127.0.0.1:{closed_port()}"
    policy = RetryPolicy(max_attempts=3, jitter=lambda: 0.5)
    with DxClient(
        base, Secret(ORG_TOKEN), retry=policy, clock=fake_time.clock, sleep=fake_time.sleep
    ) as client:
        with pytest.raises(DxUnavailable, match="ConnectError"):
            client.whoami()
        assert fake_time.sleeps == [0.25, 0.5]
        # A connection that was never made cannot have delivered the write: retried, and
        # the final error says DX is unreachable, not that the outcome is unknown.
        with pytest.raises(DxUnavailable, match="not sent"):
            client.process(default_hierarchy())


# --- the client-side rate limit --------------------------------------------------------


def test_client_stays_under_its_requests_per_minute(
    sim: RunningSimulator, make_client: ClientFactory, fake_time: FakeTime
) -> None:
    client = make_client(max_requests_per_minute=3)
    for _ in range(3):
        client.whoami()
    assert fake_time.sleeps == []
    client.whoami()
    assert fake_time.sleeps == [pytest.approx(60.0)]
    assert len(sim.dx.requests) == 4
    assert all(r.status == 200 for r in sim.dx.requests)


def test_retries_count_against_the_rate_limit(
    sim: RunningSimulator, make_client: ClientFactory, fake_time: FakeTime
) -> None:
    sim.dx.add_fault(Fault(method="teams.list", kind="500", count=2))
    client = make_client(max_requests_per_minute=2)
    client.teams()
    # Two backoff waits, and a wait for the window before the third attempt.
    assert fake_time.sleeps[:2] == [0.25, 0.5]
    assert sum(fake_time.sleeps) == pytest.approx(60.0)


def test_attribute_update_is_resent_after_a_drop_because_it_is_idempotent(
    sim: RunningSimulator, make_client: ClientFactory
) -> None:
    sim.dx.add_fault(Fault(method="users.attributes.update", kind="drop_after_send", count=1))
    user = make_client().update_user_attributes("ken@acme.example", {"level": "L6"})
    assert {a["name"]: a["value"] for a in user["attributes"]} == {"level": "L6"}
    assert len(calls(sim, "users.attributes.update")) == 2
    assert sim.dx.user_attributes("ken@acme.example") == {"level": "L6"}
