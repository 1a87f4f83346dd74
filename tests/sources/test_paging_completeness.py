"""Paged HTTP sources: never one page taken for the whole org."""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest

from hrsync.core.settings import PaginationSettings, SourceSettings
from hrsync.sources.base import SourceError
from hrsync.sources.open import open_export
from tests.fakes import Request, Response, serve
from tests.fakes.hr_apis import PersonioApi, sample_people
from tests.sources.test_http_pages import personio_env, personio_settings


def test_offset_reads_every_page_of_an_api_that_caps_below_page_size_and_states_its_total() -> None:
    # The API answers at most 5 records whatever the limit asked (Personio capped 200 to
    # 100 in 2025): each page is "short", but the answer's total (metadata.total_elements)
    # says how many there are, so offsets go on at the API's pace to the last record.
    api = PersonioApi(max_limit=5)
    with serve(api) as server:
        export = open_export(personio_settings(server.base_url, 10), environ=personio_env(api))
        rows: list[Any] = list(export.rows())
    assert len(rows) == len(api.people) == 40
    assert export.pages == 8


def capped_without_total(request: Request, base: str) -> Response:
    """An API that caps its pages at 5 records and says nothing of how many there are."""
    offset = int(request.query.get("offset", "0"))
    people = sample_people()[offset : offset + 5]
    return Response.of_json({"data": [{"id": p.id, "email": p.email} for p in people]})


def test_offset_refuses_an_api_that_caps_the_page_below_page_size_and_states_no_total() -> None:
    # With no total, a short first page may be the API's cap: read as the last one, 5 of
    # 40 people would have been the whole org.
    settings = SourceSettings(
        url="{base}/people",
        records_path="data",
        pagination=PaginationSettings(style="offset", page_size=10),
    )
    with serve(capped_without_total) as server, pytest.raises(SourceError) as caught:
        url = (settings.url or "").format(base=server.base_url)
        open_export(dataclasses.replace(settings, url=url), environ={})
    message = str(caught.value)
    assert "5 records" in message and "source.pagination.page_size" in message
    assert "page_size = 5" in message


@pytest.mark.parametrize("total", [1, 9])
def test_offset_a_small_org_on_one_short_page_is_read_whole(total: int) -> None:
    api = PersonioApi(people=sample_people()[:total])
    with serve(api) as server:
        export = open_export(personio_settings(server.base_url, 10), environ=personio_env(api))
        rows: list[Any] = list(export.rows())
    assert len(rows) == total
    assert export.pages == 1


def google_users(request: Request, base: str) -> Response:
    start = int(request.query.get("pageToken") or 0)
    body: dict[str, Any] = {"users": [{"id": str(i)} for i in range(start, min(start + 4, 10))]}
    if start + 4 < 10:
        body["nextPageToken"] = str(start + 4)
    return Response.of_json(body)


@pytest.mark.parametrize("path", ["next_page_token", "meta.nextPageToken"])
def test_cursor_refuses_a_next_page_marker_it_was_not_told_to_read(path: str) -> None:
    # next_cursor_path mistyped (or the API's shape misread): the cursor was "missing", so
    # the first page ended the list and 4 of 10 people were read as the whole org, while
    # the body said nextPageToken plainly.
    with serve(google_users) as server:
        settings = SourceSettings(
            url=f"{server.base_url}/users",
            records_path="users",
            pagination=PaginationSettings(
                style="cursor", next_cursor_path=path, cursor_param="pageToken"
            ),
        )
        with pytest.raises(SourceError) as caught:
            open_export(settings, environ={})
    message = str(caught.value)
    assert "'nextPageToken' in the body" in message
    assert "source.pagination" in message and path in message


def test_cursor_read_right_reads_every_page() -> None:
    with serve(google_users) as server:
        settings = SourceSettings(
            url=f"{server.base_url}/users",
            records_path="users",
            pagination=PaginationSettings(
                style="cursor", next_cursor_path="nextPageToken", cursor_param="pageToken"
            ),
        )
        export = open_export(settings, environ={})
        assert [r.values["id"] for r in export.rows()] == [str(i) for i in range(10)]


def test_a_next_page_on_another_origin_is_refused_before_credentials_go_there() -> None:
    # A next link (odata, Link header) is the API's to write: one naming another host or
    # port was fetched with source.headers (and OAuth2 or basic credentials), handing them
    # to whoever answers there.
    with serve(lambda request, base: Response.of_json({"value": [{"id": "9"}]})) as other:

        def first(request: Request, base: str) -> Response:
            link = f"{other.base_url}/steal"
            return Response.of_json({"value": [{"id": "1"}], "@odata.nextLink": link})

        with serve(first) as server:
            settings = SourceSettings(
                url=f"{server.base_url}/users",
                records_path="value",
                headers={"Authorization": "HR_AUTH"},
                pagination=PaginationSettings(style="odata"),
            )
            with pytest.raises(SourceError) as caught:
                open_export(settings, environ={"HR_AUTH": "Bearer hr-s3cret"})
        assert not other.requests
    message = str(caught.value)
    assert "source.url" in message and other.base_url in message
    assert "hr-s3cret" not in message
