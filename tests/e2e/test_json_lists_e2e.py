"""Lists in a JSON directory (issue 22): Google Workspace users whose `relations` hold a
dotted-line manager beside the manager. With the documented pick the whole org is read;
without it only the people with two values are held and everyone else is synced."""

from __future__ import annotations

import json
from typing import Any

from tests.e2e.conftest import ROOT, Workspace, read_rows

# Two people (no one reports to them) with a dotted-line manager listed first.
DOTTED = {"E110": "E011", "E111": "E010"}

# As docs/reference/exports.md writes it ("How lists are read"), with the manager path
# for each test.
FIELDS = """
[source.fields]
employee_id = "externalIds[type=organization].value"
email = "primaryEmail"
name = "name.fullName"
manager_id = ""
manager_email = "{manager}"
department = "organizations[primary].department"
"""


def test_the_docs_show_this_config() -> None:
    docs = (ROOT / "docs" / "reference" / "exports.md").read_text(encoding="utf-8")
    assert FIELDS.format(manager="relations[type=manager].value") in docs
    assert "holds several values: 'tomas.herrera@example.com'" in docs


def google_users() -> dict[str, Any]:
    """sample-org.csv as Google Directory API users (`users.list`)."""
    rows = read_rows("sample-org.csv")
    email = {row["Employee ID"]: row["Work Email"] for row in rows}
    users = []
    for row in rows:
        relations = []
        if row["Employee ID"] in DOTTED:
            dotted = email[DOTTED[row["Employee ID"]]]
            relations.append({"type": "dotted_line_manager", "value": dotted})
        if row["Manager ID"]:
            relations.append({"type": "manager", "value": email[row["Manager ID"]]})
        users.append(
            {
                "kind": "admin#directory#user",
                "primaryEmail": row["Work Email"],
                "name": {"fullName": row["Full Name"]},
                "externalIds": [
                    {"type": "custom", "customType": "badge", "value": "B" + row["Employee ID"]},
                    {"type": "organization", "value": row["Employee ID"]},
                ],
                "relations": relations,
                "organizations": [
                    {"name": "Old Co", "department": "Alumni"},
                    {"name": "Example", "department": row["Department"], "primary": True},
                ],
            }
        )
    return {"kind": "admin#directory#users", "users": users}


def use_google(workspace: Workspace, manager: str) -> None:
    export = workspace.root / "users.json"
    export.write_text(json.dumps(google_users()), encoding="utf-8")
    text = workspace.config.read_text(encoding="utf-8")
    start, end = text.index("[source.fields]"), text.index("[mapping]")
    source = f'records_path = "users"\n{FIELDS.format(manager=manager)}\n'
    text = text[:start] + source + text[end:]
    workspace.config.write_text(text.replace(str(workspace.export), str(export)), "utf-8")


def members(workspace: Workspace) -> dict[str, set[str]]:
    return {t["name"]: set(t["member_emails"]) for t in workspace.sim.dx.teams_view()}


def test_the_documented_pick_reads_the_whole_org(workspace: Workspace) -> None:
    use_google(workspace, "relations[type=manager].value")
    run = workspace.hrsync("sync")
    assert run.code == 0, run.stdout[-3000:]
    assert run.finished["outcome"] == "applied"
    assert run.finished["counts"]["held"] == 0
    teams = members(workspace)
    assert {"emily.nguyen@example.com", "arjun.patel@example.com"} <= teams["Payments"]
    # Everyone but the CEO (who leads the top team) is a member of a team.
    assert set().union(*teams.values()) == everyone() - {"ada.okafor@example.com"}


def test_without_a_pick_only_the_people_with_two_managers_are_held(
    workspace: Workspace,
) -> None:
    use_google(workspace, "relations.value")
    run = workspace.hrsync("sync")
    assert run.code == 0, run.stdout[-3000:]
    assert run.finished["outcome"] == "applied"
    held = {h["person"]: h for h in run.named("sync.person_held")}
    assert set(held) == set(DOTTED)
    assert run.finished["counts"]["held"] == len(DOTTED)
    plan = workspace.hrsync("plan")
    assert "relations.value holds several values:" in plan.stdout
    assert "'relations[0].value'" in plan.stdout
    assert "holds several values: 'tomas.herrera@example.com', 'katherine" in plan.stdout
    # Everyone else is synced: the people with one manager are in their teams.
    teams = members(workspace)
    held_emails = {"arjun.patel@example.com", "emily.nguyen@example.com"}
    expected = everyone() - held_emails - {"ada.okafor@example.com"}
    assert set().union(*teams.values()) == expected


def everyone() -> set[str]:
    return {row["Work Email"] for row in read_rows("sample-org.csv")}


def test_explain_tells_of_a_person_a_filter_on_a_pick_leaves_out(workspace: Workspace) -> None:
    use_google(workspace, "relations[type=manager].value")
    with workspace.config.open("a", encoding="utf-8") as fh:
        fh.write('\n[filter.exclude]\n"externalIds[type=custom].value" = ["BE119"]\n')
    plan = workspace.hrsync("plan")
    assert plan.code == 0, plan.stdout[-3000:]
    (read,) = plan.named("export.read")
    assert read["excluded"] == 1  # the sync leaves her out
    run = workspace.hrsync("explain", "E119")
    assert run.code == 0, run.stdout + run.stderr
    assert run.stdout.startswith("E119 is at ")
    assert (
        "left out by filter.exclude.externalIds[type=custom].value "
        "(externalIds[type=custom].value 'BE119')"
    ) in run.stdout
