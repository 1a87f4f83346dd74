"""Tests for hrsync/core/report/problems.py: problems of one kind told once (issue 11)."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from hrsync.core.people import Problem
from hrsync.core.people.validation import check_columns
from hrsync.core.report.problems import group_problems, grouped_lines, located_lines
from hrsync.core.settings import FilterSettings

NOBODY = "must be the employee id of a person in the export, but it matches nobody"


def row(line: int, field: str, value: str, expected: str, fatal: bool = True) -> Problem:
    return Problem(f"hr.csv line {line}", field, value, expected, fatal)


@pytest.mark.parametrize(
    ("problems", "lines"),
    [
        ([], []),
        # One of a kind reads exactly as the problem.
        (
            [row(2, "ManagerID", "1", NOBODY)],
            [f"hr.csv line 2: ManagerID {NOBODY}, got '1'"],
        ),
        # Many of a kind: one line with the count, the values and every row.
        (
            [row(n, "ManagerID", str(n - 1), NOBODY) for n in range(2, 5)],
            [
                f"3 rows: ManagerID {NOBODY}, got '1', '2', '3'; "
                "at hr.csv line 2, hr.csv line 3, hr.csv line 4"
            ],
        ),
        # The same value every time is said once.
        (
            [row(n, "Status", "", "must not be empty") for n in (3, 4)],
            ["2 rows: Status must not be empty, got '' each time; at hr.csv line 3, hr.csv line 4"],
        ),
        # Kinds keep the order of their first problem; a warning is not a problem's kind.
        (
            [
                row(2, "Email", "x", "must be an e-mail address"),
                row(3, "ManagerID", "9", NOBODY),
                row(4, "Email", "y", "must be an e-mail address"),
                row(5, "Email", "z", "must be an e-mail address", fatal=False),
            ],
            [
                "2 rows: Email must be an e-mail address, got 'x', 'y'; "
                "at hr.csv line 2, hr.csv line 4",
                f"hr.csv line 3: ManagerID {NOBODY}, got '9'",
                "warning: hr.csv line 5: Email must be an e-mail address, got 'z'",
            ],
        ),
    ],
)
def test_problems_are_grouped_by_kind(problems: list[Problem], lines: list[str]) -> None:
    assert grouped_lines(problems) == lines


def test_a_wrong_column_gives_one_line_with_the_first_20_values() -> None:
    problems = [row(n, "ManagerID", str((n - 2) % 22 + 1), NOBODY) for n in range(2, 208)]
    (line,) = grouped_lines(problems)
    assert line.startswith(f"206 rows: ManagerID {NOBODY}, got '1', '2', ")
    assert line.endswith("'20' and 2 more; first at hr.csv line 2")


@given(
    st.lists(
        st.tuples(
            st.sampled_from(["A", "B", "C"]),
            st.sampled_from(["x", "y"]),
            st.text(max_size=3),
            st.booleans(),
        ),
        max_size=60,
    )
)
def test_groups_count_every_problem_once(items: list[tuple[str, str, str, bool]]) -> None:
    problems = [row(i, f, v, e, fatal) for i, (f, e, v, fatal) in enumerate(items)]
    groups = group_problems(problems)
    assert sum(g.count for g in groups) == len(problems)
    assert len({(g.field, g.expected, g.fatal) for g in groups}) == len(groups)
    for group in groups:
        mine = [p for p in problems if (p.field, p.expected, p.fatal) == (
            group.field, group.expected, group.fatal)]  # fmt: skip
        assert group.first == mine[0]
        assert group.distinct == len({p.value for p in mine})
        assert len(group.values) <= 20


def test_a_missing_column_stored_reason_keeps_the_columns_found() -> None:
    """The stored reason leaves HR values out; the export's header is no one's data, and
    without it the reason ended on a dangling "columns found"."""
    columns = ("Employee #", "Work Email", "Full Name")
    configured = {"employee_id": "employee_id", "email": "Work Email"}
    findings = check_columns("people.csv", columns, configured, (), FilterSettings())
    (line,) = located_lines(problem for _, problem in findings)
    assert line.endswith("columns found: 'Employee #, Work Email, Full Name'"), line
