"""Injected faults, per method and count, over real sockets."""

from __future__ import annotations

import time
from dataclasses import replace

import httpx
import pytest

from hrsync.simulator.faults import Fault, FaultBook
from hrsync.simulator.scenario import default_scenario
from hrsync.simulator.server import RunningSimulator
from tests.simulating import start_simulator

from .conftest import Api, FakeClock, current_hierarchy


def test_429_carries_retry_after_and_then_clears(api: Api, sim: RunningSimulator) -> None:
    sim.dx.add_fault(Fault(method="teams.list", kind="429", count=2, retry_after_s=1.0))
    for _ in range(2):
        reply = api.get("teams.list")
        assert reply.status_code == 429
        assert reply.headers["Retry-After"] == "1"
        assert reply.json()["ok"] is False
    assert api.get("teams.list").status_code == 200
    assert [r.status for r in sim.dx.requests] == [429, 429, 200]


def test_fractional_retry_after_is_kept(api: Api, sim: RunningSimulator) -> None:
    sim.dx.add_fault(Fault(method="teams.list", kind="429", retry_after_s=0.25))
    assert api.get("teams.list").headers["Retry-After"] == "0.25"


def test_429_without_retry_after(api: Api, sim: RunningSimulator) -> None:
    sim.dx.add_fault(Fault(method="teams.list", kind="429", retry_after_s=None))
    reply = api.get("teams.list")
    assert reply.status_code == 429
    assert "Retry-After" not in reply.headers


@pytest.mark.parametrize("kind", ["500", "503"])
def test_server_errors(api: Api, sim: RunningSimulator, kind: str) -> None:
    sim.dx.add_fault(Fault(method="*", kind=kind))  # type: ignore[arg-type]
    reply = api.get("snapshots.list")
    assert reply.status_code == int(kind)
    assert reply.json()["ok"] is False
    assert api.get("snapshots.list").status_code == 200


def test_faults_only_hit_their_method(api: Api, sim: RunningSimulator) -> None:
    sim.dx.add_fault(Fault(method="teams.auditTrail", kind="500"))
    assert api.get("teams.list").status_code == 200
    assert api.get("teams.auditTrail").status_code == 500
    assert sim.dx.pending_faults() == []


def test_html_proxy_page(api: Api, sim: RunningSimulator) -> None:
    sim.dx.add_fault(Fault(method="teams.list", kind="html"))
    reply = api.get("teams.list")
    assert reply.status_code == 502
    assert reply.headers["Content-Type"].startswith("text/html")
    assert reply.text.startswith("<html>")


def test_drop_closes_without_answer_and_accepts_nothing(api: Api, sim: RunningSimulator) -> None:
    sim.dx.add_fault(Fault(method="orgfiles.teamHierarchy.process", kind="drop"))
    with pytest.raises(httpx.RemoteProtocolError):
        api.process(current_hierarchy())
    assert sim.dx.imports == []
    assert sim.dx.requests[-1].status == 0
    assert api.process(current_hierarchy()).json()["ok"] is True


def test_drop_after_send_accepts_the_import(
    api: Api, sim: RunningSimulator, clock: FakeClock
) -> None:
    sim.dx.add_fault(Fault(method="orgfiles.teamHierarchy.process", kind="drop_after_send"))
    teams = current_hierarchy()
    teams[2]["name"] = "Applications"
    with pytest.raises(httpx.RemoteProtocolError):
        api.process(teams)
    assert [record.kind for record in sim.dx.imports] == ["process"]
    assert api.process(teams).json()["error"] == "import_in_progress"
    clock.advance(2)
    assert api.team_by_ref()["eng-003"]["name"] == "Applications"


def test_latency_answers_late_after_doing_the_work(api: Api, sim: RunningSimulator) -> None:
    sim.dx.add_fault(Fault(method="teams.list", kind="latency", latency_s=0.15))
    started = time.monotonic()
    reply = api.get("teams.list")
    assert time.monotonic() - started >= 0.15
    assert reply.json()["ok"] is True


def test_latency_beyond_the_client_timeout_is_a_read_timeout(sim: RunningSimulator) -> None:
    sim.dx.add_fault(Fault(method="orgfiles.teamHierarchy.process", kind="latency", latency_s=0.3))
    with pytest.raises(httpx.ReadTimeout):
        httpx.post(
            f"{sim.base_url}/orgfiles.teamHierarchy.process",
            json={"teams": current_hierarchy()},
            headers={"Authorization": "Bearer sim-org-token"},
            timeout=0.1,
        )
    assert len(sim.dx.imports) == 1  # the request reached DX even though no answer did


def test_faults_from_the_scenario(clock: FakeClock) -> None:
    scenario = replace(default_scenario(), faults=(Fault(method="auth.whoami", kind="503"),))
    with start_simulator(scenario, clock=clock) as sim:
        api = Api(sim.base_url)
        assert api.get("auth.whoami").status_code == 503
        assert api.get("auth.whoami").status_code == 200


def test_the_account_rate_limit(clock: FakeClock) -> None:
    with start_simulator(replace(default_scenario(), rate_limit_per_minute=3), clock=clock) as sim:
        api = Api(sim.base_url)
        assert [api.get("teams.list").status_code for _ in range(4)] == [200, 200, 200, 429]
        limited = api.get("teams.list")
        assert limited.json()["error"] == "too_many_requests"
        assert limited.headers["Retry-After"] == "60"
        clock.advance(60)
        assert api.get("teams.list").status_code == 200


@pytest.mark.parametrize(
    "bad",
    [
        {"kind": "teapot"},
        {"count": 0},
        {"method": ""},
        {"retry_after_s": -1.0},
        {"latency_s": -0.1},
    ],
)
def test_fault_rejects_nonsense(bad: dict[str, object]) -> None:
    arguments: dict[str, object] = {"method": "teams.list", "kind": "500", **bad}
    with pytest.raises(ValueError):
        Fault(**arguments)  # type: ignore[arg-type]


def test_fault_book_spends_in_order() -> None:
    book = FaultBook()
    book.add(Fault("teams.list", "500", count=2))
    book.add(Fault("*", "503"))
    taken = [book.take("teams.list"), book.take("snapshots.list"), book.take("teams.list")]
    assert [f.kind if f else None for f in taken] == ["500", "503", "500"]
    assert book.take("teams.list") is None


def test_random_faults_hit_about_their_rate_replayably_and_never_run_out() -> None:
    def draws(seed: int) -> list[str | None]:
        book = FaultBook()
        book.add(Fault(method="*", kind="random", rate=0.3, seed=seed))
        found = []
        for _ in range(2000):
            fault = book.take("teams.list")
            found.append(fault.kind if fault else None)
        return found

    first = draws(7)
    assert first == draws(7)  # the same seed replays the same faults
    hit = [k for k in first if k is not None]
    assert 0.25 < len(hit) / len(first) < 0.35
    assert set(hit) == {"429", "500", "503", "drop", "drop_after_send", "latency"}


def test_a_random_fault_passes_misses_on_to_the_next_fault() -> None:
    book = FaultBook()
    book.add(Fault(method="teams.list", kind="random", rate=0.5, seed=1))
    book.add(Fault(method="*", kind="500", count=1))
    kinds = [getattr(book.take("teams.list"), "kind", None) for _ in range(6)]
    assert "500" in kinds  # the first miss of the random fault reached the counted one
    assert [f.kind for f, _ in book.pending()] == ["random"]


def test_random_fault_needs_a_rate_and_the_scenario_reads_it() -> None:
    with pytest.raises(ValueError, match="rate above 0"):
        Fault(method="*", kind="random")
    with pytest.raises(ValueError, match="between 0 and 1"):
        Fault(method="*", kind="random", rate=1.5)
    from hrsync.simulator.scenario import scenario_from_dict

    scenario = scenario_from_dict(
        {
            "account_name": "A",
            "app_url": "https://app.dx.example",
            "faults": [{"method": "*", "kind": "random", "rate": 0.3, "seed": 4}],
        },
        source="<test>",
    )
    (fault,) = scenario.faults
    assert (fault.kind, fault.rate, fault.seed) == ("random", 0.3, 4)


def test_random_faults_over_http_leave_dx_consistent(api: Api, sim: RunningSimulator) -> None:
    sim.dx.add_fault(Fault(method="teams.list", kind="random", rate=1.0, seed=3, latency_s=0.0))
    statuses = set()
    for _ in range(20):
        try:
            statuses.add(api.get("teams.list").status_code)
        except httpx.HTTPError:
            statuses.add(0)  # a dropped connection
    assert statuses <= {0, 200, 429, 500, 503} and len(statuses) >= 3
