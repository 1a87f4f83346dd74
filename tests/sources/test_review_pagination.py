"""Review findings (paged HTTP sources): never one page taken for the whole org."""

from __future__ import annotations

from typing import Any

import pytest

from hrsync.core.settings import OAuth2Settings, PaginationSettings, SourceSettings
from hrsync.sources.base import SourceError
from hrsync.sources.open import open_export
from tests.fakes import serve
from tests.fakes.hr_apis import PersonioApi, sample_people


def personio_settings(base: str, page_size: int) -> SourceSettings:
    return SourceSettings(
        url=f"{base}/v1/company/employees",
        records_path="data",
        pagination=PaginationSettings(style="offset", page_size=page_size),
        oauth2=OAuth2Settings(
            token_url=f"{base}/v2/auth/token", client_id_env="ID", client_secret_env="SECRET"
        ),
    )


def env(api: PersonioApi) -> dict[str, str]:
    return {"ID": api.oauth.client_id, "SECRET": api.oauth.client_secret}


def test_offset_refuses_an_api_that_caps_the_page_below_page_size() -> None:
    # The API answers at most 5 records whatever the limit asked (many APIs cap it
    # silently): the first page is "short", and read as the last one, 5 of 40 people
    # would have been the whole org.
    api = PersonioApi(max_limit=5)
    with serve(api) as server, pytest.raises(SourceError) as caught:
        open_export(personio_settings(server.base_url, 10), environ=env(api))
    message = str(caught.value)
    assert "5 records" in message and "source.pagination.page_size" in message
    assert "page_size = 5" in message


@pytest.mark.parametrize("total", [1, 9])
def test_offset_a_small_org_on_one_short_page_is_read_whole(total: int) -> None:
    api = PersonioApi(people=sample_people()[:total])
    with serve(api) as server:
        export = open_export(personio_settings(server.base_url, 10), environ=env(api))
        rows: list[Any] = list(export.rows())
    assert len(rows) == total
    assert export.pages == 1
