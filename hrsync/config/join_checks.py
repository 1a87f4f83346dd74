"""The checks of `[[source.join]]` once every key is parsed: each join's table is checked
as `[source]` is (the same rules, named by the join), and the joins against each other
and against `[source.fields]`.

A message names the join as ``source.join[departments]`` and the key within it.
"""

from __future__ import annotations

import re

from hrsync.config.crosschecks import (
    _http_source_checks,
    plain_http_source_checks,
    table_checks,
)
from hrsync.core.export.templates import is_template, template_names
from hrsync.core.settings import (
    JOIN_FIELDS,
    JoinSettings,
    Settings,
    SourceSettings,
    keyed_under,
)

# A join's name: one word, as it prefixes its columns (``departments.DEPARTMENT_NAME``).
JOIN_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_-]*$")


def join_checks(s: Settings) -> list[str]:
    p: list[str] = []
    joins = s.source.join
    p.extend(_name_checks(s.source))
    seen: set[str] = set()
    for position, join in enumerate(joins, 1):
        where = join_label(join.name, position)
        if join.name and join.name in seen:
            p.append(f'{where} is declared twice: each name = "…" once')
        seen.add(join.name)
        p.extend(table_rules(join.table, where))
        p.extend(_order_checks(s.source, joins, position - 1, where))
    return p


def _name_checks(source: SourceSettings) -> list[str]:
    """`source.name`: one word, as it prefixes the export's columns in a precedence list,
    and no join's name, whose columns it would shadow."""
    name = source.name
    if not name:
        return []
    if not JOIN_NAME.match(name):
        return [
            "source.name must be a word of letters, digits, _ and - (a precedence list reads "
            f"the export's columns as name.COLUMN), got {name!r}"
        ]
    if any(join.name == name for join in source.join):
        return [f"source.name {name!r} is also a join's name: name them apart"]
    return []


def join_label(name: str, position: int) -> str:
    """How messages name a join: ``source.join[departments]``, by position without a name."""
    return f"source.join[{name if JOIN_NAME.match(name) else position}]"


def table_rules(table: SourceSettings, where: str, what: str = "the joined table") -> list[str]:
    """The `[source]` rules for reading a table, about the join's (or a union's) own keys."""
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
