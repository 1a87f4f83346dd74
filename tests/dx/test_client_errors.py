"""Every way DX says no, as the client reports it to the sync engine."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
import structlog

from hrsync.dx.client import DxClient
from hrsync.dx.errors import (
    DxAuthError,
    DxBadResponse,
    DxDeferred,
    DxInvalidRequest,
    DxOutcomeUnknown,
    DxRejected,
    ImportInProgress,
    SnapshotInProgress,
)
from hrsync.dx.payload import MAX_PAYLOAD_BYTES, PayloadTooLargeLocal
from hrsync.secret import Secret
from hrsync.simulator.hierarchy import Rejection, validate_teams
from hrsync.simulator.scenario import ScenarioSnapshot, default_scenario
from hrsync.simulator.server import RunningSimulator
from tests.dx.conftest import (
    READONLY_TOKEN,
    ClientFactory,
    default_hierarchy,
    hierarchy_team,
)
from tests.simulating import start_simulator

PROCESS = "orgfiles.teamHierarchy.process"


def process_requests(sim: RunningSimulator) -> list[Any]:
    return [r for r in sim.dx.requests if r.method_name == PROCESS]


def test_missing_token_is_not_authed(sim: RunningSimulator, make_client: ClientFactory) -> None:
    with pytest.raises(DxAuthError) as caught:
        make_client("").teams()
    assert caught.value.error == "not_authed"
    assert caught.value.method == "teams.list"
    assert caught.value.status == 401
    assert sim.dx.requests[-1].token_kind is None
    assert len(sim.dx.requests) == 1  # auth failures are not retried


def test_bad_token_is_invalid_auth_and_never_shown(make_client: ClientFactory) -> None:
    token = "dxt_live_0123456789abcdef"
    client = make_client(token)
    with structlog.testing.capture_logs() as logs, pytest.raises(DxAuthError) as caught:
        client.whoami()
    exc = caught.value
    assert exc.error == "invalid_auth" and isinstance(exc, DxRejected)
    for text in (str(exc), repr(exc), repr(client), str(exc.args), repr(logs)):
        assert token not in text
    assert str(exc).startswith("auth.whoami: invalid_auth:")


def test_read_only_token_cannot_process(sim: RunningSimulator, make_client: ClientFactory) -> None:
    with pytest.raises(DxAuthError) as caught:
        make_client(READONLY_TOKEN).process(default_hierarchy())
    assert caught.value.error == "not_authorized"
    assert caught.value.status == 403
    assert "snapshots:admin" in caught.value.message
    assert len(process_requests(sim)) == 1


def test_read_only_token_cannot_list_api_keys(make_client: ClientFactory) -> None:
    with pytest.raises(DxAuthError, match="not_authorized"):
        make_client(READONLY_TOKEN).api_keys()


def test_read_only_token_can_read_teams(make_client: ClientFactory) -> None:
    assert len(make_client(READONLY_TOKEN).teams()) == 4


def test_unknown_lead_is_invalid_rows_with_details_verbatim(
    sim: RunningSimulator, make_client: ClientFactory
) -> None:
    teams = default_hierarchy()
    teams[2]["team_lead_email"] = "nobody@acme.example"
    with pytest.raises(DxInvalidRequest) as caught:
        make_client().process(teams)
    exc = caught.value
    assert exc.error == "invalid_rows" and exc.method == PROCESS
    # Whatever shape the seed gave DX's answer, the client keeps it exactly as sent.
    users = {user["email"] for user in sim.dx.users_view()}
    answer = validate_teams(teams, users.__contains__, sim.dx.variation.invalid_rows)
    assert isinstance(answer, Rejection)
    assert exc.error_details == answer.details
    assert exc.message == answer.message  # DX's own message, kept as sent
    assert answer.message in str(exc)
    assert len(process_requests(sim)) == 1


def test_cycle_is_circular_reference(make_client: ClientFactory) -> None:
    teams = [
        hierarchy_team("a", "A", "ada@acme.example", parent=("b", "B")),
        hierarchy_team("b", "B", "grace@acme.example", parent=("a", "A")),
    ]
    with pytest.raises(DxInvalidRequest) as caught:
        make_client().preview(teams)
    assert caught.value.error == "circular_reference"
    assert caught.value.error_details is not None


def test_malformed_notification_address_is_invalid_email(make_client: ClientFactory) -> None:
    with pytest.raises(DxInvalidRequest) as caught:
        make_client().process(default_hierarchy(), email="ops at acme")
    assert caught.value.error == "invalid_email"


def big_org(contributors_per_team: int) -> list[dict[str, Any]]:
    return [
        hierarchy_team(
            f"big-{i:03d}",
            f"Team {i}",
            "ada@acme.example",
            contributors=tuple(
                f"person-{i:03d}-{j:05d}@acme.example" for j in range(contributors_per_team)
            ),
        )
        for i in range(100)
    ]


def test_payload_over_the_limit_is_refused_before_sending(
    sim: RunningSimulator, make_client: ClientFactory
) -> None:
    teams = big_org(1900)
    with pytest.raises(PayloadTooLargeLocal) as caught:
        make_client().process(teams)
    assert caught.value.error == "payload_too_large"
    assert f"{MAX_PAYLOAD_BYTES}-byte limit" in str(caught.value)
    assert "'big-" in str(caught.value)
    assert sim.dx.requests == []


@pytest.fixture
def live_snapshot() -> Iterator[RunningSimulator]:
    from datetime import timedelta

    scenario = dataclasses.replace(
        default_scenario(),
        snapshots=(
            ScenarioSnapshot(
                id="snap-live", scheduled_for=-timedelta(days=2), completed_at=None, total_count=7
            ),
        ),
    )
    with start_simulator(scenario) as running:
        yield running


def test_live_snapshot_defers(live_snapshot: RunningSimulator) -> None:
    with DxClient(live_snapshot.base_url, Secret("sim-org-token")) as client:
        with pytest.raises(SnapshotInProgress) as caught:
            client.process(default_hierarchy())
        assert isinstance(caught.value, DxDeferred)
        assert caught.value.error == "snapshot_in_progress"
        with pytest.raises(SnapshotInProgress):
            client.preview(default_hierarchy())
        (live,) = [s for s in client.snapshots() if s.id == "snap-live"]
        assert live.completed_at is None and live.deleted_at is None


def test_running_import_defers_the_next(sim: RunningSimulator, make_client: ClientFactory) -> None:
    client = make_client()
    client.process(default_hierarchy())
    with pytest.raises(ImportInProgress) as caught:
        client.process(default_hierarchy(platform_name="Again"))
    assert isinstance(caught.value, DxDeferred)
    assert caught.value.error == "import_in_progress"
    sim.dx.advance(5)
    assert client.process(default_hierarchy(platform_name="Again")).import_id


def test_unknown_error_code_is_a_rejection(
    sim: RunningSimulator, make_client: ClientFactory
) -> None:
    with pytest.raises(DxRejected) as caught:
        make_client().update_user_attributes("ghost@acme.example", {"level": "L5"})
    assert type(caught.value) is DxRejected
    # The simulator's answer for an e-mail DX does not know (its assumption: 404).
    assert caught.value.error == "user_not_found" and caught.value.status == 404
    assert len(sim.dx.requests) == 1  # a 404 is not retried


def proxy(status: int, body: bytes, content_type: str = "text/html") -> httpx.MockTransport:
    def answer(request: httpx.Request) -> httpx.Response:
        return httpx.Response(status, content=body, headers={"Content-Type": content_type})

    return httpx.MockTransport(answer)


@pytest.mark.parametrize("status", [200, 403, 404])
def test_non_json_page_is_a_bad_response_with_status_and_first_bytes(status: int) -> None:
    page = b"<html><title>Access denied</title>" + b"." * 1000 + b"</html>"
    client = DxClient("https://dx.invalid", Secret("t0ken"), transport=proxy(status, page))
    with pytest.raises(DxBadResponse) as caught:
        client.teams()
    text = str(caught.value)
    assert f"HTTP {status}" in text and "<html><title>Access denied</title>" in text
    assert len(text) < 400
    assert caught.value.status == status


def test_a_proxy_echoing_the_token_does_not_leak_it() -> None:
    token = "dxt_secret_value_42"

    def echo(request: httpx.Request) -> httpx.Response:
        return httpx.Response(
            400, content=f"<pre>{request.headers['Authorization']}</pre>".encode()
        )

    client = DxClient("https://dx.invalid", Secret(token), transport=httpx.MockTransport(echo))
    with pytest.raises(DxBadResponse) as caught:
        client.whoami()
    assert token not in str(caught.value) and token not in repr(caught.value.args)
    assert "Bearer ***" in str(caught.value)


def test_ok_false_with_http_200_and_no_code_is_rejected() -> None:
    client = DxClient(
        "https://dx.invalid",
        Secret("t"),
        transport=proxy(200, b'{"ok": false}', "application/json"),
    )
    with pytest.raises(DxRejected) as caught:
        client.teams()
    assert caught.value.error is None and caught.value.status == 200


def test_reply_without_the_teams_list_is_a_bad_response() -> None:
    client = DxClient(
        "https://dx.invalid",
        Secret("t"),
        transport=proxy(200, b'{"ok": true, "items": []}', "application/json"),
    )
    with pytest.raises(DxBadResponse, match="no 'teams' list"):
        client.teams()


def test_redirect_to_the_web_app_says_to_check_base_url() -> None:
    def redirect(request: httpx.Request) -> httpx.Response:
        return httpx.Response(302, headers={"Location": "https://app.dx.example/login"})

    client = DxClient("https://dx.invalid", Secret("t"), transport=httpx.MockTransport(redirect))
    with pytest.raises(DxBadResponse) as caught:
        client.whoami()
    assert "HTTP 302" in str(caught.value)
    assert "redirected to https://app.dx.example/login; check dx.base_url" in str(caught.value)


@pytest.mark.parametrize("url", ["", "   ", "dx.example.com", "ftp://dx.example", "http://"])
def test_unusable_base_url_is_refused_at_construction(url: str) -> None:
    with pytest.raises(ValueError, match="base_url"):
        DxClient(url, Secret("t"))


def test_unreadable_success_reply_to_process_is_outcome_unknown() -> None:
    client = DxClient(
        "https://dx.invalid", Secret("token-xyz"), transport=proxy(200, b"<html>OK</html>")
    )
    with pytest.raises(DxOutcomeUnknown) as caught:
        client.process(default_hierarchy())
    assert "HTTP 200" in str(caught.value) and "verify" in str(caught.value)
    # A page in front of DX that refuses outright is not ambiguous.
    client = DxClient(
        "https://dx.invalid", Secret("token-xyz"), transport=proxy(403, b"<html>WAF</html>")
    )
    with pytest.raises(DxBadResponse):
        client.process(default_hierarchy())
