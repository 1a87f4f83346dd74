"""The checks of the second tables (`[[source.join]]`, `[[source.union]]`) once every key
is parsed: each table is read as `[source]` is, so it is checked by the same rules, named
by where it is declared (``source.join[departments]``, ``source.union[acq]``) and the key
within it; then what only one kind has: a join's key and its place among the joins, a
union's fields and its id prefix.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from hrsync.config.crosschecks import (
    _field_template_checks,
    _http_source_checks,
    plain_http_source_checks,
    table_checks,
)
from hrsync.core.export.templates import is_template, template_names
from hrsync.core.people.second_tables import JOIN, PRIMARY, UNION, Kind
from hrsync.core.settings import (
    JOIN_FIELDS,
    JoinSettings,
    Settings,
    SourceSettings,
    UnionSettings,
    keyed_under,
)

# A second table's name: one word, as it prefixes a join's columns
# (``departments.DEPARTMENT_NAME``) and names a union's source in messages and its ids.
TABLE_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_-]*$")

# What each kind's table is, for a message about where it is read.
_WHAT = {JOIN: "the joined table", UNION: "the union's export"}


def table_label(kind: Kind, name: str, position: int) -> str:
    """How messages name a declared table: ``source.join[departments]``, by position
    without a (valid) name."""
    return f"source.{kind}[{name if TABLE_NAME.match(name) else position}]"


# Why each kind needs a name, and why it must be one word.
_NAME_NEEDED = {
    JOIN: '(e.g. "departments"): its columns are read as {name.COLUMN}',
    UNION: '(e.g. "acq"): its employee ids are read as "name:ID" unless id_prefix says otherwise',
}
_ONE_WORD = {
    JOIN: "its columns are read as {name.COLUMN}",
    UNION: "it names the source in messages and its ids' prefix",
}


def table_name(kind: Kind, written: object, position: int) -> tuple[str, str, list[str]]:
    """A declared table's `name` as written: the name ("" without a usable one), how
    messages name the table, and what is wrong with the name."""
    text = written if isinstance(written, str) else ""
    where = table_label(kind, text, position)
    if not text.strip():
        whom = "the join" if kind == JOIN else "the source"
        return "", where, [f"{where}.name must name {whom} {_NAME_NEEDED[kind]}"]
    if not TABLE_NAME.match(text):
        return (
            text,
            where,
            [
                f"{where}.name must be a word of letters, digits, _ and - ({_ONE_WORD[kind]}), "
                f"got {text!r}"
            ],
        )
    return text, where, []


def second_table_checks(s: Settings) -> list[str]:
    p: list[str] = []
    p.extend(_name_checks(s.source))
    joins = s.source.join
    for at, join in enumerate(joins):
        where = table_label(JOIN, join.name, at + 1)
        p.extend(_table_checks(JOIN, joins, at, where))
        p.extend(_order_checks(s.source, joins, at, where))
    join_names = {join.name for join in joins}
    unions = s.source.union
    prefixes: list[tuple[str, str]] = []  # (where, prefix)
    for at, union in enumerate(unions):
        where = table_label(UNION, union.name, at + 1)
        p.extend(_table_checks(UNION, unions, at, where))
        if union.name == PRIMARY or union.name in join_names:
            # Counts, reports and the shrink guard's baseline are kept by source name.
            whose = "the primary export's" if union.name == PRIMARY else "a join's"
            p.append(f"{where}.name {union.name!r} is {whose} name: name the union apart")
        p.extend(_field_checks(s, union, where))
        prefix = union.prefix
        if union.name and not prefix:
            p.append(
                f"{where}.id_prefix must not be empty: it keeps this source's employee ids "
                'apart from the primary export\'s (e.g. "acq:")'
            )
        elif prefix:
            prefixes.append((where, prefix))
    for at, (where, prefix) in enumerate(prefixes):
        for other_where, other in prefixes[at + 1 :]:
            if prefix.startswith(other) or other.startswith(prefix):
                p.append(
                    f"{where}.id_prefix {prefix!r} and {other_where}.id_prefix {other!r} "
                    "overlap: one starts the other, so their ids could collide"
                )
    return p


def _table_checks(
    kind: Kind, declared: Sequence[JoinSettings] | Sequence[UnionSettings], at: int, where: str
) -> list[str]:
    """What every second table is checked for: its name once among its kind, and its
    table read by `[source]`'s rules."""
    name = declared[at].name
    p: list[str] = []
    if name and any(other.name == name for other in declared[:at]):
        p.append(f'{where} is declared twice: each name = "…" once')
    p.extend(_table_rules(declared[at].table, where, _WHAT[kind]))
    return p


def _name_checks(source: SourceSettings) -> list[str]:
    """`source.name`: one word, as it prefixes the export's columns in a precedence list,
    and no join's name, whose columns it would shadow."""
    name = source.name
    if not name:
        return []
    if not TABLE_NAME.match(name):
        return [
            "source.name must be a word of letters, digits, _ and - (a precedence list reads "
            f"the export's columns as name.COLUMN), got {name!r}"
        ]
    if any(join.name == name for join in source.join):
        return [f"source.name {name!r} is also a join's name: name them apart"]
    return []


def _table_rules(table: SourceSettings, where: str, what: str) -> list[str]:
    """The `[source]` rules for reading a table, about the declared table's own keys."""
    p: list[str] = []
    if table.path is None and not table.url:
        p.append(f"{where}.path or {where}.url is required: where {what} is read")
    p.extend(table_checks(table, where))
    if table.max_bytes < 1:
        p.append(f"{where}.max_bytes must be at least 1, got {table.max_bytes}")
    p.extend(keyed_under(where, problem) for problem in _http_source_checks(table))
    p.extend(plain_http_source_checks(table, where))
    return p


def _order_checks(
    source: SourceSettings, joins: tuple[JoinSettings, ...], at: int, where: str
) -> list[str]:
    """A join's key on the people's side exists before it is joined: an earlier join's
    column, or a field that no join (this one or a later one) builds."""
    left = joins[at].left
    if not left:
        return []
    later = {join.name: join for join in joins[at:] if join.name}
    if left in source.first_of:
        what = "e-mail" if left == "email" else "employee id"
        return [
            f"{where}.on joins on the {what}, which source.fields.{left} takes from a list "
            "of columns, made after every join: join on one of those columns instead"
        ]
    if left in JOIN_FIELDS:
        written = getattr(source.fields, left)
        names = template_names(written) if is_template(written) else (written,)
        for name in names:
            prefix = name.partition(".")[0] if "." in name else ""
            if prefix in later:
                whom = "the join itself" if prefix == joins[at].name else f"the join {prefix!r}"
                what = "e-mail" if left == "email" else "employee id"
                return [
                    f"{where}.on joins on the {what}, which source.fields.{left} builds from "
                    f"{whom} ({written!r}): join on a column of the export instead"
                ]
        return []
    prefix = left.partition(".")[0] if "." in left else ""
    if prefix in later:
        whose = "itself" if prefix == joins[at].name else "it"
        return [
            f"{where}.on names {left!r}, a column of the join {prefix!r}, declared after "
            f"{whose}: a join reads only the columns of the joins above it"
        ]
    return []


def _field_checks(s: Settings, union: UnionSettings, where: str) -> list[str]:
    """`[source.fields]`'s rules for the union's own `[source.union.fields]`."""
    fields = union.table.fields
    p = [
        f"{where}.fields.{key} must name a column, got ''"
        for key in ("employee_id", "email", "name")
        if not getattr(fields, key)
    ]
    p.extend(keyed_under(where, problem) for problem in _field_template_checks(union.table))
    if s.mapping.strategy == "manager" and not (
        fields.manager_id or fields.manager_email or fields.manager_name
    ):
        p.append(
            f"{where}.fields.manager_id, manager_email or manager_name must name a column "
            "for mapping.strategy 'manager'"
        )
    if s.mapping.strategy == "department" and not fields.department:
        p.append(f"{where}.fields.department must name a column for mapping.strategy 'department'")
    return p
