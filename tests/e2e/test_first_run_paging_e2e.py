"""A first run against an API that pages, where nobody has a baseline yet (issue 22): with
no [source.pagination] the run is refused at the source stage and nothing reaches DX; with
the paging docs/reference/http-sources.md gives for that shape, the whole org is placed.
Four shapes, each a local fake paged at 10 records: Personio (``metadata.total_pages``),
SCIM 2.0 (``totalResults`` above ``itemsPerPage``), BambooHR Datasets (``links.next``) and
Rippling (``next_link``)."""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest

from tests.e2e.conftest import ROOT, Workspace
from tests.e2e.test_http_sources_e2e import REST, assert_applied, recipe_config
from tests.fakes import serve
from tests.fakes.hr_apis import (
    SCIM_ENTERPRISE,
    BambooHrDatasetsApi,
    PersonioApi,
    RipplingApi,
    ScimApi,
    WorkdayApi,
    sample_people,
)

pytestmark = pytest.mark.slow

SOURCES = {
    "personio": """
[source]
url = "{base}/v1/company/employees"
records_path = "data"

[source.oauth2]
token_url = "{base}/v2/auth/token"
client_id_env = "PERSONIO_CLIENT_ID"
client_secret_env = "PERSONIO_CLIENT_SECRET"

[source.fields]
employee_id = "attributes.id.value"
email = "attributes.email.value"
name = "{{attributes.first_name.value}} {{attributes.last_name.value}}"
manager_id = "attributes.supervisor.value.attributes.id.value"
department = "attributes.department.value.attributes.name"
status = "attributes.status.value"

[filter]
active_status = ["active", "leave", "onboarding"]
""",
    "scim": f"""
[source]
url = "{{base}}/scim/v2/Users"
records_path = "Resources"
auth_header_env = "SCIM_AUTH"

[source.fields]
employee_id = "id"
email = "userName"
name = "displayName"
manager_id = "{SCIM_ENTERPRISE}.manager.value"
department = "{SCIM_ENTERPRISE}.department"
status = "active"

[filter]
active_status = ["true"]
""",
    "bamboohr-datasets": """
[source]
url = "{base}/api/v1/datasets/employee"
method = "POST"
body = '{{"fields": ["employeeNumber", "name", "email", "supervisorEId", "department", "status"]}}'
records_path = "data"
username_env = "BAMBOOHR_API_KEY"
password_env = "BAMBOOHR_PASSWORD"

[source.fields]
employee_id = "employeeNumber"
email = "email"
name = "name"
manager_id = "supervisorEId"
department = "department"
status = "status"
""",
    "rippling": """
[source]
url = "{base}/workers?limit=10"
records_path = "results"
auth_header_env = "RIPPLING_AUTH"

[source.fields]
employee_id = "id"
email = "work_email"
name = "user.display_name"
manager_id = "manager_id"
department = "department.name"
status = "status"

[filter]
active_status = ["ACTIVE"]
""",
}

# name: (what the refusal names, the [source.pagination] that reads every page)
PAGING = {
    "personio": (
        "'metadata.total_elements' in the body is 40, more than the 10 records read",
        'style = "offset"\npage_size = 10',
    ),
    "scim": (
        "'totalResults' in the body is 40, more than the 10 records read",
        'style = "scim"',
    ),
    "bamboohr-datasets": (
        "'links.next' in the body points to a next page",
        'style = "next_url"\nnext_url_path = "links.next"',
    ),
    "rippling": (
        "'next_link' in the body points to a next page",
        'style = "next_url"\nnext_url_path = "next_link"',
    ),
}


def api_and_env(name: str) -> tuple[Any, dict[str, str]]:
    if name == "personio":
        personio = PersonioApi(max_limit=10)
        env = {"PERSONIO_CLIENT_ID": personio.oauth.client_id}
        return personio, {**env, "PERSONIO_CLIENT_SECRET": personio.oauth.client_secret}
    if name == "scim":
        scim = ScimApi()
        return scim, {"SCIM_AUTH": f"Bearer {scim.token}"}
    if name == "bamboohr-datasets":
        bamboo = BambooHrDatasetsApi()
        return bamboo, {"BAMBOOHR_API_KEY": bamboo.api_key, "BAMBOOHR_PASSWORD": "x"}
    rippling = RipplingApi()
    return rippling, {"RIPPLING_AUTH": f"Bearer {rippling.token}"}


def write_config(ws: Workspace, name: str, base: str, paging: str) -> None:
    text = SOURCES[name].format(base=base)
    if paging:
        text += f"\n[source.pagination]\n{paging}\n"
    ws.config.write_text(text + REST.format(dx=ws.sim.base_url, db=ws.db), encoding="utf-8")


@pytest.mark.parametrize("name", sorted(SOURCES))
def test_a_first_run_without_paging_is_refused_and_with_it_places_the_whole_org(
    workspace: Workspace, name: str
) -> None:
    seen, paging = PAGING[name]
    api, env = api_and_env(name)
    with serve(api) as server:
        write_config(workspace, name, server.base_url, "")
        refused = workspace.hrsync("sync", env=env)
        assert refused.code == 4, refused.stdout[-2000:] + refused.stderr[-2000:]
        assert refused.finished["outcome"] == "refused"
        reason = refused.finished["reason"]
        assert seen in reason, reason
        assert "[source.pagination] style = " in reason
        assert workspace.process_requests() == []
        assert not [r for r in workspace.sim.dx.requests if r.http_method == "POST"]
        write_config(workspace, name, server.base_url, paging)
        run = workspace.hrsync("sync", env=env)
    assert_applied(run, workspace)
    (fetched,) = run.named("source.fetched")
    assert fetched["records"] == 40


def test_the_documented_paging_is_on_the_http_sources_page() -> None:
    page = (ROOT / "docs" / "reference" / "http-sources.md").read_text(encoding="utf-8")
    for _, paging in PAGING.values():
        assert f"[source.pagination]\n{paging}\n" in page, paging


def test_a_round_page_size_is_a_warning_in_check_plan_and_the_log(workspace: Workspace) -> None:
    # 50 records, a common page size, and nothing else saying there are more: read (the
    # org may really be that size), but never without a word.
    people = sample_people()
    leavers = [
        dataclasses.replace(people[0], id=f"9{i:03}", email=f"left{i}@example.com", active=False)
        for i in range(50 - len(people))
    ]
    api = WorkdayApi(people=people + leavers)
    env = {"WORKDAY_USER": api.user, "WORKDAY_PASSWORD": api.password}
    note = "answered exactly 50 records, a common page size, and no sign of more pages"
    with serve(api) as server:
        recipe_config(workspace, "workday", server.base_url)
        check = workspace.hrsync("check", env=env)
        plan = workspace.hrsync("plan", env=env)
    assert check.code == 0, check.stdout[-2000:]
    assert "[WARN] pages: " in check.stdout and note in check.stdout
    assert plan.code == 0, plan.stdout[-2000:] + plan.stderr[-2000:]
    assert "Export notes:" in plan.stdout and note in plan.stdout
    assert [e for e in plan.named("source.note") if note in e["detail"]]
    assert workspace.process_requests() == []
