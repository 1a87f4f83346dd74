"""The Workday + Entra ID recipe (issue 26), config/recipes/workday-entra.toml run as it
is, only its hosts pointed at local fakes: the reporting line from a Workday report whose
e-mails are HR's own addresses, each worker's e-mail from Microsoft Graph's users by
employeeId (OAuth2, @odata.nextLink paging) where Entra has one, else Workday's, synced
to the DX simulator; a worker with an e-mail in neither held; a Graph answer missing a
page refused, naming the join."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, replace

import pytest

from tests.e2e.conftest import ROOT, Run, Workspace
from tests.e2e.test_http_sources_e2e import REST, assert_applied, assert_no_secret
from tests.fakes import FakeServer, Request, Response, serve
from tests.fakes.hr_apis import GraphApi, Person, WorkdayApi, sample_people

pytestmark = pytest.mark.slow

RECIPE = ROOT / "config" / "recipes" / "workday-entra.toml"
PAGE = ROOT / "docs" / "how-to" / "workday-entra.md"
HOSTS = (
    "https://wd5-services1.myworkday.com",
    "https://graph.microsoft.com",
    "https://login.microsoftonline.com",
)


@dataclass
class Apis:
    """Workday's report and Graph behind one local server, told apart by path."""

    workday: WorkdayApi
    graph: GraphApi

    def __call__(self, request: Request, base: str) -> Response:
        if request.path.startswith("/ccx/"):
            return self.workday(request, base)
        return self.graph(request, base)

    def env(self) -> dict[str, str]:
        return {
            "WORKDAY_USER": self.workday.user,
            "WORKDAY_PASSWORD": self.workday.password,
            "GRAPH_CLIENT_ID": self.graph.oauth.client_id,
            "GRAPH_CLIENT_SECRET": self.graph.oauth.client_secret,
        }


def hr_address(person: Person) -> Person:
    """The worker as Workday holds them: HR's own address, not the one DX knows."""
    return replace(person, email=person.email.replace("@", "@hr."))


@pytest.fixture
def apis(workspace: Workspace) -> Iterator[tuple[Apis, FakeServer]]:
    # Workday's e-mails are HR's; Graph pages at 10 users (the sample's 37 enabled: 4 pages).
    workday = WorkdayApi(people=[hr_address(p) for p in sample_people()])
    fakes = Apis(workday, GraphApi(query_options=True))
    with serve(fakes) as server:
        text = RECIPE.read_text(encoding="utf-8")
        for host in HOSTS:
            assert host in text
            text = text.replace(host, server.base_url)
        rest = REST.format(dx=workspace.sim.base_url, db=workspace.db)
        workspace.config.write_text(text + rest, encoding="utf-8")
        yield fakes, server


def sync(ws: Workspace, fakes: Apis, *args: str) -> Run:
    return ws.hrsync("sync", *args, env=fakes.env())


def sent_emails(ws: Workspace) -> set[str]:
    """Every lead and contributor e-mail of the last hierarchy DX received."""
    teams = ws.process_requests()[-1].body["teams"]
    leads = {t["team_lead_email"] for t in teams if t["team_lead_email"]}
    return leads | {e for t in teams for e in t["contributors"]}


def test_the_recipe_is_on_its_how_to_page_verbatim() -> None:
    recipe = RECIPE.read_text(encoding="utf-8")
    assert f"```toml\n{recipe}```" in PAGE.read_text(encoding="utf-8")


def test_workday_and_entra_sync_the_reporting_line_with_entras_e_mails(
    workspace: Workspace, apis: tuple[Apis, FakeServer]
) -> None:
    fakes, server = apis
    run = sync(workspace, fakes)
    assert_applied(run, workspace)
    (read,) = run.named("join.read")
    assert (read["join"], read["rows"], read["matched"], read["of"]) == ("entra", 37, 37, 40)
    assert fakes.graph.pages_served == 4
    # Graph was asked for the recipe's fields only, and paged by its own next links.
    graph_asks = [r for r in server.requests if r.path == "/v1.0/users"]
    assert {r.query["$select"] for r in graph_asks} == {
        "employeeId,mail,userPrincipalName,displayName"
    }
    assert {r.query["$filter"] for r in graph_asks} == {"accountEnabled eq true"}
    active = [p for p in sample_people() if p.active]
    assert sent_emails(workspace) == {p.email for p in active}
    # The hierarchy is Workday's: each team led by the manager the report names.
    by_id = {p.id: p for p in active}
    teams = workspace.dx_teams()
    emails = {u["id"]: u["email"] for u in workspace.sim.dx.users_view()}
    for person in active:
        manager = by_id.get(person.manager_id)
        if manager is None:
            continue
        team = next(t for t in teams.values() if person.email in t["member_emails"])
        assert emails[team["manager_id"]] in {manager.email, person.email}
    person = active[3]
    explained = workspace.hrsync("explain", person.id, env=fakes.env())
    assert explained.code == 0, explained.stdout[-2000:] + explained.stderr[-2000:]
    assert (
        f"&$top=999 page 1 value[3] (employee_id '{person.id}' = employeeId): "
        f"entra.mail = '{person.email}', entra.employeeId = '{person.id}'"
    ) in explained.stdout, explained.stdout
    assert_no_secret(
        workspace,
        run,
        [fakes.graph.oauth.client_secret, fakes.workday.password],
        fakes.graph.oauth.issued,
    )


def test_a_worker_entra_does_not_know_keeps_workdays_e_mail(
    workspace: Workspace, apis: tuple[Apis, FakeServer]
) -> None:
    fakes, _ = apis
    managers = {p.manager_id for p in sample_people()}
    gone = next(p for p in sample_people() if p.active and p.id not in managers)
    fakes.graph.people = [p for p in sample_people() if p.id != gone.id]
    run = sync(workspace, fakes)
    assert run.code == 0, run.stdout[-3000:] + run.stderr[-3000:]
    assert run.finished.get("held", []) == []
    assert hr_address(gone).email in sent_emails(workspace)
    assert gone.email not in sent_emails(workspace)
    explained = workspace.hrsync("explain", gone.id, env=fakes.env())
    assert f"email: '{hr_address(gone).email}' from Email_-_Work (entra.mail empty)" in (
        explained.stdout
    ), explained.stdout


def test_a_worker_with_an_e_mail_in_neither_is_held(
    workspace: Workspace, apis: tuple[Apis, FakeServer]
) -> None:
    fakes, _ = apis
    managers = {p.manager_id for p in sample_people()}
    gone = next(p for p in sample_people() if p.active and p.id not in managers)
    fakes.graph.people = [p for p in sample_people() if p.id != gone.id]
    fakes.workday.people = [
        replace(p, email="") if p.id == gone.id else hr_address(p) for p in sample_people()
    ]
    run = sync(workspace, fakes)
    assert run.code == 0, run.stdout[-3000:] + run.stderr[-3000:]
    (held,) = run.finished["held"]
    assert held["person"] == gone.id and "must not be empty" in held["detail"], held
    assert "first of entra.mail, Email_-_Work" in held["detail"], held


def test_a_graph_answer_missing_a_page_refuses_the_run_naming_the_join(
    workspace: Workspace, apis: tuple[Apis, FakeServer]
) -> None:
    fakes, _ = apis
    # Its second page gone when followed (an expired $skiptoken):
    fakes.graph.faults.fail_page = 2
    failed = sync(workspace, fakes)
    assert failed.code == 1, failed.stdout[-3000:] + failed.stderr[-3000:]
    assert failed.finished["outcome"] == "failed"  # tried again on the next schedule
    reason = failed.finished["reason"]
    assert reason.startswith("join 'entra': page 2 of ") and "503" in reason, reason
    assert workspace.process_requests() == []
    # The first page answered as if it were the whole directory, after a run that read
    # every page: most workers would take Workday's e-mail in place of Entra's. The join
    # guard refuses, naming the join.
    fakes.graph.faults.fail_page = None
    assert sync(workspace, fakes).finished["outcome"] == "applied"
    fakes.graph.last_page = 1
    refused = sync(workspace, fakes)
    assert refused.code == 4, refused.stdout[-3000:] + refused.stderr[-3000:]
    assert refused.finished["outcome"] == "refused"
    reason = refused.finished["reason"]
    assert "join 'entra' matched 10 of 40 rows" in reason, reason
    assert "sync.min_people_fraction" in reason, reason
    # Trusting Entra alone, the same answer leaves 27 workers without an e-mail: the held
    # guard refuses, naming the join, and offers no --allow-held.
    text = workspace.config.read_text(encoding="utf-8")
    workspace.config.write_text(
        text.replace('email = ["entra.mail", "Email_-_Work"]', 'email = "entra.mail"'),
        encoding="utf-8",
    )
    refused = sync(workspace, fakes)
    assert refused.code == 4, refused.stdout[-3000:] + refused.stderr[-3000:]
    reason = refused.finished["reason"]
    assert reason.startswith(
        "export invalid: 27 people would be held, more than sync.max_held (25): 27 of them "
        "matched no row of join 'entra' (10 of the 40 rows of the export matched on "
        "employee_id = employeeId; 10 rows read from "
    ), reason
    assert "--allow-held" not in reason  # holding them is no fix for a missing page
    assert len(workspace.process_requests()) == 1
