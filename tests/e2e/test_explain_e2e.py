"""`hrsync explain PERSON` against the simulator (issue 11): a person in a team, a team
lead, a person in no team, an unknown id. It reads the export and DX and sends nothing."""

from __future__ import annotations

import pytest

from tests.e2e.conftest import Workspace, read_rows

pytestmark = pytest.mark.slow


def _no_writes(workspace: Workspace) -> None:
    assert not [r for r in workspace.sim.dx.requests if r.http_method == "POST"]


def test_a_team_lead_after_a_sync(workspace: Workspace) -> None:
    assert workspace.hrsync("sync").code == 0
    posts = len([r for r in workspace.sim.dx.requests if r.http_method == "POST"])
    run = workspace.hrsync("explain", "E002")
    assert run.code == 0, run.stdout + run.stderr
    out = run.stdout
    assert out.startswith("Marcus Lindqvist (E002) <marcus.lindqvist@example.com>\n")
    assert "  row: " in out and "line 3" in out
    assert "    employee_id = 'E002'  (column 'Employee ID')" in out
    assert "  manager chain: Ada Okafor (E001) (top)" in out
    assert '  leads "Engineering" (under "Executive"): ' in out
    assert "people report to them" in out
    assert "    HR key manager:E002, reference_id hrsync-" in out
    assert "    DX: team " in out and "last changed" in out
    assert "    last sent: run " in out
    # Marcus is also a contributor of the CEO's team.
    assert '  member of "Executive": their manager leads it' in out
    assert len([r for r in workspace.sim.dx.requests if r.http_method == "POST"]) == posts


def test_a_person_in_a_team_by_e_mail_before_any_sync(workspace: Workspace) -> None:
    rows = read_rows("sample-org.csv")
    ic = next(r for r in rows if r["Manager ID"] == "E112" and r["Status"] == "Active")
    run = workspace.hrsync("explain", ic["Work Email"].upper())
    assert run.code == 0, run.stdout + run.stderr
    assert f"({ic['Employee ID']}) <{ic['Work Email']}>" in run.stdout
    assert ": their manager leads it" in run.stdout
    assert "DX: no team with this reference_id yet" in run.stdout
    assert "last sent: never" in run.stdout
    _no_writes(workspace)


def test_a_person_in_no_team(workspace: Workspace) -> None:
    rows = read_rows("sample-org.csv")
    rows.append(
        {**rows[-1], "Employee ID": "E900", "Full Name": "Lone Wolf", "Manager ID": "",
         "Work Email": "lone.wolf@example.com", "Status": "Active"}
    )  # fmt: skip
    workspace.write_export(rows)
    run = workspace.hrsync("explain", "E900")
    assert run.code == 0, run.stdout + run.stderr
    # Not "top of the org": nobody reports to them either.
    assert "  manager chain: none, and nobody reports to them" in run.stdout
    assert "top of the org" not in run.stdout
    assert "  in no team: no manager and nobody reports to them" in run.stdout
    _no_writes(workspace)


def test_a_person_whose_manager_is_filtered_out(workspace: Workspace) -> None:
    # Was "manager chain: none (top of the org)", then "their manager … is filtered out";
    # now the manager who left keeps their team, with a stand-in lead.
    rows = read_rows("sample-org.csv")
    rows.append(
        {
            **rows[-1],
            "Employee ID": "E901",
            "Full Name": "Orphan Report",
            "Manager ID": "E128",
            "Work Email": "orphan.report@example.com",
            "Status": "Active",
        }
    )  # fmt: skip  (E128 is Terminated: filtered out)
    workspace.write_export(rows)
    run = workspace.hrsync("explain", "E901")
    assert run.code == 0, run.stdout + run.stderr
    assert "  manager chain: Rohan Gupta (E128) left (excluded by filter.active_status" in (
        run.stdout
    )
    # Their team stays, led by the manager above who is kept (Sofia Rossi).
    assert "their manager Rohan Gupta (E128) left; lead left: Sofia Rossi (E024) stands in" in (
        run.stdout
    )
    assert "top of the org" not in run.stdout
    ceo = workspace.hrsync("explain", "E001")
    assert "  manager chain: none (top of the org)" in ceo.stdout
    _no_writes(workspace)


def test_an_unknown_id_exits_1_with_suggestions(workspace: Workspace) -> None:
    run = workspace.hrsync("explain", "E0021")
    assert run.code == 1
    assert "no person with employee id, e-mail or name 'E0021' in " in run.stdout
    assert "did you mean 'E002'" in run.stdout or "'E002'" in run.stdout
    _no_writes(workspace)


def test_a_person_asked_by_name_and_a_shared_name_listed_with_ids(workspace: Workspace) -> None:
    rows = read_rows("sample-org.csv")
    rows.append(
        {**rows[-1], "Employee ID": "E901", "Full Name": "Marcus Lindqvíst", "Manager ID": "E002",
         "Work Email": "marcus.l2@example.com", "Status": "Active"}
    )  # fmt: skip
    workspace.write_export(rows)
    run = workspace.hrsync("explain", "Marcus Lindqvist")  # exact: the one so written
    assert run.code == 0, run.stdout + run.stderr
    assert run.stdout.startswith("Marcus Lindqvist (E002) <marcus.lindqvist@example.com>\n")
    both = workspace.hrsync("explain", "marcus lindqvist")
    assert both.code == 1
    assert "2 people are named 'marcus lindqvist'" in both.stdout
    assert "  E002  Marcus Lindqvist <marcus.lindqvist@example.com>" in both.stdout
    assert "  E901  Marcus Lindqvíst <marcus.l2@example.com>" in both.stdout
    _no_writes(workspace)
