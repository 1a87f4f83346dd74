"""`hrsync sync` reading Google Workspace with a service account: the how-to's recipe,
verbatim (only the host swapped for a local fake), a key file made for the test, the
JWT-bearer grant against a fake token endpoint that verifies the signature, and the
DX simulator. No secret (the key, an assertion, a token) reaches the output or the store."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.e2e.conftest import Run, Workspace
from tests.e2e.test_http_sources_e2e import assert_applied, google_key_env, recipe_config
from tests.fakes import FakeServer, serve
from tests.fakes.google_workspace import DIRECTORY_SCOPE, DirectoryApi

pytestmark = pytest.mark.slow


@pytest.fixture
def google() -> Iterator[tuple[FakeServer, DirectoryApi]]:
    api = DirectoryApi()
    with serve(api) as server:
        yield server, api


def google_run(
    ws: Workspace, server: FakeServer, api: DirectoryApi, command: str = "sync", **env: str
) -> Run:
    recipe_config(ws, "google-workspace", server.base_url)
    return ws.hrsync(command, env={**google_key_env(ws, api, server.base_url), **env})


def secrets_of(ws: Workspace, api: DirectoryApi) -> list[str]:
    pem = api.tokens.account.pem
    lines = [line for line in pem.splitlines() if "-----" not in line]
    key_file = (ws.root / "google-key.json").read_text(encoding="utf-8")
    return [pem, *lines, key_file, *api.tokens.assertions, *api.tokens.issued]


def assert_no_secret(ws: Workspace, run: Run, secrets: list[str]) -> None:
    stores = [p.read_bytes() for p in ws.root.glob("state.db*")]
    assert stores
    for secret in secrets:
        assert secret not in run.stdout and secret not in run.stderr
        assert all(secret.encode() not in data for data in stores)


def test_the_recipe_reads_the_whole_directory_and_no_secret_leaks(
    workspace: Workspace, google: tuple[FakeServer, DirectoryApi]
) -> None:
    server, api = google
    api.revoke_after_page = 2  # a token revoked mid-read: one fresh one, then on
    run = google_run(workspace, server, api)
    assert_applied(run, workspace)
    (fetched,) = run.named("source.fetched")
    assert fetched["pages"] == 4 and api.pages_served == 4
    assert len(api.tokens.issued) == 2 and len(run.named("source.oauth2_refresh")) == 1
    for claims in api.tokens.claims:  # what the fake verified, signature first
        assert claims["iss"] == api.tokens.account.client_email
        assert claims["sub"] == "hrsync-reader@example.com"
        assert claims["aud"] == f"{server.base_url}/token"
        assert claims["scope"] == DIRECTORY_SCOPE
        assert claims["exp"] - claims["iat"] == 3600
    assert_no_secret(workspace, run, secrets_of(workspace, api))


def test_a_subject_without_delegation_is_refused_naming_the_setting(
    workspace: Workspace, google: tuple[FakeServer, DirectoryApi]
) -> None:
    server, api = google
    run = google_run(
        workspace, server, api, HRSYNC_SOURCE__GOOGLE_SERVICE_ACCOUNT__SUBJECT="x@example.com"
    )
    assert run.code == 4, run.stdout[-2000:] + run.stderr[-2000:]
    assert run.finished["outcome"] == "refused"
    reason = run.finished["reason"]
    assert "invalid_grant" in reason and "source.google_service_account.subject" in reason
    assert "Traceback" not in run.stdout + run.stderr
    assert api.pages_served == 0 and workspace.process_requests() == []
    assert_no_secret(workspace, run, secrets_of(workspace, api))


def test_check_reads_every_page_and_sends_nothing(
    workspace: Workspace, google: tuple[FakeServer, DirectoryApi]
) -> None:
    server, api = google
    run = google_run(workspace, server, api, "check")
    assert run.code == 0, run.stdout[-2000:]
    assert "4 pages read, 37 people kept" in run.stdout
    assert not [r for r in workspace.sim.dx.requests if r.http_method == "POST"]
    assert_no_secret(workspace, run, secrets_of(workspace, api))
