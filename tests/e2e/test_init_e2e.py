"""`hrsync init` end to end: the config it writes, with only the DX parts filled (the
simulator's URL and token from the environment, as the written file says), plans against
the bundled simulator, for the sample org and each HR system's shape; and `check`
refuses a TODO by name."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.e2e.conftest import ROOT, Workspace

FIXTURES = ROOT / "tests" / "fixtures" / "init"
EXPORTS = [
    ROOT / "config" / "sample-org.csv",
    ROOT / "config" / "sample-org.json",
    *sorted(FIXTURES.iterdir()),
]


def init(workspace: Workspace, export: Path) -> Path:
    """`hrsync init` in a folder of the workspace, on a copy of `export` there."""
    folder = workspace.root / "mine"
    folder.mkdir(exist_ok=True)
    copy = folder / export.name
    shutil.copy(export, copy)
    proc = subprocess.run(
        [sys.executable, "-m", "hrsync", "init", "--from", copy.name],
        capture_output=True,
        text=True,
        cwd=folder,
        timeout=60,
    )
    assert proc.returncode == 0, proc.stderr
    assert "Wrote hrsync.toml." in proc.stdout
    return folder / "hrsync.toml"


@pytest.mark.parametrize("export", EXPORTS, ids=lambda p: p.name)
def test_the_config_init_writes_plans_against_the_simulator(
    workspace: Workspace, export: Path
) -> None:
    workspace.config = init(workspace, export)
    run = workspace.hrsync(
        "plan", "--format", "json", env={"HRSYNC_DX__BASE_URL": workspace.sim.base_url}
    )
    assert run.code == 0, run.stdout + run.stderr
    plan = json.loads(run.stdout)
    # The sample org's 13 teams (or more: Workday's second positions are not its managers,
    # but those kept on leave may lead), nobody held, nobody left out of a team.
    assert plan["counts"]["create"] >= 13
    assert plan["held"] == []
    assert plan["people_in_no_team"] == []


def test_the_sample_org_syncs_with_the_config_init_wrote(workspace: Workspace) -> None:
    workspace.config = init(workspace, ROOT / "config" / "sample-org.csv")
    env = {"HRSYNC_DX__BASE_URL": workspace.sim.base_url, "HRSYNC_SYNC__VERIFY_TIMEOUT_S": "20"}
    check = workspace.hrsync("check", env=env)
    assert check.code == 0, check.stdout + check.stderr
    assert check.stdout.rstrip().endswith("ready")
    run = workspace.hrsync("sync", env=env)
    assert run.finished["outcome"] == "applied", run.stdout + run.stderr
    assert workspace.dx_teams()


def test_check_refuses_a_todo_naming_it(workspace: Workspace) -> None:
    (workspace.root / "people.csv").write_text(
        "Person,Address,Team\nA1,ann@example.com,x\nA2,bob@example.com,y\n", encoding="utf-8"
    )
    workspace.config = init(workspace, workspace.root / "people.csv")
    run = workspace.hrsync("check", env={"HRSYNC_DX__BASE_URL": workspace.sim.base_url})
    assert run.code == 2
    assert "source.fields.name is a TODO left by hrsync init" in run.stderr
    assert "source.fields.manager_id is a TODO left by hrsync init" in run.stderr
