"""Opening the second tables beside the export (each `[[source.join]]` table, each
`[[source.union]]` export): exactly as the export is opened (`open_export`: file or HTTP,
paging, OAuth2, `max_bytes`, every refusal), read whole, its failures named by where the
config declares it, so that a message says which of several sources failed and under
which key.

What is done with a table is pure (hrsync.core.people.joins, hrsync.core.people.union);
this module only reads.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from typing import TypeVar

import httpx

from hrsync.core.export.templates import is_template, template_names
from hrsync.core.people.joins import columns_of
from hrsync.core.people.second_tables import JOIN, UNION, SecondTable, table_key
from hrsync.core.settings import (
    FieldSettings,
    JoinSettings,
    SourceSettings,
    UnionSettings,
    keyed_under,
)
from hrsync.sources.base import SourceError, SourceUnavailable
from hrsync.sources.open import open_export

Declared = TypeVar("Declared", JoinSettings, UnionSettings)


def open_tables(
    declared: Sequence[Declared],
    read: Collection[str],
    *,
    environ: Mapping[str, str] | None = None,
    http: httpx.Client | None = None,
) -> list[tuple[Declared, SecondTable]]:
    """Every declared table, read whole, in the order of the config. `read`: for joins,
    every name the config reads from a person's row (hrsync.core.people.joins.names_read);
    for unions, the columns the config reads beyond the fields (team names, attributes,
    filters); so that a JSON path among them that picks from a list is read as a column."""
    tables: list[tuple[Declared, SecondTable]] = []
    for one in declared:
        source = one.table
        said, key, also_read, fields = _how_read(one, read)
        try:
            export = open_export(source, environ=environ, http=http, also_read=also_read)
            rows = export.table()
        except SourceUnavailable as exc:
            raise SourceUnavailable(_named(said, key, str(exc))) from None
        except SourceError as exc:
            raise SourceError(_named(said, key, str(exc))) from None
        read_as = SecondTable(export.name, export.columns, rows, fields, source.null_values)
        tables.append((one, read_as))
    return tables


def _how_read(
    one: JoinSettings | UnionSettings, read: Collection[str]
) -> tuple[str, str, tuple[str, ...], FieldSettings]:
    """How a declared table is named in messages and under which key, the columns read
    beyond the plain ones, and the fields that read it (none for a join's table: the
    config names its columns)."""
    if isinstance(one, JoinSettings):
        key = table_key(JOIN, one.name)
        return f"join {one.name!r}", key, (*columns_of(one.name, read), one.right), FieldSettings()
    key = table_key(UNION, one.name)
    return key, key, (*read, *_field_names(one.table)), one.table.fields


def _named(said: str, key: str, message: str) -> str:
    """A reader's message about a source beside the export: the source named (``join
    'entra'``), its `source.` keys read as its own (``source.join[entra].``)."""
    return f"{said}: " + keyed_under(key, message)


def _field_names(source: SourceSettings) -> list[str]:
    """The columns a union's own fields read, a template's and a precedence list's too."""
    names: list[str] = []
    for value in vars(source.fields).values():
        names.extend(template_names(value) if is_template(value) else (value,))
    for listed in source.first_of.values():
        names.extend(listed)
    return [name for name in names if name]
