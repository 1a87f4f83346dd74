"""Opening the exports of `[[source.union]]`: each as a source beside the export
(hrsync.sources.secondary), its failure named by the union.

The merge itself is pure (hrsync.core.people.union); this module only reads.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence

import httpx

from hrsync.core.export.templates import is_template, template_names
from hrsync.core.people.union import SourceTable
from hrsync.core.settings import UnionSettings
from hrsync.sources.secondary import open_whole


def open_unions(
    unions: Sequence[UnionSettings],
    read: Collection[str],
    *,
    environ: Mapping[str, str] | None = None,
    http: httpx.Client | None = None,
) -> list[tuple[UnionSettings, SourceTable]]:
    """Every union's export, read whole, in the order of the config. `read`: the columns
    the config reads beyond the fields (team names, attributes, filters), so that a JSON
    path among them that picks from a list is read as a column."""
    tables: list[tuple[UnionSettings, SourceTable]] = []
    for union in unions:
        where = f"source.union[{union.name}]"
        export, rows = open_whole(
            union.table,
            said=where,
            key=where,
            also_read=(*read, *_field_names(union)),
            environ=environ,
            http=http,
        )
        table = SourceTable(
            export.name, export.columns, rows, union.table.fields, union.table.null_values
        )
        tables.append((union, table))
    return tables


def _field_names(union: UnionSettings) -> list[str]:
    names: list[str] = []
    for value in vars(union.table.fields).values():
        names.extend(template_names(value) if is_template(value) else (value,))
    for listed in union.table.first_of.values():
        names.extend(listed)
    return [name for name in names if name]
