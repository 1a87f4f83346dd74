"""Reading an HTTP source page by page into one Export.

Each page is downloaded (`HttpSession.page`), parsed, its records at `source.records_path`
kept, and its raw body released before the next page is asked for: memory holds the
records read so far, never all the pages' bytes. The run sees the export only once every
page has been read; a page that cannot be read fails the whole read, so nothing is ever
planned on some of the pages.

With `source.pagination.style = "none"` an answer that shows it is one page of more (by
its shape, `hrsync.core.export.page_signs`: a next link or cursor, a flag that more follow, a URL
back to the same API, a total above the records read) is refused, naming what was seen,
where, and the setting that reads every page; an answer of exactly a common page size
(10, 25, 100, 1000…) is read with a note, and marked (`Export.page_sized`) so that a first
run refuses it unless `source.single_page` says the API answers everyone at once. An
answer in XML is refused as XML. With paging configured, a page that points to a next
page the style did not follow, a total the records read do not match, or a page that
starts with the previous page's first record (the API ignored the page asked for) is
refused.
"""

from __future__ import annotations

import bisect
import dataclasses
import json
from collections.abc import Callable, Iterable, Mapping
from pathlib import PurePosixPath
from typing import Any
from urllib.parse import parse_qsl, urlsplit

import httpx
import structlog

from hrsync.core.export.page_signs import looks_like_a_page
from hrsync.core.settings import SourceSettings
from hrsync.sources.base import Export, Payload, SourceError, export_over, first_bytes
from hrsync.sources.csv_reader import open_csv
from hrsync.sources.http_fetch import Fetched, HttpSession, origin, safe_url
from hrsync.sources.json_pages import read_page
from hrsync.sources.json_reader import Records, find_records, parse_json
from hrsync.sources.pagination import (
    PageAnswer,
    PageRequest,
    default_records_path,
    first_request,
    next_page_marker,
    next_request,
    one_page_of_more,
    short_first_page_probe,
    total_disagrees,
)

log = structlog.get_logger(__name__)

# (configured format, URL suffix, format= query value, content type, first page) -> format
ChooseFormat = Callable[[str, str, str, str, Payload], str]


def open_url(
    settings: SourceSettings,
    environ: Mapping[str, str],
    http: httpx.Client | None,
    choose_format: ChooseFormat,
    *,
    session: HttpSession | None = None,
    picks: Iterable[str] = (),
    keep: Iterable[str] | None = None,
) -> Export:
    """Read every page of `settings.url` (see the module doc) into one Export; `picks`:
    the paths that pick from a list, each read as a column (`records_export`); `keep`:
    the only columns its rows need hold (None: all; every column is listed all the same)."""
    own = session is None
    session = session or HttpSession(settings, environ, http)
    try:
        return _read(settings, session, choose_format, tuple(picks), keep)
    finally:
        if own:
            session.close()


def _read(
    settings: SourceSettings,
    session: HttpSession,
    choose_format: ChooseFormat,
    picks: tuple[str, ...] = (),
    keep: Iterable[str] | None = None,
) -> Export:
    paging = settings.pagination
    shown = session.shown
    request = first_request(settings)
    fetched = session.page(request, 1)
    _refuse_xml(settings, shown, fetched)
    path = urlsplit(settings.url or "")
    kind = choose_format(
        settings.format,
        PurePosixPath(path.path).suffix.lower(),
        dict(parse_qsl(path.query)).get("format", "").lower(),
        fetched.content_type,
        fetched.payload,
    )
    if kind != "json":

        def read() -> Export:
            if paging.style != "none":
                raise SourceError(
                    f"{shown} answered {kind.upper()}, but source.pagination.style "
                    f'{paging.style!r} reads pages of JSON; set source.format = "json" if the '
                    f'answer is JSON, or style = "none" for one {kind.upper()} file'
                )
            _refuse_marker(settings, shown, None, fetched, None)
            return open_csv(
                fetched.payload, encoding=settings.encoding, delimiter=settings.delimiter
            )

        export = export_over(fetched.payload, read)
        log.info("source.fetched", url=shown, pages=1, bytes=session.received)
        return export

    records = Records(picks, keep)
    starts: list[int] = []
    names: list[str] = []
    wheres: list[str] = []
    seen = {request.key()}
    number = 1
    notes: list[str] = []
    page_sized = 0
    first_record = ""  # the previous page's first record, as JSON
    while True:
        # Each page is named in messages; a single page keeps the plain export name.
        page_name = shown if paging.style == "none" else f"{shown} page {number}"
        starts.append(records.count)
        names.append(page_name)
        document, where, count, first = _read_page(settings, fetched, page_name, number, records)
        if number == 1:
            settings = dataclasses.replace(settings, records_path=where)
        wheres.append(where)
        if paging.style == "none":
            _refuse_marker(settings, shown, document, fetched, count, request.url)
            if looks_like_a_page(count) and not settings.single_page:
                notes.append(_round_page_note(shown, count))
                page_sized = count
            break
        if count and paging.style in ("cursor", "offset", "page", "scim"):
            # The position is ours to send (a link the API writes is checked for loops).
            first_record = _refuse_same_page(settings, page_name, first, first_record)
        following = next_request(settings, request, document, fetched.link, count)
        if following is None and paging.style != "offset":
            _refuse_unread_marker(settings, page_name, document, fetched, request.url)
        if following is None:
            _check_short_first_page(settings, session, request, count)
            _refuse_wrong_total(settings, shown, document, fetched, records.count, number)
            break
        del document, first
        if number >= paging.max_pages:
            raise SourceError(
                f"{shown} still had a next page after {number:,} pages, the limit set by "
                f"source.pagination.max_pages; raise it if the export really has more pages "
                f"(nothing was read as the whole org)"
            )
        _refuse_other_origin(settings, number, following.url)
        if following.key() in seen:
            raise SourceError(
                f"{shown} page {number} points back to a page already read: the API loops "
                f"(check source.pagination)"
            )
        seen.add(following.key())
        request = following
        number += 1
        fetched = session.page(request, number)
    if not records.count:
        raise SourceError(f"{shown} has no people: {number} pages, all empty")

    def locate(position: int) -> str:
        page = bisect.bisect_right(starts, position) - 1
        return f"{names[page]} {wheres[page]}[{position - starts[page]}]"

    log.info(
        "source.fetched", url=shown, pages=number, bytes=session.received, records=records.count
    )
    export = records.export(shown, locate, pages=number)
    return dataclasses.replace(export, notes=tuple(notes), page_sized=page_sized)


def _read_page(
    settings: SourceSettings,
    fetched: Fetched,
    page_name: str,
    number: int,
    records: Records,
) -> tuple[Any, str, int, Any]:
    """Page `number`'s records into `records`, its raw body released whatever happens:
    the answer without its records (for paging and its checks), where they were (the
    records path, found on the first page), how many, and the first of them.

    Streamed record by record (`json_pages`); an answer that pass cannot read is parsed
    whole, which names what is wrong (a record that is no object, broken JSON)."""
    payload = fetched.payload
    payload.name = page_name
    before = records.count
    # Past the first page, source.records_path is the one the first page was read at.
    configured = settings.records_path if settings.records_path or number > 1 else None
    odata = settings.pagination.style == "odata"
    try:
        read = read_page(payload, settings.encoding, configured, records, odata=odata)
        if read is not None:
            path = default_records_path(settings, read.document)
            if read.streamed is None or read.streamed == path:
                document = read.document
            else:  # an OData key after a list taken for its records: read it whole
                records.truncate(before)
                read = None
        if read is None:
            document = parse_json(payload, settings.encoding)
            path = default_records_path(settings, document)
    finally:
        payload.release()

    def locate(position: int) -> str:
        return f"{page_name} {where}[{position - before}]"

    if read is not None and read.streamed is not None:
        # The list is in the document, emptied: only its place and kind are checked.
        _, where = find_records(
            page_name, document, path, allow_empty=number > 1 or read.records > 0
        )
        return document, where, read.records, read.first
    found, where = find_records(page_name, document, path, allow_empty=number > 1)
    first = found[0] if found else None
    for record in found:
        records.take(record, locate)
    del found[:]  # the document is kept for its paging; its records are held as rows
    return document, where, records.count - before, first


def _check_short_first_page(
    settings: SourceSettings, session: HttpSession, request: PageRequest, records: int
) -> None:
    probe = short_first_page_probe(settings, request, records)
    if probe is None:
        return
    page_name = f"{session.shown} page 2"
    _, _, more, _ = _read_page(settings, session.page(probe, 2), page_name, 2, Records(keep=()))
    if more:
        paging = settings.pagination
        raise SourceError(
            f"{session.shown} answered {records} records on its first page although "
            f"source.pagination.page_size is {paging.page_size}, and more people after them: "
            f"the API caps its pages below page_size, so a short page does not mean the last "
            f"one (nothing was read as the whole org). Set source.pagination.page_size = "
            f"{records} (the API's page size)"
        )


def _refuse_other_origin(settings: SourceSettings, number: int, url: str) -> None:
    """A next page must be where source.url is: every page is sent the source's
    credentials (source.headers, OAuth2, basic), so a next link to another scheme, host or
    port, written by the API, would hand them to whoever answers there."""
    there = origin(url)
    # Not http(s) at all: the fetch refuses it with its own message.
    if there[0] in ("http", "https") and there != origin(settings.url or ""):
        shown = safe_url(settings.url or "")
        raise SourceError(
            f"{shown} page {number} points to its next page at {safe_url(url)}, which is not "
            f"where source.url is (another scheme, host or port): refused rather than send "
            f"the source's credentials there"
        )


def _refuse_unread_marker(
    settings: SourceSettings, page: str, document: Any, fetched: Fetched, url: str
) -> None:
    """The configured style found no next page, but the answer points to one anyway.

    A mistyped next_cursor_path (or the wrong style) reads as "no more pages": the first
    page would be taken for the whole org.
    """
    paging = settings.pagination
    marker, setting = next_page_marker(
        paging, PageAnswer(document, fetched.link, fetched.paging, settings.records_path, url)
    )
    if marker:
        keys = {"cursor": "next_cursor_path", "next_url": "next_url_path"}
        told = f"style {paging.style!r}"
        if paging.style in keys:
            key = keys[paging.style]
            told += f" with {key} {getattr(paging, key)!r}"
        raise SourceError(
            f"{page} points to a next page ({marker}), but source.pagination {told} finds "
            f"none there: stopping here would leave out everyone on the later pages. Set "
            f"{setting}"
        )


def _refuse_marker(
    settings: SourceSettings,
    shown: str,
    document: Any,
    fetched: Fetched,
    records: int | None,
    url: str = "",
) -> None:
    """Style "none": refuse an answer that shows it is one page. `records` is None for a
    CSV answer, not counted here: only a next page (a Link header) is looked for."""
    if records is None:
        marker, setting = next_page_marker(settings.pagination, PageAnswer(None, fetched.link))
        seen = f"{marker} points to a next page" if marker else ""
    else:
        answer = PageAnswer(document, fetched.link, fetched.paging, settings.records_path, url)
        seen, setting = one_page_of_more(settings.pagination, answer, records=records)
    if seen:
        raise SourceError(
            f"{shown} answered one page of a longer list ({seen}): read alone it would leave "
            f"out everyone on the other pages (nothing was read as the whole org). Set "
            f"{setting} to read every page"
        )


def _refuse_xml(settings: SourceSettings, shown: str, fetched: Fetched) -> None:
    """An answer in XML (OData's Atom feed, SOAP) is neither JSON nor CSV: read as CSV it
    would be rows of markup, and source.format = "json" cannot parse it."""
    media = fetched.content_type.split(";", 1)[0].strip().lower()
    start = first_bytes(fetched.payload).lstrip(b"\xef\xbb\xbf \t\r\n")[:64].lower()
    html = start.startswith((b"<!doctype html", b"<html"))
    if media.endswith("xml"):
        told = f"its content type is {media}"
    elif start.startswith(b"<") and not html:
        told = "it starts with <"
    else:
        return
    fetched.payload.release()
    raise SourceError(
        f"{shown} answered XML ({told}), which hrsync does not read (nothing was read as "
        f"the whole org): ask the API for JSON. An OData API (SAP SuccessFactors, older SAP "
        f"and Dynamics services) answers JSON with $format=json in source.url; others take "
        f"a format parameter or an Accept: application/json header (see the API's "
        f"documentation)"
    )


def _refuse_wrong_total(
    settings: SourceSettings, shown: str, document: Any, fetched: Fetched, records: int, pages: int
) -> None:
    """The last page's total (``totalResults``, ``metadata.total_elements``…) must be what
    was read: a style that misreads the API's paging skips or repeats people."""
    paging = settings.pagination
    answer = PageAnswer(document, headers=fetched.paging, records_path=settings.records_path)
    wrong = total_disagrees(paging, answer, records=records, pages=pages)
    if wrong:
        raise SourceError(
            f"{shown} says {wrong} with source.pagination.style {paging.style!r}: the "
            f"API's pages were not read as it serves them (nothing was read as the whole "
            f"org); check the style and its keys against the API's documentation"
        )


def _refuse_same_page(settings: SourceSettings, page: str, record: Any, previous: str) -> str:
    """A page that starts with the previous page's first record: the API ignored the page
    position asked for, and would serve the same people again and again."""
    text = json.dumps(record, sort_keys=True, default=str)
    if previous and text == previous:
        paging = settings.pagination
        raise SourceError(
            f"{page} starts with the same record as the page before: the API ignores the "
            f"page asked for (source.pagination.style {paging.style!r}); check the style and "
            f"its parameter names against the API's documentation"
        )
    return text


def _round_page_note(shown: str, records: int) -> str:
    return (
        f"{shown} answered exactly {records:,} records, a common page size, and no sign "
        f"of more pages: if the API caps its answers, people are missing; check its paging "
        f"(source.pagination), or set source.single_page = true if it answers everyone at once"
    )
