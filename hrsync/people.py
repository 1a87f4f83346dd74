"""Person, normalisation of export rows, and validation of the export (pure).

CONTRACT (shared with mapping, identity and the engine; change only with care):
- `SourceRow` is what a reader yields: where the row came from and its values.
- `Person` is one validated, normalised person.
- `Problem` names location, field, value and what was expected.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field


@dataclass(frozen=True, slots=True)
class SourceRow:
    """One record of an export, as read. `location` is for messages:
    ``people.csv line 12`` or ``report.json Report_Entry[3]``."""

    location: str
    values: Mapping[str, str]


@dataclass(frozen=True, slots=True)
class Person:
    employee_id: str
    email: str  # lower-cased, validated
    name: str  # trimmed, inner whitespace collapsed
    manager_id: str | None  # the manager's employee_id, resolved even when the export gives e-mails
    department: str | None
    status: str | None
    location: str  # where the row came from, for messages
    # Every column of the row by its HR name (normalised text), for templates and filters.
    attributes: Mapping[str, str] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class Problem:
    location: str  # "people.csv line 12", or the file name for whole-file problems
    field: str  # HR column name, or logical field name
    value: str
    expected: str  # what was expected, in words
    fatal: bool = True

    def __str__(self) -> str:
        kind = "" if self.fatal else "warning: "
        return f"{kind}{self.location}: {self.field} {self.expected}, got {self.value!r}"
