"""On a terminal the report is the one account: `hrsync plan` and `check` print what the
report shows once, not also as log lines; a warning the report leaves out is printed once,
short. `-v` shows the log; piped, the log stays JSON lines on stderr."""

from __future__ import annotations

import re
import shlex
import sys

import pytest

from tests.e2e.conftest import TOKEN, Workspace, read_rows
from tests.e2e.rehearsing import clean_env, run_on_terminal
from tests.e2e.test_approvals_e2e import reorganised

pytestmark = pytest.mark.slow

HELD = "Priya Raman"
WARNINGS = (
    "Full Name should not be empty",
    "names Rohan Gupta (E128)",
)
# What a log line carries and a report never does: a timestamp first, or key=value fields.
LOG_LINE = re.compile(r"^\s*(\{|\d{4}-\d\d-\d\dT)|\b(run_id|detail)=", re.MULTILINE)


def _one_held_two_warnings(ws: Workspace) -> None:
    """Priya's e-mail is malformed (she is held), Lukas has no name and Nadia's manager is
    excluded by the status filter (two warnings); a log format left to the terminal."""
    rows = read_rows("sample-org.csv")
    for row in rows:
        if row["Employee ID"] == "E010":
            row["Work Email"] = "priya.raman-at-example.com"
        if row["Employee ID"] == "E124":
            row["Full Name"] = ""
        if row["Employee ID"] == "E125":
            row["Manager ID"] = "E128"
    ws.write_export(rows)
    text = ws.config.read_text(encoding="utf-8")
    ws.config.write_text(text.replace('format = "json"', 'format = "auto"'), encoding="utf-8")


def _on_terminal(ws: Workspace, *args: str) -> tuple[int, str]:
    command = shlex.join([sys.executable, "-m", "hrsync", "--config", str(ws.config), *args])
    return run_on_terminal(command, ws.root, {**clean_env(), "HRSYNC_DX_TOKEN": TOKEN})


@pytest.mark.parametrize("command", ["plan", "check", "sync"])
def test_on_a_terminal_the_report_names_each_held_person_and_warning_once_and_no_log_line(
    workspace: Workspace, command: str
) -> None:
    _one_held_two_warnings(workspace)
    code, output = _on_terminal(workspace, command)
    assert code == 0, output
    assert LOG_LINE.search(output) is None, output
    assert output.count(HELD) == 1, output
    for warning in WARNINGS:
        assert output.count(warning) == 1, (warning, output)


def test_with_v_a_terminal_shows_the_log(workspace: Workspace) -> None:
    _one_held_two_warnings(workspace)
    code, output = _on_terminal(workspace, "plan", "-v")
    assert code == 0, output
    logged = [line for line in output.splitlines() if re.match(r"\d{4}-\d\d-\d\dT", line)]
    events = " ".join(logged)
    for event in ("export.read", "export.warning", "sync.person_held", "sync.finished"):
        assert event in events, output
    assert "Held (1)" in output  # and the report


def test_piped_the_log_stays_json_on_stderr_and_the_report_on_stdout(
    workspace: Workspace,
) -> None:
    _one_held_two_warnings(workspace)
    run = workspace.hrsync("plan")
    assert run.code == 0, run.stderr
    assert LOG_LINE.search(run.stdout) is None, run.stdout
    assert "Held (1)" in run.stdout
    lines = [line for line in run.stderr.splitlines() if line.strip()]
    assert lines and all(line.startswith("{") for line in lines), run.stderr
    (held,) = run.named("sync.person_held")
    assert held["name"] == HELD
    assert len(run.named("export.warning")) == 2
    assert run.finished["outcome"] == "planned"


def test_approve_on_a_terminal_prints_its_report_once_and_no_log_line(
    workspace: Workspace,
) -> None:
    plan_id = reorganised(workspace)
    text = workspace.config.read_text(encoding="utf-8")
    workspace.config.write_text(text.replace('format = "json"', 'format = "auto"'), "utf-8")
    code, output = _on_terminal(workspace, "approve", plan_id, "--by", "ana@example.com")
    assert code == 0, output
    assert LOG_LINE.search(output) is None, output
    assert output.count(f"Approved plan {plan_id}") == 1, output
    assert output.count("To apply it now from this shell instead") == 1, output
    assert "hrsync: warning" not in output, output
