"""Opening the tables of `[[source.join]]`: each exactly as the export is opened
(`open_export`: file or HTTP, paging, OAuth2, `max_bytes`, every refusal), its failure
named by the join.

The join itself is pure (hrsync.core.joins); this module only reads.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Mapping, Sequence

import httpx

from hrsync.core.joins import JoinTable, columns_of
from hrsync.core.settings import JoinSettings
from hrsync.sources.base import SourceError, SourceUnavailable
from hrsync.sources.open import open_export

# A `source.` key in a reader's message (not inside a URL or a word): the join's own key.
_SOURCE_KEY = re.compile(r"(?<![\w./-])source\.")


def open_tables(
    joins: Sequence[JoinSettings],
    read: Collection[str],
    *,
    environ: Mapping[str, str] | None = None,
    http: httpx.Client | None = None,
) -> list[tuple[JoinSettings, JoinTable]]:
    """Every joined table, read whole, in the order of the config. `read`: every name
    the config reads from a person's row (hrsync.core.joins.names_read), so that a JSON
    path among a join's columns that picks from a list is read as a column."""
    tables: list[tuple[JoinSettings, JoinTable]] = []
    for join in joins:
        also = (*columns_of(join.name, read), join.right)
        try:
            export = open_export(join.table, environ=environ, http=http, also_read=also)
            rows = export.table()
        except SourceUnavailable as exc:
            raise SourceUnavailable(named(join, str(exc))) from None
        except SourceError as exc:
            raise SourceError(named(join, str(exc))) from None
        tables.append((join, JoinTable(export.name, export.columns, rows, join.table.null_values)))
    return tables


def named(join: JoinSettings, message: str) -> str:
    """A reader's message about a joined table: the join named, its keys its own."""
    return f"join {join.name!r}: " + _SOURCE_KEY.sub(f"source.join[{join.name}].", message)
