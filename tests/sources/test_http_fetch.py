"""Fetching exports over HTTP from a real local server: auth, size cap, errors, secrecy."""

from __future__ import annotations

import base64
import contextlib
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import ClassVar

import httpx
import pytest
from structlog.testing import capture_logs

from hrsync.config.loading import SourceSettings
from hrsync.sources.base import SourceError, SourceUnavailable
from hrsync.sources.http_fetch import safe_url
from hrsync.sources.open import open_export

SAMPLE_CSV = Path(__file__).resolve().parents[2] / "config" / "sample-org.csv"
FALLBACK_CSV = (
    b"Employee ID,Full Name,Work Email,Manager ID,Department,Status\n"
    b"E001,Ada Okafor,ada.okafor@example.com,,Executive,Active\n"
    b"E002,Marcus Lindqvist,marcus.lindqvist@example.com,E001,Engineering,Active\n"
)
REPORT_JSON = b'{"Report_Entry": [{"Employee_ID": "E1", "Manager": {"ID": "E0"}}]}'
TOKEN = "Bearer s3cr3t-token-value"
PASSWORD = "hunter2-password"


def sample_csv() -> bytes:
    return SAMPLE_CSV.read_bytes() if SAMPLE_CSV.exists() else FALLBACK_CSV


class Handler(BaseHTTPRequestHandler):
    seen: ClassVar[list[dict[str, str]]] = []

    def log_message(self, format: str, *args: object) -> None:  # keep test output quiet
        pass

    def do_GET(self) -> None:
        Handler.seen.append({k.lower(): v for k, v in self.headers.items()})
        # The client hangs up on purpose in the size-cap and timeout tests.
        with contextlib.suppress(BrokenPipeError, ConnectionResetError):
            self.answer()

    def answer(self) -> None:
        path = self.path.split("?", 1)[0]
        if path == "/people.csv":
            self.send_body(sample_csv(), "text/csv; charset=utf-8")
        elif path == "/workday/report":
            self.send_body(REPORT_JSON, "application/json")
        elif path == "/big":
            # No Content-Length: the cap must be enforced while streaming.
            self.send_response(200)
            self.send_header("Content-Type", "text/csv")
            self.end_headers()
            self.wfile.write(b"id\n")
            for _ in range(100):
                self.wfile.write(b"1\n" * 1024)
        elif path == "/announced":
            self.send_response(200)
            self.send_header("Content-Type", "text/csv")
            self.send_header("Content-Length", "10000000")
            self.end_headers()
            self.wfile.write(b"id\n1\n")
        elif path == "/slow":
            time.sleep(0.5)
            self.send_body(b"id\n1\n", "text/csv")
        elif path == "/moved":
            self.send_response(302)
            self.send_header("Location", "/people.csv")
            self.send_header("Content-Length", "0")
            self.end_headers()
        elif path == "/broken":
            self.send_body(b"internal error", "text/plain", status=500)
        elif path == "/secret":
            ok = self.headers.get("Authorization") == TOKEN
            self.send_body(b"id\n1\n" if ok else b"no", "text/csv", status=200 if ok else 401)
        else:
            self.send_body(b"not here", "text/plain", status=404)

    def send_body(self, body: bytes, content_type: str, status: int = 200) -> None:
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


@pytest.fixture(scope="module")
def server() -> Iterator[str]:
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{httpd.server_address[1]}"
    finally:
        httpd.shutdown()
        httpd.server_close()


@pytest.fixture(autouse=True)
def clear_seen() -> None:
    Handler.seen.clear()


def test_csv_over_http_reads_like_a_file(server: str) -> None:
    export = open_export(SourceSettings(url=f"{server}/people.csv"), environ={})
    assert export.format == "csv"
    assert export.name == f"{server}/people.csv"
    assert "Employee ID" in export.columns
    rows = list(export.rows())
    assert rows[0].location == f"{server}/people.csv line 2"
    assert rows[0].values["Employee ID"] == "E001"
    assert len(rows) == sample_csv().decode().strip().count("\n")


def test_format_comes_from_the_content_type_when_the_url_has_no_extension(server: str) -> None:
    settings = SourceSettings(url=f"{server}/workday/report", records_path="Report_Entry")
    export = open_export(settings, environ={})
    assert export.format == "json"
    [row] = list(export.rows())
    assert row.values["Manager.ID"] == "E0"
    assert row.location == f"{server}/workday/report Report_Entry[0]"


def test_auth_header_value_comes_from_the_named_environment_variable(server: str) -> None:
    settings = SourceSettings(url=f"{server}/people.csv", headers={"Authorization": "HR_AUTH"})
    open_export(settings, environ={"HR_AUTH": TOKEN})
    assert Handler.seen[-1]["authorization"] == TOKEN


def test_auth_variable_may_name_another_header(server: str) -> None:
    settings = SourceSettings(url=f"{server}/people.csv", headers={"Authorization": "HR_AUTH"})
    open_export(settings, environ={"HR_AUTH": "X-Api-Key: abc123"})
    assert Handler.seen[-1]["x-api-key"] == "abc123"
    assert "authorization" not in Handler.seen[-1]


def test_basic_auth_from_environment_variables(server: str) -> None:
    settings = SourceSettings(
        url=f"{server}/people.csv", username_env="HR_USER", password_env="HR_PASS"
    )
    open_export(settings, environ={"HR_USER": "isu_dx", "HR_PASS": PASSWORD})
    expected = base64.b64encode(f"isu_dx:{PASSWORD}".encode()).decode()
    assert Handler.seen[-1]["authorization"] == f"Basic {expected}"


def test_missing_credential_variable_is_named(server: str) -> None:
    settings = SourceSettings(url=f"{server}/people.csv", headers={"Authorization": "HR_AUTH"})
    with pytest.raises(SourceError, match=r"\$HR_AUTH \(named by source.headers.Authorization\)"):
        open_export(settings, environ={})
    assert Handler.seen == []  # nothing was sent without the credentials


def test_rejected_credentials_say_where_to_look(server: str) -> None:
    settings = SourceSettings(url=f"{server}/secret", headers={"Authorization": "HR_AUTH"})
    with pytest.raises(SourceError, match=r"HTTP 401.*source\.headers") as caught:
        open_export(settings, environ={"HR_AUTH": "Bearer wrong-token"})
    assert "wrong-token" not in str(caught.value)
    # Said as what happened: the HR API refused the credentials, not "an answer".
    assert "refused the credentials (HTTP 401 Unauthorized)" in str(caught.value)
    # Wrong credentials need a person, not a retry.
    assert not isinstance(caught.value, SourceUnavailable)
    assert open_export(settings, environ={"HR_AUTH": TOKEN}).columns == ("id",)


def test_size_cap_stops_a_streamed_download(server: str) -> None:
    settings = SourceSettings(url=f"{server}/big", max_bytes=50_000)
    with pytest.raises(SourceError, match=r"/big sent more than 50,000 bytes.*source.max_bytes"):
        open_export(settings, environ={})


def test_size_cap_refuses_an_announced_oversized_body(server: str) -> None:
    settings = SourceSettings(url=f"{server}/announced", max_bytes=1000)
    with pytest.raises(SourceError, match="announces 10000000 bytes, over 1,000 bytes"):
        open_export(settings, environ={})


def test_server_error_names_the_url_without_credentials(server: str) -> None:
    host = server.removeprefix("http://")
    url = f"http://isu_dx:{PASSWORD}@{host}/broken?format=csv&token=abc987"
    settings = SourceSettings(url=url, headers={"Authorization": "HR_AUTH"}, retries=0)
    with capture_logs() as logs, pytest.raises(SourceUnavailable) as caught:
        open_export(settings, environ={"HR_AUTH": TOKEN})
    message = str(caught.value)
    assert message.startswith(f"http://{host}/broken?format=csv&token=*** answered HTTP 500")
    for secret in (PASSWORD, "abc987", TOKEN, "isu_dx"):
        assert secret not in message
        assert secret not in repr(logs)


def test_timeout_is_a_source_error(server: str) -> None:
    settings = SourceSettings(url=f"{server}/slow", timeout_s=0.1, retries=0)
    with pytest.raises(
        SourceUnavailable, match=r"/slow did not answer within 0.1 s \(source.timeout_s\)"
    ):
        open_export(settings, environ={})


def test_unreachable_host_is_a_source_error() -> None:
    with pytest.raises(SourceUnavailable, match=r"could not fetch http://127\.0\.0\.1:9/x\.csv"):
        open_export(
            SourceSettings(url="http://127.0.0.1:9/x.csv", timeout_s=2, retries=0), environ={}
        )


def test_a_given_client_is_used_and_left_open(server: str) -> None:
    with httpx.Client() as client:
        open_export(SourceSettings(url=f"{server}/people.csv"), environ={}, http=client)
        assert not client.is_closed


def test_a_given_client_keeps_no_hook_of_a_read_that_ended(server: str) -> None:
    settings = SourceSettings(url=f"{server}/people.csv", headers={"Authorization": "HR_AUTH"})
    with httpx.Client() as client:
        for _ in range(3):
            export = open_export(settings, environ={"HR_AUTH": TOKEN}, http=client)
            list(export.rows())
        # Each read guarded its own redirects, and took its guard away when it ended.
        assert client.event_hooks["response"] == []


def test_redirects_are_followed_by_default(server: str) -> None:
    export = open_export(SourceSettings(url=f"{server}/moved"), environ={})
    assert "Employee ID" in export.columns


def test_an_unfollowed_redirect_is_an_error_not_an_export(server: str) -> None:
    with httpx.Client(follow_redirects=False) as client, pytest.raises(SourceError) as caught:
        open_export(SourceSettings(url=f"{server}/moved"), environ={}, http=client)
    assert str(caught.value) == (
        f"{server}/moved answered HTTP 302 Found; a redirect to /people.csv"
    )


def test_success_is_logged_without_secrets(server: str) -> None:
    settings = SourceSettings(
        url=f"{server}/people.csv?api_key=k3y", headers={"Authorization": "HR_AUTH"}
    )
    with capture_logs() as logs:
        open_export(settings, environ={"HR_AUTH": TOKEN})
    fetched = [entry for entry in logs if entry["event"] == "source.fetched"]
    assert fetched and fetched[0]["url"] == f"{server}/people.csv?api_key=***"
    assert "k3y" not in repr(logs) and TOKEN not in repr(logs)


@pytest.mark.parametrize(
    ("url", "shown"),
    [
        ("https://u:p@hr.example.com/r.csv", "https://hr.example.com/r.csv"),
        ("https://hr.example.com:8443/r?format=json", "https://hr.example.com:8443/r?format=json"),
        ("https://hr.example.com/r?Signature=x&a=b", "https://hr.example.com/r?Signature=***&a=b"),
    ],
)
def test_safe_url(url: str, shown: str) -> None:
    assert safe_url(url) == shown


@pytest.mark.parametrize(
    "url", ["http://isu:hunter2@[::1/x.csv", "http://isu:hunter2@127.0.0.1:99999/x"]
)
def test_a_broken_url_is_an_error_that_shows_none_of_it(url: str) -> None:
    with pytest.raises(SourceError) as caught:
        open_export(SourceSettings(url=url, timeout_s=1, retries=0), environ={})
    assert "source.url (unparsable)" in str(caught.value)
    assert "hunter2" not in str(caught.value)


def test_the_sources_credentials_are_masked_everywhere_hrsync_scrubs(server: str) -> None:
    # A message nobody built with care (an exception escaping deep in a run, stored as a
    # crash's reason, or a traceback in the log) must not carry the HR credentials either:
    # they join the secrets every log line and stored reason are scrubbed of.
    from hrsync.logs import scrub

    settings = SourceSettings(
        url=f"{server}/people.csv?api_key=k3y-5ecret&format=csv",
        headers={"Authorization": "HR_AUTH"},
        username_env="HR_USER",
        password_env="HR_PASS",
    )
    env = {"HR_AUTH": "Token hdr-5ecret-77", "HR_USER": "svc-reader", "HR_PASS": "pa55-5ecret"}
    with contextlib.suppress(SourceError):
        open_export(settings, environ=env)
    text = scrub("failed: api_key=k3y-5ecret, Token hdr-5ecret-77, pa55-5ecret by svc-reader")
    assert "k3y-5ecret" not in text and "hdr-5ecret-77" not in text and "pa55-5ecret" not in text
    assert "svc-reader" in text  # a user name is no secret: it stays readable
