"""Plain http:// is refused where a credential would travel over it to another machine:
the DX token (dx.base_url), the HR source's credentials (source.url, its OAuth2 token
URL), the webhook URL (itself a secret). Loopback (and 0.0.0.0, which connects to
loopback) is this machine: allowed. `dx.allow_insecure_http = true`, one key for every
URL, lets a trusted network through.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from hrsync.config.loading import ConfigError, load_settings
from hrsync.config.plain_http import plain_http_host

TOKEN_ENV = {"HRSYNC_DX_TOKEN": "tok-1234567890"}


@pytest.mark.parametrize(
    ("url", "host"),
    [
        ("https://api.getdx.com", None),
        ("HTTPS://api.getdx.com", None),
        ("http://127.0.0.1:8765", None),
        ("http://127.8.9.10/x", None),
        ("http://[::1]:9000/", None),
        ("http://localhost:8765", None),
        ("http://LocalHost", None),
        ("http://api.getdx.com", "api.getdx.com"),
        ("HTTP://API.getdx.com/x", "api.getdx.com"),
        ("http://user:s3cret@hr.example.test/report", "hr.example.test"),
        ("http://10.1.2.3:8080", "10.1.2.3"),
        # "Any address" is this machine when connected to (`hrsync simulator --host
        # 0.0.0.0` prints it): nothing leaves the host.
        ("http://0.0.0.0:8765", None),
        ("http://[::]:8765", None),
        ("http://[fd00::1]/", "fd00::1"),
        ("http://localhost.evil.test", "localhost.evil.test"),
        ("http://127.0.0.1.nip.io", "127.0.0.1.nip.io"),
        ("ftp://x.example.test", None),  # not http at all: refused elsewhere, for that
        ("http://[broken", None),
        ("", None),
    ],
)
def test_which_urls_go_over_the_network_in_clear(url: str, host: str | None) -> None:
    assert plain_http_host(url) == host


def settings_problems(tmp_path: Path, text: str, env: dict[str, str] | None = None) -> list[str]:
    path = tmp_path / "hrsync.toml"
    path.write_text(text, encoding="utf-8")
    try:
        load_settings(path, {**TOKEN_ENV, **(env or {})})
    except ConfigError as exc:
        return exc.problems
    return []


SOURCE_FILE = '\n[source]\npath = "people.csv"\n'
DX_HTTPS = '[dx]\nbase_url = "https://api.getdx.com"\n'


def test_dx_over_plain_http_is_refused_naming_the_key_the_host_and_why(tmp_path: Path) -> None:
    text = '[dx]\nbase_url = "http://dx.example.test/api"\n' + SOURCE_FILE
    assert settings_problems(tmp_path, text) == [
        "dx.base_url is plain http:// to dx.example.test: the DX token would cross the "
        "network readable by anyone on the way; use https://, or set "
        "dx.allow_insecure_http = true for a network you trust"
    ]


def test_dx_over_plain_http_is_allowed_when_asked_for_or_on_this_machine(tmp_path: Path) -> None:
    text = '[dx]\nbase_url = "http://dx.example.test"\nallow_insecure_http = true\n'
    assert settings_problems(tmp_path, text + SOURCE_FILE) == []
    for url in ("http://127.0.0.1:8765", "http://localhost:8765", "http://[::1]:8765"):
        assert settings_problems(tmp_path, f'[dx]\nbase_url = "{url}"\n' + SOURCE_FILE) == []
    env = {"HRSYNC_DX__BASE_URL": "http://dx.example.test", "HRSYNC_DX__ALLOW_INSECURE_HTTP": "1"}
    assert settings_problems(tmp_path, DX_HTTPS + SOURCE_FILE, env) == []


HR = "http://hr.example.test/people"


@pytest.mark.parametrize(
    ("extra", "env", "why"),
    [
        ('[source.headers]\nAuthorization = "HR_AUTH"\n', {}, "source.headers"),
        ('username_env = "HR_USER"\npassword_env = "HR_PASSWORD"\n', {}, "basic auth"),
        ('[source.headers]\nX-Api-Key = "HR_KEY"\n', {}, "source.headers"),
        (
            '[source.oauth2]\ntoken_url = "https://login.example.test/token"\n'
            'client_id_env = "ID"\nclient_secret_env = "SECRET"\n',
            {},
            "the OAuth2 access token",
        ),
        (
            '[source.google_service_account]\nkey_file_env = "KEY"\n'
            'scopes = ["https://www.googleapis.com/auth/admin.directory.user.readonly"]\n',
            {},
            "the Google access token",
        ),
    ],
)
def test_a_credentialed_source_over_plain_http_is_refused(
    tmp_path: Path, extra: str, env: dict[str, str], why: str
) -> None:
    text = DX_HTTPS + f'\n[source]\nurl = "{HR}"\n' + extra
    assert settings_problems(tmp_path, text, env) == [
        f"source.url is plain http:// to hr.example.test and sends {why}: it would cross "
        "the network readable by anyone on the way; use https://, or set "
        "dx.allow_insecure_http = true for a network you trust"
    ]
    allowed = text.replace("[dx]\n", "[dx]\nallow_insecure_http = true\n")
    assert settings_problems(tmp_path, allowed, env) == []


def test_credentials_in_the_source_url_itself_count_and_are_not_echoed(tmp_path: Path) -> None:
    text = DX_HTTPS + '\n[source]\nurl = "http://isu:s3cret@hr.example.test/people"\n'
    (problem,) = settings_problems(tmp_path, text)
    assert problem.startswith(
        "source.url is plain http:// to hr.example.test and sends the user name and "
        "password written in it:"
    )
    assert "s3cret" not in problem and "isu" not in problem


def test_a_source_without_credentials_may_be_read_over_plain_http(tmp_path: Path) -> None:
    assert settings_problems(tmp_path, DX_HTTPS + f'\n[source]\nurl = "{HR}"\n') == []


def test_an_oauth2_token_url_over_plain_http_is_refused(tmp_path: Path) -> None:
    text = DX_HTTPS + (
        '\n[source]\nurl = "https://hr.example.test/people"\n'
        '[source.oauth2]\ntoken_url = "http://login.example.test/token"\n'
        'client_id_env = "ID"\nclient_secret_env = "SECRET"\n'
    )
    assert settings_problems(tmp_path, text) == [
        "source.oauth2.token_url is plain http:// to login.example.test: the client secret "
        "would cross the network readable by anyone on the way; use https://, or set "
        "dx.allow_insecure_http = true for a network you trust"
    ]
    allowed = text.replace("[dx]\n", "[dx]\nallow_insecure_http = true\n")
    assert settings_problems(tmp_path, allowed) == []
