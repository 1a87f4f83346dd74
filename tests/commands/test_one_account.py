"""On a terminal the report is the one account: an event the printed report shows is not
told again; every other warning or error is told once, short; nothing is lost."""

from __future__ import annotations

import io
import logging
from collections.abc import Iterator

import pytest

from hrsync import logs
from hrsync.commands import one_account
from hrsync.commands.output import show

DETAIL = "warning: people.csv line 9: Full Name should not be empty, got ''"


@pytest.fixture
def terminal() -> Iterator[io.StringIO]:
    stream = io.StringIO()
    logs.configure("console", "warning", stream, handler=one_account.start(stream))
    yield stream
    one_account.settle()
    logs.configure("json", "info", io.StringIO())


def told(stream: io.StringIO) -> list[str]:
    return stream.getvalue().splitlines()


def test_an_event_the_report_shows_is_not_told_again(
    terminal: io.StringIO, capsys: pytest.CaptureFixture[str]
) -> None:
    log = logs.get_logger("t")
    log.warning("export.warning", detail=DETAIL)
    log.warning("sync.held", total=1, see="hrsync plan")
    log.warning(
        "sync.person_held",
        person="E7",
        name="Gus Hale",
        detail="bad e-mail",
        location="people.csv line 8",
    )
    show(f"Held (1):\n  ! Gus Hale (E7), people.csv line 8: bad e-mail\n  - {DETAIL}")
    one_account.settle()
    assert told(terminal) == []
    assert "Gus Hale" in capsys.readouterr().out


def test_what_the_report_leaves_out_is_told_once_short_after_it(
    terminal: io.StringIO, capsys: pytest.CaptureFixture[str]
) -> None:
    log = logs.get_logger("t")
    long = DETAIL + " and more words" * 30  # past a log line's sentence
    log.warning("export.warning", detail=long)
    log.warning("sync.held", total=1, see="hrsync plan")  # told by the one it counts
    log.warning(
        "sync.person_held",
        person="E7",
        name="Gus Hale",
        detail="bad e-mail",
        location="people.csv line 8",
    )
    assert told(terminal) == []  # held until the report is out
    show("Plan: 3 to create")
    one_account.settle()
    assert told(terminal) == [
        f"hrsync: export {long}",
        "hrsync: warning: E7 (Gus Hale) held: bad e-mail",
    ]
    capsys.readouterr()


def test_a_warning_no_report_carries_is_told_at_once_without_its_fields(
    terminal: io.StringIO,
) -> None:
    log = logs.get_logger("t")
    log.warning(
        "sync.lead_substituted",
        lead="elif@example.com",
        team="Data",
        stand_in="mei@example.com",
        url="https://hr.example.test/" + "x" * 150,
    )
    (line,) = told(terminal)
    assert line.startswith("hrsync: warning: ") and "elif@example.com" in line
    assert "url=" not in line and "xxxx" not in line
    log.info("export.read", people=3)  # below the line a terminal shows
    logs.get_logger("t").error("sync.crashed", error="boom")
    assert told(terminal)[1:] == ["hrsync: error: the run crashed: boom"]


def test_a_library_s_warning_is_told_with_its_secrets_masked(terminal: io.StringIO) -> None:
    logs.register_secret("s3cr3t-value")
    logging.getLogger("apscheduler.scheduler").warning("token s3cr3t-value expired")
    assert told(terminal) == [f"hrsync: warning: token {logs.REDACTED} expired"]


def test_the_line_the_command_line_prints_for_a_crash_is_not_doubled(
    terminal: io.StringIO,
) -> None:
    logs.get_logger("t").error("hrsync.crashed", error="boom")
    one_account.settle()
    assert told(terminal) == []


def test_a_refused_run_s_reason_is_shown_by_the_report_quoting_its_problems(
    terminal: io.StringIO, capsys: pytest.CaptureFixture[str]
) -> None:
    log = logs.get_logger("t")
    reason = "export invalid: people.csv line 4: Work Email must not be empty (and 2 more)"
    log.warning("sync.finished", outcome="refused", reason=reason)
    show("The export has problems; nothing was sent:")
    show("  - people.csv line 4: Work Email must not be empty")
    one_account.settle()
    assert told(terminal) == []
    capsys.readouterr()


def test_a_problem_told_for_many_rows_is_shown_by_the_report_s_row_of_its_first(
    terminal: io.StringIO, capsys: pytest.CaptureFixture[str]
) -> None:
    # A held-guard refusal logs each kind of problem where it is ("5 rows, first at …");
    # the report lists every held person with it: said there, not told again.
    log = logs.get_logger("t")
    problem = "Work E-mail must not be empty"
    log.error("export.problem", detail=f"5 rows, first at people.csv line 17: {problem}")
    log.error("export.problem", detail=f"people.csv line 30: {problem}")
    show(f"Held (5):\n  ! Pia Novak (1015), people.csv line 17: {problem}; DX keeps them")
    one_account.settle()
    assert told(terminal) == [f"hrsync: error: export problem: people.csv line 30: {problem}"]
    capsys.readouterr()
