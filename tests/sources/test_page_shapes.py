"""An HTTP source without paging against the answers real HR APIs page with: every one
is refused, naming what showed it was a page and the setting that reads every page; an
API that answers everyone at once is read. The fakes are real HTTP servers on 127.0.0.1."""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest

from hrsync.core.settings import PaginationSettings, SourceSettings
from hrsync.sources.base import SourceError
from hrsync.sources.open import open_export
from tests.fakes import Request, Response, serve
from tests.fakes.hr_apis import SuccessFactorsApi, basic, sample_people

SF_QUERY = "$format=json&$expand=manager&$filter=status in 't','f'"


def successfactors(base: str, api: SuccessFactorsApi, **more: object) -> SourceSettings:
    return SourceSettings(
        url=f"{base}/odata/v2/User?{SF_QUERY}",
        headers={"Authorization": "SF_AUTH"},
        **more,  # type: ignore[arg-type]
    )


def sf_env(api: SuccessFactorsApi) -> dict[str, str]:
    return {"SF_AUTH": basic(api.username, api.password)}


def test_successfactors_without_paging_is_refused_not_read_as_the_whole_org() -> None:
    # A first answer of 10 users and a "d.__next" to the rest: read alone, the other 30
    # people would be archived.
    api = SuccessFactorsApi()
    with serve(api) as server:
        settings = successfactors(server.base_url, api, records_path="d.results")
        with pytest.raises(SourceError) as caught:
            open_export(settings, environ=sf_env(api))
    message = str(caught.value)
    assert "'d.__next' in the body points to a next page" in message, message
    assert '[source.pagination] style = "odata"' in message, message
    assert len(server.requests) == 1


def test_style_odata_follows_d_next_and_finds_the_records_itself() -> None:
    # No records_path: OData v2's d.results is where the records are.
    api = SuccessFactorsApi()
    with serve(api) as server:
        settings = successfactors(
            server.base_url, api, pagination=PaginationSettings(style="odata")
        )
        export = open_export(settings, environ=sf_env(api))
        ids = [row.values["userId"] for row in export.rows()]
    assert export.pages == 4
    assert ids == [person.id for person in sample_people()]
    assert "$skiptoken" in server.requests[-1].query
    assert server.requests[-1].query["$expand"] == "manager"  # __next keeps the query


def test_an_atom_xml_answer_is_refused_as_xml_with_the_fix() -> None:
    # SuccessFactors without $format=json: Atom XML, once read as "CSV".
    api = SuccessFactorsApi()
    with serve(api) as server:
        settings = SourceSettings(
            url=f"{server.base_url}/odata/v2/User", headers={"Authorization": "SF_AUTH"}
        )
        with pytest.raises(SourceError) as caught:
            open_export(settings, environ=sf_env(api))
        told = SourceSettings(url=f"{server.base_url}/x.json", format="json")
        with pytest.raises(SourceError, match="answered XML"):
            xml = b'<?xml version="1.0"?><feed/>'
            with serve(lambda request, base: Response(200, xml, {})) as other:
                open_export(dataclasses.replace(told, url=f"{other.base_url}/x"), environ={})
    message = str(caught.value)
    assert "answered XML (its content type is application/atom+xml)" in message
    assert "$format=json" in message and "CSV" not in message


PEOPLE = [{"id": str(n), "email": f"p{n}@example.com"} for n in range(40)]
SHAPES = {
    "salesforce": (
        lambda base, chunk, more: {
            "totalSize": 40 if more else len(chunk),
            "done": not more,
            "records": chunk,
            **({"nextRecordsUrl": "/services/data/v58.0/query/01gD0-10"} if more else {}),
        },
        "records",
        "'nextRecordsUrl' in the body points to a next page",
        'style = "next_url", next_url_path = "nextRecordsUrl"',
    ),
    "atlassian": (
        lambda base, chunk, more: {
            "self": f"{base}/people",
            "maxResults": 10,
            "startAt": 0,
            "total": 40 if more else len(chunk),
            "isLast": not more,
            "values": chunk,
        },
        "values",
        "'isLast' in the body is false",
        'offset_param = "startAt", limit_param = "maxResults", page_size = 10',
    ),
    "continuation": (
        lambda base, chunk, more: {
            "people": chunk,
            "continuation": {"href": f"{base}/people?c=2"} if more else None,
        },
        "people",
        "'continuation.href' in the body points to a next page",
        'style = "next_url", next_url_path = "continuation.href"',
    ),
}


@pytest.mark.parametrize("shape", sorted(SHAPES))
def test_paged_shapes_without_paging_are_refused_and_their_last_page_is_not(shape: str) -> None:
    answer, records_path, seen, setting = SHAPES[shape]
    first = {"more": True}

    def api(request: Request, base: str) -> Response:
        chunk = PEOPLE[:10] if first["more"] else PEOPLE[:7]
        return Response.of_json(answer(base, chunk, first["more"]))

    with serve(api) as server:
        settings = SourceSettings(url=f"{server.base_url}/people", records_path=records_path)
        with pytest.raises(SourceError) as caught:
            open_export(settings, environ={})
        first["more"] = False  # the same API's last page: nothing more, read as it is
        export = open_export(settings, environ={})
    message = str(caught.value)
    assert seen in message and setting in message, message
    assert len(list(export.rows())) == 7


def test_a_one_answer_api_of_45_people_is_read_and_one_of_a_page_size_is_marked() -> None:
    def api(request: Request, base: str) -> Response:
        size = int(request.query["n"])
        return Response.of_json({"total": size, "page": 1, "data": PEOPLE_MANY[:size]})

    with serve(api) as server:

        def read(size: int, **more: Any) -> Any:
            url = f"{server.base_url}/people?n={size}"
            return open_export(SourceSettings(url=url, records_path="data", **more), environ={})

        assert (read(45).page_sized, read(45).notes) == (0, ())
        assert read(50).page_sized == 50 and "a common page size" in read(50).notes[0]
        assert read(50, single_page=True).page_sized == 0


PEOPLE_MANY = [{"id": str(n)} for n in range(100)]
