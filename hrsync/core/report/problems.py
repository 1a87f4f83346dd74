"""Problems of one kind told once (pure).

One wrong column makes every row fail the same way: 404 problems that say the same thing
are one problem with a count. A kind is the column and what was expected of it; a group
says how many rows, which values (the first 20 distinct, then how many more) and where
they are: each row when there are at most 20 (a person must find each one to fix it),
else the first. A kind seen once reads exactly as the problem itself.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from hrsync.core.listing import LIMIT, capped
from hrsync.core.people import Problem
from hrsync.core.text import shown_value


@dataclass(frozen=True, slots=True)
class ProblemGroup:
    field: str
    expected: str
    fatal: bool
    count: int  # rows with this problem
    first: Problem  # the first of them, in the order given (export order)
    values: tuple[str, ...]  # the first LIMIT distinct values, in order of appearance
    distinct: int  # how many distinct values in all
    locations: tuple[str, ...] = ()  # where the first LIMIT of them are

    def __str__(self) -> str:
        if self.count == 1:
            return str(self.first)
        kind = "" if self.fatal else "warning: "
        values = capped(map(shown_value, self.values), total=self.distinct)
        got = (
            f"got {values}" if self.distinct > 1 else f"got {shown_value(self.values[0])} each time"
        )
        where = (
            f"at {', '.join(self.locations)}"
            if self.count <= len(self.locations)
            else f"first at {self.first.location}"
        )
        return f"{kind}{self.count} rows: {self.field} {self.expected}, {got}; {where}"

    def located(self) -> str:
        """The group where it is, without the HR values: for the run's stored reason, its log
        and a webhook, which tell where to look (file, line, column), as a held person's
        event does. A value may be anyone's e-mail, or text made to look like a link."""
        kind = "" if self.fatal else "warning: "
        rows = "" if self.count == 1 else f"{self.count} rows, first at "
        header = f": {shown_value(self.first.value)}" if self.first.header else ""
        return f"{kind}{rows}{self.first.location}: {self.field} {self.expected}{header}"


def group_problems(problems: Iterable[Problem]) -> tuple[ProblemGroup, ...]:
    """`problems` grouped by kind (column, what was expected, fatal or not), the groups
    in the order their first problem came."""
    firsts: dict[tuple[str, str, bool], Problem] = {}
    counts: dict[tuple[str, str, bool], int] = {}
    values: dict[tuple[str, str, bool], dict[str, None]] = {}
    distinct: dict[tuple[str, str, bool], set[str]] = {}
    locations: dict[tuple[str, str, bool], list[str]] = {}
    for problem in problems:
        key = (problem.field, problem.expected, problem.fatal)
        if key not in firsts:
            firsts[key] = problem
            counts[key] = 0
            values[key] = {}
            distinct[key] = set()
            locations[key] = []
        counts[key] += 1
        if len(locations[key]) < LIMIT:
            locations[key].append(problem.location)
        distinct[key].add(problem.value)
        shown = values[key]
        if len(shown) < LIMIT:
            shown.setdefault(problem.value, None)
    return tuple(
        ProblemGroup(
            field=key[0],
            expected=key[1],
            fatal=key[2],
            count=counts[key],
            first=first,
            values=tuple(values[key]),
            distinct=len(distinct[key]),
            locations=tuple(locations[key]),
        )
        for key, first in firsts.items()
    )


def grouped_lines(problems: Iterable[Problem]) -> list[str]:
    """One line per kind of problem, for a report and its log."""
    return [str(group) for group in group_problems(problems)]


def located_lines(problems: Iterable[Problem]) -> list[str]:
    """One line per kind of problem, where it is, without the values (`located`)."""
    return [group.located() for group in group_problems(problems)]
