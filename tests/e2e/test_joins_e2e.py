"""`[[source.join]]` end to end (issue 26): Oracle's sample HR schema, EMPLOYEES and
DEPARTMENTS as exported, synced to the simulator by configuration alone (the recipe of
config/recipes/oracle-hr.toml, run verbatim); the refusals that name the join; people
held for their join; and a joined table read over HTTP whose credentials go nowhere."""

from __future__ import annotations

import csv
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

from hrsync.simulator.rehearsal import rehearsal
from tests.e2e.conftest import ROOT, TOKEN, Run, Workspace
from tests.e2e.test_plan_output_e2e import document
from tests.fakes import Request, Response, serve
from tests.simulating import start_simulator

pytestmark = pytest.mark.slow

FIXTURES = ROOT / "tests" / "fixtures" / "oracle-hr"
RECIPE = ROOT / "config" / "recipes" / "oracle-hr.toml"
PAGE = ROOT / "docs" / "how-to" / "oracle-hr.md"
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
# Each department with employees, and its manager (DEPARTMENTS.MANAGER_ID) as lead.
LEADS = {
    "Administration": "jwhalen@example.com",
    "Marketing": "mmartine@example.com",
    "Purchasing": "dli@example.com",
    "Human Resources": "sjacobs@example.com",
    "Shipping": "afripp@example.com",
    "IT": "ajames@example.com",
    "Public Relations": "hbrown@example.com",
    "Sales": "jsingh@example.com",
    "Executive": "sking@example.com",
    "Finance": "ngruenbe@example.com",
    "Accounting": "shiggins@example.com",
}
SIZES = {
    "Administration": 1,
    "Marketing": 2,
    "Purchasing": 6,
    "Human Resources": 1,
    "Shipping": 45,
    "IT": 5,
    "Public Relations": 1,
    "Sales": 34,
    "Executive": 3,
    "Finance": 6,
    "Accounting": 2,
}


def employees() -> list[dict[str, str]]:
    with (FIXTURES / "EMPLOYEES.csv").open(encoding="utf-8", newline="") as fh:
        return list(csv.DictReader(fh))


def departments() -> list[dict[str, str]]:
    with (FIXTURES / "DEPARTMENTS.csv").open(encoding="utf-8", newline="") as fh:
        return list(csv.DictReader(fh))


@pytest.fixture
def oracle(tmp_path: Path) -> Iterator[Workspace]:
    """The recipe verbatim beside the two exported tables, and a DX whose users are the
    sample's 107 employees (as a rehearsal makes it), no teams yet."""
    people = [(f"{e['FIRST_NAME']} {e['LAST_NAME']}", f"{e['EMAIL'].lower()}@example.com")
              for e in employees()]  # fmt: skip
    account = rehearsal(people, source="EMPLOYEES.csv", leads=LEADS.values(), token=TOKEN)
    with start_simulator(account.scenario) as sim:
        for table in ("EMPLOYEES.csv", "DEPARTMENTS.csv"):
            shutil.copy(FIXTURES / table, tmp_path / table)
        db = tmp_path / "state.db"
        config = tmp_path / "hrsync.toml"
        recipe = RECIPE.read_text(encoding="utf-8")
        config.write_text(recipe + REST.format(dx=sim.base_url, db=db), encoding="utf-8")
        yield Workspace(tmp_path, sim, config, tmp_path / "EMPLOYEES.csv", db)


def write_departments(
    ws: Workspace, rows: list[dict[str, str]], header: list[str] | None = None
) -> None:
    with (ws.root / "DEPARTMENTS.csv").open("w", encoding="utf-8", newline="") as fh:
        writer = csv.DictWriter(fh, fieldnames=header or list(departments()[0]))
        writer.writeheader()
        writer.writerows(rows)


def leads(ws: Workspace) -> dict[str, str]:
    emails = {u["id"]: u["email"] for u in ws.sim.dx.users_view()}
    return {name: emails[team["manager_id"]] for name, team in ws.dx_teams().items()}


def assert_refused(run: Run, ws: Workspace, *phrases: str) -> None:
    assert run.code == 4, run.stdout[-3000:] + run.stderr[-3000:]
    assert run.finished["outcome"] == "refused"
    for phrase in phrases:
        assert phrase in run.finished["reason"], run.finished["reason"]


def test_the_fixture_is_the_whole_sample_schema() -> None:
    people, units = employees(), departments()
    assert len(people) == 107 and len(units) == 27
    assert list(people[0]) == [
        "EMPLOYEE_ID", "FIRST_NAME", "LAST_NAME", "EMAIL", "PHONE_NUMBER", "HIRE_DATE",
        "JOB_ID", "SALARY", "COMMISSION_PCT", "MANAGER_ID", "DEPARTMENT_ID",
    ]  # fmt: skip
    assert list(units[0]) == ["DEPARTMENT_ID", "DEPARTMENT_NAME", "MANAGER_ID", "LOCATION_ID"]
    assert people[0]["EMAIL"] == "SKING"  # a user name, not an address
    assert [p["EMPLOYEE_ID"] for p in people if not p["DEPARTMENT_ID"]] == ["178"]
    assert sum(1 for u in units if u["MANAGER_ID"]) == 11


def test_the_recipe_is_on_its_how_to_page_verbatim() -> None:
    recipe = RECIPE.read_text(encoding="utf-8")
    assert f"```toml\n{recipe}```" in PAGE.read_text(encoding="utf-8")


def test_oracle_hr_syncs_teams_named_after_departments_led_by_their_managers(
    oracle: Workspace,
) -> None:
    run = oracle.hrsync("sync")
    assert run.code == 0, run.stdout[-3000:] + run.stderr[-3000:]
    assert run.finished["outcome"] == "applied"
    assert run.finished["counts"]["create"] == 11
    (read,) = run.named("join.read")
    told = ("join", "source", "rows", "matched", "of", "unmatched", "several")
    assert [read[k] for k in told] == ["departments", "DEPARTMENTS.csv", 27, 106, 107, 1, 0]
    assert leads(oracle) == LEADS
    assert {name: t["contributors"] for name, t in oracle.dx_teams().items()} == SIZES
    # Kimberely Grant has no department in the sample: in no team, and said so.
    (unplaced,) = run.named("mapping.person_in_no_team")
    assert unplaced["person"] == "178"
    again = oracle.hrsync("sync")
    assert again.finished["outcome"] == "in_sync", again.stdout[-2000:]

    check = oracle.hrsync("check")
    assert check.code == 0, check.stdout[-2000:]
    assert (
        "[WARN] join departments: DEPARTMENTS.csv: 27 rows read; 106 of 107 rows of the export "
        "matched on DEPARTMENT_ID = DEPARTMENT_ID; 1 matched no row: EMPLOYEES.csv line 80 ('')"
    ) in check.stdout
    plan = oracle.hrsync("plan", "--format", "json")
    (joined,) = document(plan.stdout)["joins"]
    assert (joined["matched"], joined["unmatched"], joined["table_rows"]) == (106, 1, 27)
    shipping = next(r for r in joined["rows_used"] if r["key"] == "50")
    assert shipping == {"key": "50", "location": "DEPARTMENTS.csv line 6", "people": 45}
    explained = oracle.hrsync("explain", "122")
    assert (
        "  join departments: DEPARTMENTS.csv line 6 (DEPARTMENT_ID '50' = DEPARTMENT_ID): "
        "departments.DEPARTMENT_NAME = 'Shipping', departments.MANAGER_ID = '121'"
    ) in explained.stdout


def test_an_empty_or_keyless_join_table_refuses_naming_the_join(oracle: Workspace) -> None:
    write_departments(oracle, [])
    empty = oracle.hrsync("sync")
    assert_refused(empty, oracle, "join 'departments': DEPARTMENTS.csv has no rows")
    renamed = ["DEPT_ID", "DEPARTMENT_NAME", "MANAGER_ID", "LOCATION_ID"]
    write_departments(
        oracle, [{"DEPT_ID": d.pop("DEPARTMENT_ID"), **d} for d in departments()], renamed
    )
    keyless = oracle.hrsync("sync")
    assert_refused(keyless, oracle, "join 'departments': DEPARTMENTS.csv lacks 'DEPARTMENT_ID'")
    (oracle.root / "DEPARTMENTS.csv").unlink()
    gone = oracle.hrsync("sync")
    assert_refused(
        gone,
        oracle,
        "source unreadable: join 'departments': source file",
        "does not exist (source.join[departments].path)",
    )
    assert oracle.process_requests() == [] and not oracle.dx_teams()


def test_a_join_matching_far_less_than_last_time_is_refused_until_a_person_says(
    oracle: Workspace,
) -> None:
    assert oracle.hrsync("sync").finished["outcome"] == "applied"
    # A new export of DEPARTMENTS writes two keys another way: 79 people match nothing.
    changed = [
        {**d, "DEPARTMENT_ID": f"D{d['DEPARTMENT_ID']}"}
        if d["DEPARTMENT_ID"] in ("50", "80")
        else d
        for d in departments()
    ]
    write_departments(oracle, changed)
    sent = len(oracle.process_requests())
    refused = oracle.hrsync("sync")
    assert_refused(
        refused,
        oracle,
        "join 'departments' matched 27 of 107 rows (25.2%); the last accepted run matched 106 "
        "of 107 (99.1%), minimum 80% of that = 85 rows (sync.min_people_fraction)",
    )
    (event,) = refused.named("sync.refused")
    assert event["guards"] == ["min_join_fraction"] and "--allow-shrink" in event["override"]
    assert len(oracle.process_requests()) == sent
    # A person who means it lets it through once; it is then the baseline.
    allowed = oracle.hrsync("sync", "--allow-shrink")
    assert allowed.finished["outcome"] == "applied", allowed.stdout[-3000:]
    assert set(oracle.dx_teams()) == set(LEADS) - {"Shipping", "Sales"}
    assert oracle.hrsync("sync").finished["outcome"] == "in_sync"


def test_a_second_match_holds_the_people_of_that_key(oracle: Workspace) -> None:
    assert oracle.hrsync("sync").finished["outcome"] == "applied"
    twice = [*departments(), {"DEPARTMENT_ID": "20", "DEPARTMENT_NAME": "Marketing West",
                              "MANAGER_ID": "202", "LOCATION_ID": "1800"}]  # fmt: skip
    write_departments(oracle, twice)
    run = oracle.hrsync("sync")
    assert run.code == 0, run.stdout[-3000:]
    assert run.finished["outcome"] == "in_sync"  # DX keeps Marketing as it had it
    held = {h["person"]: h["detail"] for h in run.finished["held"]}
    assert sorted(held) == ["201", "202"]
    assert held["201"] == (
        "DEPARTMENT_ID must match at most one row of DEPARTMENTS.csv (join departments: "
        "DEPARTMENT_ID = DEPARTMENT_ID): it matches DEPARTMENTS.csv line 3, DEPARTMENTS.csv "
        "line 29"
    )
    assert leads(oracle)["Marketing"] == "mmartine@example.com"


def test_no_match_holds_the_person_when_the_join_must_match(oracle: Workspace) -> None:
    text = oracle.config.read_text(encoding="utf-8")
    assert 'match = "optional"' in text
    oracle.config.write_text(text.replace('match = "optional"', 'match = "one"'), "utf-8")
    run = oracle.hrsync("sync")
    assert run.code == 0, run.stdout[-3000:]
    assert run.finished["outcome"] == "applied"
    (held,) = run.finished["held"]
    assert held["person"] == "178" and held["location"] == "EMPLOYEES.csv line 80"
    assert held["detail"] == (
        "DEPARTMENT_ID must match a row of DEPARTMENTS.csv (join departments: "
        "DEPARTMENT_ID = DEPARTMENT_ID)"
    )
    assert run.finished["counts"]["held"] == 1 and len(oracle.dx_teams()) == 11


def test_a_joined_table_over_http_keeps_its_credentials_out_of_logs_and_store(
    oracle: Workspace,
) -> None:
    secret = "Bearer dept-s3cret-0a9b8c7d"
    body = (FIXTURES / "DEPARTMENTS.csv").read_bytes()

    def api(request: Request, base: str) -> Response:
        if request.headers.get("authorization") != secret:
            return Response(401, b'{"error": "unauthorized"}', {"Content-Type": "application/json"})
        return Response(200, body, {"Content-Type": "text/csv"})

    with serve(api) as server:
        text = oracle.config.read_text(encoding="utf-8").replace(
            'path = "DEPARTMENTS.csv"',
            f'url = "{server.base_url}/hr/departments.csv"\n'
            'headers = { Authorization = "DEPT_AUTH" }',
        )
        oracle.config.write_text(text, encoding="utf-8")
        wrong = oracle.hrsync("sync", env={"DEPT_AUTH": "Bearer wrong-0a9b8c7d"})
        run = oracle.hrsync("sync", env={"DEPT_AUTH": secret})
        check = oracle.hrsync("check", env={"DEPT_AUTH": secret})
    assert_refused(wrong, oracle, "join 'departments': ", "source.join[departments].headers")
    assert run.finished["outcome"] == "applied", run.stdout[-3000:]
    assert leads(oracle) == LEADS
    assert "[WARN] join departments: " in check.stdout
    for output in (wrong, run, check):
        for value in (secret, "wrong-0a9b8c7d"):
            assert value not in output.stdout + output.stderr
    for path in oracle.root.glob("state.db*"):
        assert secret.encode() not in path.read_bytes()
        assert b"wrong-0a9b8c7d" not in path.read_bytes()


def test_explain_says_which_joined_value_a_filter_dropped_a_person_for(
    oracle: Workspace,
) -> None:
    # The filter reads a column of the join: explain must read the export with its joins
    # to find the person it dropped, and show the joined row that decided it.
    text = oracle.config.read_text(encoding="utf-8")
    oracle.config.write_text(
        text + '\n[filter]\nexclude = { "departments.DEPARTMENT_NAME" = ["Public Relations"] }\n',
        encoding="utf-8",
    )
    run = oracle.hrsync("sync")
    assert run.finished["outcome"] == "applied", run.stdout[-3000:]
    assert "Public Relations" not in oracle.dx_teams()
    explained = oracle.hrsync("explain", "204")
    assert explained.code == 0, explained.stdout[-2000:] + explained.stderr[-2000:]
    assert explained.stdout.startswith(
        "204 is at EMPLOYEES.csv line 106, but left out by "
        "filter.exclude.departments.DEPARTMENT_NAME "
        "(departments.DEPARTMENT_NAME 'Public Relations'): "
    ), explained.stdout
    assert (
        "  join departments: DEPARTMENTS.csv line 8 (DEPARTMENT_ID '70' = DEPARTMENT_ID): "
        "departments.DEPARTMENT_NAME = 'Public Relations', departments.MANAGER_ID = '204'"
    ) in explained.stdout
    # A person the filter keeps is explained as before.
    kept = oracle.hrsync("explain", "122")
    assert kept.code == 0 and "join departments: DEPARTMENTS.csv line 6" in kept.stdout
