"""An HTTP source without paging against the answers real HR APIs page with: every one
is refused, naming what showed it was a page and the setting that reads every page; an
API that answers everyone at once is read. The fakes are real HTTP servers on 127.0.0.1."""

from __future__ import annotations

import pytest

from hrsync.core.settings import SourceSettings
from hrsync.sources.base import SourceError
from hrsync.sources.open import open_export
from tests.fakes import serve
from tests.fakes.hr_apis import SuccessFactorsApi, basic

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
