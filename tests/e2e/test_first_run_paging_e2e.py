"""A first run against an API that pages, where nobody has a baseline yet (issue 22).

Every recipe of docs/how-to/, run verbatim (only the hosts swapped for a local fake of the
vendor paging at 10 records), places the whole org; the same recipe with its
[source.pagination] removed is refused at the source stage and nothing reaches DX. Three
vendors publish no paging for the call their recipe makes (Workday RaaS, BambooHR's
custom report, HiBob's people search): their fakes answer in one page, as they do, and
their recipes have no [source.pagination] to remove.

Then the paging docs/reference/http-sources.md gives by shape; paged answers of APIs
without a recipe (Salesforce's done and nextRecordsUrl, Atlassian's isLast, a nested
continuation.href), refused; and an answer of exactly a common page size: refused on a
first run unless source.single_page, a warning after."""

from __future__ import annotations

import dataclasses
import tomllib
from typing import Any

import pytest

from tests.e2e.conftest import ROOT, Workspace
from tests.e2e.test_http_sources_e2e import (
    HOSTS,
    RECIPES,
    REST,
    api_and_env,
    assert_applied,
    assert_no_secret,
    google_key_env,
    recipe_config,
)
from tests.fakes import Response, serve
from tests.fakes.google_workspace import DirectoryApi
from tests.fakes.hr_apis import WorkdayApi, sample_people

pytestmark = pytest.mark.slow

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


# The recipes whose vendor does not page the call they make.
UNPAGED = {"workday", "bamboohr", "hibob"}
# What the refusal of each paged recipe without its paging names, and the setting it gives.
SEEN = {
    "microsoft-graph": ("@odata.nextLink in the body points", 'style = "odata"'),
    "microsoft-graph-delta": ("@odata.nextLink in the body points", 'style = "odata"'),
    "okta": ('a Link header with rel="next" points', 'style = "link_header"'),
    "google-workspace": ("'nextPageToken' in the body points", 'cursor_param = "pageToken"'),
    "personio": ("'metadata.total_elements' in the body is 40, more than the 10", "offset"),
    "scim": ("'totalResults' in the body is 40, more than the 10", 'style = "scim"'),
    "bamboohr-datasets": ("'links.next' in the body points", 'next_url_path = "links.next"'),
    "rippling": ("'next_link' in the body points", 'next_url_path = "next_link"'),
    "successfactors": ("'d.__next' in the body points", 'style = "odata"'),
}


def without_paging(text: str) -> str:
    """The recipe with its [source.pagination] table taken out, the rest as it is."""
    lines = text.splitlines(keepends=True)
    start = lines.index("[source.pagination]\n")
    end = next(i for i in range(start + 1, len(lines)) if lines[i].startswith("["))
    return "".join(lines[:start] + lines[end:])


def run_recipe(ws: Workspace, name: str, edit: Any = None) -> tuple[Any, Any, dict[str, str]]:
    api, env = api_and_env(name)
    with serve(api) as server:
        recipe_config(ws, name, server.base_url)
        if edit is not None:
            ws.config.write_text(edit(ws.config.read_text(encoding="utf-8")), encoding="utf-8")
        if isinstance(api, DirectoryApi):
            env = google_key_env(ws, api, server.base_url)
        return ws.hrsync("sync", env=env), api, env


def test_the_paged_and_unpaged_recipes_are_every_recipe() -> None:
    assert sorted(HOSTS) == sorted(UNPAGED | set(SEEN))
    for name in HOSTS:
        source = tomllib.loads((RECIPES / f"{name}.toml").read_text(encoding="utf-8"))["source"]
        assert ("pagination" not in source) == (name in UNPAGED), name


@pytest.mark.parametrize("name", sorted(HOSTS))
def test_each_recipe_verbatim_places_the_whole_org_across_its_pages(
    workspace: Workspace, name: str
) -> None:
    run, _, env = run_recipe(workspace, name)
    assert_applied(run, workspace)
    (fetched,) = run.named("source.fetched")
    if name in UNPAGED:
        assert fetched["pages"] == 1
    else:
        assert fetched["pages"] >= 4, fetched  # 40 records, 10 a page
        assert fetched["records"] == 40
    hidden = [v for k, v in env.items() if k.endswith(("SECRET", "PASSWORD", "AUTH", "KEY"))]
    assert_no_secret(workspace, run, [v for v in hidden if v != "x"], [])


@pytest.mark.parametrize("name", sorted(SEEN))
def test_each_recipe_without_its_paging_is_refused_on_a_first_run_and_sends_nothing(
    workspace: Workspace, name: str
) -> None:
    seen, setting = SEEN[name]
    run, _, _ = run_recipe(workspace, name, without_paging)
    assert "[source.pagination]" not in workspace.config.read_text(encoding="utf-8")
    assert run.code == 4, run.stdout[-2000:] + run.stderr[-2000:]
    assert run.finished["outcome"] == "refused"
    reason = run.finished["reason"]
    assert seen in reason and "[source.pagination] " in reason and setting in reason, reason
    assert workspace.process_requests() == []
    assert not [r for r in workspace.sim.dx.requests if r.http_method == "POST"]
    assert not workspace.dx_teams()


def test_the_documented_paging_is_on_the_http_sources_page() -> None:
    page = (ROOT / "docs" / "reference" / "http-sources.md").read_text(encoding="utf-8")
    for _, paging in PAGING.values():
        assert f"[source.pagination]\n{paging}\n" in page, paging


def workday_of(size: int) -> WorkdayApi:
    """Workday's one answer, the sample org and leavers up to `size` records."""
    people = sample_people()
    leavers = [
        dataclasses.replace(people[0], id=f"9{i:03}", email=f"left{i}@example.com", active=False)
        for i in range(size - len(people))
    ]
    return WorkdayApi(people=people + leavers)


def test_a_page_size_is_refused_on_a_first_run_unless_single_page_then_a_warning(
    workspace: Workspace,
) -> None:
    # 50 records, a common page size, and nothing else saying there are more: with no
    # accepted run to compare with, a capped answer cannot be told from the org.
    api = workday_of(50)
    env = {"WORKDAY_USER": api.user, "WORKDAY_PASSWORD": api.password}
    refusal = "answered exactly 50 records, a common page size, and this is the first run"
    note = "answered exactly 50 records, a common page size, and no sign of more pages"
    with serve(api) as server:
        recipe_config(workspace, "workday", server.base_url)
        first = workspace.hrsync("sync", env=env)
        assert first.code == 4, first.stdout[-2000:] + first.stderr[-2000:]
        reason = first.finished["reason"]
        assert refusal in reason and "source.single_page = true" in reason, reason
        assert workspace.process_requests() == []
        # The operator says the API answers everyone at once: applied.
        single = workspace.hrsync("sync", env={**env, "HRSYNC_SOURCE__SINGLE_PAGE": "true"})
        assert single.code == 0, single.stdout[-2000:] + single.stderr[-2000:]
        assert single.finished["outcome"] == "applied"
        # Later runs keep the shrink guard, and the answer's size is a warning.
        check = workspace.hrsync("check", env=env)
        plan = workspace.hrsync("plan", env=env)
    assert check.code == 0, check.stdout[-2000:]
    assert "[WARN] pages: " in check.stdout and note in check.stdout
    assert plan.code == 0, plan.stdout[-2000:] + plan.stderr[-2000:]
    assert "Export notes:" in plan.stdout and note in plan.stdout
    assert [e for e in plan.named("source.note") if note in e["detail"]]
    assert len(workspace.process_requests()) == 1


def test_a_one_answer_api_of_45_people_is_applied_on_a_first_run(workspace: Workspace) -> None:
    api = workday_of(45)
    env = {"WORKDAY_USER": api.user, "WORKDAY_PASSWORD": api.password}
    with serve(api) as server:
        recipe_config(workspace, "workday", server.base_url)
        run = workspace.hrsync("sync", env=env)
    assert_applied(run, workspace)
    assert not run.named("source.note")


# Paged answers of APIs without a recipe, each first page as its vendor shapes it: the
# records' path, the page (the first 10 people, everyone counted 40), what the refusal
# names.
SHAPES: dict[str, tuple[str, Any, str]] = {
    "salesforce": (
        "records",
        lambda base, people: {
            "totalSize": 40,
            "done": False,
            "nextRecordsUrl": "/services/data/v58.0/query/01gD0000002HU6KIAW-10",
            "records": people,
        },
        "'nextRecordsUrl' in the body points to a next page",
    ),
    "atlassian": (
        "values",
        lambda base, people: {"startAt": 0, "maxResults": 10, "isLast": False, "values": people},
        "'isLast' in the body is false",
    ),
    "continuation": (
        "people",
        lambda base, people: {"people": people, "continuation": {"href": f"{base}/p?c=10"}},
        "'continuation.href' in the body points to a next page",
    ),
}


def test_paged_shapes_without_a_recipe_are_refused_on_a_first_run(workspace: Workspace) -> None:
    people = [
        {
            "id": p.id,
            "name": p.name,
            "email": p.email,
            "manager": p.manager_id,
            "department": p.department,
        }
        for p in sample_people()[:10]
    ]
    for shape, (records_path, page, seen) in SHAPES.items():

        def api(request: Any, base: str, page: Any = page) -> Response:
            return Response.of_json(page(base, people))

        with serve(api) as server:
            workspace.config.write_text(
                f'[source]\nurl = "{server.base_url}/p"\nrecords_path = "{records_path}"\n'
                '[source.fields]\nemployee_id = "id"\nemail = "email"\nname = "name"\n'
                'manager_id = "manager"\ndepartment = "department"\n'
                + REST.format(dx=workspace.sim.base_url, db=workspace.db),
                encoding="utf-8",
            )
            run = workspace.hrsync("sync")
        assert run.code == 4, (shape, run.stdout[-2000:] + run.stderr[-2000:])
        assert seen in run.finished["reason"], (shape, run.finished["reason"])
    assert workspace.process_requests() == []
    assert not [r for r in workspace.sim.dx.requests if r.http_method == "POST"]
