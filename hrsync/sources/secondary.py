"""Opening a source beside the export (a `[[source.join]]` table, a `[[source.union]]`
export): exactly as the export is opened (`open_export`: file or HTTP, paging, OAuth2,
`max_bytes`, every refusal), read whole, its failures named by where the config declares
it, so that a message says which of several sources failed and under which key.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

import httpx

from hrsync.core.export.rows import RowTable
from hrsync.core.settings import SourceSettings, keyed_under
from hrsync.sources.base import Export, SourceError, SourceUnavailable
from hrsync.sources.open import open_export


def open_whole(
    settings: SourceSettings,
    *,
    said: str,
    key: str,
    also_read: Iterable[str],
    environ: Mapping[str, str] | None = None,
    http: httpx.Client | None = None,
) -> tuple[Export, RowTable]:
    """The source opened and read whole. A failure is re-raised as its own kind, its
    message led by `said` (``join 'entra'``) and its `source.` keys read as `key`'s
    (``source.join[entra].``)."""
    try:
        export = open_export(settings, environ=environ, http=http, also_read=also_read)
        return export, export.table()
    except SourceUnavailable as exc:
        raise SourceUnavailable(named(said, key, str(exc))) from None
    except SourceError as exc:
        raise SourceError(named(said, key, str(exc))) from None


def named(said: str, key: str, message: str) -> str:
    """A reader's message about a source beside the export: the source named, its keys
    its own."""
    return f"{said}: " + keyed_under(key, message)
