"""The paging styles for what vendors publish (issue 22), against local fakes written from
their documentation: a next URL at a body path (Rippling, BambooHR Datasets), page
numbers, SCIM 2.0; and an answer that is one page of more, refused when paging is not set
(naming what was seen, where, and the setting that reads every page)."""

from __future__ import annotations

import re
import tomllib
from typing import Any

import pytest

from hrsync.core.settings import OAuth2Settings, PaginationSettings, SourceSettings
from hrsync.sources.base import Export, SourceError
from hrsync.sources.open import open_export
from tests.fakes import Request, Response, serve
from tests.fakes.hr_apis import (
    BambooHrDatasetsApi,
    PersonioApi,
    RipplingApi,
    ScimApi,
    basic,
    sample_people,
)

IDS = [p.id for p in sample_people()]


def column(export: Export, name: str) -> list[str]:
    return [row.values.get(name, "") for row in export.rows()]


# ---------------------------------------------------------------- the four first-run shapes


def rippling(base: str, paging: PaginationSettings, api: RipplingApi) -> tuple[Any, ...]:
    settings = SourceSettings(
        url=f"{base}/workers?limit=10",
        records_path="results",
        headers={"Authorization": "RIPPLING_AUTH"},
        pagination=paging,
    )
    return settings, {"RIPPLING_AUTH": f"Bearer {api.token}"}, "id", "w-"


def bamboo(base: str, paging: PaginationSettings, api: BambooHrDatasetsApi) -> tuple[Any, ...]:
    settings = SourceSettings(
        url=f"{base}/api/v1/datasets/employee",
        body='{"fields": ["employeeNumber", "name", "email", "supervisorEId"]}',
        records_path="data",
        username_env="BAMBOO_KEY",
        password_env="BAMBOO_X",
        pagination=paging,
    )
    return settings, {"BAMBOO_KEY": api.api_key, "BAMBOO_X": "x"}, "employeeNumber", ""


def scim(base: str, paging: PaginationSettings, api: ScimApi) -> tuple[Any, ...]:
    settings = SourceSettings(
        url=f"{base}/scim/v2/Users",
        records_path="Resources",
        headers={"Authorization": "SCIM_AUTH"},
        pagination=paging,
    )
    return settings, {"SCIM_AUTH": f"Bearer {api.token}"}, "id", "u-"


def personio(base: str, paging: PaginationSettings, api: PersonioApi) -> tuple[Any, ...]:
    settings = SourceSettings(
        url=f"{base}/v1/company/employees",
        records_path="data",
        pagination=paging,
        oauth2=OAuth2Settings(
            token_url=f"{base}/v2/auth/token", client_id_env="ID", client_secret_env="SECRET"
        ),
    )
    env = {"ID": api.oauth.client_id, "SECRET": api.oauth.client_secret}
    return settings, env, "attributes.id.value", ""


SHAPES: dict[str, tuple[Any, Any, str, str]] = {
    # name: (fake, settings, what was seen, the setting the refusal gives)
    "rippling": (
        RipplingApi,
        rippling,
        "'next_link' in the body points to a next page",
        '[source.pagination] style = "next_url", next_url_path = "next_link"',
    ),
    "bamboohr-datasets": (
        BambooHrDatasetsApi,
        bamboo,
        "'links.next' in the body points to a next page",
        '[source.pagination] style = "next_url", next_url_path = "links.next"',
    ),
    "scim": (
        ScimApi,
        scim,
        "'totalResults' in the body is 40, more than the 10 records read",
        '[source.pagination] style = "scim"',
    ),
    "personio": (
        lambda: PersonioApi(max_limit=10),
        personio,
        "'metadata.total_elements' in the body is 40, more than the 10 records read",
        '[source.pagination] style = "offset", page_size = 10',
    ),
}


@pytest.mark.parametrize("name", sorted(SHAPES))
def test_an_unpaged_first_page_is_refused_naming_what_where_and_the_setting(name: str) -> None:
    make, configure, seen, setting = SHAPES[name]
    api = make()
    with serve(api) as server:
        settings, env, _, _ = configure(server.base_url, PaginationSettings(), api)
        with pytest.raises(SourceError) as caught:
            open_export(settings, environ=env)
        assert len([r for r in server.requests if "token" not in r.path]) == 1
    message = str(caught.value)
    assert seen in message, message
    assert setting + " to read every page" in message, message
    assert "leave out everyone on the other pages" in message
    for secret in env.values():
        assert secret == "x" or secret not in message


def setting_of(message: str) -> PaginationSettings:
    """The [source.pagination] keys a refusal gives, as TOML would load them."""
    match = re.search(r"\[source\.pagination\] (.*) to read every page", message)
    assert match, message
    keys = tomllib.loads("\n".join(match.group(1).split(", ")))
    return PaginationSettings(**keys)


@pytest.mark.parametrize("name", sorted(SHAPES))
def test_the_refusal_s_own_setting_reads_the_whole_org(name: str) -> None:
    make, configure, _, _ = SHAPES[name]
    api = make()
    with serve(api) as server:
        settings, env, _, _ = configure(server.base_url, PaginationSettings(), api)
        with pytest.raises(SourceError) as caught:
            open_export(settings, environ=env)
        settings, env, key, prefix = configure(server.base_url, setting_of(str(caught.value)), api)
        export = open_export(settings, environ=env)
        assert column(export, key) == [prefix + i for i in IDS]
    # Offset style asks for one more, empty, page after a full fourth.
    assert export.pages == (5 if name == "personio" else 4)


# ---------------------------------------------------------------- next_url


def test_next_url_follows_the_link_and_stops_on_null() -> None:
    api = RipplingApi()
    with serve(api) as server:
        paging = PaginationSettings(style="next_url", next_url_path="next_link")
        settings, env, _, _ = rippling(server.base_url, paging, api)
        export = open_export(settings, environ=env)
        assert column(export, "id") == ["w-" + i for i in IDS]
    assert [r.query.get("cursor", "") for r in server.requests] == ["", "10", "20", "30"]
    assert all(r.headers["authorization"] == f"Bearer {api.token}" for r in server.requests)


def test_next_url_with_post_sends_the_configured_body_to_every_page() -> None:
    api = BambooHrDatasetsApi()
    with serve(api) as server:
        paging = PaginationSettings(style="next_url", next_url_path="links.next")
        settings, env, _, _ = bamboo(server.base_url, paging, api)
        export = open_export(settings, environ=env)
        assert column(export, "employeeNumber") == IDS
    assert [r.query.get("page", "1") for r in server.requests] == ["1", "2", "3", "4"]
    assert {r.body for r in server.requests} == {settings.body.encode()}
    assert {r.headers["authorization"] for r in server.requests} == {basic(api.api_key, "x")}


def test_next_url_with_a_mistyped_path_refuses_rather_than_stop() -> None:
    api = RipplingApi()
    with serve(api) as server:
        paging = PaginationSettings(style="next_url", next_url_path="nextLink")
        settings, env, _, _ = rippling(server.base_url, paging, api)
        with pytest.raises(SourceError) as caught:
            open_export(settings, environ=env)
    message = str(caught.value)
    assert "'next_link' in the body" in message and "next_url_path 'nextLink'" in message
    assert 'next_url_path = "next_link"' in message


# ---------------------------------------------------------------- scim


def test_scim_counts_from_1_and_stops_at_total_results() -> None:
    api = ScimApi()
    with serve(api) as server:
        settings, env, _, _ = scim(server.base_url, PaginationSettings(style="scim"), api)
        export = open_export(settings, environ=env)
        assert column(export, "id") == ["u-" + i for i in IDS]
        employee = f"{ScimApi._user(sample_people()[0])['schemas'][1]}.employeeNumber"
        assert column(export, employee) == IDS
    # The server answers 10 of the 100 asked: the next index follows what it answered,
    # with no overlap, and nothing is asked past totalResults.
    assert [(r.query["startIndex"], r.query["count"]) for r in server.requests] == [
        ("1", "100"),
        ("11", "100"),
        ("21", "100"),
        ("31", "100"),
    ]


def test_scim_over_post_puts_the_position_in_the_body() -> None:
    api = ScimApi(max_count=15)
    bodies: list[Any] = []

    def search(request: Request, base: str) -> Response:
        body = request.json()
        bodies.append(body)
        query = {"startIndex": str(body["startIndex"]), "count": str(body["count"])}
        get = Request("GET", "/scim/v2/Users", query, request.headers, b"")
        return api(get, base)

    with serve(search) as server:
        settings = SourceSettings(
            url=f"{server.base_url}/scim/v2/Users/.search",
            body='{"schemas": ["urn:ietf:params:scim:api:messages:2.0:SearchRequest"]}',
            records_path="Resources",
            headers={"Authorization": "SCIM_AUTH"},
            pagination=PaginationSettings(style="scim", page_size=15),
        )
        export = open_export(settings, environ={"SCIM_AUTH": f"Bearer {api.token}"})
        assert len(column(export, "id")) == len(IDS)
    assert [(b["startIndex"], b["count"]) for b in bodies] == [(1, 15), (16, 15), (31, 15)]


# ---------------------------------------------------------------- page numbers


def numbered(first: int, size: int, people: int, total_pages: bool) -> Any:
    def handler(request: Request, base: str) -> Response:
        number = int(request.query.get("page", str(first)))
        start = (number - first) * size
        body: dict[str, Any] = {
            "employees": [{"id": str(i)} for i in range(start, min(start + size, people))]
        }
        if total_pages:
            body["meta"] = {"page": number, "total_pages": -(-people // size)}
        return Response.of_json(body)

    return handler


@pytest.mark.parametrize(
    ("first", "people", "total_pages", "asked"),
    [
        (1, 37, False, [1, 2, 3, 4]),  # a short fourth page ends it
        (0, 37, False, [0, 1, 2, 3]),
        (1, 40, False, [1, 2, 3, 4, 5]),  # a full fourth page: the empty fifth ends it
        (1, 40, True, [1, 2, 3, 4]),  # total_pages ends it, no empty page asked
        (0, 40, True, [0, 1, 2, 3]),
        (1, 7, False, [1, 2]),  # one short page: confirmed by an empty second
    ],
)
def test_page_numbers_from_0_or_1_stop_on_a_short_or_empty_page_or_total_pages(
    first: int, people: int, total_pages: bool, asked: list[int]
) -> None:
    with serve(numbered(first, 10, people, total_pages)) as server:
        settings = SourceSettings(
            url=f"{server.base_url}/employees",
            records_path="employees",
            pagination=PaginationSettings(
                style="page", first_page=first, page_size=10, limit_param="per_page"
            ),
        )
        export = open_export(settings, environ={})
        assert column(export, "id") == [str(i) for i in range(people)]
    assert [int(r.query["page"]) for r in server.requests] == asked
    assert {r.query["per_page"] for r in server.requests} == {"10"}


def test_page_numbers_an_api_ignoring_the_page_parameter_is_refused() -> None:
    def ignoring(request: Request, base: str) -> Response:
        return Response.of_json({"employees": [{"id": str(i)} for i in range(10)]})

    with serve(ignoring) as server:
        settings = SourceSettings(
            url=f"{server.base_url}/employees",
            records_path="employees",
            pagination=PaginationSettings(style="page", offset_param="p"),
        )
        with pytest.raises(SourceError, match="page 2 starts with the same record"):
            open_export(settings, environ={})
        assert len(server.requests) == 2


# ---------------------------------------------------------------- totals when paging is set


def test_a_total_the_pages_read_do_not_match_is_refused() -> None:
    # An odata API counting 45 (@odata.count) whose links end after 40 people.
    def graph(request: Request, base: str) -> Response:
        start = int(request.query.get("skip", "0"))
        body: dict[str, Any] = {
            "@odata.count": 45,
            "value": [{"id": str(i)} for i in range(start, min(start + 10, 40))],
        }
        if start + 10 < 40:
            body["@odata.nextLink"] = f"{base}/users?skip={start + 10}"
        return Response.of_json(body)

    with serve(graph) as server:
        settings = SourceSettings(
            url=f"{server.base_url}/users",
            records_path="value",
            pagination=PaginationSettings(style="odata"),
        )
        with pytest.raises(SourceError) as caught:
            open_export(settings, environ={})
    message = str(caught.value)
    assert "@odata.count' in the body is 45, but 40 records were read" in message
    assert "style 'odata'" in message


def test_a_total_that_matches_and_a_page_count_are_no_problem() -> None:
    api = PersonioApi(max_limit=10)
    with serve(api) as server:
        paging = PaginationSettings(style="offset", page_size=10)
        settings, env, key, _ = personio(server.base_url, paging, api)
        assert column(open_export(settings, environ=env), key) == IDS


# ---------------------------------------------------------------- style none: every sign


@pytest.mark.parametrize(
    ("body", "headers", "seen", "setting"),
    [
        (
            {"data": [{"id": "1"}], "has_more": True},
            {},
            "'has_more' in the body is true",
            'style = "…"',
        ),
        (
            {"data": [{"id": "1"}], "meta": {"hasMore": True, "next_cursor": "c2"}},
            {},
            "'meta.next_cursor' in the body points to a next page",
            'style = "cursor", next_cursor_path = "meta.next_cursor"',
        ),
        (
            {"data": [{"id": "1"}], "_links": {"next": {"href": "/people?page=2"}}},
            {},
            "'_links.next.href' in the body points",
            'style = "next_url", next_url_path = "_links.next.href"',
        ),
        (
            {"data": [{"id": "1"}], "nextPageToken": "t2"},
            {},
            "'nextPageToken' in the body points",
            'style = "cursor", next_cursor_path = "nextPageToken", cursor_param = "pageToken"',
        ),
        (
            {"data": [{"id": "1"}], "count": 12},
            {},
            "'count' in the body is 12, more than the 1 records read",
            'style = "…"',
        ),
        (
            {"data": [{"id": "1"}], "page": 1, "total_pages": 3},
            {},
            "'total_pages' in the body is 3 pages",
            'style = "page", first_page = 1',
        ),
        (
            {"data": [{"id": "1"}], "paging": {"total": 30, "offset": 0, "limit": 1}},
            {},
            "'paging.total' in the body is 30",
            'style = "offset", page_size = 1',
        ),
        (
            {"data": [{"id": "1"}]},
            {"X-Total-Count": "20"},
            "the X-Total-Count header is 20",
            'style = "…"',
        ),
        (
            {"data": [{"id": "1"}]},
            {"X-Next-Page": "2"},
            "the X-Next-Page header points",
            'style = "page"',
        ),
    ],
)
def test_style_none_refuses_every_sign_of_more_pages(
    body: Any, headers: dict[str, str], seen: str, setting: str
) -> None:
    with serve(lambda request, base: Response.of_json(body, headers=headers)) as server:
        settings = SourceSettings(url=f"{server.base_url}/people", records_path="data")
        with pytest.raises(SourceError) as caught:
            open_export(settings, environ={})
    message = str(caught.value)
    assert seen in message, message
    assert f"[source.pagination] {setting}" in message, message


@pytest.mark.parametrize(
    "body",
    [
        {"data": [{"id": "1"}], "count": 1, "total": 1, "has_more": False, "next": None},
        {"data": [{"id": "1"}], "meta": {"total_pages": 1, "next_link": ""}},
        {"data": [{"id": "1"}], "links": {"self": "/people", "next": None}},
    ],
)
def test_style_none_reads_an_answer_whose_signs_say_it_is_whole(body: Any) -> None:
    with serve(lambda request, base: Response.of_json(body)) as server:
        settings = SourceSettings(url=f"{server.base_url}/people", records_path="data")
        assert column(open_export(settings, environ={}), "id") == ["1"]


@pytest.mark.parametrize(("records", "noted"), [(100, True), (1000, True), (99, False)])
def test_a_round_page_size_with_no_sign_is_read_with_a_note(records: int, noted: bool) -> None:
    body = {"data": [{"id": str(i)} for i in range(records)]}
    with serve(lambda request, base: Response.of_json(body)) as server:
        settings = SourceSettings(url=f"{server.base_url}/people", records_path="data")
        export = open_export(settings, environ={})
        assert len(column(export, "id")) == records
    if noted:
        (note,) = export.notes
        assert f"answered exactly {records:,} records, a common page size" in note
        assert "source.pagination" in note
    else:
        assert export.notes == ()


def test_a_csv_answer_with_a_total_header_is_read_a_link_next_refused() -> None:
    # A CSV download's records are not counted before it is read: a total header says
    # nothing there, while a next link still refuses.
    def csv(request: Request, base: str) -> Response:
        headers = {"Content-Type": "text/csv", "X-Total-Count": "2"}
        if request.path == "/paged.csv":
            headers["Link"] = f'<{base}/paged.csv?page=2>; rel="next"'
        return Response(200, b"id\n1\n2\n", headers)

    with serve(csv) as server:
        export = open_export(SourceSettings(url=f"{server.base_url}/people.csv"), environ={})
        assert column(export, "id") == ["1", "2"]
        with pytest.raises(SourceError, match='rel="next" points to a next page'):
            open_export(SourceSettings(url=f"{server.base_url}/paged.csv"), environ={})
