"""`hrsync sync` reading HR APIs directly: the how-to recipes and their fakes (each recipe
run verbatim is in test_first_run_paging_e2e), secrets, and a paged read that must never
reach DX in part."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import pytest

from tests.e2e.conftest import ROOT, Run, Workspace
from tests.fakes import FakeServer, serve
from tests.fakes.google_workspace import DirectoryApi
from tests.fakes.hr_apis import (
    BambooHrApi,
    BambooHrDatasetsApi,
    Faults,
    GraphApi,
    HiBobApi,
    OktaApi,
    PersonioApi,
    RipplingApi,
    ScimApi,
    SuccessFactorsApi,
    WorkdayApi,
    basic,
)

pytestmark = pytest.mark.slow

RECIPES = ROOT / "config" / "recipes"
# Each recipe's how-to page, docs/how-to/PAGE.md, shows config/recipes/NAME.toml verbatim.
HOW_TO = ROOT / "docs" / "how-to"
# The hosts each recipe names, served by one local fake per recipe.
GRAPH_HOSTS = ("https://graph.microsoft.com", "https://login.microsoftonline.com")
HOSTS = {
    "microsoft-graph": GRAPH_HOSTS,
    "microsoft-graph-delta": GRAPH_HOSTS,
    "okta": ("https://acme.okta.com",),
    "bamboohr": ("https://api.bamboohr.com",),
    "bamboohr-datasets": ("https://acme.bamboohr.com",),
    "hibob": ("https://api.hibob.com",),
    "personio": ("https://api.personio.de",),
    "workday": ("https://wd5-services1.myworkday.com",),
    "google-workspace": ("https://admin.googleapis.com",),
    "scim": ("https://api.letsdeel.com",),
    "rippling": ("https://rest.ripplingapis.com",),
    "successfactors": ("https://api4.successfactors.com",),
}
# A recipe's how-to page, when it is not the recipe's own name (two recipes share one).
PAGES = {"microsoft-graph-delta": "microsoft-graph", "bamboohr-datasets": "bamboohr"}
REST = """
[dx]
base_url = "{dx}"

[mapping]
team_name = "{{department}}"

[sync]
verify_timeout_s = 20
notify_email = "people-ops@example.com"

[state]
database_url = "sqlite:///{db}"

[log]
format = "json"
level = "debug"
"""


def recipe_config(ws: Workspace, name: str, base_url: str) -> None:
    text = (RECIPES / f"{name}.toml").read_text(encoding="utf-8")
    for host in HOSTS[name]:
        assert host in text
        text = text.replace(host, base_url)
    ws.config.write_text(text + REST.format(dx=ws.sim.base_url, db=ws.db), encoding="utf-8")


def api_and_env(name: str) -> tuple[Callable[..., Any], dict[str, str]]:
    """The recipe's fake, paging at 10 records where the vendor pages, and the
    environment its recipe names."""
    if name in ("microsoft-graph", "microsoft-graph-delta"):
        graph = GraphApi()
        env = {"GRAPH_CLIENT_ID": graph.oauth.client_id}
        return graph, {**env, "GRAPH_CLIENT_SECRET": graph.oauth.client_secret}
    if name == "okta":
        okta = OktaApi()
        return okta, {"OKTA_API_AUTH": f"SSWS {okta.api_token}"}
    if name == "bamboohr":
        bamboo = BambooHrApi()
        return bamboo, {"BAMBOOHR_API_KEY": bamboo.api_key, "BAMBOOHR_PASSWORD": "x"}
    if name == "bamboohr-datasets":
        dataset = BambooHrDatasetsApi()
        return dataset, {"BAMBOOHR_API_KEY": dataset.api_key, "BAMBOOHR_PASSWORD": "x"}
    if name == "scim":
        scim = ScimApi()
        return scim, {"SCIM_AUTH": f"Bearer {scim.token}"}
    if name == "rippling":
        rippling = RipplingApi()
        return rippling, {"RIPPLING_AUTH": f"Bearer {rippling.token}"}
    if name == "hibob":
        bob = HiBobApi()
        return bob, {"HIBOB_AUTH": basic(bob.service_user, bob.service_token)}
    if name == "successfactors":
        sf = SuccessFactorsApi()
        return sf, {"SF_USER": sf.username, "SF_PASSWORD": sf.password}
    if name == "google-workspace":
        return DirectoryApi(), {}  # the key file is written once the fake's address is known
    if name == "personio":
        personio = PersonioApi(max_limit=10)  # below the recipe's 100, as Personio may
        env = {"PERSONIO_CLIENT_ID": personio.oauth.client_id}
        return personio, {**env, "PERSONIO_CLIENT_SECRET": personio.oauth.client_secret}
    workday = WorkdayApi()
    return workday, {"WORKDAY_USER": workday.user, "WORKDAY_PASSWORD": workday.password}


def test_every_recipe_is_on_its_how_to_page_verbatim() -> None:
    for name in HOSTS:
        page = HOW_TO / f"{PAGES.get(name, name)}.md"
        text = page.read_text(encoding="utf-8")
        recipe = (RECIPES / f"{name}.toml").read_text(encoding="utf-8")
        where = page.relative_to(ROOT)
        assert f"```toml\n{recipe}```" in text, f"config/recipes/{name}.toml differs in {where}"
    # Recipes of several sources, each run verbatim by a test of its own: oracle-hr
    # (files; test_joins_e2e), workday-entra (two APIs; test_workday_entra_e2e) and
    # acquisition (two exports; test_union_e2e).
    joined = ["acquisition", "oracle-hr", "workday-entra"]
    assert sorted(p.stem for p in RECIPES.glob("*.toml")) == sorted([*HOSTS, *joined])


def google_key_env(ws: Workspace, api: DirectoryApi, base_url: str) -> dict[str, str]:
    """The service account's key file, naming the fake's token endpoint, and its path."""
    path = api.tokens.account.write_key_file(ws.root / "google-key.json", f"{base_url}/token")
    return {"GOOGLE_APPLICATION_CREDENTIALS": str(path)}


def assert_applied(run: Run, ws: Workspace) -> None:
    assert run.code == 0, run.stdout[-3000:] + run.stderr[-3000:]
    assert run.finished["outcome"] == "applied"
    (read,) = run.named("export.read")
    assert read["people"] == 37  # the sample org's active people, on every system
    assert run.finished["counts"]["create"] == 13
    assert len(ws.dx_teams()) == 13


def assert_no_secret(ws: Workspace, run: Run, values: Any, tokens: list[str]) -> None:
    hidden = [*values, *tokens]
    stores = [p.read_bytes() for p in ws.root.glob("state.db*")]
    assert stores
    for secret in hidden:
        assert secret not in run.stdout and secret not in run.stderr
        assert all(secret.encode() not in data for data in stores)


@pytest.fixture
def graph() -> Iterator[tuple[FakeServer, GraphApi]]:
    api = GraphApi()
    with serve(api) as server:
        yield server, api


def graph_run(
    ws: Workspace, server: FakeServer, api: GraphApi, command: str = "sync", **env: str
) -> Run:
    recipe_config(ws, "microsoft-graph", server.base_url)
    secrets = {
        "GRAPH_CLIENT_ID": api.oauth.client_id,
        "GRAPH_CLIENT_SECRET": api.oauth.client_secret,
    }
    return ws.hrsync(command, env={**secrets, **env})


def test_no_secret_or_token_anywhere_even_after_a_refresh(
    workspace: Workspace, graph: tuple[FakeServer, GraphApi]
) -> None:
    server, api = graph
    api.revoke_after_page = 2
    api.faults = Faults(fail_page=3, fail_times=1)
    run = graph_run(workspace, server, api)
    assert_applied(run, workspace)
    assert len(api.oauth.issued) == 2  # one token, then one fresh one after the 401
    assert [e["page"] for e in run.named("source.retry")] == [3]
    (fetched,) = run.named("source.fetched")
    assert fetched["pages"] == 4
    assert_no_secret(workspace, run, [api.oauth.client_secret], api.oauth.issued)
    # The same run with a bad secret: refused, the setting named, no traceback.
    bad = graph_run(workspace, server, api, GRAPH_CLIENT_SECRET="not-the-secret-at-all")
    assert bad.code == 4, bad.stdout[-2000:] + bad.stderr[-2000:]
    assert bad.finished["outcome"] == "refused"
    assert "source.oauth2.client_secret_env" in bad.finished["reason"]
    assert "Traceback" not in bad.stdout + bad.stderr
    assert_no_secret(workspace, bad, ["not-the-secret-at-all", api.oauth.client_secret], [])


def test_a_next_page_with_style_none_is_refused_and_nothing_sent(
    workspace: Workspace, graph: tuple[FakeServer, GraphApi]
) -> None:
    server, api = graph
    run = graph_run(workspace, server, api, HRSYNC_SOURCE__PAGINATION__STYLE="none")
    assert run.code == 4
    assert run.finished["outcome"] == "refused"
    reason = run.finished["reason"]
    assert "@odata.nextLink" in reason and '[source.pagination] style = "odata"' in reason
    assert workspace.process_requests() == []
    assert api.pages_served == 1


def test_a_page_failing_after_retries_fails_the_run_and_sends_nothing(
    workspace: Workspace, graph: tuple[FakeServer, GraphApi]
) -> None:
    server, api = graph
    api.faults = Faults(fail_page=3)
    run = graph_run(workspace, server, api, HRSYNC_SOURCE__RETRIES="2")
    assert run.code == 1
    assert run.finished["outcome"] == "failed"
    assert "page 3 of" in run.finished["reason"] and "tried 3 times" in run.finished["reason"]
    assert api.faults.failed == 3
    assert workspace.process_requests() == []
    assert not [r for r in workspace.sim.dx.requests if r.http_method == "POST"]


def test_max_pages_reached_refuses_the_run(
    workspace: Workspace, graph: tuple[FakeServer, GraphApi]
) -> None:
    server, api = graph
    run = graph_run(workspace, server, api, HRSYNC_SOURCE__PAGINATION__MAX_PAGES="2")
    assert run.code == 4
    assert "source.pagination.max_pages" in run.finished["reason"]
    assert workspace.process_requests() == []


def test_check_reports_the_pages_read_and_the_people_found(
    workspace: Workspace, graph: tuple[FakeServer, GraphApi]
) -> None:
    server, api = graph
    run = graph_run(workspace, server, api, "check")
    assert run.code == 0, run.stdout[-2000:]
    assert f"[  ok] export: {server.base_url}/v1.0/users" in run.stdout
    assert "4 pages read, 37 people kept" in run.stdout
    assert not [r for r in workspace.sim.dx.requests if r.http_method == "POST"]
    assert_no_secret(workspace, run, [api.oauth.client_secret], api.oauth.issued)


def test_credentials_refused_by_the_hr_api_are_told_as_such_not_as_an_invalid_export(
    workspace: Workspace,
) -> None:
    # A 401 was reported "export invalid: …": nothing is wrong with the export, which
    # was never read; the credentials are.
    okta = OktaApi()
    with serve(okta) as server:
        recipe_config(workspace, "okta", server.base_url)
        run = workspace.hrsync("sync", env={"OKTA_API_AUTH": "SSWS not-the-token"})
        explain = workspace.hrsync("explain", "E001", env={"OKTA_API_AUTH": "SSWS wrong"})
    assert run.code == 4, run.stdout[-2000:] + run.stderr[-2000:]
    assert run.finished["outcome"] == "refused"
    reason = run.finished["reason"]
    assert reason.startswith("source unreadable: "), reason
    assert "HTTP 401" in reason and "credentials" in reason
    assert "export invalid" not in run.stdout + run.stderr
    assert "The export has problems" not in run.stdout + run.stderr
    assert workspace.process_requests() == []
    assert "the export cannot be read" in explain.stdout and "HTTP 401" in explain.stdout
    assert "cannot be synced" not in explain.stdout


def test_okta_manager_ids_read_as_employee_numbers_are_told_as_another_kind_of_id(
    workspace: Workspace,
) -> None:
    # The recipe as it was: people by employeeNumber, managers by profile.managerId, which
    # holds Okta user ids. Every manager matched nobody, and the refusal suggested
    # source.unknown_manager = "top", which would have synced 36 teams of one.
    api, env = api_and_env("okta")
    with serve(api) as server:
        recipe_config(workspace, "okta", server.base_url)
        text = workspace.config.read_text(encoding="utf-8")
        text = text.replace('employee_id = "id"', 'employee_id = "profile.employeeNumber"')
        workspace.config.write_text(text, encoding="utf-8")
        run = workspace.hrsync("sync", env=env)
    assert run.code == 4, run.stdout[-2000:] + run.stderr[-2000:]
    reason = run.finished["reason"]
    assert reason.startswith("export invalid: "), reason
    assert "another kind of id" in reason and "beside the employee id 'E001'" in reason
    assert "unknown_manager" not in run.stdout + run.stderr
    assert workspace.process_requests() == []


def test_workday_workers_with_two_positions_are_read_by_their_primary_job(
    workspace: Workspace,
) -> None:
    # Every fifth worker of the fake holds an additional job under another manager. The
    # recipe picks the primary job: nobody held, the whole org placed. Read without the
    # pick, each of those workers has two managers: each would be held, and so many (7 of
    # 37) say the mapping is wrong, so the run is refused with the path to pick one.
    api, env = api_and_env("workday")
    with serve(api) as server:
        recipe_config(workspace, "workday", server.base_url)
        picked = workspace.hrsync("sync", env=env)
        assert_applied(picked, workspace)
        assert picked.finished["counts"]["held"] == 0
        text = workspace.config.read_text(encoding="utf-8")
        unpicked_path = "Positions_group.Manager_ID"
        text = text.replace("Positions_group[Is_Primary_Job=1].Manager_ID", unpicked_path)
        workspace.config.write_text(text, encoding="utf-8")
        unpicked = workspace.hrsync("plan", env=env)
    assert unpicked.code == 4, unpicked.stdout[-2000:] + unpicked.stderr[-2000:]
    assert "7 of the export's 37 people" in unpicked.finished["reason"]
    problems = [
        e["detail"] for e in unpicked.named("export.problem") if "Report_Entry" in e["detail"]
    ]
    assert len(problems) == 7
    assert all(f"{unpicked_path} holds several values" in p for p in problems)
    assert all("Positions_group[key=value].Manager_ID" in p for p in problems)
