"""The pure paging rules: Link headers, next-page markers, the next request."""

from __future__ import annotations

import typing
from typing import Any

import pytest

from hrsync.core.settings import PaginationSettings, SourceSettings
from hrsync.sources.base import SourceError
from hrsync.sources.pagination import (
    STYLES,
    PageAnswer,
    PageRequest,
    first_request,
    link_next,
    next_page_marker,
    next_request,
    page_signs,
)


@pytest.mark.parametrize(
    ("header", "target"),
    [
        ("", None),
        ('<https://a/u?after=1>; rel="next"', "https://a/u?after=1"),
        ('<https://a/u>; rel="self", <https://a/u?after=2>; rel="next"', "https://a/u?after=2"),
        ("<https://a/u?after=3>; rel=next", "https://a/u?after=3"),
        ('<https://a/u?after=4>; rel="prev next"', "https://a/u?after=4"),
        ('<https://a/u?after=5>; title="a, b"; REL="Next"', "https://a/u?after=5"),
        ('<https://a/u>; rel="self"', None),
        ('<https://a/u>; rel="nextish"', None),
    ],
)
def test_link_next(header: str, target: str | None) -> None:
    assert link_next(header) == target


@pytest.mark.parametrize(
    ("document", "link", "marker"),
    [
        ({"value": []}, "", ""),
        ({"value": [], "next": None, "nextPageToken": "", "@odata.nextLink": None}, "", ""),
        ([{"id": 1}], "", ""),
        ({"value": [], "@odata.nextLink": "u"}, "", "@odata.nextLink in the body"),
        ({"next": "2"}, "", "'next' in the body"),
        ({"nextPageToken": "t"}, "", "'nextPageToken' in the body"),
        ({"meta": {"cursor": "c"}}, "", "'meta.cursor' in the body"),
        ([{"id": 1}], "<u>; rel=next", 'a Link header with rel="next"'),
    ],
)
def test_next_page_marker(document: Any, link: str, marker: str) -> None:
    paging = PaginationSettings(next_cursor_path="meta.cursor")
    assert next_page_marker(paging, PageAnswer(document, link))[0] == marker


def test_offset_and_cursor_requests_for_get_and_post() -> None:
    get = SourceSettings(
        url="https://h/e?x=1", pagination=PaginationSettings(style="offset", page_size=2)
    )
    first = first_request(get)
    assert first.url == "https://h/e?x=1&offset=0&limit=2"
    second = next_request(get, first, {}, "", 2)
    assert second is not None and second.url == "https://h/e?x=1&offset=2&limit=2"
    assert next_request(get, second, {}, "", 1) is None
    post = SourceSettings(
        url="https://h/s",
        body='{"q": {"a": 1}}',
        pagination=PaginationSettings(
            style="cursor", next_cursor_path="page.next", cursor_param="page.cursor"
        ),
    )
    start = first_request(post)
    assert start == PageRequest("https://h/s", {"q": {"a": 1}})
    following = next_request(post, start, {"page": {"next": "c2"}}, "", 5)
    assert following == PageRequest("https://h/s", {"q": {"a": 1}, "page": {"cursor": "c2"}})
    assert start.body == {"q": {"a": 1}}  # the first request's body is left as it was
    assert next_request(post, following, {"page": {"next": ""}}, "", 5) is None


@pytest.mark.parametrize(
    ("style", "document", "link"),
    [
        ("odata", {"@odata.nextLink": "https://[::1/users?page=2"}, ""),
        ("link_header", {}, '<https://[::1/users?page=2>; rel="next"'),
    ],
)
def test_an_unparsable_next_page_url_is_a_source_error(
    style: str, document: Any, link: str
) -> None:
    # Written by the API, not by the user: a clear refusal, not a ValueError traceback.
    source = SourceSettings(url="https://h/users", pagination=PaginationSettings(style=style))
    with pytest.raises(SourceError, match=r"next page .*not a valid URL"):
        next_request(source, first_request(source), document, link, 1)


def test_page_and_scim_requests() -> None:
    page = SourceSettings(
        url="https://h/e?x=1",
        pagination=PaginationSettings(style="page", first_page=0, offset_param="p"),
    )
    first = first_request(page)
    assert first.url == "https://h/e?x=1&p=0"
    second = next_request(page, first, {}, "", 25)
    assert second is not None and second.url == "https://h/e?x=1&p=1" and second.size == 25
    assert next_request(page, second, {}, "", 24) is None  # shorter than the first
    assert next_request(page, second, {}, "", 0) is None
    # The answer's page count ends it, even on a full page.
    assert next_request(page, second, {"meta": {"totalPages": 2}}, "", 25) is None
    scim = SourceSettings(url="https://h/Users", pagination=PaginationSettings(style="scim"))
    start = first_request(scim)
    assert start.url == "https://h/Users?startIndex=1&count=100"
    following = next_request(scim, start, {"totalResults": 25}, "", 10)
    assert following is not None and following.url == "https://h/Users?startIndex=11&count=100"
    assert next_request(scim, following, {"totalResults": 20}, "", 10) is None


@pytest.mark.parametrize(
    ("document", "headers", "kinds"),
    [
        ({"records": [], "next": None, "has_more": False, "total": 0}, {}, ["total"]),
        ({"meta": {"has_more": True}}, {}, ["more"]),
        ({"links": {"next": {"href": "/2"}}}, {}, ["next"]),
        ({"data": {"people": [], "total": 3}}, {}, ["total"]),
        ({"item": {"next": "x", "total": 3}}, {}, []),  # not a metadata object
        ({}, {"x-total-count": "3", "x-next-page": ""}, ["total"]),
        ({"count": True, "total": -1, "totalPages": "4"}, {}, ["pages"]),
    ],
)
def test_page_signs(document: Any, headers: dict[str, str], kinds: list[str]) -> None:
    answer = PageAnswer(document, headers=headers, records_path="data.people")
    signs = page_signs(PaginationSettings(), answer)
    assert [sign.kind for sign in signs] == kinds


def test_every_style_the_settings_allow_is_a_row_of_the_table() -> None:
    allowed = set(typing.get_args(typing.get_type_hints(PaginationSettings)["style"]))
    assert set(STYLES) == allowed


PAGING = PaginationSettings(
    cursor_param="after", offset_param="skip", limit_param="top", page_size=50, first_page=0
)


@pytest.mark.parametrize(
    ("style", "at", "sent", "first"),
    [
        ("none", "x", {}, None),
        ("odata", "x", {}, None),
        ("link_header", "x", {}, None),
        ("next_url", "x", {}, None),
        ("cursor", "c2", {"after": "c2"}, None),
        ("offset", 100, {"skip": 100, "top": 50}, 0),
        # page_param and page_size_param are gone: the page style names its number and
        # size with offset_param and limit_param, as the offset style does
        ("page", 3, {"skip": 3, "top": 50}, 0),
        ("scim", 51, {"startIndex": 51, "count": 50}, 1),
    ],
)
def test_each_style_sends_its_own_parameters_from_its_first_page(
    style: str, at: Any, sent: dict[str, Any], first: int | None
) -> None:
    row = STYLES[style]
    assert row.sends(PAGING, at) == sent
    assert (row.first(PAGING) if row.first is not None else None) == first


def test_a_page_style_sends_the_page_size_only_when_it_has_a_parameter() -> None:
    sized = PaginationSettings(style="page", limit_param="per_page", page_size=25)
    assert STYLES["page"].sends(sized, 2) == {"page": 2, "per_page": 25}
    request = first_request(SourceSettings(url="https://hr/api/people", pagination=sized))
    assert request.url == "https://hr/api/people?page=1&per_page=25"
    assert request.offset == 1
