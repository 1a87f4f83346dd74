"""Shared pieces of the DX client tests: a running simulator and a fake clock."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from hrsync.dx.client import DxClient
from hrsync.dx.retry import RetryPolicy
from hrsync.secret import Secret
from hrsync.simulator.server import RunningSimulator
from tests.simulating import start_simulator

ORG_TOKEN = "sim-org-token"
READONLY_TOKEN = "sim-readonly-token"
PERSONAL_TOKEN = "sim-personal-token"


class FakeTime:
    """The client's clock and sleep: sleeping moves the clock and is recorded, never real."""

    def __init__(self) -> None:
        self.now = datetime(2026, 11, 22, 9, 0, tzinfo=UTC)
        self.sleeps: list[float] = []

    def clock(self) -> datetime:
        return self.now

    def sleep(self, seconds: float) -> None:
        self.sleeps.append(seconds)
        self.now += timedelta(seconds=seconds)


@pytest.fixture
def sim() -> Iterator[RunningSimulator]:
    with start_simulator() as running:
        yield running


@pytest.fixture
def fake_time() -> FakeTime:
    return FakeTime()


ClientFactory = Callable[..., DxClient]


@pytest.fixture
def make_client(sim: RunningSimulator, fake_time: FakeTime) -> Iterator[ClientFactory]:
    """Builds clients against the simulator; jitter is fixed at 0.5 of the ceiling."""
    made: list[DxClient] = []

    def build(token: str = ORG_TOKEN, **overrides: Any) -> DxClient:
        options: dict[str, Any] = {
            "timeout_s": 5.0,
            "retry": RetryPolicy(jitter=lambda: 0.5),
            "clock": fake_time.clock,
            "sleep": fake_time.sleep,
        }
        options.update(overrides)
        client = DxClient(sim.base_url, Secret(token), **options)
        made.append(client)
        return client

    yield build
    for client in made:
        client.close()


def hierarchy_team(
    ref: str,
    name: str,
    lead: str,
    *,
    parent: tuple[str, str] | None = None,
    contributors: tuple[str, ...] = (),
) -> dict[str, Any]:
    """One HierarchyTeam entry; ``parent`` is (reference_id, name)."""
    return {
        "name": name,
        "reference_id": ref,
        "team_lead_email": lead,
        "parent_team_reference_id": parent[0] if parent else None,
        "parent_team_name": parent[1] if parent else None,
        "contributors": list(contributors),
    }


def default_hierarchy(*, platform_name: str = "Platform") -> list[dict[str, Any]]:
    """The default scenario's teams as hrsync would send them (Design Guild left out)."""
    eng = ("eng-001", "Engineering")
    return [
        hierarchy_team(
            "eng-001",
            "Engineering",
            "ada@acme.example",
            contributors=("grace@acme.example", "alan@acme.example"),
        ),
        hierarchy_team(
            "eng-002",
            platform_name,
            "grace@acme.example",
            parent=eng,
            contributors=("barbara@acme.example", "edsger@acme.example"),
        ),
        hierarchy_team(
            "eng-003", "Apps", "alan@acme.example", parent=eng, contributors=("ken@acme.example",)
        ),
    ]
