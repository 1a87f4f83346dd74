"""A Google service account's JWT-bearer grant, against a local fake of Google's token
endpoint (which verifies the assertion's signature with the public key) and of the
Directory API's users.list (paged at 10, needing the token). The keys are made here."""

from __future__ import annotations

import base64
import dataclasses
import io
import json
import os
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec, padding

from hrsync import logs
from hrsync.core.settings import GoogleServiceAccountSettings, PaginationSettings, SourceSettings
from hrsync.sources.base import SourceError, SourceUnavailable
from hrsync.sources.google_jwt import ASSERTION_LIFETIME_S, JWT_BEARER_GRANT, JwtBearer
from hrsync.sources.http_fetch import HttpSession
from hrsync.sources.open import _format, open_export
from hrsync.sources.pages import open_url
from tests.fakes import FakeServer, serve
from tests.fakes.google_workspace import (
    DIRECTORY_SCOPE,
    TOKEN_PATH,
    USERS_PATH,
    DirectoryApi,
    ServiceAccount,
)
from tests.fakes.hr_apis import sample_people

PEOPLE = len(sample_people())
SUBJECT = "hrsync-reader@example.com"
KEY_ENV = "GOOGLE_APPLICATION_CREDENTIALS"


@pytest.fixture(scope="module")
def account() -> ServiceAccount:
    return ServiceAccount()  # one 2048-bit key for the module: making one takes a moment


@pytest.fixture
def google(account: ServiceAccount) -> Iterator[tuple[FakeServer, DirectoryApi]]:
    api = DirectoryApi()
    api.tokens.account = account
    with serve(api) as server:
        yield server, api


def settings_for(base: str, **google: Any) -> SourceSettings:
    return SourceSettings(
        url=f"{base}{USERS_PATH}?customer=my_customer&maxResults=500",
        records_path="users",
        retries=0,
        pagination=PaginationSettings(
            style="cursor", next_cursor_path="nextPageToken", cursor_param="pageToken"
        ),
        google_service_account=GoogleServiceAccountSettings(
            **{
                "key_file_env": KEY_ENV,
                "subject": SUBJECT,
                "scopes": (DIRECTORY_SCOPE,),
                **google,
            }
        ),
    )


def key_env(tmp_path: Path, account: ServiceAccount, base: str) -> dict[str, str]:
    path = account.write_key_file(tmp_path / "key.json", f"{base}{TOKEN_PATH}")
    return {KEY_ENV: str(path)}


def decode(part: str) -> Any:
    return json.loads(base64.urlsafe_b64decode(part + "=" * (-len(part) % 4)))


# ---------------------------------------------------------------- the assertion


def test_the_assertion_is_signed_rs256_with_the_claims_google_asks_for(
    tmp_path: Path, account: ServiceAccount
) -> None:
    env = key_env(tmp_path, account, "https://oauth2.example.test")
    grant = JwtBearer(
        GoogleServiceAccountSettings(
            key_file_env=KEY_ENV, subject=SUBJECT, scopes=(DIRECTORY_SCOPE, "openid")
        ),
        env,
        clock=lambda: 1_700_000_000.7,
    )
    form = grant.form()
    assert form["grant_type"] == JWT_BEARER_GRANT == "urn:ietf:params:oauth:grant-type:jwt-bearer"
    header, claims, signature = form["assertion"].split(".")
    assert decode(header) == {"alg": "RS256", "typ": "JWT", "kid": account.key_id}
    assert decode(claims) == {
        "iss": account.client_email,
        "scope": f"{DIRECTORY_SCOPE} openid",
        "aud": "https://oauth2.example.test/token",
        "iat": 1_700_000_000,
        "exp": 1_700_000_000 + 3600,
        "sub": SUBJECT,
    }
    assert ASSERTION_LIFETIME_S == 3600  # Google's maximum
    raw = base64.urlsafe_b64decode(signature + "=" * (-len(signature) % 4))
    account.key.public_key().verify(  # raises when the signature is wrong
        raw, f"{header}.{claims}".encode(), padding.PKCS1v15(), hashes.SHA256()
    )
    assert grant.token_url == "https://oauth2.example.test/token"
    assert form["assertion"] in grant.secrets


def test_without_a_subject_no_sub_and_google_s_token_uri_by_default(
    tmp_path: Path, account: ServiceAccount
) -> None:
    key = account.key_file("")
    del key["token_uri"]
    path = tmp_path / "key.json"
    path.write_text(json.dumps(key), encoding="utf-8")
    grant = JwtBearer(
        GoogleServiceAccountSettings(key_file_env="K", scopes=(DIRECTORY_SCOPE,)),
        {"K": str(path)},
        clock=lambda: 1_700_000_000,
    )
    claims = grant.claims()
    assert "sub" not in claims
    assert claims["aud"] == grant.token_url == "https://oauth2.googleapis.com/token"


# ---------------------------------------------------------------- reading the directory


def test_reads_every_page_with_one_token(
    tmp_path: Path, google: tuple[FakeServer, DirectoryApi]
) -> None:
    server, api = google
    env = key_env(tmp_path, api.tokens.account, server.base_url)
    export = open_export(settings_for(server.base_url), environ=env)
    rows = list(export.rows())
    assert len(rows) == PEOPLE and export.pages == 4
    assert rows[0].values["primaryEmail"] == sample_people()[0].email
    assert len(api.tokens.issued) == 1
    assert api.page_tokens[0] == "" and all(api.page_tokens[1:])  # pageToken sent back
    (claims,) = api.tokens.claims  # the fake checked iss, sub, aud, scope and exp
    assert claims["sub"] == SUBJECT and claims["scope"] == DIRECTORY_SCOPE
    assert claims["aud"] == f"{server.base_url}{TOKEN_PATH}"


def test_token_reused_until_shortly_before_expiry_then_a_new_assertion(
    tmp_path: Path, google: tuple[FakeServer, DirectoryApi]
) -> None:
    server, api = google
    api.tokens.lifetime_s = 600
    now = [1000.0]
    # Four pages of 200 s each: a read longer than the default source.deadline_s.
    settings = dataclasses.replace(settings_for(server.base_url), deadline_s=3600)
    env = key_env(tmp_path, api.tokens.account, server.base_url)
    started = time.time()

    def wall_clock() -> float:  # Google's clock and ours, moved on with the pages
        return started + now[0] - 1000

    api.tokens.clock = wall_clock
    session = HttpSession(settings, env, clock=lambda: now[0], wall_clock=wall_clock)
    original = session.page

    def page_then_tick(request: Any, number: int) -> Any:
        fetched = original(request, number)
        now[0] += 200  # each page "takes" 200 s: the token (600 s, 60 s margin) lasts 2 pages
        return fetched

    session.page = page_then_tick  # type: ignore[method-assign]
    export = open_url(settings, env, None, _format, session=session)
    session.close()
    assert export.pages == 4
    assert len(api.tokens.issued) == 2
    assert len(set(api.tokens.assertions)) == 2  # each token asked for with a new assertion


def test_a_401_gets_one_fresh_token(
    tmp_path: Path, google: tuple[FakeServer, DirectoryApi]
) -> None:
    server, api = google
    api.revoke_after_page = 2
    env = key_env(tmp_path, api.tokens.account, server.base_url)
    export = open_export(settings_for(server.base_url), environ=env)
    assert export.pages == 4 and len(list(export.rows())) == PEOPLE
    assert len(api.tokens.issued) == 2


# ---------------------------------------------------------------- refusals


def test_a_subject_not_delegated_to_is_refused_naming_what_to_check(
    tmp_path: Path, google: tuple[FakeServer, DirectoryApi]
) -> None:
    server, api = google
    env = key_env(tmp_path, api.tokens.account, server.base_url)
    settings = settings_for(server.base_url, subject="someone-else@example.com")
    with pytest.raises(SourceError) as caught:
        open_export(settings, environ=env)
    message = str(caught.value)
    assert not isinstance(caught.value, SourceUnavailable)
    assert "refused the service account" in message and "(HTTP 400 invalid_grant)" in message
    assert "source.google_service_account.subject (someone-else@example.com)" in message
    assert f"${KEY_ENV} (named by source.google_service_account.key_file_env)" in message
    assert api.pages_served == 0


def test_scopes_not_delegated_are_refused_pointing_at_the_admin_console(
    tmp_path: Path, google: tuple[FakeServer, DirectoryApi]
) -> None:
    server, api = google
    env = key_env(tmp_path, api.tokens.account, server.base_url)
    scope = "https://www.googleapis.com/auth/admin.directory.user"
    with pytest.raises(SourceError) as caught:
        open_export(settings_for(server.base_url, scopes=(scope,)), environ=env)
    message = str(caught.value)
    assert "(HTTP 401 unauthorized_client)" in message
    assert "Domain-wide delegation" in message and scope in message


def test_a_key_google_does_not_know_is_refused(
    tmp_path: Path, google: tuple[FakeServer, DirectoryApi]
) -> None:
    server, api = google
    other = ServiceAccount()  # same e-mail and key id, another key: a deleted key, say
    other.key_id = api.tokens.account.key_id
    env = key_env(tmp_path, other, server.base_url)
    with pytest.raises(SourceError, match=r"invalid_grant.*is still one of its keys"):
        open_export(settings_for(server.base_url), environ=env)


def test_a_403_names_the_delegation_not_auth_header_env(
    tmp_path: Path, google: tuple[FakeServer, DirectoryApi]
) -> None:
    server, api = google
    api.forbidden = True
    env = key_env(tmp_path, api.tokens.account, server.base_url)
    with pytest.raises(SourceError) as caught:
        open_export(settings_for(server.base_url), environ=env)
    message = str(caught.value)
    assert "HTTP 403" in message and "source.google_service_account.scopes" in message
    assert "auth_header_env" not in message


# ---------------------------------------------------------------- the key file


def _refused(tmp_path: Path, env: dict[str, str]) -> str:
    settings = settings_for("http://127.0.0.1:9")  # nothing is sent: the key is read first
    with pytest.raises(SourceError) as caught:
        open_export(settings, environ=env)
    return str(caught.value)


def test_an_unset_variable_is_named(tmp_path: Path) -> None:
    message = _refused(tmp_path, {})
    assert f"${KEY_ENV} (named by source.google_service_account.key_file_env) is not set" in (
        message
    )


def test_a_missing_file_is_named_with_its_path(tmp_path: Path) -> None:
    message = _refused(tmp_path, {KEY_ENV: str(tmp_path / "nope.json")})
    assert f"cannot read the service account key file {tmp_path / 'nope.json'}" in message
    assert "source.google_service_account.key_file_env" in message


def test_the_key_itself_in_the_variable_is_refused_and_not_shown(
    tmp_path: Path, account: ServiceAccount
) -> None:
    text = json.dumps(account.key_file("https://oauth2.googleapis.com/token"))
    message = _refused(tmp_path, {KEY_ENV: text})
    assert "holds the key itself: it must hold the path" in message
    assert account.pem not in message and "PRIVATE" not in message
    assert logs.scrub(text) == logs.REDACTED  # and kept out of every log line


@pytest.mark.parametrize(
    ("content", "expected"),
    [
        ("not json", "is not JSON"),
        ("[1]", "is not a JSON object"),
        ('{"type": "authorized_user"}', "is not a service account key"),
        ('{"type": "service_account", "private_key": "x"}', "has no client_email"),
    ],
)
def test_a_file_that_is_no_service_account_key_is_refused(
    tmp_path: Path, content: str, expected: str
) -> None:
    path = tmp_path / "key.json"
    path.write_text(content, encoding="utf-8")
    message = _refused(tmp_path, {KEY_ENV: str(path)})
    assert expected in message and str(path) in message


def test_a_broken_or_non_rsa_private_key_is_refused_without_showing_it(
    tmp_path: Path, account: ServiceAccount
) -> None:
    path = tmp_path / "key.json"
    broken = account.key_file("https://oauth2.googleapis.com/token")
    broken["private_key"] = account.pem.replace("\n", "", 3)[:-80]  # truncated
    path.write_text(json.dumps(broken), encoding="utf-8")
    message = _refused(tmp_path, {KEY_ENV: str(path)})
    assert "private_key is not an unencrypted private key in PEM form" in message
    assert broken["private_key"][40:80] not in message
    ec_key = ec.generate_private_key(ec.SECP256R1()).private_bytes(
        serialization.Encoding.PEM,
        serialization.PrivateFormat.PKCS8,
        serialization.NoEncryption(),
    )
    broken["private_key"] = ec_key.decode()
    path.write_text(json.dumps(broken), encoding="utf-8")
    assert "private_key is not an RSA key" in _refused(tmp_path, {KEY_ENV: str(path)})


# ---------------------------------------------------------------- secrets


def test_no_key_assertion_or_token_in_any_rendered_log_line_or_message(
    tmp_path: Path, google: tuple[FakeServer, DirectoryApi]
) -> None:
    """Rendered as the daemon renders (JSON lines, tracebacks included): a refresh after a
    revoked token, then a failure whose exception quotes the secrets."""
    server, api = google
    api.revoke_after_page = 1
    account = api.tokens.account
    env = key_env(tmp_path, account, server.base_url)
    key_text = Path(env[KEY_ENV]).read_text(encoding="utf-8")
    out = io.StringIO()
    logs.configure("json", "debug", out)
    log = logs.get_logger("test")
    try:
        export = open_export(settings_for(server.base_url), environ=env)
        assert export.pages == 4
        assert len(api.tokens.issued) == 2
        pem_lines = [line for line in account.pem.splitlines() if "-----" not in line]
        secrets = [*api.tokens.issued, *api.tokens.assertions, key_text, account.pem, *pem_lines]
        try:
            raise RuntimeError(" | ".join(secrets))
        except RuntimeError:
            log.exception("test.failed", detail=f"Bearer {api.tokens.issued[0]} {pem_lines[3]}")
        refused = settings_for(server.base_url, subject="nobody@example.com")
        with pytest.raises(SourceError) as caught:
            open_export(refused, environ=env)
        log.error("test.refused", reason=str(caught.value))
    finally:
        logs.configure("json", "info", io.StringIO())
    text = out.getvalue()
    assert "source.oauth2_refresh" in text and "test.failed" in text
    assert logs.REDACTED in text and "RuntimeError" in text
    for secret in [*secrets, *api.tokens.assertions]:
        assert secret not in text
        assert secret not in str(caught.value)
    assert "nobody@example.com" in text  # the message itself is shown


def test_a_plain_http_token_uri_to_another_host_is_refused(
    tmp_path: Path, account: ServiceAccount
) -> None:
    # The signed assertion would cross the network in clear text: the same rule as
    # source.oauth2.token_url. This machine's own address stays allowed (a local fake).
    path = account.write_key_file(tmp_path / "key.json", "http://login.example.test/token")
    message = _refused(tmp_path, {KEY_ENV: str(path)})
    assert "token_uri" in message and "plain http:// to login.example.test" in message
    assert "dx.allow_insecure_http" in message
    assert account.pem not in message


def test_a_plain_http_token_uri_is_taken_when_the_source_allows_it(
    tmp_path: Path, account: ServiceAccount
) -> None:
    path = account.write_key_file(tmp_path / "key.json", "http://login.example.test/token")
    settings = settings_for("http://127.0.0.1:9")
    bearer = JwtBearer(
        settings.google_service_account, {KEY_ENV: str(path)}, allow_insecure_http=True
    )
    assert bearer.token_url == "http://login.example.test/token"


@pytest.mark.parametrize("kind", ["fifo", "device", "large"])
def test_a_key_file_that_is_no_small_regular_file_is_refused_at_once(
    tmp_path: Path, kind: str
) -> None:
    path = tmp_path / "key.json"
    if kind == "fifo":
        os.mkfifo(path)  # with no writer: reading it would block for ever
    elif kind == "large":
        path.write_bytes(b" " * (64 * 1024 + 1))
    else:
        path = Path("/dev/zero")
    message = _refused(tmp_path, {KEY_ENV: str(path)})
    expected = "is over 65,536 bytes" if kind == "large" else "is not a regular file"
    assert expected in message and str(path) in message
