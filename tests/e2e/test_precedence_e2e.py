"""Per-field precedence end to end (issue 26): an HR report whose e-mails are not the ones
DX knows, joined to the identity provider's users by employee id, with
``email = ["entra.mail", "workday.Work_Email"]``: Entra's e-mail where it has one, the
report's where not, through `sync`, `check`, `plan --format json` and `explain`."""

from __future__ import annotations

import csv
import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from hrsync.simulator.rehearsal import rehearsal
from tests.e2e.conftest import TOKEN, Workspace
from tests.e2e.test_plan_output_e2e import document
from tests.simulating import start_simulator

pytestmark = pytest.mark.slow

CONFIG = """
[source]
path = "{root}/workday.csv"
name = "workday"

[source.fields]
employee_id = "Employee_ID"
email = ["entra.mail", "workday.Work_Email"]
name = ["entra.displayName", "Legal_Name"]
manager_id = "Manager_ID"

[[source.join]]
name = "entra"
path = "{root}/entra.json"
on = {{ Employee_ID = "employeeId" }}
match = "optional"

[mapping]
team_name = "{{lead_name}}'s team"

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
# The report's e-mails are HR's own addresses; DX knows people by Entra's.
WORKDAY = [
    ("E1", "Ada Chief", "", "ada@hr.example.com"),
    ("E2", "Bo Lead", "E1", "bo@hr.example.com"),
    ("E3", "Cy Dev", "E2", "cy@hr.example.com"),
    ("E4", "Di Dev", "E2", "di@example.com"),  # not in Entra: the report's e-mail
    ("E5", "Ed Dev", "E2", "ed@hr.example.com"),
]
ENTRA = [
    {"employeeId": "E1", "mail": "ada@example.com", "displayName": "Ada Chief"},
    {"employeeId": "E2", "mail": "bo@example.com", "displayName": "Bo Lead"},
    {"employeeId": "E3", "mail": "cy@example.com", "displayName": "Cy Developer"},
    {"employeeId": "E5", "mail": None, "displayName": None},  # Entra holds no mail
]


def write(root: Path, workday=WORKDAY, entra=ENTRA) -> None:  # type: ignore[no-untyped-def]
    with (root / "workday.csv").open("w", newline="", encoding="utf-8") as fh:
        out = csv.writer(fh)
        out.writerow(["Employee_ID", "Legal_Name", "Manager_ID", "Work_Email"])
        out.writerows(workday)
    (root / "entra.json").write_text(json.dumps(entra), encoding="utf-8")


@pytest.fixture
def ws(tmp_path: Path) -> Iterator[Workspace]:
    people = [
        ("Ada Chief", "ada@example.com"),
        ("Bo Lead", "bo@example.com"),
        ("Cy Developer", "cy@example.com"),
        ("Di Dev", "di@example.com"),
        ("Ed Dev", "ed@hr.example.com"),
    ]
    account = rehearsal(people, source="workday.csv", token=TOKEN)
    with start_simulator(account.scenario) as sim:
        write(tmp_path)
        db = tmp_path / "state.db"
        config = tmp_path / "hrsync.toml"
        config.write_text(CONFIG.format(root=tmp_path, dx=sim.base_url, db=db), encoding="utf-8")
        yield Workspace(tmp_path, sim, config, tmp_path / "workday.csv", db)


def test_each_person_gets_the_first_e_mail_their_sources_hold(ws: Workspace) -> None:
    run = ws.hrsync("sync")
    assert run.finished["outcome"] == "applied", run.stdout[-3000:] + run.stderr[-3000:]
    [request] = ws.process_requests()
    teams = {t["name"]: t for t in request.body["teams"]}
    assert teams["Ada Chief's team"]["team_lead_email"] == "ada@example.com"
    bo = teams["Bo Lead's team"]
    assert bo["team_lead_email"] == "bo@example.com"
    assert sorted(bo["contributors"]) == ["cy@example.com", "di@example.com", "ed@hr.example.com"]
    [told] = [e for e in run.named("fields.first_of") if e["field"] == "email"]
    assert told["won"] == {"entra.mail": 3, "workday.Work_Email": 2} and told["empty"] == 0
    assert ws.hrsync("sync").finished["outcome"] == "in_sync"


def test_check_plan_and_explain_say_where_each_value_came_from(ws: Workspace) -> None:
    check = ws.hrsync("check")
    assert check.code == 0, check.stdout + check.stderr
    assert "source.fields.email: entra.mail 3, workday.Work_Email 2, none 0" in check.stdout
    assert "source.fields.name: entra.displayName 3, Legal_Name 2, none 0" in check.stdout
    plan = document(ws.hrsync("plan", "--format", "json").stdout)
    by_field = {f["field"]: f for f in plan["fields"]}
    assert by_field["email"]["first_of"] == [
        {"name": "entra.mail", "won": 3},
        {"name": "workday.Work_Email", "won": 2},
    ]
    assert by_field["email"]["column"] == "first of entra.mail, workday.Work_Email"
    explained = ws.hrsync("explain", "E5")
    assert explained.code == 0, explained.stdout + explained.stderr
    assert "email: 'ed@hr.example.com' from workday.Work_Email (entra.mail empty)" in (
        explained.stdout
    )
    assert "name: 'Cy Developer' from entra.displayName" in ws.hrsync("explain", "E3").stdout


def test_a_person_empty_in_every_source_is_held_alone(ws: Workspace) -> None:
    assert ws.hrsync("sync").finished["outcome"] == "applied"
    rows = [*WORKDAY[:4], ("E5", "Ed Dev", "E2", "")]
    write(ws.root, workday=rows)
    run = ws.hrsync("sync")
    assert run.finished["outcome"] == "in_sync", run.stdout[-3000:]
    [held] = run.named("sync.person_held")
    assert held["person"] == "E5"
    assert "first of entra.mail, workday.Work_Email" in held["detail"]


def test_a_list_naming_no_column_refuses_the_run_naming_the_field(ws: Workspace) -> None:
    text = ws.config.read_text(encoding="utf-8").replace(
        '"workday.Work_Email"]', '"workday.Work_Emial"]'
    )
    ws.config.write_text(text, encoding="utf-8")
    run = ws.hrsync("sync")
    assert run.code == 4, run.stdout[-3000:] + run.stderr[-3000:]
    reason = run.finished["reason"]
    assert "source.fields.email entry 2 'workday.Work_Emial' is not a column" in reason
    assert "did you mean 'workday.Work_Email'?" in reason
    assert ws.process_requests() == []
