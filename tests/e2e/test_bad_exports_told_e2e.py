"""Bad and odd exports, told plainly against the simulator: people left out by a filter,
an export that makes no team, an absent manager, repeated rows, every problem in the
plan JSON, an unwritable `--out`. Each test reproduced a silent or misleading behaviour
before its fix."""

from __future__ import annotations

import pytest

from tests.e2e.conftest import Workspace, read_rows

pytestmark = pytest.mark.slow


def test_explain_a_person_left_out_by_the_status_filter_says_so(workspace: Workspace) -> None:
    # E128 is on line 41 of the export with Status "Terminated". explain used to answer
    # "no person with employee id 'E128' in people.csv ... did you mean 'E125'?": the
    # one question explain is for (why is this person in no team?) answered wrongly.
    for query in ("E128", "ROHAN.GUPTA@example.com"):
        run = workspace.hrsync("explain", query)
        assert run.code == 0, run.stdout + run.stderr
        assert "no person with" not in run.stdout
        assert "line 41" in run.stdout
        assert "filter.active_status" in run.stdout and "'Terminated'" in run.stdout
        assert "in no team" in run.stdout


@pytest.mark.parametrize("manager", ["blank", "mailbox"])
def test_an_export_that_maps_to_no_team_is_refused(workspace: Workspace, manager: str) -> None:
    # The manager column emptied, or holding mailboxes that match nobody under
    # source.unknown_manager = "top": 37 people, all "top of the org", not one team. The
    # run said in_sync with exit 0 (the people were only logged as in no team), so a new
    # install, or its daemon, reported success every day while DX got nothing.
    rows = read_rows("sample-org.csv")
    by_id = {r["Employee ID"]: r["Work Email"] for r in rows}
    for row in rows:
        if manager == "blank":
            row["Manager ID"] = ""
        elif row["Manager ID"]:
            row["Manager ID"] = by_id[row["Manager ID"]].split("@")[0].upper()
    workspace.write_export(rows)
    if manager == "mailbox":
        text = workspace.config.read_text()
        workspace.config.write_text(
            text.replace("[source.fields]", 'unknown_manager = "top"\n\n[source.fields]', 1)
        )
    run = workspace.hrsync("sync")
    assert run.finished["outcome"] == "refused", run.finished
    assert run.code == 4
    assert not workspace.process_requests()


def test_a_manager_absent_under_unknown_manager_top_is_not_called_filtered_out(
    workspace: Workspace,
) -> None:
    rows = read_rows("sample-org.csv")
    leaf = next(r for r in rows if r["Employee ID"] == "E101")
    leaf["Manager ID"] = "E999"  # nobody in the export, and no filter dropped them
    workspace.write_export(rows)
    text = workspace.config.read_text()
    workspace.config.write_text(
        text.replace("[source.fields]", 'unknown_manager = "top"\n\n[source.fields]', 1)
    )
    run = workspace.hrsync("plan")
    line = next(ln for ln in run.stdout.splitlines() if "(E101," in ln)
    assert "'E999'" in line
    assert "filtered out" not in line, line


def test_a_repeated_block_of_rows_is_told_in_a_few_lines(workspace: Workspace) -> None:
    rows = read_rows("sample-org.csv")
    workspace.write_export(rows + rows[:30])
    run = workspace.hrsync("plan")
    assert run.code == 4
    told = [ln for ln in run.stdout.splitlines() if "must be unique" in ln]
    assert 0 < len(told) <= 4, f"{len(told)} lines"


def test_plan_json_on_a_bad_export_lists_every_problem(workspace: Workspace) -> None:
    import json

    rows = read_rows("sample-org.csv")
    rows[4]["Work Email"] = "not-an-email"
    rows[5]["Manager ID"] = "E9999"
    workspace.write_export(rows)
    run = workspace.hrsync("plan", "--format", "json")
    assert run.code == 4
    document = json.loads(run.stdout)
    text = json.dumps(document)
    assert "not-an-email" in text
    assert "E9999" in text, document["reason"]


@pytest.mark.parametrize("where", ["missing-folder/plan.json", "."])
def test_sync_with_an_unwritable_out_is_refused_before_anything_is_sent(
    workspace: Workspace, where: str
) -> None:
    # The run applied the org to DX, then died writing --out: "hrsync: FileNotFoundError"
    # with exit 1, so a script read "failed" for a sync that had changed DX.
    out = workspace.root / where
    run = workspace.hrsync("sync", "--format", "json", "--out", str(out))
    assert run.code == 2, run.stdout + run.stderr
    assert "--out" in run.stderr and str(out) in run.stderr
    assert "Error" not in run.stderr  # no exception name: a sentence
    assert not workspace.process_requests()
    assert not workspace.sim.dx.requests  # nothing was even read
