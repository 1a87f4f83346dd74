"""`read_people` the plain way: one row at a time, each rule as hrsync.core.people states it.

The reference that tests/core/test_people_reference.py holds the column engine
(hrsync.core.people) to. Short and slow on purpose: no columns, no bulk paths, no indexes;
quadratic searches over a handful of rows. It imports the people package's data types
only, and shares with it the rules of other modules (templates, e-mails, capped lists).

Left out: the header check (step 1: a configured column or filter field missing, a
template's own shape). The property test names only columns the export has.
"""

from __future__ import annotations

import fnmatch
import re
import unicodedata
from collections.abc import Collection, Mapping, Sequence
from dataclasses import fields as dataclass_fields

from hrsync.core.export.rows import MAX_FIELD_CHARS, SourceRow
from hrsync.core.export.templates import Template, is_template, template_names
from hrsync.core.listing import capped
from hrsync.core.people import Directory, LeftManagers, Person, Problem, UnknownManager
from hrsync.core.people.emails import EMAIL_RULE, email_fault, is_valid_email
from hrsync.core.people.managers import nobody_expected, suspect_hint
from hrsync.core.settings import DEFAULT_NULL_VALUES, FieldSettings, FilterSettings

STATUS_COLUMNS = {"status", "employment status", "worker status", "employee status"}
CONTROL_NAMES = {"\x00": "NUL", "\n": "a line break, LF", "\r": "a line break, CR"}
CONTROL_NAMES |= {"\x1b": "ESC", "\x7f": "DEL"}


def collapse(value: str) -> str:
    return " ".join(value.split())


def name_key(value: str) -> str:
    """`source.fields.manager_name` compares names without case or punctuation, and reads
    ``Last, First`` as ``First Last``."""
    folded = re.sub(r"[^\w\s,]", "", value.casefold())
    last, comma, rest = folded.partition(",")
    if comma:
        folded = rest.replace(",", " ") + " " + last
    return collapse(folded)


def is_control(char: str) -> bool:
    return unicodedata.category(char) == "Cc" and char != "\t"


def read_people_by_row(
    export_name: str,
    columns: Sequence[str],
    rows: Sequence[SourceRow],
    settings: FieldSettings,
    filters: FilterSettings,
    *,
    also_used: Collection[str] = (),
    null_values: Collection[str] = DEFAULT_NULL_VALUES,
    unknown_manager: str = "refuse",
) -> Directory:
    nulls = {value.strip() for value in null_values}
    configured = {
        f.name: getattr(settings, f.name)
        for f in dataclass_fields(settings)
        if getattr(settings, f.name)
    }
    label = {
        key: f"source.fields.{key} {source!r}" if is_template(source) else source
        for key, source in configured.items()
    }
    found: list[tuple[int, Problem]] = []  # by the row's position; -1: the whole export

    def problem(at: int, where: str, field: str, value: str, expected: str) -> None:
        found.append((at, Problem(where, field, value, expected)))

    def warn(at: int, where: str, field: str, value: str, expected: str) -> None:
        found.append((at, Problem(where, field, value, expected, fatal=False)))

    def cell(row: SourceRow, column: str) -> str:
        value = row.values.get(column, "").strip()
        return "" if value in nulls else value

    def field(row: SourceRow, key: str) -> str:
        source = configured.get(key, "")
        if is_template(source):
            return Template(source).render(lambda name: cell(row, name), blank_if_empty=True)
        return cell(row, source) if source else ""

    # A status column nobody named: its terminated rows would be synced.
    status_columns = [
        c for c in columns if c.casefold().replace("_", " ").strip() in STATUS_COLUMNS
    ]
    if "status" not in configured and filters.active_status and status_columns:
        warn(
            -1,
            export_name,
            "source.fields.status",
            "",
            f"is not set, so filter.active_status {list(filters.active_status)!r} is not "
            f"applied although the export has {capped(repr(c) for c in status_columns)}: "
            f"every row is kept, whatever its status; set e.g. source.fields.status = "
            f'"{status_columns[0]}"',
        )

    # Each row's fields, normalised.
    where = [row.location for row in rows]
    ids = [field(row, "employee_id") for row in rows]
    emails = [field(row, "email").lower() for row in rows]
    names = [collapse(field(row, "name")) for row in rows]
    departments = [collapse(field(row, "department")) for row in rows]
    statuses = [field(row, "status") for row in rows]
    id_refs = [field(row, "manager_id") for row in rows]
    email_refs = [field(row, "manager_email").lower() for row in rows]
    name_refs = [field(row, "manager_name") for row in rows]

    def describe(i: int) -> str:
        who = names[i] or emails[i] or ids[i]
        return f"{who} ({ids[i]})" if ids[i] and who != ids[i] else who

    # Every value hrsync uses, on every row: no control character, no monster.
    used = [
        *configured.values(),
        *(name for source in configured.values() for name in template_names(source)),
        *(_column(name, configured) for name in (*filters.include, *filters.exclude)),
        *also_used,
    ]
    used_columns = list(dict.fromkeys(c for c in used if c in columns))
    for i, row in enumerate(rows):
        for column in used_columns:
            value = cell(row, column)
            # Too long is said alone (and a long value is not searched).
            too_long = len(value) > MAX_FIELD_CHARS
            controls = [] if too_long else [at for at, c in enumerate(value) if is_control(c)]
            if too_long:
                problem(
                    i,
                    where[i],
                    column,
                    value[:40] + "…",
                    f"must be at most {MAX_FIELD_CHARS:,} characters, but holds {len(value):,}",
                )
            elif controls:
                at, char = controls[0], value[controls[0]]
                name = CONTROL_NAMES.get(char) or unicodedata.name(char, "a control character")
                problem(
                    i,
                    where[i],
                    column,
                    value[max(0, at - 30) : at + 30],
                    "must not contain control characters (only a tab is allowed): found "
                    f"U+{ord(char):04X} ({name}) at character {at + 1}",
                )

    # Filters: the first to drop a row names it.
    def reason(i: int) -> str | None:
        active = {collapse(s).casefold() for s in filters.active_status}
        if "status" in configured and active and collapse(statuses[i]).casefold() not in active:
            return "filter.active_status"
        for kind, rules, drops_on_match in (
            ("include", filters.include, False),
            ("exclude", filters.exclude, True),
        ):
            for name, patterns in rules.items():
                value = collapse(cell(rows[i], _column(name, configured))).casefold()
                hit = any(fnmatch.fnmatchcase(value, collapse(p).casefold()) for p in patterns)
                if hit == drops_on_match:
                    return f"filter.{kind}.{name}"
        return None

    why = [reason(i) for i in range(len(rows))]
    kept = [i for i in range(len(rows)) if why[i] is None]
    dropped = [i for i in range(len(rows)) if why[i] is not None]

    # The kept rows' own fields.
    for i in kept:
        if not ids[i]:
            problem(i, where[i], label["employee_id"], "", "must not be empty")
        if not emails[i]:
            problem(
                i,
                where[i],
                label["email"],
                "",
                "must not be empty: every person synced to DX needs an e-mail address",
            )
        elif not is_valid_email(emails[i]):
            problem(
                i,
                where[i],
                label["email"],
                emails[i],
                f"must be {EMAIL_RULE}: {email_fault(emails[i])}",
            )
        if not names[i]:
            warn(
                i,
                where[i],
                label["name"],
                "",
                "should not be empty; the e-mail address stands in for the name",
            )

    # Ids and e-mails held twice among the kept rows.
    for keys, key, what in ((ids, "employee_id", "employee id"), (emails, "email", "e-mail")):
        for i in kept:
            earlier = [j for j in kept if j < i and keys[j] == keys[i]]
            if keys[i] and earlier:
                first = where[earlier[0]]
                problem(
                    i,
                    f"{where[i]} (first at {first})",
                    label[key],
                    keys[i],
                    f"must be unique, but another row holds the same {what}",
                )

    # Managers. A reference names the first kept row it matches, else the first filtered
    # out one; among several references the id wins, then the e-mail, then the name.
    name_keys = [name_key(n) for n in names]
    by = {"employee id": ids, "e-mail": emails, "name": name_keys}

    def matches(what: str, ref: str, among: Sequence[int]) -> list[int]:
        return [j for j in among if ref and by[what][j] == ref]

    def lookup(what: str, ref: str) -> int | None:
        first = matches(what, ref, kept) or matches(what, ref, dropped)
        return first[0] if first else None

    manager: list[str | None] = [None] * len(rows)
    left_at: dict[int, int] = {}  # a kept row -> the filtered-out row it names as manager
    up: dict[int, int | None] = {}  # the manager's row, for filter.root
    ambiguous: set[int] = set()
    absent: dict[tuple[str, str], list[int]] = {}
    nobody: dict[str, list[tuple[int, str, str]]] = {}
    for i in kept:
        given = [
            ("employee id", "manager_id", id_refs[i], id_refs[i], ids[i]),
            ("e-mail", "manager_email", email_refs[i], email_refs[i], emails[i]),
            ("name", "manager_name", name_refs[i], name_key(name_refs[i]), None),
        ]
        references = [reference for reference in given if reference[2]]
        if not references:
            continue
        what, column, written, ref, own = references[0]
        among_kept = matches(what, ref, kept)
        chosen = lookup(what, ref)
        if chosen is None:
            if unknown_manager == "top":
                absent.setdefault((label[column], written), []).append(i)
            else:
                nobody.setdefault(what, []).append((i, label[column], written))
            continue
        if what == "name" and len(among_kept) > 1:
            listed = capped((f"{describe(j)} at {where[j]}" for j in among_kept), sep="; ")
            problem(
                i,
                where[i],
                label[column],
                written,
                f"must name one person, but it matches {len(among_kept)}: {listed}; give the "
                "manager by id or e-mail too (source.fields.manager_id or manager_email), "
                "which wins over the name",
            )
            continue
        up[i] = chosen
        if len(among_kept) > 1:
            ambiguous.add(i)
        if why[chosen] is not None:
            left_at[i] = chosen
            warn(
                i,
                where[i],
                label[column],
                written,
                f"names {describe(chosen)} at {where[chosen]}, who is excluded by "
                f"{why[chosen]}; {describe(i)} stays in their team, led by the nearest "
                "manager above who is kept, until HR names a new manager",
            )
        elif chosen == i or ref == own:
            problem(
                i,
                where[i],
                label[column],
                written,
                "must name someone else: a person cannot be their own manager",
            )
            up[i] = None
        else:
            manager[i] = ids[chosen] or None
            by_email = lookup("e-mail", email_refs[i]) if id_refs[i] else None
            if by_email is not None and by_email != chosen:
                warn(
                    i,
                    where[i],
                    label["manager_email"],
                    email_refs[i],
                    f"names {describe(by_email)}, but {label['manager_id']} names "
                    f"{describe(chosen)}; the employee id wins",
                )
    # References matching nobody, told with the hint their number allows (its wording is
    # the engine's own).
    kinds = {
        "employee id": lambda j: bool(id_refs[j]),
        "e-mail": lambda j: bool(email_refs[j] and not id_refs[j]),
        "name": lambda j: bool(name_refs[j] and not id_refs[j] and not email_refs[j]),
    }

    def evidence(what: str) -> tuple[int, list[str]]:
        theirs = {"employee id": ids, "e-mail": emails}.get(what, [])
        return sum(1 for j in kept if kinds[what](j)), [theirs[j] for j in kept] if theirs else []

    for what, misses in nobody.items():
        expected = nobody_expected(what, [written for _, _, written in misses], *evidence(what))
        for i, column, written in misses:
            problem(i, where[i], column, written, expected)
    unknown = tuple(
        UnknownManager(column, value, len(naming), where[naming[0]])
        for (column, value), naming in absent.items()
    )
    # With unknown_manager = "top", the same doubt about the export, in each warning.
    what_of = {
        label.get("manager_name", ""): "name",
        label.get("manager_email", ""): "e-mail",
        label.get("manager_id", ""): "employee id",
    }
    doubt: dict[str, str | None] = {}
    for what in ("employee id", "e-mail", "name"):
        missing = [v for (c, v), naming in absent.items() if what_of.get(c) == what for _ in naming]
        if missing:
            doubt[what] = suspect_hint(what, missing, *evidence(what))
    for u in unknown:
        who = "person naming it is" if u.reports == 1 else "people naming it are"
        hint = doubt.get(what_of.get(u.field, "name"))
        warn(
            -1,
            export_name,
            u.field,
            u.value,
            f"matches nobody in the export; {u.reports} {who} top of the org "
            f'(first at {u.first}; source.unknown_manager = "top")'
            + (f"; but {hint}" if hint else ""),
        )

    # Cycles, among people with one id and one manager (the others are fatal already).
    def single(i: int) -> bool:
        return i not in ambiguous and sum(ids[j] == ids[i] for j in kept) == 1

    manager_of = {ids[i]: manager[i] for i in kept if ids[i] and manager[i] and single(i)}
    cycles: list[list[str]] = []
    for start in manager_of:
        chain: list[str] = []
        walked: str | None = start
        while walked in manager_of and walked not in chain:
            chain.append(walked)
            walked = manager_of[walked]
        if walked in chain:
            cycle = chain[chain.index(walked) :]
            smallest = cycle.index(min(cycle))
            cycle = cycle[smallest:] + cycle[:smallest]
            if cycle not in cycles:
                cycles.append(cycle)
    cycle_column = next(
        (label[k] for k in ("manager_id", "manager_email", "manager_name") if k in label), ""
    )
    for cycle in cycles:
        owner = next(i for i in kept if ids[i] == cycle[0])
        others = capped(where[next(i for i in kept if ids[i] == e)] for e in cycle[1:])
        problem(
            owner,
            f"{where[owner]} (cycle with {others})",
            cycle_column,
            capped([*cycle, cycle[0]], sep=" → "),
            "must not form a reporting cycle (each id's manager is the next one)",
        )

    # filter.root: the root and everyone below, through filtered-out managers too.
    in_org: set[int] | None = None
    root = (filters.root or "").strip()
    if root:

        def by_id_or_email(among: Sequence[int]) -> int | None:
            hits = matches("employee id", root, among) or matches("e-mail", root.lower(), among)
            return hits[0] if hits else None

        top = by_id_or_email(kept)
        if top is None:
            gone = by_id_or_email(dropped)
            problem(
                -1,
                export_name,
                "filter.root",
                root,
                f"names {describe(gone)} at {where[gone]}, who is excluded by {why[gone]}"
                if gone is not None
                else "must be the employee id or e-mail of a person in the export",
            )
        else:
            for i in dropped:
                boss = lookup("employee id", id_refs[i])
                if boss is None:
                    boss = lookup("e-mail", email_refs[i])
                if boss is None:
                    boss = lookup("name", name_key(name_refs[i]))
                up[i] = boss if boss != i else None
            below = {top}
            grown = True
            while grown:
                more = {i for i, boss in up.items() if boss in below} - below
                grown = bool(more)
                below |= more
            in_org = {i for i in below if why[i] is None}
            manager[top] = None

    # Managers who left: each filtered-out manager a kept person (of the org, not its
    # root) names, and the filtered-out managers above them up to the first kept one.
    root_row = top if root and in_org is not None else None

    def line_of(i: int) -> int | None:
        for what, ref in (
            ("employee id", id_refs[i]),
            ("e-mail", email_refs[i]),
            ("name", name_key(name_refs[i])),
        ):
            boss = lookup(what, ref)
            if boss is not None:
                return boss if boss != i else None
        return None

    of_person: dict[str, str] = {}
    gone_people: dict[str, Person] = {}
    gone_why: dict[str, str] = {}
    for i, boss in sorted(left_at.items()):
        if not ids[i] or not ids[boss] or i == root_row:
            continue
        if in_org is not None and i not in in_org:
            continue
        of_person[ids[i]] = ids[boss]
        at: int | None = boss
        while at is not None and why[at] is not None and ids[at] not in gone_people:
            above = line_of(at)
            gone_people[ids[at]] = Person(
                employee_id=ids[at],
                email=emails[at],
                name=names[at] or emails[at] or ids[at],
                manager_id=None if above is None else ids[above] or None,
                department=departments[at] or None,
                status=statuses[at] or None,
                at=where[at],
                row={key: cell(rows[at], key) for key in rows[at].values},
            )
            gone_why[ids[at]] = str(why[at])
            at = above if above is not None and ids[above] else None

    # Nobody kept.
    if not rows:
        problem(
            -1,
            export_name,
            "rows",
            "",
            "must hold at least one person, but the export has its header and no rows "
            "(an export with no people is never applied: it would archive every team)",
        )
    elif not kept:
        counts = {r: why.count(r) for r in sorted({r for r in why if r is not None})}
        by_reason = capped(f"{count} by {r}" for r, count in counts.items())
        seen = ""
        if "filter.active_status" in counts:
            shown = capped(repr(s) for s in sorted(set(statuses)))
            seen = f"; the {configured.get('status', 'status')} values in the export are {shown}"
        problem(
            -1,
            export_name,
            "filters",
            capped(sorted(counts)),
            f"must keep at least one of the {len(rows)} rows, but all were excluded "
            f"({by_reason}){seen}; filter.active_status is {list(filters.active_status)!r}",
        )

    # The people: valid kept rows (of the org), the first of each id.
    people = tuple(
        Person(
            employee_id=ids[i],
            email=emails[i],
            name=names[i] or emails[i],
            manager_id=manager[i],
            department=departments[i] or None,
            status=statuses[i] or None,
            at=where[i],
            row={key: cell(rows[i], key) for key in rows[i].values},
        )
        for i in kept
        if ids[i]
        and is_valid_email(emails[i])
        and (in_org is None or i in in_org)
        and next(j for j in kept if ids[j] == ids[i]) == i
    )
    if not people and not any(p.fatal for _, p in found):
        problem(-1, export_name, "people", "0", "must number at least one")

    excluded = {r: why.count(r) for r in {r for r in why if r is not None}}
    if in_org is not None and len(kept) > len(in_org):
        excluded["filter.root"] = len(kept) - len(in_org)
    # In export order; on one row, by field, then by what was expected.
    found.sort(key=lambda f: (f[0], f[1].field, f[1].expected, f[1].value))
    return Directory(
        people=people,
        excluded=sum(excluded.values()),
        excluded_by_reason=excluded,
        problems=tuple(p for _, p in found if p.fatal),
        # Warnings about people outside the org are dropped.
        warnings=tuple(
            p
            for at, p in found
            if not p.fatal and (at < 0 or (why[at] is None and (in_org is None or at in in_org)))
        ),
        rows_read=len(rows),
        unknown_managers=unknown,
        left=LeftManagers(gone_people, gone_why, of_person)
        if of_person
        else LeftManagers({}, {}, {}),
    )


def _column(name: str, configured: Mapping[str, str]) -> str:
    """The column a filter names: a configured field's, else the column of that name."""
    source = configured.get(name, "")
    return source if source else name
