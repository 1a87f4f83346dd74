"""Where an HTTP source's next page is (pure: no I/O).

`source.pagination.style` says how an API points to its next page:

- ``none``: one answer is the whole export. An answer that points to a next page anyway
  (see `next_page_marker`) is refused: read as the whole org, it would drop everyone else.
- ``odata``: the body's ``@odata.nextLink``, a full URL (Microsoft Graph), as given.
- ``link_header``: the RFC 8288 ``Link`` header's ``rel="next"`` target (Okta, GitHub).
- ``cursor``: the value at ``next_cursor_path`` in the body, sent back as ``cursor_param``
  (a query parameter for GET, a body field for POST); an empty or missing cursor ends it.
- ``offset``: ``offset_param`` / ``limit_param`` with ``page_size``; a short page ends it.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any
from urllib.parse import parse_qsl, urlencode, urljoin, urlsplit, urlunsplit

from hrsync.core.settings import PaginationSettings, SourceSettings
from hrsync.sources.base import SourceError

# Names APIs commonly give the next page's cursor, looked for at the top of a body when
# style is "none" (besides @odata.nextLink and next_cursor_path).
COMMON_CURSOR_NAMES = ("next_cursor", "nextPageToken", "next")
# <target> then ;-separated parameters, whose quoted values may hold , and ;
_LINK = re.compile(r"""<([^>]*)>\s*((?:;(?:[^;,"]|"[^"]*")*)*)""")
_REL = re.compile(r"""(?:^|;)\s*rel\s*=\s*(?:"([^"]*)"|([^\s;,"]+))""", re.IGNORECASE)


@dataclass(frozen=True)
class PageRequest:
    """One page's request: the URL (query included) and, for POST, the JSON body."""

    url: str
    body: Any = None
    offset: int = 0  # offset style: the position of the page's first record

    def key(self) -> str:
        """What makes two requests the same page, to catch an API that loops."""
        return self.url + "\x00" + json.dumps(self.body, sort_keys=True)


def first_request(source: SourceSettings) -> PageRequest:
    body = json.loads(source.body) if source.body else None
    request = PageRequest(source.url or "", body)
    paging = source.pagination
    if paging.style == "offset":
        return _with_params(
            request,
            source.method,
            {paging.offset_param: 0, paging.limit_param: paging.page_size},
            offset=0,
        )
    return request


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
    if paging.style == "odata":
        target = document.get("@odata.nextLink") if isinstance(document, dict) else None
        # Graph gives a full URL; a relative one is resolved as a browser would.
        return (
            PageRequest(_next_url(current.url, str(target), "@odata.nextLink"), current.body)
            if _present(target)
            else None
        )
    if paging.style == "link_header":
        target = link_next(link)
        return (
            PageRequest(_next_url(current.url, target, "the Link header"), current.body)
            if target
            else None
        )
    if paging.style == "cursor":
        cursor = at_path(document, paging.next_cursor_path)
        if not _present(cursor):
            return None
        return _with_params(current, source.method, {paging.cursor_param: cursor})
    if paging.style == "offset":
        if records > paging.page_size:
            raise SourceError(
                f"a page answered {records} records, more than source.pagination.page_size "
                f"({paging.page_size}): the API ignores source.pagination.limit_param "
                f"{paging.limit_param!r}, so offsets would skip or repeat people; check the "
                f"parameter names or set page_size to the API's page size"
            )
        if records < paging.page_size:
            return None
        offset = current.offset + records
        return _with_params(
            current,
            source.method,
            {paging.offset_param: offset, paging.limit_param: paging.page_size},
            offset=offset,
        )
    return None


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
        current,
        source.method,
        {paging.offset_param: records, paging.limit_param: paging.page_size},
        offset=records,
    )


def next_page_marker(paging: PaginationSettings, document: Any, link: str) -> tuple[str, str]:
    """For style "none": what in an answer points to a next page, and the style to use.

    ("", "") when nothing does.
    """
    if link_next(link):
        return 'a Link header with rel="next"', 'style = "link_header"'
    if isinstance(document, dict):
        if _present(document.get("@odata.nextLink")):
            return "@odata.nextLink in the body", 'style = "odata"'
        if paging.next_cursor_path and _present(at_path(document, paging.next_cursor_path)):
            path = paging.next_cursor_path
            return f"{path!r} in the body", f'style = "cursor" (next_cursor_path = "{path}")'
        for name in COMMON_CURSOR_NAMES:
            if _present(document.get(name)):
                return f"{name!r} in the body", f'style = "cursor" (next_cursor_path = "{name}")'
    return "", ""


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


def _present(value: Any) -> bool:
    if value is None or value is False:
        return False
    if isinstance(value, str | list | dict):
        return bool(value)
    return True


def _with_params(
    request: PageRequest, method: str, params: dict[str, Any], *, offset: int | None = None
) -> PageRequest:
    new_offset = request.offset if offset is None else offset
    if method == "POST":
        body = dict(request.body) if isinstance(request.body, dict) else {}
        for name, value in params.items():
            _set_path(body, name, value)
        return PageRequest(request.url, body, new_offset)
    parts = urlsplit(request.url)
    query = [(k, v) for k, v in parse_qsl(parts.query, keep_blank_values=True) if k not in params]
    query.extend((name, _text(value)) for name, value in params.items())
    url = urlunsplit((parts.scheme, parts.netloc, parts.path, urlencode(query), parts.fragment))
    return PageRequest(url, request.body, new_offset)


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
