"""Shared pieces of the simulator tests: a simulator on an injected clock and HTTP helpers."""

from __future__ import annotations

import ssl
from collections.abc import Iterator
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from typing import Any

import httpx
import pytest

from hrsync.simulator.scenario import Scenario, default_scenario
from hrsync.simulator.server import RunningSimulator
from tests.simulating import start_simulator

ORG_TOKEN = "sim-org-token"
READONLY_TOKEN = "sim-readonly-token"
PERSONAL_TOKEN = "sim-personal-token"
START = datetime(2026, 11, 22, 9, 0, tzinfo=UTC)


class FakeClock:
    """The simulator's clock in tests: moves only when told to."""

    def __init__(self, start: datetime = START) -> None:
        self.now = start

    def __call__(self) -> datetime:
        return self.now

    def advance(self, seconds: float) -> None:
        self.now += timedelta(seconds=seconds)


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()


@pytest.fixture
def scenario() -> Scenario:
    """The default scenario; tests override fields with ``dataclasses.replace``."""
    return default_scenario()


@pytest.fixture
def sim(scenario: Scenario, clock: FakeClock) -> Iterator[RunningSimulator]:
    with start_simulator(scenario, clock=clock) as running:
        yield running


# Loading CA certificates costs ~50 ms per httpx client; the simulator speaks plain HTTP, so
# every test client shares one context.
_TLS = ssl.create_default_context()


class Api:
    """A thin HTTP caller: one method name, one token, the parsed JSON back."""

    def __init__(self, base_url: str, token: str | None = ORG_TOKEN) -> None:
        headers = {"Accept": "application/json"}
        if token is not None:
            headers["Authorization"] = f"Bearer {token}"
        self.http = httpx.Client(base_url=base_url, headers=headers, timeout=5.0, verify=_TLS)

    def get(self, method: str, **params: str) -> httpx.Response:
        return self.http.get(f"/{method}", params=params)

    def post(self, method: str, body: Any) -> httpx.Response:
        return self.http.post(f"/{method}", json=body)

    def teams(self) -> list[dict[str, Any]]:
        reply = self.get("teams.list")
        assert reply.json()["ok"] is True, reply.text
        teams: list[dict[str, Any]] = reply.json()["teams"]
        return teams

    def team_by_ref(self) -> dict[str | None, dict[str, Any]]:
        return {team["reference_id"]: team for team in self.teams()}

    def process(self, teams: list[Any], **extra: Any) -> httpx.Response:
        return self.post("orgfiles.teamHierarchy.process", {"teams": teams, **extra})

    def preview(self, teams: list[dict[str, Any]]) -> httpx.Response:
        return self.post("orgfiles.teamHierarchy.preview", {"teams": teams})


@pytest.fixture
def api(sim: RunningSimulator) -> Iterator[Api]:
    caller = Api(sim.base_url)
    yield caller
    caller.http.close()


def hteam(
    name: str,
    ref: str,
    lead: str,
    contributors: list[str] | None = None,
    parent: tuple[str, str] | None = None,
) -> dict[str, Any]:
    """One HierarchyTeam; ``parent`` is (reference_id, name)."""
    return {
        "name": name,
        "reference_id": ref,
        "team_lead_email": lead,
        "parent_team_reference_id": parent[0] if parent else None,
        "parent_team_name": parent[1] if parent else None,
        "contributors": contributors or [],
    }


def current_hierarchy() -> list[dict[str, Any]]:
    """The default scenario's teams that have a reference_id, as a process payload."""
    return [
        hteam(
            "Engineering",
            "eng-001",
            "ada@acme.example",
            ["grace@acme.example", "alan@acme.example"],
        ),
        hteam(
            "Platform",
            "eng-002",
            "grace@acme.example",
            ["grace@acme.example", "barbara@acme.example", "edsger@acme.example"],
            parent=("eng-001", "Engineering"),
        ),
        hteam(
            "Apps",
            "eng-003",
            "alan@acme.example",
            ["ken@acme.example"],
            parent=("eng-001", "Engineering"),
        ),
    ]


def with_fields(scenario: Scenario, **changes: Any) -> Scenario:
    return replace(scenario, **changes)
