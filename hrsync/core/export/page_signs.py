"""What shows that an API's answer is one page of a longer list (pure: no I/O).

Read as the whole org, one page would archive everyone on the others, and the ways APIs
say "there is more" are too many to list (``@odata.nextLink``, OData v2's ``d.__next``,
Salesforce's ``done: false``, Atlassian's ``isLast: false``, ``continuation.href``…). So a
page is recognised by the answer's shape; the names known from real APIs only choose the
best message. Only what lies outside the records list counts: the keys beside it, beside
each object on the way to it from the top, and inside the metadata objects there (an
object whose name speaks of paging, links or metadata). The records themselves may hold
anything (a person's ``token``, ``page`` or ``next`` is no sign).

A sign is, with an empty, null or false value never one:

- a key whose name speaks of continuation (next, more, continuation, continue, cursor,
  token, skip, after, marker, scroll, resume…) with a value: text, a number above 0, an
  object holding one (``{"href": …}``); a position alone (``page: 1``, ``offset: 0``,
  ``startIndex``) says where this answer starts, not that more follow, and a date
  (``nextRunAt``) is a time, unless the name is one APIs give their next page;
- a flag that the list goes on: ``has_more``/``hasNext``/``truncated`` true, or
  ``done``/``isLast``/``complete``/``finished`` false (text ``"true"``/``"false"`` too);
- a link (``rel``/``relation`` ``next``) in a list of links beside the records;
- any URL pointing back at the same API (the request's own host and path, or below it)
  other than the request itself, whatever its key is called, unless the key names
  something else (``self``, ``first``, ``prev``, ``context``, ``delta``, ``sync``…);
- a total (``total``, ``count``, ``totalResults``, ``hits.total.value``, OData's
  ``__count``…) larger than the records read, or a page count above 1;
- the headers: a Link ``rel="next"``, ``X-Total-Count`` and the like.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal

Kind = Literal["next", "more", "done", "total", "pages"]
# Shown first: a next page named, then a flag, then counts.
_ORDER: dict[Kind, int] = {"next": 0, "more": 1, "done": 2, "total": 3, "pages": 4}

# The names real APIs give their next page: the best message names one of these first.
KNOWN_NEXT = frozenset(
    {
        "@odata.nextLink",
        "odata.nextLink",
        "__next",
        "next",
        "next_link",
        "nextLink",
        "next_url",
        "nextUrl",
        "next_page",
        "nextPage",
        "next_page_url",
        "nextPageUrl",
        "next_cursor",
        "nextCursor",
        "next_page_token",
        "nextPageToken",
        "next_token",
        "nextToken",
        "nextRecordsUrl",
        "continuation",
        "continuationToken",
        "cursor",
        "has_more",
        "hasMore",
        "has_next",
        "hasNext",
        "hasNextPage",
        "done",
        "isLast",
    }
)

# header (lower case) -> what it tells
HEADER_SIGNS: dict[str, Kind] = {
    "x-total-count": "total",
    "x-total": "total",
    "x-total-pages": "pages",
    "x-next-page": "next",
    "x-next-cursor": "next",
    "x-next-page-token": "next",
    "x-continuation": "next",
    "x-continuation-token": "next",
    "x-ms-continuation": "next",
}

# A whole answer of exactly this many records, and nothing else saying more: an API's
# page size as often as an org's size.
PAGE_SIZES = frozenset({10, 20, 25, 50, 100, 200, 250, 500, 1000, 2000, 5000, 10000})

# Words of a key's name (split at case changes, digits and punctuation, lower case).
_CONTINUE = frozenset(
    {
        "next",
        "more",
        "continuation",
        "continue",
        "cursor",
        "token",
        "skiptoken",
        "after",
        "marker",
        "scroll",
        "resume",
        "remaining",
        "truncated",
        "following",
    }
)
# Where an answer starts: with a number, no sign on its own.
_POSITION = frozenset({"page", "offset", "skip", "start", "index", "number"})
# A page token may be given under a position's name (``"page": "eyJ…"``).
_TOKEN_AT = frozenset({"page", "offset", "skip"})
# The list ends here when true.
_DONE = frozenset({"done", "last", "complete", "completed", "finished", "eof", "exhausted", "end"})
# Keys that name something else than the next page, even with a continuation word or a
# URL of the same API: this answer, the previous ones, a change feed's bookmark.
_OTHER = frozenset(
    {
        "self",
        "first",
        "prev",
        "previous",
        "before",
        "start",
        "end",
        "current",
        "this",
        "context",
        "delta",
        "sync",
        "etag",
        "schema",
        "type",
        "related",
        "up",
        "canonical",
        "edit",
        "describe",
        "metadata",
        "deferred",
        "uri",
        "access",
        "refresh",
        "csrf",
        "session",
        "request",
        "trace",
        "correlation",
    }
)
_TOTAL = frozenset({"total", "count", "inlinecount"})
# What a total may count, besides the records: any other word makes it something else
# (``total_pay``, ``error_count``).
_COUNTED = frozenset(
    {
        "results",
        "result",
        "records",
        "record",
        "items",
        "item",
        "elements",
        "element",
        "entries",
        "entry",
        "rows",
        "row",
        "hits",
        "hit",
        "size",
        "resources",
        "resource",
        "objects",
        "object",
        "users",
        "user",
        "people",
        "persons",
        "person",
        "employees",
        "employee",
        "workers",
        "worker",
        "members",
        "member",
        "all",
        "estimated",
        "approximate",
        "num",
        "number",
        "of",
        "odata",
        "matched",
        "matching",
        "matches",
        "available",
        "value",
        "values",
        "filtered",
        "overall",
        "found",
    }
)
# An object whose name holds one of these is looked into (besides continuation names).
_META = frozenset(
    {
        "meta",
        "metadata",
        "links",
        "link",
        "paging",
        "pagination",
        "paginated",
        "page",
        "info",
        "navigation",
        "cursors",
        "hits",
        "odata",
        "response",
        "result",
    }
)
_VOCABULARY = (
    _CONTINUE
    | _POSITION
    | _DONE
    | _OTHER
    | _TOTAL
    | _COUNTED
    | _META
    | {"has", "is", "link", "url", "uri", "href", "pages", "per", "last", "skip", "records"}
)
_WORDS = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|\d+")
_URL = re.compile(r"^(?:(https?)://([^/?#]*))?([^?#]*)(?:\?([^#]*))?", re.IGNORECASE)
_DATE = re.compile(r"\s*\d{4}-\d{2}-\d{2}")
_DEPTH = 4  # how deep metadata objects are looked into


@dataclass(frozen=True)
class Sign:
    """Something in an answer that shows it may be one page of a longer list."""

    kind: Kind
    where: str  # for messages: "'links.next' in the body", "the X-Total-Count header"
    path: str  # the dotted path in the body; "" for a header
    value: Any
    known: bool = False  # a name real APIs give their next page (`KNOWN_NEXT`)


def page_signs(
    document: Any,
    *,
    records_path: str = "",
    url: str = "",
    link_next: str | None = None,
    headers: Mapping[str, str] | None = None,
) -> list[Sign]:
    """Every sign in an answer (see the module doc), best first: next pages (known names
    first), then flags, totals and page counts, each as it is, whatever the records read.

    `records_path`: where the records are (dotted; "" for none or the top level); `url`:
    the request's URL, against which links are judged (none judged without it);
    `link_next`: a Link header's ``rel="next"`` target; `headers`: lower-case names."""
    signs: list[Sign] = []
    if link_next:
        signs.append(Sign("next", 'a Link header with rel="next"', "", link_next, True))
    if isinstance(document, dict):
        keys = [key for key in records_path.split(".") if key] if records_path else []
        node: Any = document
        prefix = ""
        for step, key in enumerate([*keys, ""]):
            if not isinstance(node, dict):
                break
            records_key = key if step < len(keys) else None
            _look(node, prefix, records_key, url, signs, _DEPTH)
            if records_key is None or records_key not in node:
                break
            node = node[records_key]
            prefix = _join(prefix, records_key)
    for header, kind in HEADER_SIGNS.items():
        text = (headers or {}).get(header, "").strip()
        told: Any = text if kind == "next" else whole_count(text)
        if _present(told):
            shown = "-".join(part.capitalize() for part in header.split("-"))
            signs.append(Sign(kind, f"the {shown} header", "", told, True))
    unique: dict[str, Sign] = {}
    for sign in signs:
        unique.setdefault(sign.path or sign.where, sign)
    return sorted(
        unique.values(),
        key=lambda s: (_ORDER[s.kind], not s.known, s.path.count("."), s.path),
    )


def one_page_sign(signs: list[Sign], records: int) -> Sign | None:
    """The first of `signs` that shows an answer of `records` records is one page of
    more: a next page or flag, a total above `records`, more than one page."""
    for sign in signs:
        if sign.kind in ("next", "more", "done"):
            return sign
        if sign.kind == "total" and sign.value > records:
            return sign
        if sign.kind == "pages" and sign.value > 1:
            return sign
    return None


def seen(sign: Sign, records: int) -> str:
    """What `sign` shows, for a message: "'d.__next' in the body points to a next page"."""
    if sign.kind == "next":
        return f"{sign.where} points to a next page"
    if sign.kind == "more":
        told = "true" if _flag(sign.value) else f"{sign.value:,}"
        return f"{sign.where} is {told}"
    if sign.kind == "done":
        return f"{sign.where} is false"
    if sign.kind == "total":
        return f"{sign.where} is {sign.value:,}, more than the {records:,} records read"
    return f"{sign.where} is {sign.value:,} pages"


def looks_like_a_page(records: int) -> bool:
    """A whole answer of a common page size (10, 25, 100, 1000…) may be a capped page."""
    return records in PAGE_SIZES


def words(name: str) -> tuple[str, ...]:
    """A key's name as lower-case words: ``@odata.nextLink`` → odata, next, link;
    ``$skiptoken`` → skip, token; ``isLast`` → is, last."""
    found: list[str] = []
    for word in _WORDS.findall(name):
        lower = word.lower()
        found.extend(_compound(lower))
    return tuple(found)


def _compound(word: str) -> list[str]:
    """A word of two known words run together (``skiptoken``, ``nextpage``) as both."""
    if word in _VOCABULARY or len(word) < 5:
        return [word]
    for cut in range(2, len(word) - 1):
        if word[:cut] in _VOCABULARY and word[cut:] in _VOCABULARY:
            return [word[:cut], word[cut:]]
    return [word]


def _look(
    node: dict[Any, Any],
    prefix: str,
    records_key: str | None,
    url: str,
    signs: list[Sign],
    depth: int,
) -> None:
    """The signs among `node`'s keys (the records' own key left out) and in the metadata
    objects it holds, `depth` levels down."""
    # Cursors around this page (``before`` and ``after``) say where it is, not that more
    # follow: the next page, if any, is named on its own.
    around = any("before" in words(str(key)) for key in node)
    for raw_key, value in node.items():
        key = str(raw_key)
        if key == records_key:
            continue
        path = _join(prefix, key)
        named = set(words(key))
        sign = None if around and named == {"after"} else _sign(key, named, path, value, url)
        if sign is not None:
            signs.append(sign)
        if isinstance(value, dict) and depth > 1 and named & (_CONTINUE | _META | _TOTAL):
            _look(value, path, None, url, signs, depth - 1)
        elif isinstance(value, dict) and depth > 1:
            _links_only(value, path, url, signs, depth - 1)
        elif isinstance(value, list):
            _link_list(value, path, url, signs)


def _links_only(node: dict[Any, Any], prefix: str, url: str, signs: list[Sign], depth: int) -> None:
    """In an object of no paging name: only a URL of the same API counts."""
    for raw_key, value in node.items():
        key = str(raw_key)
        path = _join(prefix, key)
        if isinstance(value, str) and not set(words(key)) & _OTHER and _same_api(value, url):
            signs.append(Sign("next", _where(path), path, value))
        elif isinstance(value, dict) and depth > 1:
            _links_only(value, path, url, signs, depth - 1)


def _link_list(items: list[Any], path: str, url: str, signs: list[Sign]) -> None:
    """A list of links (``[{"rel": "next", "href": …}]``, FHIR's ``relation``/``url``)."""
    for position, item in enumerate(items[:50]):
        if not isinstance(item, dict):
            return  # records, or values: not links
        rel = item.get("rel", item.get("relation"))
        target = next((item[k] for k in ("href", "url", "uri") if _present(item.get(k))), None)
        if isinstance(rel, str) and "next" in rel.lower().split() and target is not None:
            where = _join(path, str(position))
            signs.append(Sign("next", f"{where!r} (rel next) in the body", where, target, True))


def _sign(key: str, named: set[str], path: str, value: Any, url: str) -> Sign | None:
    known = key in KNOWN_NEXT
    if named & _OTHER and not known:
        return None
    flag = _flag(value)
    if flag is not None:
        if named & _DONE and not named & _CONTINUE:
            return Sign("done", _where(path), path, value, known) if flag is False else None
        if named & _CONTINUE:
            return Sign("more", _where(path), path, value, known) if flag else None
        return None
    number = whole_count(value)
    if number is not None:
        if _is_pages(named):
            return Sign("pages", _where(path), path, number) if number > 0 else None
        if "remaining" in named:
            return Sign("more", _where(path), path, number) if number > 0 else None
        if named & _TOTAL and named <= _TOTAL | _COUNTED:
            return Sign("total", _where(path), path, number)
        if named & _CONTINUE and not isinstance(value, str):
            return Sign("next", _where(path), path, number, known) if number > 0 else None
        if not named & _CONTINUE:
            return None
    if isinstance(value, dict):
        total = whole_count(value.get("value"))
        if named & _TOTAL and named <= _TOTAL | _COUNTED and total is not None:
            inner = _join(path, "value")  # Elasticsearch: {"total": {"value": N}}
            return Sign("total", _where(inner), inner, total)
        if named & _CONTINUE and value:
            for inner_key in ("href", "url", "uri", "link"):
                if _present(value.get(inner_key)):
                    inner = _join(path, inner_key)
                    return Sign("next", _where(inner), inner, value[inner_key], known)
            if any(_present(item) for item in value.values()):
                return Sign("next", _where(path), path, value, known)
        return None
    if not _present(value):
        return None
    if isinstance(value, str) and not known and _DATE.match(value):
        return None  # "nextRunAt": "2026-01-05…" is a time, not a page
    if named & _CONTINUE and isinstance(value, str | int | float | list):
        return Sign("next", _where(path), path, value, known)
    if named & _TOKEN_AT and isinstance(value, str) and not value.strip().isdigit():
        return Sign("next", _where(path), path, value, known)  # a page token, not a number
    if isinstance(value, str) and _same_api(value, url):
        return Sign("next", _where(path), path, value, known)
    return None


def _is_pages(named: set[str]) -> bool:
    """A count of pages: ``total_pages``, ``pageCount``, ``num_pages``, ``last_page``."""
    if "pages" in named:
        return not named & {"per", "size"}
    return "page" in named and bool(named & {"total", "count", "last", "num"})


def _flag(value: Any) -> bool | None:
    if isinstance(value, bool):
        return value
    if isinstance(value, str) and value.strip().lower() in ("true", "false"):
        return value.strip().lower() == "true"
    return None


def _same_api(value: str, url: str) -> bool:
    """`value` is a link to the API `url` asked (its host, its path or below), not `url`."""
    if not url or not value.strip() or " " in value.strip():
        return False
    asked = _URL.match(url)
    told = _URL.match(value.strip())
    if asked is None or told is None or not asked.group(2):
        return False
    scheme, host, path, query = told.groups()
    if not scheme and not path.startswith("/") and not value.startswith("?"):
        return False  # not a URL
    scheme = (scheme or asked.group(1)).lower()
    host = (host if host is not None else asked.group(2)).lower()
    path = path or asked.group(3)
    base = asked.group(3).rstrip("/")
    if (scheme, host) != (asked.group(1).lower(), asked.group(2).lower()):
        return False
    if path.rstrip("/") != base and not path.startswith(base + "/"):
        return False
    same = path.rstrip("/") == base and _query(query) == _query(asked.group(4))
    return not same


def _query(query: str | None) -> list[str]:
    return sorted(part for part in (query or "").split("&") if part)


def _where(path: str) -> str:
    shown = path if path == "@odata.nextLink" else repr(path)
    return f"{shown} in the body"


def whole_count(value: Any) -> int | None:
    """A whole, non-negative number (or its digits as text); None for anything else."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int) and value >= 0:
        return value
    if isinstance(value, str) and value.strip().isdigit():
        return int(value.strip())
    return None


def _present(value: Any) -> bool:
    if value is None or value is False:
        return False
    if isinstance(value, str):
        return bool(value.strip()) and value.strip().lower() not in ("null", "none", "false")
    if isinstance(value, list | dict):
        return bool(value)
    return True


def _join(*parts: str) -> str:
    return ".".join(part for part in parts if part)


def first_run_page(source: str, records: int) -> str:
    """Why a first run refuses an answer of exactly a common page size, and what to set."""
    return (
        f"{source} answered exactly {records:,} records, a common page size, and this is the "
        f"first run (no accepted run to compare with): if the API stops at {records:,} a "
        f"page, everyone after them would be archived (nothing was sent). Set "
        f"[source.pagination] to the API's paging, or source.single_page = true if the API "
        f"answers everyone at once"
    )
