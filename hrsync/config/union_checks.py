"""The checks of `[[source.union]]` once every key is parsed: each union's export is
checked as `[source]` is (the same rules, named by the union), its fields as
`[source.fields]` are, and the unions against each other.

A message names the union as ``source.union[acq]`` and the key within it.
"""

from __future__ import annotations

from hrsync.config.crosschecks import _field_template_checks
from hrsync.config.join_checks import JOIN_NAME, table_rules
from hrsync.core.people.union import PRIMARY
from hrsync.core.settings import Settings, UnionSettings, keyed_under


def union_label(name: str, position: int) -> str:
    """How messages name a union: ``source.union[acq]``, by position without a name."""
    return f"source.union[{name if JOIN_NAME.match(name) else position}]"


def union_checks(s: Settings) -> list[str]:
    p: list[str] = []
    unions = s.source.union
    seen: set[str] = set()
    prefixes: list[tuple[str, str]] = []  # (where, prefix)
    for position, union in enumerate(unions, 1):
        where = union_label(union.name, position)
        if union.name and union.name in seen:
            p.append(f'{where} is declared twice: each name = "…" once')
        if union.name == PRIMARY or union.name in {join.name for join in s.source.join}:
            # Counts, reports and the shrink guard's baseline are kept by source name.
            whose = "the primary export's" if union.name == PRIMARY else "a join's"
            p.append(f"{where}.name {union.name!r} is {whose} name: name the union apart")
        seen.add(union.name)
        p.extend(table_rules(union.table, where, "the union's export"))
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
