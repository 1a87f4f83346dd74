"""A real-world-shaped export through `hrsync plan`: BOM, `;`, stray spaces,
terminated rows, a manager column holding ids, upper-case e-mails."""

from __future__ import annotations

import pytest

from tests.e2e.conftest import ROOT, Workspace, read_rows

pytestmark = pytest.mark.slow


def test_bom_semicolon_stray_spaces_and_terminated_rows(workspace: Workspace) -> None:
    rows = read_rows("sample-org.csv")
    header = list(rows[0])
    lines = [";".join(header)]
    for row in rows:
        values = dict(row)
        values["Full Name"] = "  " + values["Full Name"].replace(" ", "   ") + " "
        values["Work Email"] = " " + values["Work Email"].upper()
        values["Title"] = f'"{values["Title"]}; level 3"'  # a quoted delimiter
        lines.append(";".join(values[h] for h in header))
    workspace.export.write_bytes(b"\xef\xbb\xbf" + ("\r\n".join(lines) + "\r\n").encode())

    plan = workspace.hrsync("plan", "--detailed-exitcode")
    assert plan.code == 2, plan.stdout + plan.stderr
    assert "Plan: 13 to create" in plan.stdout
    assert "lead priya.raman@example.com" in plan.stdout  # e-mails normalised
    assert not [e for e in plan.events if e["event"] == "export.problem"]
    (read,) = [e for e in plan.events if e["event"] == "export.read"]
    assert read["people"] == 37 and read["excluded"] == 3

    assert workspace.hrsync("sync").code == 0
    names = {t["name"] for t in workspace.dx_teams().values()}
    assert "Platform Infrastructure" in names


def test_department_strategy_end_to_end(workspace: Workspace) -> None:
    env = {"HRSYNC_MAPPING__STRATEGY": "department"}
    run = workspace.hrsync("sync", env=env)
    assert run.code == 0, run.stdout[-2000:]
    teams = workspace.dx_teams()
    # One team per department value; the sample's values are flat names, so flat teams.
    assert "Platform" in teams and "Data" in teams
    assert teams["Platform"]["parent_id"] == teams["Data"]["parent_id"]  # both roots
    again = workspace.hrsync("sync", env=env)
    assert again.finished["outcome"] == "in_sync"


def test_department_paths_make_parents(workspace: Workspace) -> None:
    import sys

    sys.path.insert(0, str(ROOT / "benchmarks"))
    from generator import generate_org, write_csv

    write_csv(generate_org(120, seed=3), workspace.export)
    plan = workspace.hrsync("plan", env={"HRSYNC_MAPPING__STRATEGY": "department"})
    assert plan.code == 0, plan.stdout + plan.stderr[-2000:]
    creates = [line for line in plan.stdout.splitlines() if "+ create" in line]
    assert creates and any("under (root)" in line for line in creates)
    # Paths such as Division/Group/Team nest: most teams sit under another team.
    assert sum("under (root)" not in line for line in creates) > len(creates) // 2
