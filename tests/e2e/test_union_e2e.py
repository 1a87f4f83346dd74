"""`[[source.union]]` end to end (issue 26): two HR systems after an acquisition, the
parent's Workday-like CSV and the acquired company's BambooHR-like JSON, synced to the
simulator as one org by configuration alone (config/recipes/acquisition.toml, run
verbatim): the acquired CEO under the parent's person, ids that never collide; the
refusals that name the union; and a union read over HTTP with OAuth2 whose secret goes
nowhere."""

from __future__ import annotations

import csv
import json
import shutil
import sqlite3
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from hrsync.simulator.rehearsal import rehearsal
from tests.e2e.conftest import ROOT, TOKEN, Run, Workspace
from tests.e2e.test_plan_output_e2e import document
from tests.fakes import Request, Response, serve
from tests.fakes.hr_apis import OAuth2Server
from tests.simulating import start_simulator

pytestmark = pytest.mark.slow

FIXTURES = ROOT / "tests" / "fixtures" / "acquisition"
RECIPE = ROOT / "config" / "recipes" / "acquisition.toml"
PAGE = ROOT / "docs" / "how-to" / "acquisition.md"
REST = """
[dx]
base_url = "{dx}"

[sync]
verify_timeout_s = 20
notify_email = "people-ops@example.com"

[state]
database_url = "sqlite:///{db}"

[log]
format = "json"
"""
# Each team and its lead, and the team above it.
TEAMS = {
    "Pat Parent's team": ("pat.parent@parent.example", None),
    "Ravi Rao's team": ("ravi.rao@parent.example", "Pat Parent's team"),
    "Ada Acquired's team": ("ada@acquired.example", "Pat Parent's team"),
    "Ben Bright's team": ("ben@acquired.example", "Ada Acquired's team"),
}


def parent_rows() -> list[dict[str, str]]:
    with (FIXTURES / "workday.csv").open(encoding="utf-8", newline="") as fh:
        return list(csv.DictReader(fh))


def acquired_rows() -> list[dict[str, Any]]:
    employees: list[dict[str, Any]] = json.loads(
        (FIXTURES / "acquired.json").read_text(encoding="utf-8")
    )["employees"]
    return employees


@pytest.fixture
def acquisition(tmp_path: Path) -> Iterator[Workspace]:
    """The recipe verbatim beside the two exports, and a DX whose users are both
    companies' people (as a rehearsal makes it), no teams yet."""
    people = [(r["Legal_Name"], r["Work_Email"]) for r in parent_rows()]
    people += [(r["displayName"], r["workEmail"]) for r in acquired_rows()]
    leads = [lead for lead, _ in TEAMS.values()]
    account = rehearsal(people, source="workday.csv", leads=leads, token=TOKEN)
    with start_simulator(account.scenario) as sim:
        for name in ("workday.csv", "acquired.json"):
            shutil.copy(FIXTURES / name, tmp_path / name)
        db = tmp_path / "state.db"
        config = tmp_path / "hrsync.toml"
        recipe = RECIPE.read_text(encoding="utf-8")
        config.write_text(recipe + REST.format(dx=sim.base_url, db=db), encoding="utf-8")
        yield Workspace(tmp_path, sim, config, tmp_path / "workday.csv", db)


def write_acquired(ws: Workspace, employees: list[dict[str, Any]]) -> None:
    body = {"title": "Employee directory", "employees": employees}
    (ws.root / "acquired.json").write_text(json.dumps(body), encoding="utf-8")


def hierarchy(ws: Workspace) -> dict[str, tuple[str, str | None]]:
    emails = {u["id"]: u["email"] for u in ws.sim.dx.users_view()}
    teams = ws.sim.dx.teams_view()
    names = {t["id"]: t["name"] for t in teams}
    return {
        t["name"]: (emails[t["manager_id"]], names.get(t["parent_id"]) if t["parent_id"] else None)
        for t in teams
    }


def assert_refused(run: Run, *phrases: str) -> None:
    assert run.code == 4, run.stdout[-3000:] + run.stderr[-3000:]
    assert run.finished["outcome"] == "refused"
    for phrase in phrases:
        assert phrase in run.finished["reason"], run.finished["reason"]


def test_the_recipe_is_on_its_how_to_page_verbatim() -> None:
    recipe = RECIPE.read_text(encoding="utf-8")
    assert f"```toml\n{recipe}```" in PAGE.read_text(encoding="utf-8")


def test_two_hr_systems_sync_as_one_org_with_the_acquired_ceo_under_the_parent(
    acquisition: Workspace,
) -> None:
    run = acquisition.hrsync("sync")
    assert run.code == 0, run.stdout[-3000:] + run.stderr[-3000:]
    assert run.finished["outcome"] == "applied"
    assert hierarchy(acquisition) == TEAMS
    # The parent's 7 (Sam Seven) and the acquired company's 7 (Ada) are two people.
    members = {t["name"]: t["contributors"] for t in acquisition.dx_teams().values()}
    assert members["Pat Parent's team"] == 3  # Ravi, Sam Seven (7) and Ada (acq:7)
    (read,) = run.named("export.read")
    assert read["people"] == 10 and read["excluded"] == 1  # Omar is terminated
    (union,) = run.named("union.read")
    told = ("union", "source", "rows", "people")
    assert [union[k] for k in told] == ["acq", "acquired.json", 5, 5]
    assert acquisition.hrsync("sync").finished["outcome"] == "in_sync"

    check = acquisition.hrsync("check")
    assert check.code == 0, check.stdout[-2000:]
    assert "[  ok] source: workday.csv: 6 rows read, 5 people kept" in check.stdout
    assert (
        "[  ok] source acq: acquired.json: 5 rows read, 5 people kept; its ids read as acq:ID, "
        "its people without a manager under 1"
    ) in check.stdout
    plan = acquisition.hrsync("plan", "--format", "json")
    sources = document(plan.stdout)["sources"]
    assert [(s["name"], s["export"], s["id_prefix"], s["rows"], s["people"]) for s in sources] == [
        ("source", "workday.csv", "", 6, 5),
        ("acq", "acquired.json", "acq:", 5, 5),
    ]
    ada = acquisition.hrsync("explain", "acq:7")
    assert "  row: acquired.json employees[0]" in ada.stdout, ada.stdout
    assert "  source: source.union[acq] (acquired.json), employee id there '7'" in ada.stdout
    assert "Pat Parent" in ada.stdout  # her manager chain
    sam = acquisition.hrsync("explain", "7")
    assert "  row: workday.csv line 7" in sam.stdout, sam.stdout
    assert "  source: source (workday.csv), employee id there '7'" in sam.stdout


def test_an_empty_acquired_export_refuses_naming_the_union(acquisition: Workspace) -> None:
    write_acquired(acquisition, [])
    run = acquisition.hrsync("sync")
    # The JSON reader's own refusal, named by the union.
    assert_refused(run, "source.union[acq]: acquired.json has no people")
    # A CSV export with its header alone: no rows.
    text = acquisition.config.read_text(encoding="utf-8")
    json_path = 'path = "acquired.json"\nrecords_path = "employees"'
    csv_union = text.replace(json_path, 'path = "acq.csv"')
    acquisition.config.write_text(csv_union, encoding="utf-8")
    (acquisition.root / "acq.csv").write_text("id,displayName,workEmail,supervisorEId,status\n")
    header_only = acquisition.hrsync("sync")
    assert_refused(header_only, "source.union[acq]: acq.csv has no rows", "nothing was sent")
    assert acquisition.process_requests() == [] and not acquisition.dx_teams()


def test_an_unreadable_acquired_export_refuses_naming_the_union(acquisition: Workspace) -> None:
    (acquisition.root / "acquired.json").unlink()
    gone = acquisition.hrsync("sync")
    assert_refused(
        gone,
        "source unreadable: source.union[acq]: source file",
        "does not exist (source.union[acq].path)",
    )
    (acquisition.root / "acquired.json").write_text('{"employees": [', encoding="utf-8")
    cut = acquisition.hrsync("sync")
    assert_refused(cut, "source.union[acq]: ", "acquired.json")
    assert acquisition.process_requests() == []


def test_attach_root_to_naming_nobody_in_the_parent_refuses(acquisition: Workspace) -> None:
    text = acquisition.config.read_text(encoding="utf-8")
    acquisition.config.write_text(text.replace('attach_root_to = "1"', 'attach_root_to = "5"'))
    run = acquisition.hrsync("sync")  # 5 is Omar, terminated: filtered out
    assert_refused(
        run,
        "source.union[acq].attach_root_to '5' names nobody kept in the primary export "
        "(workday.csv)",
    )
    acquisition.config.write_text(text.replace('attach_root_to = "1"', 'attach_root_to = "E9"'))
    assert_refused(acquisition.hrsync("sync"), "attach_root_to 'E9' names nobody kept")
    assert acquisition.process_requests() == []


def test_a_shrunken_acquired_export_is_refused_until_a_person_says(
    acquisition: Workspace,
) -> None:
    assert acquisition.hrsync("sync").finished["outcome"] == "applied"
    # Two of five left: 60% of the last accepted, under sync.min_people_fraction (80%),
    # though the whole org (8 of 10) is not.
    write_acquired(acquisition, acquired_rows()[:3])
    sent = len(acquisition.process_requests())
    refused = acquisition.hrsync("sync")
    assert_refused(
        refused,
        "source.union[acq] has 3 people, 60% of the last accepted 5, minimum 80% = 4 people "
        "(sync.min_people_fraction)",
    )
    (event,) = refused.named("sync.refused")
    assert event["guards"] == ["min_people_fraction"] and "--allow-shrink" in event["override"]
    assert len(acquisition.process_requests()) == sent
    allowed = acquisition.hrsync("sync", "--allow-shrink")
    assert allowed.finished["outcome"] == "applied", allowed.stdout[-3000:]
    assert "Ben Bright's team" not in acquisition.dx_teams()
    # The smaller source is the baseline now.
    assert acquisition.hrsync("sync").finished["outcome"] == "in_sync"


def test_an_acquired_export_over_http_with_oauth2_keeps_its_secret_out(
    acquisition: Workspace,
) -> None:
    oauth = OAuth2Server()
    body = (FIXTURES / "acquired.json").read_bytes()

    def api(request: Request, base: str) -> Response:
        if request.path == "/oauth2/token":
            return oauth.token(request)
        if not oauth.allows(request):
            return Response.of_json({"error": "unauthorized"}, 401)
        return Response(200, body, {"Content-Type": "application/json"})

    with serve(api) as server:
        text = (
            acquisition.config.read_text(encoding="utf-8")
            .replace('path = "acquired.json"', f'url = "{server.base_url}/v1/employees"')
            .replace(
                "[source.union.fields]",
                "[source.union.oauth2]\n"
                f'token_url = "{server.base_url}/oauth2/token"\n'
                'client_id_env = "ACQ_CLIENT_ID"\n'
                'client_secret_env = "ACQ_CLIENT_SECRET"\n\n'
                "[source.union.fields]",
            )
        )
        acquisition.config.write_text(text, encoding="utf-8")
        good = {"ACQ_CLIENT_ID": oauth.client_id, "ACQ_CLIENT_SECRET": oauth.client_secret}
        wrong = {**good, "ACQ_CLIENT_SECRET": "cs-wrong-0a9b8c7d6e5f"}
        refused = acquisition.hrsync("sync", env=wrong)
        run = acquisition.hrsync("sync", env=good)
        check = acquisition.hrsync("check", env=good)
    assert_refused(refused, "source.union[acq]: ")
    assert run.finished["outcome"] == "applied", run.stdout[-3000:]
    assert hierarchy(acquisition) == TEAMS
    assert "[  ok] source acq: " in check.stdout
    secrets = (oauth.client_secret, "cs-wrong-0a9b8c7d6e5f", *oauth.issued)
    for output in (refused, run, check):
        for secret in secrets:
            assert secret not in output.stdout + output.stderr
    for path in acquisition.root.glob("state.db*"):
        for secret in secrets:
            assert secret.encode() not in path.read_bytes()
    with sqlite3.connect(acquisition.db) as db:
        for (table,) in db.execute("SELECT name FROM sqlite_master WHERE type = 'table'"):
            for row in db.execute(f'SELECT * FROM "{table}"'):
                text_of_row = " ".join(str(v) for v in row)
                assert not any(secret in text_of_row for secret in secrets), table


def test_attach_root_to_a_held_person_attaches_and_syncs_everyone_else(
    acquisition: Workspace,
) -> None:
    """The parent's CEO held for their own row (an e-mail typo) is still in the org: the
    acquired company stays attached under them, and nothing else stops."""
    assert acquisition.hrsync("sync").finished["outcome"] == "applied"
    rows = parent_rows()
    rows[0]["Work_Email"] = "pat.parent-at-parent.example"
    acquisition.write_export(rows)
    run = acquisition.hrsync("sync")
    assert run.code == 0, run.stdout[-3000:] + run.stderr[-3000:]
    (held,) = run.finished["held"]
    assert held["person"] == "1", held
    assert hierarchy(acquisition)["Ada Acquired's team"] == TEAMS["Ada Acquired's team"]


def test_a_json_union_with_records_of_other_shapes_is_explained(acquisition: Workspace) -> None:
    """BambooHR leaves out a field a record has no value for: the CEO without
    `supervisorEId` (this crashed `sync` for an unplaced person, and `explain`)."""
    employees = acquired_rows()
    del employees[0]["supervisorEId"]
    employees.append({"id": "99", "displayName": "Lone Wolf", "workEmail": "lone@acquired.example",
                      "status": "Active"})  # fmt: skip
    write_acquired(acquisition, employees)
    run = acquisition.hrsync("sync")
    assert run.code == 0, run.stdout[-3000:] + run.stderr[-3000:]
    assert "Traceback" not in run.stderr
    ada = acquisition.hrsync("explain", "acq:7")
    assert ada.code == 0, ada.stdout[-2000:] + ada.stderr[-2000:]
    assert "  row: acquired.json employees[0]" in ada.stdout, ada.stdout


def test_a_unions_own_lists_are_reported_and_explained(acquisition: Workspace) -> None:
    text = acquisition.config.read_text(encoding="utf-8")
    acquisition.config.write_text(
        text.replace('email = "workEmail"', 'email = ["acq.homeEmail", "workEmail"]')
    )
    employees = acquired_rows()
    employees[1]["homeEmail"] = "ben.home@acquired.example"
    write_acquired(acquisition, employees)
    check = acquisition.hrsync("check")
    assert "source.union[acq].fields.email: acq.homeEmail 1, workEmail 4, none 0" in (
        check.stdout
    ), check.stdout[-3000:]
    ada = acquisition.hrsync("explain", "acq:7")
    assert "  email: 'ada@acquired.example' from workEmail (acq.homeEmail empty)" in ada.stdout
    plan = document(acquisition.hrsync("plan", "--format", "json").stdout)
    [listed] = plan["fields"]
    assert (listed["table"], listed["field"]) == ("source.union[acq].fields", "email")


def test_explain_finds_a_union_person_the_filters_leave_out(acquisition: Workspace) -> None:
    employees = acquired_rows()
    employees[4]["status"] = "Terminated"
    write_acquired(acquisition, employees)
    gone = f"acq:{employees[4]['id']}"
    run = acquisition.hrsync("explain", gone)
    assert run.code == 0, run.stdout[-2000:] + run.stderr[-2000:]
    assert f"{gone} is at acquired.json employees[4], but left out by filter.active_status" in (
        run.stdout
    ), run.stdout
