"""Problems with an export and its rows: missing columns, unusable values, rows that
cannot be people, duplicates (pure)."""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass

from hrsync.core.emails import EMAIL_RULE, valid_emails
from hrsync.core.filters import STATUS_REASON, UnknownField, closest_name
from hrsync.core.listing import capped
from hrsync.core.people.columns import _all_kept, _Rows, _take
from hrsync.core.settings import FilterSettings
from hrsync.core.templates import check_template, is_template, template_names
from hrsync.core.text import shown_value
from hrsync.sources.rows import MAX_FIELD_CHARS


@dataclass(frozen=True, slots=True)
class Problem:
    location: str  # "people.csv line 12", or the file name for whole-file problems
    field: str  # HR column name, or logical field name
    value: str
    expected: str  # what was expected, in words
    fatal: bool = True

    def __str__(self) -> str:
        kind = "" if self.fatal else "warning: "
        return f"{kind}{self.location}: {self.field} {self.expected}, got {shown_value(self.value)}"


# ---------------------------------------------------------------- row values

# Unicode category Cc except tab: C0 controls (NUL, CR, LF, ESC, ...), DEL and C1 controls.
_CONTROL = re.compile("[\x00-\x08\x0a-\x1f\x7f-\x9f]")


class _Report:
    """Collects problems and warnings with the export position they belong to."""

    def __init__(self) -> None:
        self.problems: list[tuple[int, Problem]] = []
        self.warnings: list[tuple[int, Problem]] = []

    def fatal(self, position: int, location: str, field: str, value: str, expected: str) -> None:
        self.problems.append((position, Problem(location, field, value, expected)))

    def warn(self, position: int, location: str, field: str, value: str, expected: str) -> None:
        self.warnings.append((position, Problem(location, field, value, expected, fatal=False)))

    def sorted(
        self, keep_warning: Callable[[int], bool]
    ) -> tuple[tuple[Problem, ...], tuple[Problem, ...]]:
        def order(item: tuple[int, Problem]) -> tuple[int, str, str, str]:
            return (item[0], item[1].field, item[1].expected, item[1].value)

        problems = tuple(p for _, p in sorted(self.problems, key=order))
        warnings = tuple(p for pos, p in sorted(self.warnings, key=order) if keep_warning(pos))
        return problems, warnings


def _check_values(data: _Rows, used: Sequence[str], report: _Report) -> None:
    """Every used value of every row, kept or filtered: no control character, no value over
    `MAX_FIELD_CHARS`. A template's columns are used, so its rendered text needs no check."""
    suspicious: set[int] = set()
    for column in used:
        values = data.column(column)
        # A printable column has no control character; the length is one C pass.
        unprintable = not data.printable(column) and not "".join(values).isprintable()
        if unprintable or (not data.short and max(map(len, values), default=0) > MAX_FIELD_CHARS):
            suspicious.update(
                i
                for i, value in enumerate(values)
                if len(value) > MAX_FIELD_CHARS or _CONTROL.search(value)
            )
    for i in sorted(suspicious):
        _report_unusable(i, data.location[i], data.values(i), used, report)


_CONTROL_NAMES = {
    "\x00": "NUL",
    "\n": "a line break, LF",
    "\r": "a line break, CR",
    "\x1b": "ESC",
    "\x7f": "DEL",
}


def _report_unusable(
    position: int,
    location: str,
    values: Mapping[str, str],
    columns: Sequence[str],
    report: _Report,
) -> None:
    """Report each used value of one row that is over the length limit or holds a control
    character (the row's joined text showed there is at least one)."""
    for column in columns:
        value = values.get(column, "")
        if len(value) > MAX_FIELD_CHARS:
            report.fatal(
                position,
                location,
                column,
                value[:40] + "…",
                f"must be at most {MAX_FIELD_CHARS:,} characters, but holds {len(value):,}",
            )
            continue
        found = _CONTROL.search(value)
        if found is None:
            continue
        at = found.start()
        char = found.group()
        name = _CONTROL_NAMES.get(char) or unicodedata.name(char, "a control character")
        report.fatal(
            position,
            location,
            column,
            value[max(0, at - 30) : at + 30],
            f"must not contain control characters (only a tab is allowed): found "
            f"U+{ord(char):04X} ({name}) at character {at + 1}",
        )


def _check_columns(
    export_name: str,
    columns: Sequence[str],
    configured: Mapping[str, str],
    unknown: Sequence[UnknownField],
    report: _Report,
) -> bool:
    """Report configured columns the export lacks (one problem) and unknown filter fields."""
    present = set(columns)
    missing: list[tuple[str, str, str]] = []  # (key, column, the template naming it or "")
    for key, value in configured.items():
        if is_template(value):
            # Its shape first (braces, filters); its columns below, with the others.
            where = f"source.fields.{key}"
            for problem in check_template(value, template_names(value), where=where):
                report.fatal(-1, export_name, "template", value, problem)
            missing.extend(
                (key, name, value) for name in template_names(value) if name not in present
            )
        elif value not in present:
            missing.append((key, value, ""))
    found = capped(columns, empty="(none)")
    if missing:
        details = []
        for key, column, template in missing:
            close = closest_name(column, [c for c in columns if c not in configured.values()])
            hint = f", did you mean {close!r}?" if close else ""
            setting = f"source.fields.{key} {template!r}" if template else f"source.fields.{key}"
            details.append(f"{column!r} ({setting}{hint})")
        report.fatal(
            -1,
            export_name,
            capped(column for _, column, _ in missing),
            found,
            f"must be {'a column' if len(missing) == 1 else 'columns'} of the export: "
            f"missing {capped(details, sep='; ')}; columns found",
        )
    for bad in unknown:
        hint = f"; did you mean {bad.suggestion!r}?" if bad.suggestion else ""
        if (
            bad.field in configured
            and configured[bad.field] not in present
            and not is_template(configured[bad.field])
        ):
            continue  # already reported as a missing column
        report.fatal(
            -1,
            export_name,
            bad.setting,
            bad.field,
            f"must name a column of the export or a field of [source.fields]{hint} "
            f"(columns: {found})",
        )
    return bool(report.problems)


def _warn_unused_status(
    export_name: str,
    columns: Sequence[str],
    configured: Mapping[str, str],
    filters: FilterSettings,
    report: _Report,
) -> None:
    """`status` is unset by default now: an export with a status column whose config names
    none keeps its terminated rows, so say so rather than sync them silently."""
    if "status" in configured or not filters.active_status:
        return
    found = [c for c in columns if c.casefold().replace("_", " ").strip() in _STATUS_NAMES]
    if found:
        report.warn(
            -1,
            export_name,
            "source.fields.status",
            "",
            f"is not set, so filter.active_status {list(filters.active_status)!r} is not "
            f"applied although the export has {capped(repr(c) for c in found)}: every row is "
            f'kept, whatever its status; set e.g. source.fields.status = "{found[0]}"',
        )


_STATUS_NAMES = frozenset({"status", "employment status", "worker status", "employee status"})


def _report_all_filtered(
    export_name: str,
    data: _Rows,
    filters: FilterSettings,
    columns: Mapping[str, str],
    report: _Report,
) -> None:
    counts: dict[str, int] = {}
    for reason in data.reason:
        assert reason is not None
        counts[reason] = counts.get(reason, 0) + 1
    by_reason = capped(f"{count} by {reason}" for reason, count in sorted(counts.items()))
    statuses = sorted(set(data.status))
    seen = ""
    if STATUS_REASON in counts:
        shown = capped(repr(s) for s in statuses)
        seen = f"; the {columns.get('status', 'status')} values in the export are {shown}"
    report.fatal(
        -1,
        export_name,
        "filters",
        capped(sorted(counts)),
        f"must keep at least one of the {data.count} rows, but all were excluded "
        f"({by_reason}){seen}; filter.active_status is {list(filters.active_status)!r}",
    )


def _validate_rows(
    data: _Rows, kept: Sequence[int], columns: Mapping[str, str], report: _Report
) -> Sequence[int]:
    """Report row-level problems; return the rows good enough to become people."""
    ids, emails, names = data.employee_id, data.email, data.name
    valid_email = valid_emails(emails)
    if all(_all_kept(column, kept) for column in (valid_email, ids, names)):
        return kept
    faulty = [i for i in kept if not (ids[i] and names[i] and valid_email[i])]
    id_column, email_column, name_column = columns["employee_id"], columns["email"], columns["name"]
    for i in faulty:
        location = data.location[i]
        if not ids[i]:
            report.fatal(i, location, id_column, "", "must not be empty")
        if not emails[i]:
            report.fatal(
                i,
                location,
                email_column,
                "",
                "must not be empty: every person synced to DX needs an e-mail address",
            )
        elif not valid_email[i]:
            report.fatal(i, location, email_column, emails[i], f"must be {EMAIL_RULE}")
        if not names[i]:
            report.warn(
                i,
                location,
                name_column,
                "",
                "should not be empty; the e-mail address stands in for the name",
            )
    return [i for i in kept if ids[i] and valid_email[i]]


class _Index:
    """Rows by a key: the first row for each key, and every row for keys held more than once."""

    def __init__(self, rows: Sequence[int], keys: Sequence[str]) -> None:
        held = _take(keys, rows)
        # Built backwards, so that the first row of each key is the one that stays.
        self.first: dict[str, int] = dict(zip(reversed(held), reversed(rows), strict=True))
        self.first.pop("", None)
        self.repeated: dict[str, list[int]] = {}
        if len(self.first) + held.count("") != len(held):
            for key, row in zip(held, rows, strict=True):
                if key and self.first[key] != row:
                    self.repeated.setdefault(key, [self.first[key]]).append(row)


def _first(data: _Rows, rows: Iterable[int], keys: Sequence[str]) -> dict[str, int]:
    """One row per key; on a tie the earliest location, whatever the order of the rows."""
    firsts: dict[str, int] = {}
    for row in rows:
        key = keys[row]
        if not key:
            continue
        held = firsts.get(key)
        if held is None or _natural(data.location[row]) < _natural(data.location[held]):
            firsts[key] = row
    return firsts


def _report_duplicates(
    data: _Rows, groups: Mapping[str, list[int]], column: str, what: str, report: _Report
) -> None:
    for value, rows in groups.items():
        # Every row after the first is told once, pointing back at the first; the words
        # are the same for all of them, so a repeated block of rows (an API serving a
        # page twice) groups into one line per column instead of one line per pair.
        first, *later = sorted(rows, key=lambda i: _natural(data.location[i]))
        for row in later:
            report.fatal(
                row,
                f"{data.location[row]} (first at {data.location[first]})",
                column,
                value,
                f"must be unique, but the same {what} is on an earlier row",
            )


def _natural(text: str) -> list[tuple[int, str]]:
    """Sort key that puts 'line 9' before 'line 10'."""
    return [(int(part), "") if part.isdigit() else (0, part) for part in re.split(r"(\d+)", text)]
