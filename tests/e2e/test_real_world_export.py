"""A real-world-shaped export through `hrsync plan`: BOM, `;`, stray spaces,
terminated rows, a manager column holding ids, upper-case e-mails."""

from __future__ import annotations

import pytest

from tests.e2e.conftest import Workspace, read_rows

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
