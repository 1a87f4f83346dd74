"""Problems with an export and its rows (pure): missing columns, unusable values, rows that
cannot be people, duplicate ids and e-mails, an export that keeps nobody.

Each check returns its findings; `read_people` sorts them all at the end (`sort_findings`).
"""

from __future__ import annotations

import dataclasses
import re
import unicodedata
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import NamedTuple

from hrsync.core.export.filters import STATUS_REASON, UnknownField, closest_name
from hrsync.core.export.rows import MAX_FIELD_CHARS, Several
from hrsync.core.export.templates import check_template, is_template, template_names
from hrsync.core.listing import capped
from hrsync.core.people.columns import ExportColumns, PersonColumns, all_kept
from hrsync.core.people.emails import EMAIL_RULE, email_fault, valid_emails
from hrsync.core.settings import FilterSettings
from hrsync.core.text import natural_key, shown_value


@dataclass(frozen=True, slots=True)
class Problem:
    location: str  # "people.csv line 12", or the file name for whole-file problems
    field: str  # HR column name, or logical field name
    value: str
    expected: str  # what was expected, in words
    fatal: bool = True
    # The rows (positions) of the people this problem holds when a run holds people for
    # problems of their own row (`hold_people`; the held guard, `sync.max_held`, may still
    # refuse them); empty: a problem of the export, which refuses the run. Not part of
    # what the problem says, so not compared.
    holds: tuple[int, ...] = dataclasses.field(default=(), compare=False)
    # The value is the export's header (the columns found), not a person's data: where a
    # problem is told without values (a run's stored reason, its webhook), it is kept.
    header: bool = dataclasses.field(default=False, compare=False)

    def __str__(self) -> str:
        kind = "" if self.fatal else "warning: "
        return f"{kind}{self.location}: {self.field} {self.expected}, got {shown_value(self.value)}"


# A problem and the position of the row it is about (-1: the whole export), by which
# problems are told in export order.
Finding = tuple[int, Problem]

WHOLE_EXPORT = -1


def fatal(position: int, location: str, field: str, value: str, expected: str) -> Finding:
    return (position, Problem(location, field, value, expected))


def warning(position: int, location: str, field: str, value: str, expected: str) -> Finding:
    return (position, Problem(location, field, value, expected, fatal=False))


def of_person(
    position: int,
    location: str,
    field: str,
    value: str,
    expected: str,
    holds: Sequence[int] = (),
) -> Finding:
    """A fatal problem of one person's row (or of the few rows in `holds`, a duplicate or a
    cycle): a run that holds people holds them instead of refusing the export."""
    rows = tuple(holds) or (position,)
    return (position, Problem(location, field, value, expected, holds=rows))


def sort_findings(
    findings: Iterable[Finding], keep_warning: Callable[[int], bool] = lambda _: True
) -> tuple[tuple[Problem, ...], tuple[Problem, ...]]:
    """The problems and the warnings (those `keep_warning` keeps, by position), each in
    export order."""

    def order(item: Finding) -> tuple[int, str, str, str]:
        return (item[0], item[1].field, item[1].expected, item[1].value)

    ordered = sorted(findings, key=order)
    problems = tuple(p for _, p in ordered if p.fatal)
    warnings = tuple(p for at, p in ordered if not p.fatal and keep_warning(at))
    return problems, warnings


def check_columns(
    export_name: str,
    columns: Sequence[str],
    configured: Mapping[str, str],
    unknown: Sequence[UnknownField],
    filters: FilterSettings,
) -> list[Finding]:
    """Configured columns the export lacks (one problem), unknown filter fields, and a status
    column the config leaves unused (a warning)."""
    found = _warn_unused_status(export_name, columns, configured, filters)
    present = set(columns)
    missing: list[tuple[str, str, str]] = []  # (key, column, the template naming it or "")
    for key, value in configured.items():
        if is_template(value):
            # Its shape first (braces, filters); its columns below, with the others.
            where = f"source.fields.{key}"
            for problem in check_template(value, template_names(value), where=where):
                found.append(fatal(WHOLE_EXPORT, export_name, "template", value, problem))
            missing.extend(
                (key, name, value) for name in template_names(value) if name not in present
            )
        elif value not in present:
            missing.append((key, value, ""))
    listed = capped(columns, empty="(none)")
    if missing:
        details = []
        for key, column, template in missing:
            close = closest_name(column, [c for c in columns if c not in configured.values()])
            hint = f", did you mean {close!r}?" if close else ""
            setting = f"source.fields.{key} {template!r}" if template else f"source.fields.{key}"
            details.append(f"{column!r} ({setting}{hint})")
        expected = (
            f"must be {'a column' if len(missing) == 1 else 'columns'} of the export: "
            f"missing {capped(details, sep='; ')}; columns found"
        )
        field = capped(column for _, column, _ in missing)
        columns_problem = Problem(export_name, field, listed, expected, header=True)
        found.append((WHOLE_EXPORT, columns_problem))
    for bad in unknown:
        hint = f"; did you mean {bad.suggestion!r}?" if bad.suggestion else ""
        if (
            bad.field in configured
            and configured[bad.field] not in present
            and not is_template(configured[bad.field])
        ):
            continue  # already reported as a missing column
        found.append(
            fatal(
                WHOLE_EXPORT,
                export_name,
                bad.setting,
                bad.field,
                f"must name a column of the export or a field of [source.fields]{hint} "
                f"(columns: {listed})",
            )
        )
    return found


def _warn_unused_status(
    export_name: str,
    columns: Sequence[str],
    configured: Mapping[str, str],
    filters: FilterSettings,
) -> list[Finding]:
    """`status` is unset by default now: an export with a status column whose config names
    none keeps its terminated rows, so say so rather than sync them silently."""
    if "status" in configured or not filters.active_status:
        return []
    found = [c for c in columns if c.casefold().replace("_", " ").strip() in _STATUS_NAMES]
    if not found:
        return []
    return [
        warning(
            WHOLE_EXPORT,
            export_name,
            "source.fields.status",
            "",
            f"is not set, so filter.active_status {list(filters.active_status)!r} is not "
            f"applied although the export has {capped(repr(c) for c in found)}: every row is "
            f'kept, whatever its status; set e.g. source.fields.status = "{found[0]}"',
        )
    ]


_STATUS_NAMES = frozenset({"status", "employment status", "worker status", "employee status"})

# Unicode category Cc except tab: C0 controls (NUL, CR, LF, ESC, ...), DEL and C1 controls.
_CONTROL = re.compile("[\x00-\x08\x0a-\x1f\x7f-\x9f]")


def check_values(export: ExportColumns, used: Sequence[str]) -> list[Finding]:
    """Every used value of every row, kept or filtered: no control character, no value over
    `MAX_FIELD_CHARS`. A template's columns are used, so its rendered text needs no check."""
    suspicious: set[int] = set()
    for column in used:
        values = export.column(column)
        # A printable column has no control character; the length is one C pass.
        unprintable = not export.printable(column) and not "".join(values).isprintable()
        longest = 0 if export.short else max(map(len, values), default=0)
        if unprintable or longest > MAX_FIELD_CHARS:
            suspicious.update(
                i
                for i, value in enumerate(values)
                if len(value) > MAX_FIELD_CHARS or _CONTROL.search(value)
            )
    return [
        finding
        for i in sorted(suspicious)
        for finding in _unusable(i, export.locations[i], export.values(i), used)
    ]


class TextColumns(NamedTuple):
    """Which columns of the fields take which JSON values as text (`check_several`)."""

    fields: Collection[str]  # every column a field reads: an object or a list is no text
    words: Collection[str]  # e-mails and names: a number is no text either
    flags: Collection[str]  # the status: a boolean may be one (`true` for active)


def wrong_kind(what: Several, column: str, text: TextColumns) -> bool:
    """Whether a JSON value of another kind than text (`Several.kind`) is wrong in
    `column`: an object or a list always; a number only where an e-mail or a name is
    read (HR APIs give ids and codes as numbers); a boolean anywhere but the status."""
    if what.kind == "a number":
        return column in text.words
    if what.kind == "a boolean":
        return column not in text.flags
    return True


def check_several(
    several: Mapping[int, Mapping[str, Several]],
    kept: Sequence[int],
    locations: Sequence[str],
    columns: Collection[str] | TextColumns,
) -> list[Finding]:
    """Each kept row whose value in one of `columns` is several different values (a JSON
    list not picked from): a problem of that person's row, naming the values and a path
    that picks one. Likewise a value of the wrong kind (an object where an e-mail is
    expected): named as what it is, ``is an object, expected text``."""
    if not several:
        return []
    text = columns if isinstance(columns, TextColumns) else TextColumns(columns, (), ())
    kept_rows = set(kept)
    found: list[Finding] = []
    for i in sorted(several):
        if i not in kept_rows:
            continue
        for column, what in several[i].items():
            if column not in text.fields:
                continue
            if what.kind is not None:
                if wrong_kind(what, column, text):
                    found.append(
                        of_person(
                            i,
                            locations[i],
                            column,
                            what.values[0] if what.values else "",
                            f"is {what.kind}, expected text",
                        )
                    )
                continue
            by_key = what.pick[::-1].replace("]0[", "]eulav=yek[", 1)[::-1]
            found.append(
                of_person(
                    i,
                    locations[i],
                    column,
                    capped(what.values, limit=5, sep="; "),
                    f"holds several values: {capped(map(shown_value, what.values), limit=5)}; "
                    f"pick one with a path such as {what.pick!r} or {by_key!r} "
                    f"(see How lists are read)",
                )
            )
    return found


_CONTROL_NAMES = {
    "\x00": "NUL",
    "\n": "a line break, LF",
    "\r": "a line break, CR",
    "\x1b": "ESC",
    "\x7f": "DEL",
}


def _unusable(
    position: int, location: str, values: Mapping[str, str], columns: Sequence[str]
) -> list[Finding]:
    """Each used value of one row that is over the length limit or holds a control
    character (the row's joined text showed there is at least one)."""
    found: list[Finding] = []
    for column in columns:
        value = values.get(column, "")
        if len(value) > MAX_FIELD_CHARS:
            found.append(
                of_person(
                    position,
                    location,
                    column,
                    value[:40] + "…",
                    f"must be at most {MAX_FIELD_CHARS:,} characters, but holds {len(value):,}",
                )
            )
            continue
        control = _CONTROL.search(value)
        if control is None:
            continue
        at = control.start()
        char = control.group()
        name = _CONTROL_NAMES.get(char) or unicodedata.name(char, "a control character")
        found.append(
            fatal(
                position,
                location,
                column,
                value[max(0, at - 30) : at + 30],
                f"must not contain control characters (only a tab is allowed): found "
                f"U+{ord(char):04X} ({name}) at character {at + 1}",
            )
        )
    return found


def check_some_kept(
    export_name: str,
    reason: Sequence[str | None],
    kept: Sequence[int],
    statuses: Sequence[str],
    filters: FilterSettings,
    configured: Mapping[str, str],
) -> list[Finding]:
    """An export with no rows, or whose every row is filtered out, is fatal: zero people is
    never a sync (it would archive every team), and a wrong `filter.active_status` must not
    look like an empty org."""
    if not reason:
        return [
            fatal(
                WHOLE_EXPORT,
                export_name,
                "rows",
                "",
                "must hold at least one person, but the export has its header and no rows "
                "(an export with no people is never applied: it would archive every team)",
            )
        ]
    if kept:
        return []
    counts: dict[str, int] = {}
    for why in reason:
        assert why is not None
        counts[why] = counts.get(why, 0) + 1
    by_reason = capped(f"{count} by {why}" for why, count in sorted(counts.items()))
    seen = ""
    if STATUS_REASON in counts:
        shown = capped(repr(s) for s in sorted(set(statuses)))
        seen = f"; the {configured.get('status', 'status')} values in the export are {shown}"
    return [
        fatal(
            WHOLE_EXPORT,
            export_name,
            "filters",
            capped(sorted(counts)),
            f"must keep at least one of the {len(reason)} rows, but all were excluded "
            f"({by_reason}){seen}; filter.active_status is {list(filters.active_status)!r}",
        )
    ]


class CheckedRows(NamedTuple):
    valid: Sequence[int]  # the kept rows good enough to become people
    findings: list[Finding]


def validate_rows(
    fields: PersonColumns, kept: Sequence[int], labels: Mapping[str, str]
) -> CheckedRows:
    """Each kept row's id, e-mail and name."""
    ids, emails, names = fields.employee_id, fields.email, fields.name
    valid_email = valid_emails(emails)
    if all(all_kept(column, kept) for column in (valid_email, ids, names)):
        return CheckedRows(kept, [])
    found: list[Finding] = []
    id_column, email_column, name_column = labels["employee_id"], labels["email"], labels["name"]
    for i in kept:
        if ids[i] and names[i] and valid_email[i]:
            continue
        location = fields.location[i]
        if not ids[i]:
            found.append(of_person(i, location, id_column, "", "must not be empty"))
        if not emails[i]:
            found.append(
                of_person(
                    i,
                    location,
                    email_column,
                    "",
                    "must not be empty: every person synced to DX needs an e-mail address",
                )
            )
        elif not valid_email[i]:
            expected = f"must be {EMAIL_RULE}: {email_fault(emails[i])}"
            found.append(of_person(i, location, email_column, emails[i], expected))
        if not names[i]:
            found.append(
                warning(
                    i,
                    location,
                    name_column,
                    "",
                    "should not be empty; the e-mail address stands in for the name",
                )
            )
    return CheckedRows([i for i in kept if ids[i] and valid_email[i]], found)


def report_duplicates(
    fields: PersonColumns,
    ids: Mapping[str, list[int]],
    emails: Mapping[str, list[int]],
    labels: Mapping[str, str],
) -> list[Finding]:
    """Every kept row whose id or e-mail an earlier row holds, naming that row; `ids` and
    `emails` are the rows holding each value held more than once."""
    found: list[Finding] = []
    for groups, column, what in (
        (ids, labels["employee_id"], "employee id"),
        (emails, labels["email"], "e-mail"),
    ):
        for value, rows in groups.items():
            # Every row after the first is told once, pointing back at the first; the words
            # are the same for all of them, so a repeated block of rows (an API serving a
            # page twice) groups into one line per column instead of one line per pair.
            first, *later = sorted(rows, key=lambda i: natural_key(fields.location[i]))
            # Which of the rows is right is not known: every one of them is held.
            found.extend(
                of_person(
                    row,
                    f"{fields.location[row]} (first at {fields.location[first]})",
                    column,
                    value,
                    f"must be unique, but another row holds the same {what}",
                    holds=(first, *later),
                )
                for row in later
            )
    return found
