"""The socket-free core: what `handle` decides, as the HTTP layer will carry it out."""

from __future__ import annotations

import json
from datetime import timedelta

import httpx
import pytest

from hrsync.simulator.core import SimulatedDx
from hrsync.simulator.faults import Fault
from hrsync.simulator.server import RunningSimulator
from tests.simulating import simulated_dx

from .conftest import START, FakeClock, current_hierarchy

AUTH = {"Authorization": "Bearer sim-org-token"}
JSON_AUTH = {**AUTH, "Content-Type": "application/json"}


@pytest.fixture
def dx(clock: FakeClock) -> SimulatedDx:
    return simulated_dx(clock=clock)


def test_handle_answers_without_sockets(dx: SimulatedDx) -> None:
    response = dx.handle("GET", "teams.list", AUTH, {}, b"")
    assert response.status == 200
    assert response.content_type.startswith("application/json")
    assert len(response.json()["teams"]) == 4


def test_header_names_are_case_insensitive(dx: SimulatedDx) -> None:
    response = dx.handle("GET", "auth.whoami", {"authorization": "bearer sim-org-token"}, {}, b"")
    assert response.json()["ok"] is True


def test_fault_decisions_are_part_of_the_response(dx: SimulatedDx) -> None:
    dx.add_fault(Fault("teams.list", "drop"))
    dx.add_fault(Fault("teams.list", "latency", latency_s=0.5))
    dropped = dx.handle("GET", "teams.list", AUTH, {}, b"")
    assert dropped.disconnect
    late = dx.handle("GET", "teams.list", AUTH, {}, b"")
    assert (late.status, late.delay_s, late.disconnect) == (200, 0.5, False)


def test_drop_after_send_does_the_work(dx: SimulatedDx, clock: FakeClock) -> None:
    dx.add_fault(Fault("orgfiles.teamHierarchy.process", "drop_after_send"))
    body = json.dumps({"teams": current_hierarchy()[:1]}).encode()
    response = dx.handle("POST", "orgfiles.teamHierarchy.process", JSON_AUTH, {}, body)
    assert response.disconnect
    clock.advance(2)
    assert [team["reference_id"] for team in dx.teams_view()] == ["eng-001"]
    assert dx.pending_import is None


def test_own_clock_advances_only_without_an_injected_one(clock: FakeClock) -> None:
    own = simulated_dx()
    before = own.now()
    own.advance(3600)
    assert own.now() - before >= timedelta(hours=1)
    with pytest.raises(RuntimeError):
        simulated_dx(clock=clock).advance(1)


def test_a_naive_clock_is_refused() -> None:
    with pytest.raises(ValueError, match="timezone-aware"):
        simulated_dx(clock=lambda: START.replace(tzinfo=None))


def test_chunked_request_bodies_are_read(sim: RunningSimulator) -> None:
    payload = json.dumps({"teams": current_hierarchy()}).encode()

    def chunks() -> object:
        yield payload[:100]
        yield payload[100:]

    reply = httpx.post(
        f"{sim.base_url}/orgfiles.teamHierarchy.preview",
        content=chunks(),  # type: ignore[arg-type]
        headers=JSON_AUTH,
    )
    assert reply.json()["ok"] is True
