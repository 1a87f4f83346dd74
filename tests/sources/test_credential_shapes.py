"""Credentials of odd shapes: what can never be sent is refused without being echoed, and
what HTTP carries encoded (basic auth, a form body) is sent as it is."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from hrsync import logs
from hrsync.core.settings import OAuth2Settings, SourceSettings
from hrsync.sources.base import SourceError
from hrsync.sources.open import open_export
from tests.fakes import FakeServer, Request, Response, serve
from tests.fakes.hr_apis import basic as basic_header

CSV = b"employee_id,email,name,manager_id\nE1,a@example.com,A,\n"
TAIL = "SECRETTAILxyz987"
PASSWORD = "pässwört\tx"  # non-ASCII and a tab: base64-encoded in the header, so fine


@pytest.fixture
def hr() -> Iterator[FakeServer]:
    def answer(request: Request, base: str) -> Response:
        if request.path == "/token":
            # A token endpoint answering a token of two lines (a proxy's mangling, a bug).
            return Response.of_json(
                {"access_token": "tok-abcdef\n" + TAIL, "token_type": "Bearer", "expires_in": 3600}
            )
        wanted = basic_header("svc", PASSWORD)
        if request.path == "/basic.csv" and request.headers.get("authorization") != wanted:
            return Response(401, b"no")
        return Response(200, CSV, {"Content-Type": "text/csv"})

    with serve(answer) as server:
        yield server


def test_an_access_token_of_two_lines_is_refused_unquoted(hr: FakeServer) -> None:
    # The HTTP library's complaint about the header quoted the token escaped, past every
    # mask, into check's output, the summary, the log and the stored reason.
    oauth2 = OAuth2Settings(
        token_url=f"{hr.base_url}/token", client_id_env="HR_ID", client_secret_env="HR_SECRET"
    )
    env = {"HR_ID": "hrsync", "HR_SECRET": "cs-the-client-secret"}
    with pytest.raises(SourceError) as caught:
        export = open_export(
            SourceSettings(url=f"{hr.base_url}/plain.csv", format="csv", oauth2=oauth2, retries=0),
            environ=env,
        )
        list(export.rows())
    said = str(caught.value)
    assert "access token" in said and "line break" in said, said
    assert TAIL not in said and TAIL not in logs.scrub(said), said


def test_a_basic_auth_password_outside_ascii_or_with_a_tab_still_fetches(hr: FakeServer) -> None:
    export = open_export(
        SourceSettings(
            url=f"{hr.base_url}/basic.csv",
            format="csv",
            username_env="HR_USER",
            password_env="HR_PASS",
        ),
        environ={"HR_USER": "svc", "HR_PASS": PASSWORD},
    )
    assert len(list(export.rows())) == 1


def test_a_basic_auth_password_of_two_lines_is_refused_unechoed(hr: FakeServer) -> None:
    with pytest.raises(SourceError) as caught:
        open_export(
            SourceSettings(
                url=f"{hr.base_url}/basic.csv",
                format="csv",
                username_env="HR_USER",
                password_env="HR_PASS",
            ),
            environ={"HR_USER": "svc", "HR_PASS": "first-line\n" + TAIL},
        )
    said = str(caught.value)
    assert "$HR_PASS" in said and "line break" in said and TAIL not in said, said
