"""Which export rows take part in a sync: status, include and exclude rules (pure).

- `filter.active_status`: a row is kept when its status is one of these, compared without
  regard to case or surrounding spaces. An empty list keeps every status.
- `filter.include` / `filter.exclude`: ``{field: [patterns]}``. A field is a logical field
  name (``email``, ``department``, ... as configured in `[source.fields]`) or else an HR
  column name exactly as in the export. Patterns are shell globs (``*``, ``?``, ``[abc]``),
  matched against the whole value without regard to case, after trimming and collapsing
  inner spaces; a pattern without wildcards is an exact match. A row is kept when, for every
  include field, its value matches one of that field's patterns, and for no exclude field
  does its value match one of the patterns.

`filter.root` needs the reporting lines, so it lives with validation in hrsync.core.people.
"""

from __future__ import annotations

import difflib
import fnmatch
import re
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass, fields

from hrsync.core.settings import FieldSettings, FilterSettings
from hrsync.core.text import collapse_whitespace

LOGICAL_FIELDS: tuple[str, ...] = tuple(f.name for f in fields(FieldSettings))

STATUS_REASON = "filter.active_status"


def canonical(value: str) -> str:
    """The form filters compare: trimmed, inner whitespace collapsed, case-folded."""
    return collapse_whitespace(value).casefold()


def glob_pattern(patterns: Iterable[str]) -> re.Pattern[str]:
    """One regular expression matching a canonical value against any of the globs."""
    parts = [fnmatch.translate(canonical(pattern)) for pattern in patterns]
    return re.compile("|".join(f"(?:{part})" for part in parts) or "(?!)")


def column_for(field: str, fields: FieldSettings, columns: Collection[str]) -> str | None:
    """The HR column a filter field refers to: a configured logical name first, then a column."""
    if field in LOGICAL_FIELDS:
        configured: str = getattr(fields, field)
        if configured:
            return configured
    if field in columns:
        return field
    return None


@dataclass(frozen=True)
class UnknownField:
    setting: str  # e.g. "filter.include.departmnet"
    field: str
    suggestion: str | None


@dataclass(frozen=True)
class _Rule:
    setting: str
    column: str
    pattern: re.Pattern[str]


@dataclass(frozen=True)
class RowFilter:
    """The compiled status/include/exclude rules for one export's columns."""

    status_column: str | None
    active: frozenset[str]
    include: tuple[_Rule, ...]
    exclude: tuple[_Rule, ...]

    def reason(self, values: Mapping[str, str]) -> str | None:
        """None when the row is kept, else the setting that excludes it."""
        return self.reasons(lambda column: [values.get(column, "")], 1)[0]

    def reasons(
        self,
        column: Callable[[str], Sequence[str]],
        rows: int,
        *,
        status: Sequence[str] | None = None,
    ) -> list[str | None]:
        """`reason` for `rows` rows at once; `column(name)` gives a column's value on every
        row. Each rule is decided once per distinct value, then looked up per row.

        `status` may be passed when the caller already holds the status column.
        """
        out: list[str | None] = [None] * rows
        if self.status_column is not None and self.active:
            statuses = column(self.status_column) if status is None else status
            reason_of = {v: STATUS_REASON for v in set(statuses) if canonical(v) not in self.active}
            if reason_of:
                out = list(map(reason_of.get, statuses))  # None for an active status
        for rule, excludes_on_match in (
            *((rule, False) for rule in self.include),
            *((rule, True) for rule in self.exclude),
        ):
            values = column(rule.column)
            hit = {v for v in set(values) if (rule.pattern.match(canonical(v)) is not None)}
            # An include rule drops the rows that miss it, an exclude rule those that hit it;
            # the first rule to drop a row names it.
            out = [
                reason if reason is not None or (v in hit) != excludes_on_match else rule.setting
                for reason, v in zip(out, values, strict=True)
            ]
        return out


def build_row_filter(
    settings: FilterSettings, fields: FieldSettings, columns: Sequence[str]
) -> tuple[RowFilter, list[UnknownField]]:
    """Compile the rules; fields that name neither a logical field nor a column are reported."""
    unknown: list[UnknownField] = []
    known = set(columns)

    def rules(kind: str, table: Mapping[str, tuple[str, ...]]) -> tuple[_Rule, ...]:
        compiled: list[_Rule] = []
        for name, patterns in table.items():
            setting = f"filter.{kind}.{name}"
            column = column_for(name, fields, known)
            if column is None or column not in known:
                unknown.append(UnknownField(setting, name, _closest(name, columns)))
                continue
            compiled.append(_Rule(setting, column, glob_pattern(patterns)))
        return tuple(compiled)

    include = rules("include", settings.include)
    exclude = rules("exclude", settings.exclude)
    status_column = fields.status or None
    active = frozenset(canonical(status) for status in settings.active_status)
    return RowFilter(status_column, active, include, exclude), unknown


def _closest(field: str, columns: Sequence[str]) -> str | None:
    candidates = list(columns) + [f for f in LOGICAL_FIELDS if f not in columns]
    return closest_name(field, candidates)


def closest_name(name: str, candidates: Sequence[str]) -> str | None:
    """The candidate most like `name`, ignoring case, or None when nothing is close.

    Close means a similarity ratio of at least 0.8: at 0.6 a missing `department` column
    was "corrected" to an unrelated `Dept_State` column, a hint worse than none.
    """
    by_folded = {candidate.casefold(): candidate for candidate in candidates}
    close = difflib.get_close_matches(name.casefold(), list(by_folded), n=1, cutoff=0.8)
    return by_folded[close[0]] if close else None


def did_you_mean(close: str | None) -> str:
    """A message's hint at the name most like the one written (`closest_name`), or ""."""
    return f", did you mean {close!r}?" if close else ""
