"""Opening the tables of `[[source.join]]`: each as a source beside the export
(hrsync.sources.secondary), its failure named by the join.

The join itself is pure (hrsync.core.people.joins); this module only reads.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence

import httpx

from hrsync.core.people.joins import JoinTable, columns_of
from hrsync.core.settings import JoinSettings
from hrsync.sources.secondary import open_whole


def open_tables(
    joins: Sequence[JoinSettings],
    read: Collection[str],
    *,
    environ: Mapping[str, str] | None = None,
    http: httpx.Client | None = None,
) -> list[tuple[JoinSettings, JoinTable]]:
    """Every joined table, read whole, in the order of the config. `read`: every name
    the config reads from a person's row (hrsync.core.people.joins.names_read), so that a JSON
    path among a join's columns that picks from a list is read as a column."""
    tables: list[tuple[JoinSettings, JoinTable]] = []
    for join in joins:
        export, rows = open_whole(
            join.table,
            said=f"join {join.name!r}",
            key=f"source.join[{join.name}]",
            also_read=(*columns_of(join.name, read), join.right),
            environ=environ,
            http=http,
        )
        tables.append((join, JoinTable(export.name, export.columns, rows, join.table.null_values)))
    return tables
