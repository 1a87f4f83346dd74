"""What shows an API's answer is one page of more (hrsync.core.export.page_signs): real vendors'
shapes, and a property over generated envelopes: a continuation outside the records is
always recognised, whatever it is called, and an envelope without one never is."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from hrsync.core.export.page_signs import looks_like_a_page, one_page_sign, page_signs, words

URL = "https://hr.example.com/api/v1/people?limit=100"
BASE = "https://hr.example.com/api/v1/people"


def first_sign(document: Any, records_path: str, records: int, **more: Any) -> Any:
    signs = page_signs(document, records_path=records_path, url=more.pop("url", URL), **more)
    return one_page_sign(signs, records)


TEN = [{"id": str(n), "token": "t", "page": 2, "next": f"{BASE}?x={n}"} for n in range(10)]

# (vendor, answer, records_path, the first sign's (kind, path); None: the whole list)
VENDORS: list[tuple[str, Any, str, tuple[str, str] | None]] = [
    (
        "SAP SuccessFactors (OData v2)",
        {"d": {"results": TEN, "__next": f"{BASE}?$format=json&$skiptoken=eyJzdGFydFJvdyI6MTB9"}},
        "d.results",
        ("next", "d.__next"),
    ),
    ("SuccessFactors, last page", {"d": {"results": TEN}}, "d.results", None),
    (
        "OData v2 with $inlinecount",
        {"d": {"results": TEN, "__count": "42"}},
        "d.results",
        ("total", "d.__count"),
    ),
    (
        "Microsoft Graph",
        {
            "@odata.context": "https://hr.example.com/api/v1/$metadata#users",
            "value": TEN,
            "@odata.nextLink": f"{BASE}?$skiptoken=X",
        },
        "value",
        ("next", "@odata.nextLink"),
    ),
    (
        "Microsoft Graph delta, last page",
        {
            "@odata.context": "https://hr.example.com/api/v1/$metadata#users",
            "value": TEN,
            "@odata.deltaLink": f"{BASE}/delta?$deltatoken=abc",
        },
        "value",
        None,
    ),
    (
        "Salesforce SOQL",
        {
            "totalSize": 5000,
            "done": False,
            "records": TEN,
            "nextRecordsUrl": "/services/data/v58.0/query/01gD0000002HU6KIAW-2000",
        },
        "records",
        ("next", "nextRecordsUrl"),
    ),
    ("Salesforce, last page", {"totalSize": 10, "done": True, "records": TEN}, "records", None),
    (
        "Salesforce, the flag alone",
        {"totalSize": 10, "done": False, "records": TEN},
        "records",
        ("done", "done"),
    ),
    (
        "Atlassian",
        {
            "self": f"{BASE}?startAt=0",
            "maxResults": 10,
            "startAt": 0,
            "total": 120,
            "isLast": False,
            "values": TEN,
        },
        "values",
        ("done", "isLast"),
    ),
    (
        "Atlassian, last page",
        {"maxResults": 50, "startAt": 0, "total": 10, "isLast": True, "values": TEN},
        "values",
        None,
    ),
    (
        "a nested continuation",
        {"people": TEN, "continuation": {"href": f"{BASE}?c=2", "method": "GET"}},
        "people",
        ("next", "continuation.href"),
    ),
    (
        "Personio",
        {
            "success": True,
            "metadata": {"total_elements": 40, "current_page": 0, "total_pages": 4},
            "data": TEN,
        },
        "data",
        ("total", "metadata.total_elements"),
    ),
    (
        "SCIM 2.0",
        {
            "schemas": ["urn:ietf:params:scim:api:messages:2.0:ListResponse"],
            "totalResults": 40,
            "itemsPerPage": 10,
            "startIndex": 1,
            "Resources": TEN,
        },
        "Resources",
        ("total", "totalResults"),
    ),
    (
        "SCIM 2.0, everyone",
        {"totalResults": 10, "itemsPerPage": 10, "startIndex": 1, "Resources": TEN},
        "Resources",
        None,
    ),
    (
        "BambooHR datasets",
        {
            "data": TEN,
            "links": {"self": f"{BASE}?page=1", "next": f"{BASE}?page=2"},
            "meta": {"totalRecords": 10, "page": 1},
        },
        "data",
        ("next", "links.next"),
    ),
    (
        "BambooHR datasets, last page",
        {
            "data": TEN,
            "links": {"self": f"{BASE}?page=1", "next": None},
            "meta": {"totalRecords": 10, "page": 1},
        },
        "data",
        None,
    ),
    (
        "Rippling",
        {"results": TEN, "next_link": f"{BASE}?cursor=10"},
        "results",
        ("next", "next_link"),
    ),
    (
        "Google Workspace",
        {"users": TEN, "nextPageToken": "Q0FF"},
        "users",
        ("next", "nextPageToken"),
    ),
    (
        "Google People, last page (a sync token is no next page)",
        {"connections": TEN, "nextSyncToken": "CPDAlvy", "totalPeople": 10},
        "connections",
        None,
    ),
    (
        "Slack",
        {"members": TEN, "response_metadata": {"next_cursor": "dXNlcjpV"}},
        "members",
        ("next", "response_metadata.next_cursor"),
    ),
    (
        "Slack, last page",
        {"members": TEN, "response_metadata": {"next_cursor": ""}},
        "members",
        None,
    ),
    (
        "Oracle HCM REST",
        {
            "items": TEN,
            "count": 10,
            "hasMore": True,
            "limit": 10,
            "offset": 0,
            "links": [{"rel": "self", "href": URL}],
        },
        "items",
        ("more", "hasMore"),
    ),
    (
        "Oracle HCM REST, last page",
        {
            "items": TEN,
            "count": 10,
            "hasMore": False,
            "limit": 25,
            "offset": 0,
            "links": [{"rel": "self", "href": URL}],
        },
        "items",
        None,
    ),
    (
        "GraphQL connection",
        {
            "data": {
                "people": {"nodes": TEN, "pageInfo": {"hasNextPage": True, "endCursor": "Y3Vy"}}
            }
        },
        "data.people.nodes",
        ("more", "data.people.pageInfo.hasNextPage"),
    ),
    (
        "GraphQL connection, last page",
        {
            "data": {
                "people": {"nodes": TEN, "pageInfo": {"hasNextPage": False, "endCursor": "Y3Vy"}}
            }
        },
        "data.people.nodes",
        None,
    ),
    (
        "HAL",
        {
            "_embedded": {"people": TEN},
            "_links": {"self": {"href": URL}, "next": {"href": f"{BASE}?page=2"}},
        },
        "_embedded.people",
        ("next", "_links.next.href"),
    ),
    (
        "FHIR Bundle",
        {
            "resourceType": "Bundle",
            "link": [
                {"relation": "self", "url": URL},
                {"relation": "next", "url": f"{BASE}?page=2"},
            ],
            "entry": TEN,
        },
        "entry",
        ("next", "link.1"),
    ),
    (
        "Kubernetes-style list",
        {"metadata": {"continue": "eyJ2"}, "items": TEN},
        "items",
        ("next", "metadata.continue"),
    ),
    (
        "Elasticsearch",
        {"hits": {"total": {"value": 300, "relation": "eq"}, "hits": TEN}},
        "hits.hits",
        ("total", "hits.total.value"),
    ),
    (
        "AWS-style",
        {"Users": TEN, "IsTruncated": True, "Marker": "abc"},
        "Users",
        ("next", "Marker"),
    ),
    ("Workday RaaS", {"Report_Entry": TEN}, "Report_Entry", None),
    ("HiBob", {"employees": TEN}, "employees", None),
    ("a page number alone", {"page": 1, "per_page": 100, "total": 10, "data": TEN}, "data", None),
    (
        "an unknown name, a link back to the same API",
        {"data": TEN, "weiter": f"{BASE}?seite=2"},
        "data",
        ("next", "weiter"),
    ),
    (
        "a date under a word of continuation is no page",
        {"data": TEN, "nextRunAt": "2026-01-05T06:00:00Z", "next_review": "2026-02-01"},
        "data",
        None,
    ),
    (
        "a link elsewhere is no page",
        {"data": TEN, "docs": "https://developer.example.com/people?lang=en"},
        "data",
        None,
    ),
]


@pytest.mark.parametrize(
    ("document", "records_path", "expected"),
    [pytest.param(doc, path, want, id=vendor) for vendor, doc, path, want in VENDORS],
)
def test_real_vendors_shapes(document: Any, records_path: str, expected: Any) -> None:
    sign = first_sign(document, records_path, len(TEN))
    found = None if sign is None else (sign.kind, sign.path)
    assert found == expected


def test_headers_and_a_link_next() -> None:
    assert first_sign([], "", 10, link_next=f"{BASE}?after=x").kind == "next"
    assert first_sign([], "", 10, headers={"x-total-count": "11"}).kind == "total"
    assert first_sign([], "", 10, headers={"x-total-count": "10"}) is None
    assert first_sign([], "", 10, headers={"x-ms-continuation": "abc"}).kind == "next"


def test_a_common_page_size() -> None:
    assert all(looks_like_a_page(n) for n in (10, 20, 25, 50, 100, 200, 250, 500, 1000, 2000))
    assert not any(looks_like_a_page(n) for n in (1, 9, 37, 40, 45, 99, 101, 999))


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("@odata.nextLink", ("odata", "next", "link")),
        ("$skiptoken", ("skiptoken",)),
        ("isLast", ("is", "last")),
        ("nextRecordsUrl", ("next", "records", "url")),
        ("NextPageToken", ("next", "page", "token")),
        ("has_more", ("has", "more")),
        ("pagetoken", ("page", "token")),
        ("X-Total-Count", ("x", "total", "count")),
    ],
)
def test_words(name: str, expected: tuple[str, ...]) -> None:
    assert words(name) == expected


# ---------------------------------------------------------------- the property

# Keys an envelope may hold around its records that never say "more".
QUIET: list[tuple[str, Any]] = [
    ("status", "ok"),
    ("requestId", "5f1c-9a"),
    ("generated_at", "2026-01-05T06:00:00Z"),
    ("version", 2),
    ("self", f"{BASE}?limit=100&page=1"),
    ("@odata.context", "https://hr.example.com/api/v1/$metadata#people"),
    ("next", None),
    ("next_page", ""),
    ("nextCursor", "null"),
    ("has_more", False),
    ("hasNextPage", "false"),
    ("done", True),
    ("isLast", True),
    ("page", 1),
    ("per_page", 100),
    ("offset", 0),
    ("limit", 100),
    ("startIndex", 1),
    ("remainingItemCount", 0),
    ("total_pages", 1),
    ("links", {"self": URL, "next": None, "prev": f"{BASE}?page=0"}),
    ("company", {"name": "Acme", "url": "https://acme.example.com/about"}),
    ("nextSyncToken", "CPDAlvy"),
    ("@odata.deltaLink", f"{BASE}/delta?$deltatoken=x"),
]
# Names of a next page, some no list of the code holds; an unknown one is recognised by
# its value, a link back to the same API.
NEXT_NAMES = [
    "next",
    "__next",
    "nextRecordsUrl",
    "continuationToken",
    "next_cursor",
    "moreToken",
    "skipToken",
    "after",
    "resumeMarker",
    "scroll_id",
    "nextOffset",
]
UNKNOWN_NAMES = ["weiter", "suivant", "siguiente", "proxima", "fortsetzung", "following_url", "x"]
WRAPPERS = [
    "meta",
    "metadata",
    "pagination",
    "paging",
    "links",
    "_links",
    "page_info",
    "response_metadata",
    "continuation",
    "cursors_info",
]
LEVEL_NAMES = ["data", "d", "results", "items", "value", "response", "body", "payload"]


def same_api_link(draw: st.DrawFn) -> str:
    token = draw(st.text("abcXYZ0123456789", min_size=1, max_size=8))
    param = draw(st.sampled_from(["page", "cursor", "$skiptoken", "p", "s", "from"]))
    return draw(
        st.sampled_from(
            [
                f"{BASE}?{param}={token}",
                f"/api/v1/people?{param}={token}",
                f"?{param}={token}",
                f"{BASE}/next/{token}",
            ]
        )
    )


@st.composite
def continuations(draw: st.DrawFn, records: int) -> tuple[str, Any]:
    kind = draw(st.sampled_from(["named", "unknown", "flag", "total", "pages"]))
    if kind == "named":
        name = draw(st.sampled_from(NEXT_NAMES))
        token = draw(st.text("abcXYZ0123456789=", min_size=1, max_size=12))
        options: list[Any] = [token, same_api_link(draw), {"href": same_api_link(draw)}]
        if name in ("nextOffset", "next"):
            options.append(draw(st.integers(1, 10**6)))
        return name, draw(st.sampled_from(options))
    if kind == "unknown":
        return draw(st.sampled_from(UNKNOWN_NAMES)), same_api_link(draw)
    if kind == "flag":
        return draw(
            st.sampled_from(
                [
                    ("has_more", True),
                    ("hasMore", "true"),
                    ("done", False),
                    ("isLast", False),
                    ("IsTruncated", True),
                    ("moreAvailable", True),
                    ("complete", "false"),
                    ("remainingItemCount", 7),
                ]
            )
        )
    more = records + draw(st.integers(1, 10**5))
    if kind == "total":
        name = draw(
            st.sampled_from(
                [
                    "total",
                    "totalResults",
                    "total_count",
                    "__count",
                    "@odata.count",
                    "totalSize",
                    "totalRecords",
                    "count",
                ]
            )
        )
        return name, draw(st.sampled_from([more, str(more)]))
    return draw(st.sampled_from(["total_pages", "totalPages", "pageCount", "num_pages"])), 2 + (
        more % 50
    )


@st.composite
def envelopes(draw: st.DrawFn, with_continuation: bool) -> tuple[Any, str, int, str]:
    """An answer, its records' path, how many records, and the continuation's path."""
    count = draw(st.integers(1, 6))
    records = [
        {
            "id": str(n),
            "token": "abc",
            "page": 3,
            "next": f"{BASE}?page=9",
            "total": 10**6,
            "has_more": True,
        }
        for n in range(count)
    ]
    depth = draw(st.integers(1, 3))
    path = draw(st.lists(st.sampled_from(LEVEL_NAMES), min_size=depth, max_size=depth, unique=True))
    levels: list[dict[str, Any]] = []
    node: Any = records
    for key in reversed(path):
        level = dict(draw(st.lists(st.sampled_from(QUIET), max_size=4, unique_by=lambda q: q[0])))
        level[key] = node
        levels.insert(0, level)
        node = level
    where = ""
    if with_continuation:
        name, value = draw(continuations(count))
        at = draw(st.integers(0, depth - 1))
        level = levels[at]
        prefix = ".".join(path[:at])
        wrapper = draw(st.none() | st.sampled_from(WRAPPERS))
        if wrapper is not None and wrapper not in path:
            inner = level.get(wrapper)
            level[wrapper] = {**(inner if isinstance(inner, dict) else {}), name: value}
            prefix = ".".join(p for p in (prefix, wrapper) if p)
        else:
            level[name] = value
        where = ".".join(p for p in (prefix, name) if p)
    return levels[0], ".".join(path), count, where


@given(envelopes(with_continuation=True))
def test_a_continuation_outside_the_records_is_always_recognised(
    envelope: tuple[Any, str, int, str],
) -> None:
    document, records_path, count, where = envelope
    signs = page_signs(document, records_path=records_path, url=URL)
    sign = one_page_sign(signs, count)
    assert sign is not None, (document, where)
    assert any(s.path == where or s.path.startswith(where + ".") for s in signs), (signs, where)


@given(envelopes(with_continuation=False))
def test_an_envelope_without_a_continuation_never_is(
    envelope: tuple[Any, str, int, str],
) -> None:
    document, records_path, count, _ = envelope
    signs = page_signs(document, records_path=records_path, url=URL)
    assert one_page_sign(signs, count) is None, (document, signs)
