"""The client's methods against the simulator, over HTTP."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta

import httpx
import pytest

from hrsync.dx.client import DxClient
from hrsync.dx.models import AuditEvent
from hrsync.secret import Secret
from hrsync.simulator.scenario import default_scenario
from hrsync.simulator.server import RunningSimulator
from tests.dx.conftest import (
    ORG_TOKEN,
    PERSONAL_TOKEN,
    ClientFactory,
    default_hierarchy,
    hierarchy_team,
)
from tests.simulating import start_simulator


def test_whoami_with_an_organization_token(
    sim: RunningSimulator, make_client: ClientFactory
) -> None:
    who = make_client().whoami()
    assert who.auth_token_type == "account_web_api_token"
    assert who.account_name == "Acme Robotics (simulated)"
    assert who.user is None and who.team_name is None
    (request,) = sim.dx.requests
    assert (request.method_name, request.http_method, request.query) == ("auth.whoami", "GET", {})
    assert request.token_kind == "account_web_api_token"


def test_whoami_with_a_personal_token(make_client: ClientFactory) -> None:
    who = make_client(PERSONAL_TOKEN).whoami()
    assert who.auth_token_type == "personal_access_token"
    assert who.user is not None and who.user.email == "grace@acme.example"
    assert who.user.name == "Grace Hopper" and who.user.id
    assert who.team_name is not None


def test_api_keys_newest_first_without_token_values(make_client: ClientFactory) -> None:
    keys = make_client().api_keys()
    assert [k.id for k in keys] == ["key-readonly", "key-org"]
    assert keys[0].scopes == ("snapshots:read",)
    assert "snapshots:admin" in keys[1].scopes
    assert all(k.created_at is not None and k.created_at.tzinfo is not None for k in keys)
    assert keys[0].created_at is not None and keys[1].created_at is not None
    assert keys[0].created_at > keys[1].created_at


def test_snapshots(sim: RunningSimulator, make_client: ClientFactory) -> None:
    snaps = {s.id: s for s in make_client().snapshots()}
    assert set(snaps) == {"snap-q1", "snap-cancelled"}
    done = snaps["snap-q1"]
    assert done.completed_at is not None
    assert abs(sim.dx.now() - done.completed_at - timedelta(days=60)) < timedelta(minutes=1)
    assert (done.completed_count, done.total_count) == (6, 7)
    cancelled = snaps["snap-cancelled"]
    assert cancelled.completed_at is None and cancelled.deleted_at is not None
    assert cancelled.scheduled_for is not None and len(cancelled.scheduled_for) == 10


def test_teams_keep_ids_parents_and_sentinels_as_given(make_client: ClientFactory) -> None:
    teams = {t.name: t for t in make_client().teams()}
    assert set(teams) == {"Engineering", "Platform", "Apps", "Design Guild"}
    eng, platform = teams["Engineering"], teams["Platform"]
    assert platform.parent_id == eng.id and teams["Apps"].parent_id == eng.id
    assert eng.is_parent and not platform.is_parent
    ids = {t.id for t in teams.values()}
    # A root's parent_id is DX's sentinel, not one of the teams and not dropped.
    assert eng.parent_id is not None and eng.parent_id not in ids
    assert platform.ancestors[-2:] == (eng.id, platform.id)
    assert teams["Design Guild"].reference_id is None
    assert platform.reference_id == "eng-002" and platform.contributors == 3
    assert platform.manager_id and platform.last_changed_at is not None


def test_process_renames_after_the_import_delay(
    sim: RunningSimulator, make_client: ClientFactory
) -> None:
    client = make_client()
    teams = default_hierarchy(platform_name="Platform Engineering")
    accepted = client.process(teams, email="ops@acme.example")
    assert accepted.import_id
    assert accepted.raw.get("ok") is True
    (request,) = [r for r in sim.dx.requests if r.method_name == "orgfiles.teamHierarchy.process"]
    assert request.http_method == "POST" and request.status == 200
    assert request.body == {"teams": teams, "email": "ops@acme.example"}
    assert request.token_kind == "account_web_api_token"

    assert "Platform" in {t.name for t in client.teams()}  # not applied yet
    sim.dx.advance(5)
    names = {t.name for t in client.teams()}
    assert "Platform Engineering" in names
    assert "Design Guild" not in names  # absent from the request: archived


def test_process_without_email_sends_no_email_field(
    sim: RunningSimulator, make_client: ClientFactory
) -> None:
    make_client().process(default_hierarchy())
    (request,) = [r for r in sim.dx.requests if r.method_name == "orgfiles.teamHierarchy.process"]
    assert request.body == {"teams": default_hierarchy()}


def test_preview_returns_the_preview_url_and_applies_nothing(
    sim: RunningSimulator, make_client: ClientFactory
) -> None:
    client = make_client()
    accepted = client.preview(default_hierarchy(platform_name="Renamed"))
    assert accepted.import_id
    assert accepted.preview_url is not None
    assert accepted.preview_url.startswith("https://app.dx.example/")
    sim.dx.advance(60)
    assert "Renamed" not in {t.name for t in client.teams()}


def test_update_user_attributes(sim: RunningSimulator, make_client: ClientFactory) -> None:
    user = make_client().update_user_attributes(
        "ken@acme.example", {"cost_center": "CC-42", "level": "L5"}
    )
    assert user["email"] == "ken@acme.example"
    assert {a["name"]: a["value"] for a in user["attributes"]} == {
        "cost_center": "CC-42",
        "level": "L5",
    }
    assert sim.dx.user_attributes("ken@acme.example") == {"cost_center": "CC-42", "level": "L5"}
    (request,) = sim.dx.requests
    assert request.body == {
        "email": "ken@acme.example",
        "attributes": [
            {"name": "cost_center", "value": "CC-42"},
            {"name": "level", "value": "L5"},
        ],
    }


def _reorganise(sim: RunningSimulator, client: DxClient, rounds: int) -> None:
    """Each round renames every team and swaps a lead: several audit events per round."""
    for n in range(rounds):
        eng = ("eng-001", f"Engineering {n}")
        lead = "barbara@acme.example" if n % 2 == 0 else "grace@acme.example"
        client.process(
            [
                hierarchy_team("eng-001", f"Engineering {n}", "ada@acme.example"),
                hierarchy_team("eng-002", f"Platform {n}", lead, parent=eng),
                hierarchy_team("eng-003", f"Apps {n}", "alan@acme.example", parent=eng),
            ]
        )
        sim.dx.advance(5)
        client.teams()  # lets the simulator apply the import


@pytest.fixture
def small_pages() -> Iterator[RunningSimulator]:
    """A simulator whose audit trail answers three events per page."""
    with start_simulator(dataclasses.replace(default_scenario(), audit_page_size=3)) as running:
        yield running


def plain_client(sim: RunningSimulator) -> DxClient:
    return DxClient(sim.base_url, Secret(ORG_TOKEN))


def test_audit_trail_follows_cursors_over_pages_without_ok(
    small_pages: RunningSimulator,
) -> None:
    small = small_pages

    _reorganise(small, plain_client(small), rounds=3)
    expected = small.dx.audit_events()
    assert len(expected) >= 10  # enough for four pages of three

    raw = httpx.get(
        f"{small.base_url}/teams.auditTrail",
        headers={"Authorization": "Bearer sim-org-token"},
    ).json()
    assert "ok" not in raw  # the shape DX documents, which the client must accept

    small.dx.requests.clear()
    with plain_client(small) as client:
        events = list(client.audit_trail())
    assert [e.id for e in events] == [e["id"] for e in expected]
    pages = [r for r in small.dx.requests if r.method_name == "teams.auditTrail"]
    assert len(pages) == -(-len(expected) // 3)
    assert pages[0].query == {}
    assert all("cursor" in p.query and p.query["cursor"] for p in pages[1:])
    assert len({p.query.get("cursor") for p in pages}) == len(pages)
    assert all(isinstance(e, AuditEvent) for e in events)
    actions = {e.action for e in events}
    assert actions == {"change_name", "change_manager"}
    renamed = next(e for e in events if e.action == "change_name")
    assert isinstance(renamed.before, str) and isinstance(renamed.after, str)
    lead_change = next(e for e in events if e.action == "change_manager")
    assert isinstance(lead_change.after, dict) and "email" in lead_change.after
    assert all(e.created.tzinfo is not None for e in events)


def test_audit_trail_since_filters_and_stops_paging_early(
    small_pages: RunningSimulator,
) -> None:
    small = small_pages

    _reorganise(small, plain_client(small), rounds=2)
    # DX's audit times are whole seconds; a second's gap keeps the rounds apart.
    small.dx.advance(10)
    cut = small.dx.now()
    _reorganise(small, plain_client(small), rounds=1)
    all_events = small.dx.audit_events()
    recent = [e for e in all_events if e["created"] >= int(cut.timestamp())]
    assert 0 < len(recent) < len(all_events)

    small.dx.requests.clear()
    with plain_client(small) as client:
        got = list(client.audit_trail(since=cut))
        assert [e.id for e in got] == [e["id"] for e in recent]
        assert all(e.created >= cut.replace(microsecond=0) for e in got)
        pages_read = len([r for r in small.dx.requests if r.method_name == "teams.auditTrail"])
        total_pages = -(-len(all_events) // 3)
        # Newest first: paging stops after the first page wholly older than `since`.
        assert pages_read < total_pages

        small.dx.requests.clear()
        future = small.dx.now() + timedelta(days=1)
        assert list(client.audit_trail(since=future)) == []
        assert len(small.dx.requests) == 1

        small.dx.requests.clear()
        capped = list(client.audit_trail(max_pages=2))
        assert len(capped) == 6
        assert len(small.dx.requests) == 2


def test_audit_trail_naive_since_is_utc(sim: RunningSimulator, make_client: ClientFactory) -> None:
    _reorganise(sim, make_client(), rounds=1)
    later = datetime.now(UTC).replace(tzinfo=None) + timedelta(days=30)
    assert list(make_client().audit_trail(since=later)) == []
    assert len(list(make_client().audit_trail(since=datetime(2000, 1, 1)))) > 0
