"""Where an HTTP source's next page is, and what shows an answer is only a page (pure:
no I/O).

`source.pagination.style` says how an API points to its next page:

- ``none``: one answer is the whole export. An answer that shows it is one page of a
  longer list (`hrsync.core.export.page_signs`, by its shape: a next link or cursor, a flag that
  more follow, a URL back to the same API, a total larger than the records read) is
  refused: read as the whole org, it would drop everyone else.
- ``odata``: the body's ``@odata.nextLink`` (OData v4: Microsoft Graph) or ``d.__next``
  (OData v2: SAP SuccessFactors), a full URL, as given; the records are at
  ``source.records_path``, else ``d.results`` (v2) or ``value`` (v4).
- ``link_header``: the RFC 8288 ``Link`` header's ``rel="next"`` target (Okta, GitHub).
- ``cursor``: the value at ``next_cursor_path`` in the body, sent back as ``cursor_param``
  (a query parameter for GET, a body field for POST); an empty or missing cursor ends it.
- ``next_url``: the URL at ``next_url_path`` in the body (Rippling ``next_link``,
  ``links.next``), followed as given; an empty or missing one ends it.
- ``offset``: ``offset_param`` / ``limit_param`` (``offset`` / ``limit`` unless set) with
  ``page_size``; a short page ends it,
  unless the answer's total says there are more (an API capping its pages).
- ``page``: ``offset_param`` (``page`` unless set) counting from ``first_page`` (and
  ``limit_param`` = ``page_size`` when set); an empty page, one shorter than the first,
  or the answer's total page count ends it.
- ``scim``: SCIM 2.0's ``startIndex`` (from 1) and ``count`` = ``page_size``; the next
  index is the last one plus the records read, up to ``totalResults``.

Each style is one row of `STYLES`: the parameters it sends for a page, where its first
page is, and how it finds the next; a new style is a new row, not a new branch.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, NamedTuple
from urllib.parse import parse_qsl, urlencode, urljoin, urlsplit, urlunsplit

from hrsync.core.export.page_signs import HEADER_SIGNS, Sign, one_page_sign, seen, whole_count
from hrsync.core.export.page_signs import page_signs as signs_in
from hrsync.core.settings import PaginationSettings, SourceSettings
from hrsync.sources.base import SourceError

__all__ = ["HEADER_SIGNS", "PageRequest", "Sign"]

# `count` is often the records of this page: with paging configured it is not a total.
PAGE_COUNT_NAMES = ("count",)
# The query parameter a next-cursor name is usually sent back as.
_CURSOR_PARAMS = {"nextPageToken": "pageToken", "next_page_token": "page_token"}
_NO_PAGING = PaginationSettings()
# <target> then ;-separated parameters, whose quoted values may hold , and ;
_LINK = re.compile(r"""<([^>]*)>\s*((?:;(?:[^;,"]|"[^"]*")*)*)""")
_REL = re.compile(r"""(?:^|;)\s*rel\s*=\s*(?:"([^"]*)"|([^\s;,"]+))""", re.IGNORECASE)


@dataclass(frozen=True)
class PageRequest:
    """One page's request: the URL (query included) and, for POST, the JSON body."""

    url: str
    body: Any = None
    # The page's position: offset style, its first record's (from 0); page style, its
    # number; scim, its startIndex (from 1).
    offset: int = 0
    size: int = 0  # page style: the records of the first page, the API's page size

    def key(self) -> str:
        """What makes two requests the same page, to catch an API that loops."""
        return self.url + "\x00" + json.dumps(self.body, sort_keys=True)


class Turn(NamedTuple):
    """A page just read, as a style looks for the next: the request that asked for it,
    its parsed body, its Link header and how many records it held."""

    paging: PaginationSettings
    current: PageRequest
    document: Any
    link: str
    records: int


class Follow(NamedTuple):
    """The next page is a URL the API gave (`where`, for a message), followed as given."""

    target: str
    where: str


class Move(NamedTuple):
    """The next page is asked for with the style's parameters for `value`: a position
    (an offset, a page number, a startIndex: the request's own `offset` becomes it) or,
    not `positional`, a cursor."""

    value: Any
    positional: bool = True
    size: int | None = None  # page style: the API's page size, learned from the first page


def _no_params(paging: PaginationSettings, value: Any) -> dict[str, Any]:
    return {}


def _the_end(turn: Turn) -> Follow | Move | None:
    return None


@dataclass(frozen=True)
class Style:
    """One style of `source.pagination.style`: which parameters it sends for a page, where
    its first page is, and how it finds the page after one."""

    # The query parameters (GET) or body fields (POST) that ask for the page at a
    # position, or for a cursor's page.
    sends: Callable[[PaginationSettings, Any], dict[str, Any]] = _no_params
    # The first page's position; None: the first request is the configured one, as it is.
    first: Callable[[PaginationSettings], int] | None = None
    # The page after one: a URL to follow, a position or cursor to send, None at the end.
    after: Callable[[Turn], Follow | Move | None] = _the_end


def _odata_after(turn: Turn) -> Follow | None:
    where, target = odata_next(turn.document)
    return Follow(str(target), where) if _present(target) else None


def _link_header_after(turn: Turn) -> Follow | None:
    target = link_next(turn.link)
    return Follow(target, "the Link header") if target else None


def _next_url_after(turn: Turn) -> Follow | None:
    path = turn.paging.next_url_path
    target = _href(at_path(turn.document, path))
    return Follow(str(target), f"next_url_path {path!r}") if _present(target) else None


def _cursor_after(turn: Turn) -> Move | None:
    cursor = at_path(turn.document, turn.paging.next_cursor_path)
    return Move(cursor, positional=False) if _present(cursor) else None


def _offset_after(turn: Turn) -> Move | None:
    paging, records = turn.paging, turn.records
    if records > paging.page_size:
        raise SourceError(
            f"a page answered {records} records, more than source.pagination.page_size "
            f"({paging.page_size}): the API ignores source.pagination.limit_param "
            f"{_size_param(paging)!r}, so offsets would skip or repeat people; check the "
            f"parameter names or set page_size to the API's page size"
        )
    if records < paging.page_size:
        # A short page ends the list, unless the answer's total says more are to come:
        # then the API caps its pages below page_size (Personio's went from 200 to 100),
        # and offsets, which count records, go on at its pace.
        total = stated_total(turn.document)
        if records == 0 or total is None or turn.current.offset + records >= total:
            return None
    return Move(turn.current.offset + records)


def _page_after(turn: Turn) -> Move | None:
    current, records = turn.current, turn.records
    if records == 0:
        return None
    size = current.size or records
    pages = total_pages(turn.document)
    read = current.offset - turn.paging.first_page + 1
    if pages is not None:
        if read >= pages:
            return None
    elif records < size:
        return None
    return Move(current.offset + 1, size=size)


def _scim_after(turn: Turn) -> Move | None:
    if turn.records == 0:
        return None
    start = turn.current.offset + turn.records
    document = turn.document
    total = whole_count(document.get("totalResults")) if isinstance(document, dict) else None
    if total is not None and start > total:
        return None
    return Move(start)


def _page_params(paging: PaginationSettings, number: int) -> dict[str, Any]:
    params: dict[str, Any] = {_position_param(paging): number}
    if _size_param(paging):
        params[_size_param(paging)] = paging.page_size
    return params


STYLES: Mapping[str, Style] = {
    "none": Style(),
    "odata": Style(after=_odata_after),
    "link_header": Style(after=_link_header_after),
    "next_url": Style(after=_next_url_after),
    "cursor": Style(sends=lambda p, cursor: {p.cursor_param: cursor}, after=_cursor_after),
    "offset": Style(
        sends=lambda p, at: {_position_param(p): at, _size_param(p): p.page_size},
        first=lambda p: 0,
        after=_offset_after,
    ),
    "page": Style(sends=_page_params, first=lambda p: p.first_page, after=_page_after),
    "scim": Style(
        sends=lambda p, at: {"startIndex": at, "count": p.page_size},
        first=lambda p: 1,
        after=_scim_after,
    ),
}


def first_request(source: SourceSettings) -> PageRequest:
    body = json.loads(source.body) if source.body else None
    request = PageRequest(source.url or "", body)
    paging = source.pagination
    style = STYLES[paging.style]
    if style.first is None:
        return request
    at = style.first(paging)
    return _with_params(request, source.method, style.sends(paging, at), offset=at)


def next_request(
    source: SourceSettings,
    current: PageRequest,
    document: Any,
    link: str,
    records: int,
) -> PageRequest | None:
    """The request for the page after `current`, or None when `current` was the last.

    `document` is the page's parsed body, `link` its Link header, `records` how many
    records it held.
    """
    paging = source.pagination
    style = STYLES[paging.style]
    step = style.after(Turn(paging, current, document, link, records))
    if step is None:
        return None
    if isinstance(step, Follow):
        # Graph gives a full URL; a relative one is resolved as a browser would.
        return PageRequest(_next_url(current.url, step.target, step.where), current.body)
    return _with_params(
        current,
        source.method,
        style.sends(paging, step.value),
        offset=step.value if step.positional else None,
        size=step.size,
    )


def odata_next(document: Any) -> tuple[str, Any]:
    """An OData answer's next page and where it is: v4's ``@odata.nextLink`` (v3's
    ``odata.nextLink``), v2's ``d.__next`` (SAP SuccessFactors); (where, None) for none."""
    if not isinstance(document, dict):
        return "@odata.nextLink", None
    for name in ("@odata.nextLink", "odata.nextLink"):
        if _present(document.get(name)):
            return name, document[name]
    inner = document.get("d")
    if isinstance(inner, dict) and _present(inner.get("__next")):
        return "d.__next", inner["__next"]
    return "@odata.nextLink", None


def default_records_path(settings: SourceSettings, document: Any) -> str:
    """`source.records_path`, else where an OData answer keeps its records: v2's
    ``d.results`` (or ``d``), v4's ``value``; "" for anything else."""
    if settings.records_path or not isinstance(document, dict):
        return settings.records_path
    inner = document.get("d")
    if isinstance(inner, dict) and isinstance(inner.get("results"), list):
        return "d.results"
    if isinstance(inner, list):
        return "d"
    odata = settings.pagination.style == "odata" or any(k.startswith("@odata.") for k in document)
    if odata and isinstance(document.get("value"), list):
        return "value"
    return ""


def short_first_page_probe(
    source: SourceSettings, current: PageRequest, records: int
) -> PageRequest | None:
    """For offset style: the request that tells a small org from an API capping its pages.

    A short first page ends the list only if the API honoured ``page_size``; an API that
    silently caps the limit below it answers a short first page too, and stopping there
    would read one page as the whole org. So a short, non-empty first page is followed by
    one request at the next offset, which must come back empty (None: nothing to probe).
    """
    paging = source.pagination
    if paging.style != "offset" or current.offset != 0 or not 0 < records < paging.page_size:
        return None
    return _with_params(
        current, source.method, STYLES["offset"].sends(paging, records), offset=records
    )


@dataclass(frozen=True)
class PageAnswer:
    """One answer as the paging rules read it: the body, the Link header, the headers that
    may tell of more pages (lower-case names), where its records sit, the URL it came from."""

    document: Any
    link: str = ""
    headers: Mapping[str, str] | None = None
    records_path: str = ""
    url: str = ""


def page_signs(paging: PaginationSettings, answer: PageAnswer) -> list[Sign]:
    """Everything in an answer that says it may be one page (`hrsync.core.export.page_signs`,
    judged by its shape), the configured next_url_path and next_cursor_path first."""
    document = answer.document
    signs: list[Sign] = []
    for path in (paging.next_url_path, paging.next_cursor_path):
        value = at_path(document, path) if path else None
        if _present(value):
            signs.append(Sign("next", f"{path!r} in the body", path, value, True))
    found = signs_in(
        document,
        records_path=answer.records_path,
        url=answer.url,
        link_next=link_next(answer.link),
        headers=answer.headers,
    )
    taken = {sign.path for sign in signs}
    return signs + [sign for sign in found if sign.path not in taken or not sign.path]


def one_page_of_more(
    paging: PaginationSettings, answer: PageAnswer, *, records: int
) -> tuple[str, str]:
    """For style "none": what shows the answer is one page of a longer list, and the
    [source.pagination] setting that reads every page; ("", "") when nothing does."""
    sign = one_page_sign(page_signs(paging, answer), records)
    if sign is None:
        return "", ""
    return seen(sign, records), "[source.pagination] " + _setting(sign, answer.document)


def next_page_marker(paging: PaginationSettings, answer: PageAnswer) -> tuple[str, str]:
    """What in an answer points to a next page (a next link or cursor, a flag that more
    follow), and the [source.pagination] setting that follows it; ("", "") when nothing
    does."""
    for sign in page_signs(paging, answer):
        if sign.kind in ("next", "more", "done"):
            return sign.where, "[source.pagination] " + _setting(sign, answer.document)
    return "", ""


def total_disagrees(
    paging: PaginationSettings, answer: PageAnswer, *, records: int, pages: int
) -> str:
    """For a paged read, with `answer` its last page: a total the answer gives that the
    records or pages read do not match ("" when none)."""
    for sign in page_signs(paging, answer):
        if sign.kind == "total" and _counts_all(sign) and sign.value != records:
            return f"{sign.where} is {sign.value:,}, but {records:,} records were read"
        if sign.kind == "pages" and sign.value > pages:
            return f"{sign.where} is {sign.value:,}, but {pages:,} pages were read"
    return ""


def stated_total(document: Any) -> int | None:
    """The records the whole list holds, as the answer states it (a total but a
    page's own ``count``), if it does."""
    for sign in page_signs(_NO_PAGING, PageAnswer(document)):
        if sign.kind == "total" and _counts_all(sign):
            return int(sign.value)
    return None


def _counts_all(sign: Sign) -> bool:
    """A total of the whole list, not a page's own ``count`` (``@odata.count`` is whole)."""
    name = sign.path if sign.path.startswith("@odata.") else sign.path.rpartition(".")[2]
    return name not in PAGE_COUNT_NAMES


def total_pages(document: Any) -> int | None:
    """The answer's total page count (`PAGES_NAMES`, top level or metadata), if it has one."""
    for sign in page_signs(_NO_PAGING, PageAnswer(document)):
        if sign.kind == "pages":
            return int(sign.value)
    return None


def _setting(sign: Sign, document: Any) -> str:
    """The style (and its keys) that reads every page, from what was seen."""
    if sign.kind == "next":
        if sign.path == "" and sign.where.startswith("a Link"):
            return 'style = "link_header"'
        if sign.where == "the X-Next-Page header":  # a page number
            return 'style = "page"'
        name = sign.path.rpartition(".")[2]
        if sign.path in ("@odata.nextLink", "odata.nextLink", "d.__next", "__next"):
            return 'style = "odata"'
        value = sign.value
        # Only a path through objects can be followed (not a header, nor a list of links).
        followable = sign.path and not any(part.isdigit() for part in sign.path.split("."))
        if followable and isinstance(value, str) and _looks_like_url(value):
            return f'style = "next_url", next_url_path = "{sign.path}"'
        if followable and isinstance(value, int) and not isinstance(value, bool):
            return 'style = "page"'
        if followable and isinstance(value, str):
            param = _CURSOR_PARAMS.get(name)
            extra = f', cursor_param = "{param}"' if param else ""
            return f'style = "cursor", next_cursor_path = "{sign.path}"{extra}'
    return _shape_setting(document) or (
        'style = "…" with the paging the API documents ("odata", "cursor", "next_url", '
        '"page", "offset", "scim"; see the HR APIs page)'
    )


def _shape_setting(document: Any) -> str:
    """The style an answer's own fields suggest: SCIM's, an offset and a limit, a page."""
    if not isinstance(document, dict):
        return ""
    if any(key in document for key in ("Resources", "itemsPerPage", "startIndex")):
        return 'style = "scim"'
    places = [document, *(v for v in document.values() if isinstance(v, dict))]
    for place in places:
        limit = whole_count(place.get("limit"))
        if whole_count(place.get("offset")) is not None and limit:
            return f'style = "offset", page_size = {limit}'
        # Atlassian's: startAt and maxResults.
        limit = whole_count(place.get("maxResults"))
        if whole_count(place.get("startAt")) is not None and limit:
            return (
                f'style = "offset", offset_param = "startAt", limit_param = "maxResults", '
                f"page_size = {limit}"
            )
    for place in places:
        for name in ("page", "current_page", "currentPage", "page_number", "pageNumber"):
            number = whole_count(place.get(name))
            if number is not None and number in (0, 1):
                return f'style = "page", first_page = {number}'
    return ""


def link_next(header: str) -> str | None:
    """The target of the first ``rel="next"`` link in a Link header (RFC 8288), if any."""
    if not header:
        return None
    for match in _LINK.finditer(header):
        for rel in _REL.finditer(match.group(2)):
            values = (rel.group(1) or rel.group(2) or "").lower().split()
            if "next" in values:
                return match.group(1).strip()
    return None


def at_path(document: Any, dotted: str) -> Any:
    """The value at a dotted path (``a.b.c``) in nested objects, or None."""
    node = document
    for key in dotted.split("."):
        if not isinstance(node, dict) or key not in node:
            return None
        node = node[key]
    return node


def _next_url(current: str, target: str, where: str) -> str:
    """`target` resolved against `current`; the API wrote it, so a broken one is refused.

    The target is not shown: its query may carry tokens, and unparsable it cannot be masked.
    """
    try:
        return urljoin(current, target)
    except ValueError:
        raise SourceError(
            f"the API's next page ({where}) is not a valid URL, so the later pages cannot "
            f"be read (nothing was read as the whole org)"
        ) from None


def _href(value: Any) -> Any:
    """A next link given as an object (HAL's ``{"href": "..."}``) is its href."""
    return value.get("href") if isinstance(value, dict) else value


def _looks_like_url(value: str) -> bool:
    return value.startswith(("http://", "https://", "/")) or "?" in value


def _position_param(paging: PaginationSettings) -> str:
    """The parameter of a page's position: `offset_param`, else the style's own name."""
    return paging.offset_param or ("page" if paging.style == "page" else "offset")


def _size_param(paging: PaginationSettings) -> str:
    """The parameter of the page size: `limit_param`, else the offset style's own name
    (the page style sends none unless told)."""
    return paging.limit_param or ("" if paging.style == "page" else "limit")


def _present(value: Any) -> bool:
    if value is None or value is False:
        return False
    if isinstance(value, str | list | dict):
        return bool(value)
    return True


def _with_params(
    request: PageRequest,
    method: str,
    params: dict[str, Any],
    *,
    offset: int | None = None,
    size: int | None = None,
) -> PageRequest:
    new_offset = request.offset if offset is None else offset
    new_size = request.size if size is None else size
    if method == "POST":
        body = dict(request.body) if isinstance(request.body, dict) else {}
        for name, value in params.items():
            _set_path(body, name, value)
        return PageRequest(request.url, body, new_offset, new_size)
    parts = urlsplit(request.url)
    query = [(k, v) for k, v in parse_qsl(parts.query, keep_blank_values=True) if k not in params]
    query.extend((name, _text(value)) for name, value in params.items())
    url = urlunsplit((parts.scheme, parts.netloc, parts.path, urlencode(query), parts.fragment))
    return PageRequest(url, request.body, new_offset, new_size)


def _set_path(body: dict[str, Any], dotted: str, value: Any) -> None:
    """Set a (possibly nested, ``page.cursor``) field, copying the objects on the way."""
    keys = dotted.split(".")
    node = body
    for key in keys[:-1]:
        child = node.get(key)
        child = dict(child) if isinstance(child, dict) else {}
        node[key] = child
        node = child
    node[keys[-1]] = value


def _text(value: Any) -> str:
    if isinstance(value, str):
        return value
    return json.dumps(value)
