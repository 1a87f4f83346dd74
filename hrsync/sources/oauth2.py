"""OAuth2 tokens for an HTTP source: client credentials (`[source.oauth2]`), and the
machinery every grant shares (`TokenSource`).

The token is fetched once and reused until shortly before it expires (`REFRESH_MARGIN_S`,
or a tenth of a short lifetime); the reader asks for a fresh one once when a page
answers 401. A `Grant` says what is posted to which token endpoint: client credentials
here, a signed assertion in `google_jwt`. The credentials come from the environment
variables named in the config. Neither they nor the token are ever put into a message or
a log line.
"""

from __future__ import annotations

import json
import re
import time
from collections.abc import Callable, Mapping
from typing import Protocol

import httpx
import structlog

from hrsync import logs
from hrsync.capped_body import ACCEPT_ENCODING, BodyRefused, TooLarge, read_capped
from hrsync.core.settings import OAuth2Settings
from hrsync.dx.retry import is_retryable_status
from hrsync.secret import header_value_problem
from hrsync.sources.base import SourceError, SourceUnavailable, redact, required_env

log = structlog.get_logger(__name__)

REFRESH_MARGIN_S = 60.0
# A lifetime the token endpoint did not state: reuse until a page answers 401.
UNSTATED_LIFETIME_S = float("inf")
# A token answer is a few hundred bytes of JSON (a JWT access token a few KB): anything
# past this is not a token endpoint's answer, and is not read further.
MAX_TOKEN_ANSWER_BYTES = 1024 * 1024
# What a missing client id or secret stops, in its error.
_DOING = "fetch an OAuth2 token"
_ERROR_CODE = re.compile(r"^[A-Za-z0-9_.-]{1,64}$")


class Grant(Protocol):
    """How to ask one token endpoint for an access token."""

    @property
    def token_url(self) -> str: ...

    @property
    def setting(self) -> str:
        """The config key a redirect or a broken answer of the endpoint is blamed on."""
        ...

    @property
    def secrets(self) -> list[str]:
        """The credentials, to hide from a message."""
        ...

    def form(self) -> dict[str, str]:
        """The form to post; may build a new credential (an assertion) each time, which
        `secrets` then includes."""
        ...

    def refused(self, status: int, code: str) -> str:
        """What to check when the endpoint refuses (`code`: the `error`, or "")."""
        ...

    def unauthorized_hint(self) -> str:
        """What to check when a page answers 401 even to a fresh token."""
        ...


class ClientCredentials:
    """`[source.oauth2]`: the client id and secret, from the variables the config names."""

    def __init__(self, settings: OAuth2Settings, environ: Mapping[str, str]) -> None:
        self._settings = settings
        self.token_url = settings.token_url
        self.setting = "source.oauth2.token_url"
        self._client_id = required_env(
            environ, settings.client_id_env, "source.oauth2.client_id_env", _DOING
        )
        self._secret = required_env(
            environ, settings.client_secret_env, "source.oauth2.client_secret_env", _DOING
        )
        logs.register_secret(self._secret)  # every log line and stored reason: not only ours

    @property
    def secrets(self) -> list[str]:
        return [self._secret, self._client_id]

    def form(self) -> dict[str, str]:
        s = self._settings
        form = {
            "grant_type": "client_credentials",
            "client_id": self._client_id,
            "client_secret": self._secret,
        }
        if s.scope:
            form["scope"] = s.scope
        if s.audience:
            form["audience"] = s.audience
        return form

    def refused(self, status: int, code: str) -> str:
        s = self._settings
        shown_code = f" {code}" if code else ""
        return (
            f"refused the client credentials (HTTP {status}{shown_code}): check the secret in "
            f"${s.client_secret_env} (named by source.oauth2.client_secret_env), the "
            f"client id in ${s.client_id_env} (source.oauth2.client_id_env) and "
            f"source.oauth2.scope"
        )

    def unauthorized_hint(self) -> str:
        return "check the client's permissions and source.oauth2.scope"


class TokenSource:
    """An access token from `grant`, reused until shortly before it expires."""

    def __init__(
        self,
        grant: Grant,
        client: httpx.Client,
        *,
        timeout_s: float,
        shown_url: Callable[[str], str],
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.grant = grant
        self._client = client
        self._timeout_s = timeout_s
        self._clock = clock
        self.shown = shown_url(grant.token_url)
        self._token = ""
        self._expires_at = 0.0
        self.fetches = 0  # how many tokens were asked for (tests and the log)

    @property
    def secrets(self) -> list[str]:
        """Everything to hide from a message: the credentials and the current token."""
        return [value for value in (*self.grant.secrets, self._token) if value]

    def authorization(self) -> str:
        """The Authorization header value, fetching a token when none is still good."""
        if not self._token or self._clock() >= self._expires_at:
            self._fetch()
        return f"Bearer {self._token}"

    def invalidate(self) -> None:
        self._token = ""

    def _fetch(self) -> None:
        form = self.grant.form()
        started = self._clock()
        try:
            with self._client.stream(
                "POST",
                self.grant.token_url,
                data=form,
                headers={"Accept": "application/json", "Accept-Encoding": ACCEPT_ENCODING},
                timeout=self._timeout_s,
            ) as response:
                status = response.status_code
                if is_retryable_status(status):
                    raise SourceUnavailable(
                        f"the OAuth2 token endpoint {self.shown} answered HTTP {status}"
                    )
                text = read_capped(response, MAX_TOKEN_ANSWER_BYTES)
        except BodyRefused as unread:
            cap = (
                ", the most hrsync reads of a token answer" if isinstance(unread, TooLarge) else ""
            )
            raise SourceError(
                f"the OAuth2 token endpoint {self.shown} {unread}{cap}; check {self.grant.setting}"
            ) from None
        except httpx.TimeoutException:
            raise SourceUnavailable(
                f"the OAuth2 token endpoint {self.shown} did not answer within "
                f"{self._timeout_s:g} s (source.timeout_s)"
            ) from None
        except httpx.HTTPError as exc:
            detail = redact(str(exc), self.secrets) or type(exc).__name__
            raise SourceUnavailable(
                f"could not reach the OAuth2 token endpoint {self.shown}: {detail}"
            ) from None
        body = _json_object(text)
        if not 200 <= status < 300:
            code = body.get("error") if body else None
            known = isinstance(code, str) and _ERROR_CODE.match(code)
            refused = self.grant.refused(status, code if isinstance(code, str) and known else "")
            raise SourceError(f"the OAuth2 token endpoint {self.shown} {refused}")
        token = body.get("access_token") if body else None
        if not isinstance(token, str) or not token.strip():
            raise SourceError(
                f"the OAuth2 token endpoint {self.shown} answered without an access_token "
                f"({self.grant.setting})"
            )
        problem = header_value_problem(token.strip())
        if problem is not None:
            raise SourceError(
                f"the OAuth2 token endpoint {self.shown} answered an access token that "
                f"{problem}, which cannot be sent as a bearer token (the value is not shown)"
            )
        lifetime = _lifetime(body.get("expires_in") if body else None)
        self._token = token.strip()
        logs.register_short_lived_secret(self._token)
        self._expires_at = started + lifetime - min(REFRESH_MARGIN_S, lifetime / 10)
        self.fetches += 1
        log.info(
            "source.oauth2_token",
            token_url=self.shown,
            expires_in_s=None if lifetime == UNSTATED_LIFETIME_S else lifetime,
        )


def _json_object(text: bytes) -> dict[str, object] | None:
    try:
        body = json.loads(text)
    except (ValueError, RecursionError):
        return None
    return body if isinstance(body, dict) else None


def _lifetime(value: object) -> float:
    try:
        seconds = float(value)  # type: ignore[arg-type]  # checked just below
    except (TypeError, ValueError):
        return UNSTATED_LIFETIME_S
    return seconds if seconds > 0 else UNSTATED_LIFETIME_S
