"""Paged HTTP sources against local fakes of real HR APIs: every style, POST bodies,
OAuth2, limits and failures. The fakes (tests/fakes) are real HTTP servers on 127.0.0.1."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from structlog.testing import capture_logs

from hrsync.core.settings import OAuth2Settings, PaginationSettings, SourceSettings
from hrsync.sources.base import SourceError, SourceUnavailable
from hrsync.sources.http_fetch import HttpSession
from hrsync.sources.open import _format, open_export
from hrsync.sources.pages import open_url
from tests.fakes import FakeServer, Request, Response, serve
from tests.fakes.hr_apis import (
    Faults,
    GraphApi,
    HiBobApi,
    OktaApi,
    PersonioApi,
    basic,
    sample_people,
)

PEOPLE = len(sample_people())


def ids(export: Any) -> list[str]:
    return [row.values.get("id", "") for row in export.rows()]


def graph_settings(base: str, api: GraphApi, **paging: Any) -> SourceSettings:
    return SourceSettings(
        url=f"{base}/v1.0/users",
        records_path="value",
        retries=2,
        pagination=PaginationSettings(**{"style": "odata", **paging}),
        oauth2=OAuth2Settings(
            token_url=f"{base}/tenant/oauth2/v2.0/token",
            client_id_env="GRAPH_CLIENT_ID",
            client_secret_env="GRAPH_CLIENT_SECRET",
            scope="https://graph.microsoft.com/.default",
        ),
    )


def graph_env(api: GraphApi) -> dict[str, str]:
    return {"GRAPH_CLIENT_ID": api.oauth.client_id, "GRAPH_CLIENT_SECRET": api.oauth.client_secret}


def personio_settings(base: str, page_size: int) -> SourceSettings:
    return SourceSettings(
        url=f"{base}/v1/company/employees",
        records_path="data",
        pagination=PaginationSettings(style="offset", page_size=page_size),
        oauth2=OAuth2Settings(
            token_url=f"{base}/v2/auth/token", client_id_env="ID", client_secret_env="SECRET"
        ),
    )


def personio_env(api: PersonioApi) -> dict[str, str]:
    return {"ID": api.oauth.client_id, "SECRET": api.oauth.client_secret}


@pytest.fixture
def graph() -> Iterator[tuple[FakeServer, GraphApi]]:
    api = GraphApi()
    with serve(api) as server:
        yield server, api


# ---------------------------------------------------------------- styles


def test_odata_reads_every_page_with_one_token(graph: tuple[FakeServer, GraphApi]) -> None:
    server, api = graph
    export = open_export(graph_settings(server.base_url, api), environ=graph_env(api))
    rows = list(export.rows())
    assert [r.values["id"] for r in rows] == [p.id for p in sample_people()]
    assert export.pages == 4 == api.pages_served  # 40 people, 10 a page
    assert rows[12].location == f"{server.base_url}/v1.0/users page 2 value[2]"
    assert rows[12].values["manager.id"] == sample_people()[12].manager_id
    assert len(api.oauth.issued) == 1  # fetched once, reused on every page
    assert api.oauth.forms[0]["scope"] == "https://graph.microsoft.com/.default"


def test_link_header_follows_rel_next() -> None:
    api = OktaApi()
    with serve(api) as server:
        settings = SourceSettings(
            url=f"{server.base_url}/api/v1/users?limit=200",
            headers={"Authorization": "OKTA_API_AUTH"},
            pagination=PaginationSettings(style="link_header"),
        )
        export = open_export(settings, environ={"OKTA_API_AUTH": f"SSWS {api.api_token}"})
        employee_numbers = [r.values["profile.employeeNumber"] for r in export.rows()]
    assert employee_numbers == [p.id for p in sample_people()]
    assert export.pages == 4  # the fake answers at most 10 a page
    assert [r.query.get("after", "") for r in server.requests][1] == sample_people()[9].id


def test_cursor_in_a_post_body_keeps_the_configured_body() -> None:
    api = HiBobApi(page_size=15)  # HiBob's own search answers everyone at once
    with serve(api) as server:
        settings = SourceSettings(
            url=f"{server.base_url}/v1/people/search",
            body='{"fields": ["root.id"], "showInactive": true}',
            records_path="employees",
            headers={"Authorization": "HIBOB_AUTH"},
            pagination=PaginationSettings(style="cursor", next_cursor_path="nextCursor"),
        )
        env = {"HIBOB_AUTH": basic(api.service_user, api.service_token)}
        export = open_export(settings, environ=env)
        assert len(list(export.rows())) == PEOPLE
    assert export.pages == 3
    assert api.bodies == [
        {"fields": ["root.id"], "showInactive": True},
        {"fields": ["root.id"], "showInactive": True, "cursor": "15"},
        {"fields": ["root.id"], "showInactive": True, "cursor": "30"},
    ]
    assert all(r.headers["content-type"] == "application/json" for r in server.requests)


def cursor_get(request: Request, base: str) -> Response:
    start = int(request.query.get("page_token") or 0)
    body: dict[str, Any] = {"users": [{"id": str(i)} for i in range(start, min(start + 4, 10))]}
    if start + 4 < 10:
        body["meta"] = {"nextPageToken": str(start + 4)}
    return Response.of_json(body)


def test_cursor_as_a_query_parameter_for_get() -> None:
    with serve(cursor_get) as server:
        settings = SourceSettings(
            url=f"{server.base_url}/users?customer=my_customer",
            records_path="users",
            pagination=PaginationSettings(
                style="cursor", next_cursor_path="meta.nextPageToken", cursor_param="page_token"
            ),
        )
        export = open_export(settings, environ={})
        assert ids(export) == [str(i) for i in range(10)]
    assert [r.query for r in server.requests] == [
        {"customer": "my_customer"},
        {"customer": "my_customer", "page_token": "4"},
        {"customer": "my_customer", "page_token": "8"},
    ]


@pytest.mark.parametrize(("total", "pages"), [(41, 5), (40, 5), (9, 1)])
def test_offset_stops_on_a_short_page(total: int, pages: int) -> None:
    api = PersonioApi(people=(sample_people() * 2)[:total])
    with serve(api) as server:
        export = open_export(personio_settings(server.base_url, 10), environ=personio_env(api))
        assert len(list(export.rows())) == total
    assert export.pages == pages  # 40 people: the fifth page is empty, and ends it
    offsets = [r.query["offset"] for r in server.requests if r.path.endswith("employees")]
    # A short first page is confirmed by one request at the next offset (an API capping
    # its pages below page_size would answer more people there).
    probe = [str(total)] if total < 10 else []
    assert offsets == [str(10 * i) for i in range(pages)] + probe


def test_offset_refuses_an_api_that_ignores_the_limit() -> None:
    api = PersonioApi(max_limit=1000)

    def ignoring(request: Request, base: str) -> Response:
        if "limit" in request.query:
            request = dataclasses.replace(request, query={**request.query, "limit": "50"})
        return api(request, base)

    with serve(ignoring) as server:
        settings = personio_settings(server.base_url, 10)
        with pytest.raises(SourceError, match=r"40 records, more than source.pagination.page_size"):
            open_export(settings, environ=personio_env(api))


# ---------------------------------------------------------------- never one page for all


@pytest.mark.parametrize(
    ("body", "headers", "marker", "setting"),
    [
        (
            {"value": [{"id": "1"}], "@odata.nextLink": "http://x/next"},
            {},
            "@odata.nextLink",
            'style = "odata"',
        ),
        (
            [{"id": "1"}],
            {"Link": '<http://x/users?after=1>; rel="next"'},
            'rel="next"',
            'style = "link_header"',
        ),
        (
            {"value": [{"id": "1"}], "nextPageToken": "abc"},
            {},
            "'nextPageToken'",
            'style = "cursor", next_cursor_path = "nextPageToken", cursor_param = "pageToken"',
        ),
        (
            {"value": [{"id": "1"}], "next_cursor": "abc"},
            {},
            "'next_cursor'",
            'style = "cursor", next_cursor_path = "next_cursor"',
        ),
        (
            {"value": [{"id": "1"}], "next": "http://x/2"},
            {},
            "'next'",
            'style = "next_url", next_url_path = "next"',
        ),
    ],
)
def test_style_none_refuses_an_answer_with_a_next_page(
    body: Any, headers: dict[str, str], marker: str, setting: str
) -> None:
    def one_page(request: Request, base: str) -> Response:
        return Response.of_json(body, headers=headers)

    with serve(one_page) as server:
        settings = SourceSettings(
            url=f"{server.base_url}/users", records_path="" if isinstance(body, list) else "value"
        )
        with pytest.raises(SourceError) as caught:
            open_export(settings, environ={})
    message = str(caught.value)
    assert marker in message and f"[source.pagination] {setting}" in message
    assert "leave out everyone on the other pages" in message


def test_style_none_reads_an_answer_without_a_next_page() -> None:
    def one_page(request: Request, base: str) -> Response:
        return Response.of_json({"value": [{"id": "1"}], "@odata.nextLink": None, "next": ""})

    with serve(one_page) as server:
        export = open_export(
            SourceSettings(url=f"{server.base_url}/u", records_path="value"), environ={}
        )
        assert ids(export) == ["1"]


def test_style_none_refuses_a_csv_answer_with_a_link_next() -> None:
    def csv_page(request: Request, base: str) -> Response:
        return Response(
            200, b"id\n1\n", {"Content-Type": "text/csv", "Link": f'<{base}/2>; rel="next"'}
        )

    with serve(csv_page) as server, pytest.raises(SourceError, match='style = "link_header"'):
        open_export(SourceSettings(url=f"{server.base_url}/people.csv"), environ={})


def test_max_pages_reached_is_an_error_naming_the_setting(
    graph: tuple[FakeServer, GraphApi],
) -> None:
    server, api = graph
    settings = graph_settings(server.base_url, api, max_pages=3)
    with pytest.raises(
        SourceError, match=r"after 3 pages, the limit set by source.pagination.max_pages"
    ):
        open_export(settings, environ=graph_env(api))
    assert api.pages_served == 3


def test_an_api_that_loops_is_refused() -> None:
    def loop(request: Request, base: str) -> Response:
        return Response.of_json({"value": [{"id": "1"}], "@odata.nextLink": f"{base}/again"})

    with serve(loop) as server:
        settings = SourceSettings(
            url=f"{server.base_url}/start",
            records_path="value",
            pagination=PaginationSettings(style="odata"),
        )
        with pytest.raises(SourceError, match="points back to a page already read"):
            open_export(settings, environ={})
        assert len(server.requests) == 2


def test_a_page_failing_after_retries_fails_the_read(graph: tuple[FakeServer, GraphApi]) -> None:
    server, api = graph
    api.faults = Faults(fail_page=3)
    with pytest.raises(SourceUnavailable) as caught:
        open_export(graph_settings(server.base_url, api), environ=graph_env(api))
    assert "page 3 of" in str(caught.value) and "HTTP 503" in str(caught.value)
    assert "(tried 3 times)" in str(caught.value)  # source.retries = 2
    assert api.faults.failed == 3


def test_a_page_failing_once_is_retried_with_backoff(graph: tuple[FakeServer, GraphApi]) -> None:
    server, api = graph
    api.faults = Faults(fail_page=2, fail_times=1)
    settings = dataclasses.replace(graph_settings(server.base_url, api))
    slept: list[float] = []
    session = HttpSession(settings, graph_env(api), sleep=slept.append)
    with capture_logs() as logs:
        export = open_url(settings, graph_env(api), None, _format, session=session)
    session.close()
    assert len(list(export.rows())) == PEOPLE
    assert slept == [0.0]  # the fake's Retry-After: 0
    assert [e["page"] for e in logs if e["event"] == "source.retry"] == [2]


def test_retries_back_off_without_a_retry_after() -> None:
    calls: list[int] = []

    def flaky(request: Request, base: str) -> Response:
        calls.append(1)
        if len(calls) < 3:
            return Response(500, b"oops")
        return Response.of_json([{"id": "1"}])

    with serve(flaky) as server:
        settings = SourceSettings(url=f"{server.base_url}/p", retries=3)
        slept: list[float] = []
        session = HttpSession(settings, {}, sleep=slept.append)
        session.retry = dataclasses.replace(session.retry, jitter=lambda: 0.999)
        export = open_url(settings, {}, None, _format, session=session)
        session.close()
    assert ids(export) == ["1"]
    assert slept == pytest.approx([0.4995, 0.999])  # full jitter under 0.5 s, then 1 s


def test_max_bytes_bounds_all_pages_together(graph: tuple[FakeServer, GraphApi]) -> None:
    server, api = graph
    first = Request("GET", "/v1.0/users", {}, {"authorization": f"Bearer {_token(api)}"}, b"")
    one_page = len(api(first, server.base_url).body)
    limit = one_page * 2 + 200  # pages 1 and 2 fit, page 3 does not
    settings = dataclasses.replace(graph_settings(server.base_url, api), max_bytes=limit)
    with pytest.raises(
        SourceError, match=r"page 3 of .* takes the export over .* source.max_bytes for all pages"
    ):
        open_export(settings, environ=graph_env(api))


def _token(api: GraphApi) -> str:
    token = "at-direct"
    api.oauth.issued.append(token)
    return token


# ---------------------------------------------------------------- OAuth2


def test_token_reused_until_shortly_before_expiry(graph: tuple[FakeServer, GraphApi]) -> None:
    server, api = graph
    api.oauth.lifetime_s = 600
    now = [1000.0]
    # Four pages of 200 s each: a read longer than the default source.deadline_s.
    settings = dataclasses.replace(graph_settings(server.base_url, api), deadline_s=3600)

    def page_clock() -> float:
        return now[0]

    session = HttpSession(settings, graph_env(api), clock=page_clock)
    original = session.page

    def page_then_tick(request: Any, number: int) -> Any:
        fetched = original(request, number)
        now[0] += 200  # each page "takes" 200 s: the token (600 s, 60 s margin) lasts 2 pages
        return fetched

    session.page = page_then_tick  # type: ignore[method-assign]
    export = open_url(settings, graph_env(api), None, _format, session=session)
    session.close()
    assert export.pages == 4
    # Pages at 1000, 1200, 1400; 1600 is past 1000 + 600 - 60: a new token.
    assert len(api.oauth.issued) == 2


def test_a_401_gets_one_fresh_token(graph: tuple[FakeServer, GraphApi]) -> None:
    server, api = graph
    api.revoke_after_page = 2
    export = open_export(graph_settings(server.base_url, api), environ=graph_env(api))
    assert export.pages == 4 and len(list(export.rows())) == PEOPLE
    assert len(api.oauth.issued) == 2


def test_a_second_401_is_an_error_not_a_loop() -> None:
    oauth = GraphApi().oauth

    def always_401(request: Request, base: str) -> Response:
        if request.path == "/token":
            return oauth.token(request)
        return Response(401, b"no")

    with serve(always_401) as server:
        settings = SourceSettings(
            url=f"{server.base_url}/users",
            oauth2=OAuth2Settings(
                token_url=f"{server.base_url}/token", client_id_env="I", client_secret_env="S"
            ),
        )
        env = {"I": oauth.client_id, "S": oauth.client_secret}
        with pytest.raises(SourceError, match=r"HTTP 401 .*with a fresh OAuth2 token") as caught:
            open_export(settings, environ=env)
    assert not isinstance(caught.value, SourceUnavailable)
    assert len(oauth.issued) == 2


def test_a_wrong_secret_names_the_setting_and_shows_no_secret(
    graph: tuple[FakeServer, GraphApi],
) -> None:
    server, api = graph
    env = {**graph_env(api), "GRAPH_CLIENT_SECRET": "wrong-secret-value"}
    with capture_logs() as logs, pytest.raises(SourceError) as caught:
        open_export(graph_settings(server.base_url, api), environ=env)
    message = str(caught.value)
    assert "refused the client credentials (HTTP 401 invalid_client)" in message
    assert "$GRAPH_CLIENT_SECRET (named by source.oauth2.client_secret_env)" in message
    assert not isinstance(caught.value, SourceUnavailable)
    for secret in ("wrong-secret-value", api.oauth.client_secret):
        assert secret not in message and secret not in repr(logs)
    assert api.pages_served == 0


def test_a_missing_secret_variable_is_named_before_anything_is_sent(
    graph: tuple[FakeServer, GraphApi],
) -> None:
    server, api = graph
    with pytest.raises(
        SourceError,
        match=r"\$GRAPH_CLIENT_SECRET \(named by source.oauth2.client_secret_env\) is not set",
    ):
        open_export(graph_settings(server.base_url, api), environ={"GRAPH_CLIENT_ID": "x"})
    assert server.requests == []


def test_no_token_or_secret_in_logs(graph: tuple[FakeServer, GraphApi]) -> None:
    server, api = graph
    api.revoke_after_page = 1
    api.faults = Faults(fail_page=4, fail_times=1)
    with capture_logs() as logs:
        open_export(graph_settings(server.base_url, api), environ=graph_env(api))
    shown = repr(logs)
    for secret in [api.oauth.client_secret, *api.oauth.issued]:
        assert secret not in shown
    assert any(e["event"] == "source.oauth2_refresh" for e in logs)


# ---------------------------------------------------------------- headers


def test_headers_come_whole_from_named_variables() -> None:
    api = OktaApi()
    with serve(api) as server:
        settings = SourceSettings(
            url=f"{server.base_url}/api/v1/users",
            headers={"Authorization": "OKTA_API_AUTH", "X-Trace": "TRACE"},
            pagination=PaginationSettings(style="link_header"),
        )
        env = {"OKTA_API_AUTH": f"SSWS {api.api_token}", "TRACE": "t-1"}
        open_export(settings, environ=env)
        assert all(r.headers["x-trace"] == "t-1" for r in server.requests)
        assert len(server.requests) == 4
        with pytest.raises(
            SourceError, match=r"\$OKTA_API_AUTH \(named by source.headers.Authorization\)"
        ):
            open_export(settings, environ={"TRACE": "t"})
        assert len(server.requests) == 4


def test_wrong_header_value_is_not_retried_and_not_shown() -> None:
    api = OktaApi()
    with serve(api) as server:
        settings = SourceSettings(
            url=f"{server.base_url}/api/v1/users", headers={"Authorization": "OKTA"}
        )
        with pytest.raises(SourceError, match=r"HTTP 401.*source\.headers") as caught:
            open_export(settings, environ={"OKTA": "SSWS wrong-okta-token"})
        assert "wrong-okta-token" not in str(caught.value)
        assert len(server.requests) == 1


def test_a_given_client_is_used_for_every_page(graph: tuple[FakeServer, GraphApi]) -> None:
    server, api = graph
    with httpx.Client() as client:
        open_export(graph_settings(server.base_url, api), environ=graph_env(api), http=client)
        assert not client.is_closed


def test_a_relative_next_link_is_resolved_and_a_bad_one_not_retried() -> None:
    def relative(request: Request, base: str) -> Response:
        if request.path == "/start":
            return Response.of_json({"value": [{"id": "1"}], "@odata.nextLink": "/then?x=1"})
        if request.path == "/then":
            return Response.of_json({"value": [{"id": "2"}], "@odata.nextLink": "ftp://h/3"})
        return Response(404)

    with serve(relative) as server:
        settings = SourceSettings(
            url=f"{server.base_url}/start",
            records_path="value",
            pagination=PaginationSettings(style="odata"),
        )
        with pytest.raises(SourceError, match=r"ftp://h/3 is not a valid http\(s\) URL") as caught:
            open_export(settings, environ={})
        assert not isinstance(caught.value, SourceUnavailable)
        assert [r.path for r in server.requests] == ["/start", "/then"]


def test_each_page_body_is_released_before_the_next_is_fetched(
    graph: tuple[FakeServer, GraphApi],
) -> None:
    server, api = graph
    settings = graph_settings(server.base_url, api)
    bodies: list[Any] = []

    class Watching(HttpSession):
        def page(self, request: Any, number: int) -> Any:
            for earlier in bodies:  # every earlier page's bytes are gone already
                with pytest.raises(ValueError, match="closed file"), earlier.open() as fh:
                    fh.read(1)
            fetched = super().page(request, number)
            bodies.append(fetched.payload)
            return fetched

    session = Watching(settings, graph_env(api))
    export = open_url(settings, graph_env(api), None, _format, session=session)
    session.close()
    assert len(bodies) == export.pages == 4


def test_a_paging_style_over_a_csv_answer_is_refused() -> None:
    def csv_page(request: Request, base: str) -> Response:
        return Response(200, b"id\n1\n", {"Content-Type": "text/csv"})

    with serve(csv_page) as server:
        settings = SourceSettings(
            url=f"{server.base_url}/people", pagination=PaginationSettings(style="offset")
        )
        with pytest.raises(
            SourceError, match=r"answered CSV, but source.pagination.style 'offset'"
        ):
            open_export(settings, environ={})


def test_a_redirect_to_another_origin_is_refused_before_the_headers_go_there() -> None:
    # httpx drops only Authorization on a cross-origin redirect: an X-API-Key from
    # source.headers followed a 302 to whatever host the HR server named.
    def elsewhere(request: Request, base: str) -> Response:
        return Response.of_json({"value": [{"id": "1"}]})

    with serve(elsewhere) as other:

        def redirecting(request: Request, base: str) -> Response:
            if request.path == "/same":
                return Response(302, headers={"Location": f"{base}/final"})
            if request.path == "/final":
                return Response.of_json({"value": [{"id": "1"}]})
            return Response(302, headers={"Location": f"{other.base_url}/steal"})

        with serve(redirecting) as server:
            env = {"HR_KEY": "s3cret-api-key"}
            away = SourceSettings(
                url=f"{server.base_url}/start",
                records_path="value",
                headers={"X-API-Key": "HR_KEY"},
            )
            with pytest.raises(SourceError, match="redirected to another origin") as caught:
                open_export(away, environ=env)
            assert "s3cret-api-key" not in str(caught.value)
            assert other.requests == []  # nothing, and no key, reached the other host
            # A redirect within the source's own origin is still followed.
            same = dataclasses.replace(away, url=f"{server.base_url}/same")
            assert ids(open_export(same, environ=env)) == ["1"]


def test_a_token_endpoint_redirecting_elsewhere_is_refused_naming_the_token_url() -> None:
    # The refusal named source.url and told to fix it, while the token endpoint was the
    # one that redirected: the user would edit the wrong setting.
    oauth = GraphApi().oauth

    def elsewhere(request: Request, base: str) -> Response:
        return oauth.token(request)

    with serve(elsewhere) as other:

        def api(request: Request, base: str) -> Response:
            if request.path == "/token":
                return Response(307, headers={"Location": f"{other.base_url}/token"})
            return Response.of_json({"value": [{"id": "1"}]})

        with serve(api) as server:
            settings = SourceSettings(
                url=f"{server.base_url}/users",
                records_path="value",
                oauth2=OAuth2Settings(
                    token_url=f"{server.base_url}/token", client_id_env="I", client_secret_env="S"
                ),
            )
            env = {"I": oauth.client_id, "S": oauth.client_secret}
            with pytest.raises(SourceError) as caught:
                open_export(settings, environ=env)
    message = str(caught.value)
    assert f"{server.base_url}/token redirected to another origin" in message
    assert "source.oauth2.token_url" in message and "set source.url" not in message
    assert oauth.client_secret not in message
    assert other.requests == []  # the client secret was not posted there


def test_a_list_pick_is_read_on_every_page_of_an_http_source() -> None:
    """Google-shaped users over two pages: the pick is a column of the one export."""

    def user(n: int, relations: list[dict[str, str]]) -> dict[str, Any]:
        return {"primaryEmail": f"u{n}@x.com", "relations": relations}

    manager = {"type": "manager", "value": "u0@x.com"}
    dotted = {"type": "dotted_line_manager", "value": "u1@x.com"}
    pages = {
        "": {"users": [user(0, []), user(1, [manager])], "nextPageToken": "p2"},
        "p2": {"users": [user(2, [dotted, manager]), user(3, [manager, dotted])]},
    }

    def api(request: Request, base: str) -> Response:
        return Response.of_json(pages[request.query.get("pageToken", "")])

    picked = "relations[type=manager].value"
    with serve(api) as server:
        settings = SourceSettings(
            url=f"{server.base_url}/admin/directory/v1/users",
            records_path="users",
            pagination=PaginationSettings(
                style="cursor", next_cursor_path="nextPageToken", cursor_param="pageToken"
            ),
            fields=dataclasses.replace(SourceSettings().fields, manager_email=picked),
        )
        export = open_export(settings, environ={})
        rows = list(export.rows())
    assert export.pages == 2 and picked in export.columns
    assert [row.values[picked] for row in rows] == ["", "u0@x.com", "u0@x.com", "u0@x.com"]
    several = [sorted(row.several or ()) for row in rows]
    assert several == [
        [],
        [],
        ["relations.type", "relations.value"],
        ["relations.type", "relations.value"],
    ]
