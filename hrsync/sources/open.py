"""Opening an export: the one entry point of the readers.

`open_export` fetches (HTTP) or opens (file) the export, reads enough to fail fast on a
bad file (header, JSON structure) and returns an `Export` whose `rows()` streams
`SourceRow`s. Every failure is a `SourceError` naming the file or URL.

The format is `source.format`, else the file extension (``.csv``, ``.tsv``, ``.txt``,
``.json``), else a ``format=`` query parameter or the HTTP content type, else the first
non-blank byte (``[`` or ``{`` means JSON, anything else CSV).
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING

import structlog

from hrsync.core.settings import SourceSettings
from hrsync.sources.base import Export, Payload, SourceError, export_over, first_bytes
from hrsync.sources.csv_reader import open_csv
from hrsync.sources.json_reader import open_json, picked_paths

if TYPE_CHECKING:
    import httpx

log = structlog.get_logger(__name__)

_EXTENSIONS = {".csv": "csv", ".tsv": "csv", ".txt": "csv", ".json": "json"}


def open_export(
    settings: SourceSettings,
    *,
    environ: Mapping[str, str] | None = None,
    http: httpx.Client | None = None,
    also_read: Iterable[str] = (),
    keep: Iterable[str] | None = None,
    sample: int | None = None,
) -> Export:
    """Open the export named by `settings` (path or url). `environ` defaults to os.environ.
    `also_read`: columns the config reads beyond `[source.fields]` (team names,
    attributes, filters), so that a JSON path among them picking from a list is read.
    `keep`: the only columns the rows of a JSON export need hold (None: every column).
    `sample`: a JSON file's rows are at most this many, a sample of its records
    (`Export.sampled_from`; `hrsync init`)."""
    env = os.environ if environ is None else environ
    picks = picked_paths(settings, also_read)
    if settings.url:
        # Imported here: a file export needs no HTTP stack (nor the crypto of its OAuth2).
        from hrsync.sources.pages import open_url

        # Every page, with method, body, headers and OAuth2 (hrsync.sources.pages).
        export = open_url(settings, env, http, _format, picks=picks, keep=keep)
        log.info("source.opened", source=export.name, format=export.format, pages=export.pages)
        return export
    if settings.path is None:
        raise SourceError("no export to read: set source.path or source.url")
    payload = Payload.from_path(settings.path, settings.max_bytes)
    path = settings.path

    def read() -> Export:
        # A file has no format= query nor content type.
        if _format(settings.format, path.suffix.lower(), "", "", payload) == "json":
            return open_json(
                payload,
                encoding=settings.encoding,
                records_path=settings.records_path,
                picks=picks,
                keep=keep,
                sample=sample,
            )
        return open_csv(payload, encoding=settings.encoding, delimiter=settings.delimiter)

    export = export_over(payload, read)
    log.info("source.opened", source=export.name, format=export.format, columns=len(export.columns))
    return export


def _format(configured: str, suffix: str, query: str, content_type: str, payload: Payload) -> str:
    if configured:
        return configured
    if suffix in _EXTENSIONS:
        return _EXTENSIONS[suffix]
    if query in ("csv", "json"):
        return query
    media = content_type.split(";", 1)[0].strip().lower()
    if media.endswith("json"):
        return "json"
    if media in ("text/csv", "text/tab-separated-values", "application/csv"):
        return "csv"
    start = first_bytes(payload).lstrip(b"\xef\xbb\xbf \t\r\n")
    return "json" if start[:1] in (b"[", b"{") else "csv"
