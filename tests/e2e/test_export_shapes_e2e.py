"""Real export shapes by configuration alone (issue 11): `hrsync plan`, `sync` and `check`
against the simulator, one fixture per shape (tests/fixtures/exports/), and the shipped
example config against the shipped sample."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.conftest import ROOT, TOKEN, Workspace

pytestmark = pytest.mark.slow

FIXTURES = ROOT / "tests" / "fixtures" / "exports"

# What every config below shares: the simulator, the store, JSON logs.
COMMON = """\
[dx]
base_url = "{base_url}"

[source]
path = "{export}"
{source}

[source.fields]
{fields}

[mapping]
team_name = "{{lead_name}}'s team"

[sync]
verify_timeout_s = 20

[state]
database_url = "sqlite:///{db}"

[log]
format = "json"
"""

SHAPES: dict[str, tuple[str, str, str]] = {
    # fixture, [source] extras, [source.fields]
    "split names, no e-mail, no department or status": (
        "split-names.csv",
        "",
        """\
employee_id = "Emp_No"
name = "{First_Name} {Last_Name}"
email = "{First_Name|ascii|lower}.{Last_Name|ascii|nospace|lower}@example.com"
manager_id = "Mgr_No"
""",
    ),
    "mailbox-only e-mail, NULL as no manager": (
        "mailbox-null.csv",
        "",
        """\
employee_id = "EMPLOYEE_ID"
name = "{FIRST_NAME} {LAST_NAME}"
email = "{EMAIL|lower}@example.com"
manager_id = "MANAGER_ID"
department = "DEPARTMENT"
""",
    ),
    "Last, First names, manager by display name, a pseudo-manager": (
        "last-first.csv",
        'null_values = ["Board of Directors", "NULL", "N/A", "-"]',
        """\
employee_id = "Worker ID"
name = "Worker"
email = "Work Email"
manager_id = ""
manager_name = "Supervisor"
status = "Status"
""",
    ),
    "managers absent from the export, unknown_manager = top": (
        "absent-managers.csv",
        'unknown_manager = "top"',
        """\
employee_id = "Employee ID"
name = "Full Name"
email = "Work Email"
manager_id = "Manager ID"
""",
    ),
}


def use_shape(workspace: Workspace, shape: str) -> None:
    fixture, source, fields = SHAPES[shape]
    shutil.copy(FIXTURES / fixture, workspace.export)
    workspace.config.write_text(
        COMMON.format(
            base_url=workspace.sim.base_url,
            export=workspace.export,
            db=workspace.db,
            source=source,
            fields=fields,
        )
    )


def leads(workspace: Workspace) -> dict[str, Any]:
    """DX's teams by name, each with its lead's e-mail."""
    emails = {user["id"]: user["email"] for user in workspace.sim.dx.users_view()}
    return {name: emails.get(team["manager_id"]) for name, team in workspace.dx_teams().items()}


# The manager teams of config/sample-org.csv's active people: every shape yields them.
EXPECTED_LEADS = {
    "Ada Okafor's team": "ada.okafor@example.com",
    "Marcus Lindqvist's team": "marcus.lindqvist@example.com",
    "Priya Raman's team": "priya.raman@example.com",
    "Tomás Herrera's team": "tomas.herrera@example.com",
    "Jonas Becker's team": "jonas.becker@example.com",
    "Aisha Bello's team": "aisha.bello@example.com",
    "Katherine Adeyemi's team": "katherine.adeyemi@example.com",
    "Ravi Shankar's team": "ravi.shankar@example.com",
    "Sofia Rossi's team": "sofia.rossi@example.com",
    "Hannah Schmidt's team": "hannah.schmidt@example.com",
    "Kwame Asante's team": "kwame.asante@example.com",
}


@pytest.mark.parametrize("shape", list(SHAPES))
def test_each_shape_plans_and_syncs_by_configuration_alone(
    workspace: Workspace, shape: str
) -> None:
    use_shape(workspace, shape)
    plan = workspace.hrsync("plan")
    assert plan.code == 0, plan.stdout + plan.stderr
    assert "Create" in plan.stdout
    assert not workspace.process_requests()  # a plan sends nothing

    sync = workspace.hrsync("sync")
    assert sync.code == 0, sync.stdout + sync.stderr
    assert sync.finished["outcome"] == "applied"
    got = leads(workspace)
    expected = dict(EXPECTED_LEADS)
    if "absent" in shape:
        # Ada and Marcus are not in the export: their reports are top of the org.
        del expected["Ada Okafor's team"], expected["Marcus Lindqvist's team"]
    for name, email in expected.items():
        lead_name = name.removesuffix("'s team")
        written = (
            f"{lead_name.split(' ', 1)[1]}, {lead_name.split(' ', 1)[0]}"
            if "Last, First" in shape
            else lead_name
        )
        assert got.get(f"{written}'s team") == email, (shape, name, sorted(got))
    assert len(got) == len(expected) + 2  # and the teams of Mei-Ling Chen and Liam O'Brien

    again = workspace.hrsync("sync")
    assert again.code == 0
    assert again.finished["outcome"] == "in_sync"


def test_absent_managers_are_warned_once_each_and_shown_in_plan_and_check(
    workspace: Workspace,
) -> None:
    use_shape(workspace, "managers absent from the export, unknown_manager = top")
    plan = workspace.hrsync("plan")
    assert plan.code == 0, plan.stdout + plan.stderr
    warnings = [e["detail"] for e in plan.named("export.warning")]
    (about_e002,) = [w for w in warnings if "'E002'" in w]
    assert "3 people naming it are top of the org" in about_e002
    assert 'Managers not in the export (1; source.unknown_manager = "top")' in plan.stdout
    assert "Manager ID 'E002': 3 people (first at people.csv line 2)" in plan.stdout

    check = workspace.hrsync("check")
    assert check.code == 0, check.stdout
    assert "managers: 1 manager not in the export; the 3 people naming it are top" in (check.stdout)


def test_absent_managers_are_refused_by_default_and_the_message_says_how_to_proceed(
    workspace: Workspace,
) -> None:
    use_shape(workspace, "managers absent from the export, unknown_manager = top")
    text = workspace.config.read_text().replace('unknown_manager = "top"', "")
    workspace.config.write_text(text)
    plan = workspace.hrsync("plan")
    assert plan.code == 4, plan.stdout  # refused
    assert 'source.unknown_manager = "top"' in plan.stdout
    assert not workspace.process_requests()


def test_a_template_naming_a_missing_column_is_refused_naming_it(workspace: Workspace) -> None:
    use_shape(workspace, "split names, no e-mail, no department or status")
    text = workspace.config.read_text().replace("{Last_Name|ascii", "{Surname|ascii")
    workspace.config.write_text(text)
    plan = workspace.hrsync("plan")
    assert plan.code == 4, plan.stdout  # refused
    assert "'Surname' (source.fields.email '{First_Name|ascii|lower}.{Surname" in plan.stdout
    assert not workspace.process_requests()


def test_the_example_config_plans_the_shipped_sample(workspace: Workspace, tmp_path: Path) -> None:
    # As a new user runs it: from the checkout, the config as shipped, the DX URL and the
    # store from the environment.
    base = {k: v for k, v in os.environ.items() if not k.startswith("HRSYNC_")}
    proc = subprocess.run(
        [sys.executable, "-m", "hrsync", "--config", "config/hrsync.example.toml", "plan"],
        env={
            **base,
            "HRSYNC_DX_TOKEN": TOKEN,
            "HRSYNC_DX__BASE_URL": workspace.sim.base_url,
            "HRSYNC_STATE__DATABASE_URL": f"sqlite:///{tmp_path / 'example.db'}",
        },
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "config/config" not in proc.stdout + proc.stderr
    assert "Create" in proc.stdout
    assert "Ada Okafor's team" in proc.stdout
