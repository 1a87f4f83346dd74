"""Opening the exports of `[[source.union]]`: each exactly as the primary export is
opened (`open_export`: file or HTTP, paging, OAuth2, `max_bytes`, every refusal), its
failure named by the union.

The merge itself is pure (hrsync.core.union); this module only reads.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Mapping, Sequence

import httpx

from hrsync.core.settings import UnionSettings
from hrsync.core.templates import is_template, template_names
from hrsync.core.union import SourceTable
from hrsync.sources.base import SourceError, SourceUnavailable
from hrsync.sources.open import open_export

# A `source.` key in a reader's message (not inside a URL or a word): the union's own key.
_SOURCE_KEY = re.compile(r"(?<![\w./-])source\.")


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
        also = (*read, *_field_names(union))
        try:
            export = open_export(union.table, environ=environ, http=http, also_read=also)
            rows = export.table()
        except SourceUnavailable as exc:
            raise SourceUnavailable(named(union, str(exc))) from None
        except SourceError as exc:
            raise SourceError(named(union, str(exc))) from None
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


def named(union: UnionSettings, message: str) -> str:
    """A reader's message about a union's export: the union named, its keys its own."""
    where = f"source.union[{union.name}]"
    return f"{where}: " + _SOURCE_KEY.sub(f"{where}.", message)
