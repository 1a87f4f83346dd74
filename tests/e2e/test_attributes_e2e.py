"""HR attributes to DX user attributes, end to end: `hrsync` as a subprocess against the
simulator (users.attributes.update), the state store on disk."""

from __future__ import annotations

import dataclasses
import os
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from hrsync.simulator.faults import Fault
from hrsync.simulator.scenario import ScenarioToken, load_scenario
from tests.e2e.conftest import CONFIG, CONFIG_TEMPLATE, TOKEN, Workspace, parse_events, read_rows
from tests.simulating import start_simulator

pytestmark = pytest.mark.slow

ATTRIBUTES = '\n[attributes]\n"Location" = "{Office}"\n'
NO_USERS_WRITE = "demo-token-without-users-write"
OFFICES = ("Berlin", "Lisbon", "Toronto", "Nairobi")
UPDATE = "users.attributes.update"


def office_rows() -> list[dict[str, str]]:
    rows = read_rows("sample-org.csv")
    for index, row in enumerate(rows):
        row["Office"] = OFFICES[index % len(OFFICES)]
    return rows


def active(rows: list[dict[str, str]]) -> list[dict[str, str]]:
    return [row for row in rows if row["Status"] == "Active"]


@pytest.fixture
def ws(tmp_path: Path) -> Iterator[Workspace]:
    """The demo account (its token has users:write), plus a token without that scope."""
    scenario = load_scenario(CONFIG / "demo-scenario.json")
    demo = next(t for t in scenario.tokens if t.value == TOKEN)
    assert "users:write" in demo.scopes
    scopes = tuple(scope for scope in demo.scopes if scope != "users:write")
    without = ScenarioToken(NO_USERS_WRITE, demo.kind, scopes)
    scenario = dataclasses.replace(scenario, import_delay_s=0.2, tokens=(*scenario.tokens, without))
    with start_simulator(scenario) as sim:
        export = tmp_path / "people.csv"
        shutil.copy(CONFIG / "sample-org.csv", export)
        db = tmp_path / "state.db"
        config = tmp_path / "hrsync.toml"
        text = CONFIG_TEMPLATE.format(base_url=sim.base_url, export=export, db=db)
        config.write_text(text + ATTRIBUTES)
        workspace = Workspace(tmp_path, sim, config, export, db)
        workspace.write_export(office_rows())
        yield workspace
        for output in workspace.outputs:
            assert TOKEN not in output and NO_USERS_WRITE not in output


def updates(ws: Workspace) -> list[dict[str, object]]:
    return [r.body for r in ws.sim.dx.requests if r.method_name == UPDATE and r.status == 200]


def test_first_run_pushes_everyone_and_a_second_run_sends_nothing(ws: Workspace) -> None:
    people = active(office_rows())
    first = ws.hrsync("sync")
    assert first.code == 0, first.stdout + first.stderr
    done = first.finished
    assert done["outcome"] == "applied" and done["attributes_outcome"] == "applied"
    assert done["counts"]["attributes_updated"] == len(people)
    assert done["counts"]["attributes_failed"] == 0
    assert len(updates(ws)) == len(people)
    for row in people:
        email = row["Work Email"]
        assert ws.sim.dx.user_attributes(email) == {"Location": row["Office"]}
    assert ws.sim.dx.attribute_groups() == ["Location"]

    second = ws.hrsync("sync")
    assert second.code == 0
    assert second.finished["attributes_outcome"] == "in_sync"
    assert second.finished["counts"]["attributes_unchanged"] == len(people)
    assert len(updates(ws)) == len(people)  # not one more call

    history = ws.hrsync("history")
    assert f"attributes_updated={len(people)}" in history.stdout
    assert f"attributes_unchanged={len(people)}" in history.stdout


def test_one_changed_office_sends_exactly_one_call(ws: Workspace) -> None:
    assert ws.hrsync("sync").code == 0
    before = len(updates(ws))
    rows = office_rows()
    mover = active(rows)[5]
    mover["Office"] = "Reykjavik"
    ws.write_export(rows)

    plan = ws.hrsync("plan")
    assert "Location: 0 new, 1 changed" in plan.stdout
    assert f"{mover['Work Email']}: Location " in plan.stdout
    assert len(updates(ws)) == before  # a plan sends nothing

    run = ws.hrsync("sync")
    assert run.code == 0
    assert run.finished["attributes_outcome"] == "applied"
    assert run.finished["counts"]["attributes_updated"] == 1
    sent = updates(ws)[before:]
    assert sent == [
        {"email": mover["Work Email"], "attributes": [{"name": "Location", "value": "Reykjavik"}]}
    ]


def test_plan_detailed_exitcode_counts_attribute_changes(ws: Workspace) -> None:
    assert ws.hrsync("sync").code == 0
    assert ws.hrsync("plan", "--detailed-exitcode").code == 0
    rows = office_rows()
    active(rows)[0]["Office"] = "Reykjavik"
    ws.write_export(rows)
    assert ws.hrsync("plan", "--detailed-exitcode").code == 2
    # Changes the attribute guard refuses are changes too.
    ws.config.write_text(ws.config.read_text().replace('"{Office}"', '"{Office|upper}"'))
    refused = ws.hrsync("plan", "--detailed-exitcode")
    assert refused.code == 2 and "attributes refused" in refused.stdout


def test_an_unknown_email_waits_and_is_not_retried_on_the_next_unchanged_run(
    ws: Workspace,
) -> None:
    rows = office_rows()
    manager = active(rows)[1]
    newcomer = {
        **manager,
        "Employee ID": "E999",
        "Full Name": "Nova Newhire",
        "Work Email": "nova.newhire@example.com",
        # Top of the org with no reports: in no team, so the hierarchy is unaffected
        # (DX ignores unknown contributors, and a run could not verify adding one).
        "Manager ID": "",
        "Title": "Engineer",
    }
    ws.write_export([*rows, newcomer])
    first = ws.hrsync("sync")
    # Not a DX user yet: waiting, not a failure of the step (nor of the person).
    assert first.finished["attributes_outcome"] == "applied", first.finished
    assert first.finished["counts"]["attributes_failed"] == 0
    assert first.named("attributes.failed") == []
    [waiting] = first.named("attributes.waiting")
    assert waiting["first"] == ["nova.newhire@example.com"]
    assert first.code == first.finished["exit_code"] == 0
    calls = len(updates(ws)) + 1  # the refused call is not a 200

    second = ws.hrsync("sync")
    assert second.finished["attributes_outcome"] == "in_sync"
    assert second.finished["counts"]["attributes_failed"] == 0
    assert second.named("attributes.waiting")[0]["first"] == ["nova.newhire@example.com"]
    refused = [r for r in ws.sim.dx.requests if r.method_name == UPDATE]
    assert len(refused) == calls  # nobody sent again, the newcomer included


def test_a_renamed_column_refuses_attributes_while_the_hierarchy_applies(ws: Workspace) -> None:
    assert ws.hrsync("sync").code == 0
    before = len(updates(ws))
    rows = office_rows()
    for row in rows:
        row["Office Location"] = row.pop("Office")
    rows[3]["Department"] = "Platform Reliability"  # a real hierarchy change in the same run
    ws.write_export(rows)
    run = ws.hrsync("sync")
    assert run.code == 4, run.stdout + run.stderr
    assert run.finished["outcome"] == "applied"
    assert run.finished["attributes_outcome"] == "refused"
    assert "attributes.Location '{Office}' uses {Office}" in run.finished["reason"]
    assert "Platform Reliability" in ws.dx_teams()
    assert len(updates(ws)) == before


def test_a_template_changing_every_value_trips_the_guard_until_approved(ws: Workspace) -> None:
    assert ws.hrsync("sync").code == 0
    before = len(updates(ws))
    config = ws.config.read_text().replace('"{Office}"', '"{Office|upper}"')
    ws.config.write_text(config)
    run = ws.hrsync("sync")
    assert run.code == 4
    assert run.finished["attributes_outcome"] == "refused"
    reason = run.finished["reason"]
    assert "attribute 'Location' would change" in reason and "-> 'BERLIN'" in reason
    assert f"hrsync --config {ws.config} sync --allow-attribute-changes" in reason
    assert len(updates(ws)) == before
    approved = ws.hrsync("sync", "--allow-attribute-changes")
    assert approved.code == 0
    assert approved.finished["attributes_outcome"] == "applied"


def test_a_refused_attribute_step_has_a_plan_id_that_a_person_approves(ws: Workspace) -> None:
    # The attribute guard trips as the hierarchy's do: a plan id and the approve command
    # (DX shows no preview of attribute changes, and the refusal says so).
    assert ws.hrsync("sync").code == 0
    before = len(updates(ws))
    ws.config.write_text(ws.config.read_text().replace('"{Office}"', '"{Office|upper}"'))
    run = ws.hrsync("sync")
    assert run.code == 4 and run.finished["attributes_outcome"] == "refused"
    plan_id = run.finished["plan_id"]
    assert f"approve {plan_id}" in run.stdout and "no preview" in run.stdout, run.stdout
    preview = ws.hrsync("sync", "--preview", plan_id)
    assert preview.code == 2 and "no preview of attribute changes" in preview.stderr
    approved = ws.hrsync("approve", plan_id, "--by", "ana@example.com")
    assert approved.code == 0, approved.stderr
    assert "(attributes.max_change_fraction)" in approved.stdout
    assert len(updates(ws)) == before
    applied = ws.hrsync("sync")
    assert applied.code == 0, applied.stdout[-3000:]
    assert applied.finished["attributes_outcome"] == "applied"
    assert len(updates(ws)) > before
    listing = ws.hrsync("approvals").stdout
    assert f"plan {plan_id}  applied" in listing, listing


def test_a_token_without_users_write_is_rejected_for_attributes_only(ws: Workspace) -> None:
    run = ws.hrsync("sync", env={"HRSYNC_DX_TOKEN": NO_USERS_WRITE})
    assert run.code == 6, run.stdout + run.stderr
    assert run.finished["outcome"] == "applied"
    assert run.finished["attributes_outcome"] == "rejected"
    assert "users:write" in run.finished["reason"]
    assert ws.dx_teams()  # the hierarchy went through
    assert updates(ws) == []


def test_sigterm_midway_then_a_restart_sends_only_the_rest(ws: Workspace) -> None:
    people = active(office_rows())
    ws.sim.dx.add_fault(Fault(method=UPDATE, kind="latency", count=len(people), latency_s=0.1))
    log_path = ws.root / "daemon.log"
    env = {k: v for k, v in os.environ.items() if not k.startswith("HRSYNC_")}
    env |= {"HRSYNC_DX_TOKEN": TOKEN}
    with log_path.open("w") as log:
        proc = subprocess.Popen(
            [sys.executable, "-m", "hrsync", "--config", str(ws.config), "run", "--now"],
            env=env,
            stdout=log,
            stderr=subprocess.STDOUT,
        )
    try:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and len(updates(ws)) < 5:
            time.sleep(0.05)
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=20) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    ws.outputs.append(log_path.read_text())
    [finished] = [e for e in parse_events(log_path.read_text()) if e["event"] == "sync.finished"]
    assert finished["attributes_outcome"] == "failed"
    assert "SIGTERM" in finished["reason"]
    first = [body["email"] for body in updates(ws)]
    assert 5 <= len(first) < len(people)
    assert finished["counts"]["attributes_updated"] == len(first)

    ws.sim.dx.clear_faults()
    rest = ws.hrsync("sync")
    assert rest.code == 0
    assert rest.finished["attributes_outcome"] == "applied"
    second = [body["email"] for body in updates(ws)][len(first) :]
    assert sorted(first + second) == sorted(row["Work Email"] for row in people)
    assert not set(first) & set(second)


def test_check_reports_the_attribute_columns(ws: Workspace) -> None:
    ready = ws.hrsync("check")
    assert "[  ok] attributes: 'Location' read from the export" in ready.stdout, ready.stdout
    rows = office_rows()
    for row in rows:
        row["Office Location"] = row.pop("Office")
    ws.write_export(rows)
    broken = ws.hrsync("check")
    assert broken.code != 0
    assert "[FAIL] attributes: attributes.Location '{Office}' uses {Office}" in broken.stdout
    assert updates(ws) == []  # check sends nothing


def test_a_control_character_in_an_attribute_column_refuses_the_export(ws: Workspace) -> None:
    rows = office_rows()
    rows[2]["Office"] = "Ber\x1blin"
    ws.write_export(rows)
    run = ws.hrsync("sync")
    assert run.code == 4, run.stdout + run.stderr
    assert run.finished["outcome"] == "refused"
    assert run.finished["attributes_outcome"] == "skipped"
    assert "Office" in run.stdout + run.stderr
    assert updates(ws) == [] and ws.process_requests() == []


def test_a_refused_attribute_step_is_named_in_status_with_its_approval(ws: Workspace) -> None:
    import json

    assert ws.hrsync("sync").code == 0
    # Every person's Location changes at once: the attribute guard refuses, the hierarchy
    # (unchanged) is in sync. The run ends with exit 4, and a person must approve.
    ws.config.write_text(ws.config.read_text().replace('"{Office}"', '"{Office|upper}"'))
    assert ws.hrsync("sync").code == 4
    status = ws.hrsync("status", "--format", "json")
    (item,) = json.loads(status.stdout)["attention"]
    assert item["reason"] == "refused"
    assert "--allow-attribute-changes" in item["command"]
    assert "--config" in item["command"]
