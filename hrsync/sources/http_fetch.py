"""Fetching an export over HTTP(S): auth from environment variables, a timeout, a size cap.

The body is decoded by hrsync itself (`hrsync.capped_body`: identity, gzip or deflate, and
never more than the bytes left under the cap at a time), streamed into a spooled temporary
file (memory up to a few MB, then disk) and counted as it arrives; the download stops as
soon as the decoded bytes pass `source.max_bytes`.

Credentials:
- `[source.headers]` maps a header name to a variable holding the header's whole value,
  e.g. ``Authorization`` to one holding ``Bearer eyJ...``. An ``Authorization`` value
  written whole as another header (``X-API-Key: abc123``: a name, a colon, the value) is
  sent as that header, as the former `source.auth_header_env` did.
- `source.username_env` and `source.password_env` name variables holding HTTP basic auth
  credentials.
- `[source.oauth2]`: client credentials (see `oauth2`).
- `[source.google_service_account]`: a Google service account's JWT-bearer grant (see
  `google_jwt`), its tokens kept and renewed as client credentials' are.
A `source.body` (JSON) is sent with POST. Pages (see `pagination`) are fetched
one at a time through an `HttpSession`; `source.max_bytes` bounds them all together.
`source.timeout_s` bounds each step (connecting, each read), `source.deadline_s` the whole
read: every page, retry and token (see `deadline`).
Credentials and URL user-info never appear in messages or logs; query parameters that look
like secrets (token, key, signature, ...) are masked.
"""

from __future__ import annotations

import json
import re
import tempfile
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

import httpx
import structlog

from hrsync import logs
from hrsync.capped_body import ACCEPT_ENCODING, BodyRefused, TooLarge, codings, iter_capped
from hrsync.core.settings import SourceSettings
from hrsync.dx.retry import RetryPolicy, is_retryable_status, next_delay, parse_retry_after
from hrsync.sources.base import (
    Payload,
    SourceError,
    SourceUnavailable,
    redact,
    required_env,
    too_large,
)
from hrsync.sources.deadline import ReadDeadline
from hrsync.sources.google_jwt import JwtBearer
from hrsync.sources.oauth2 import ClientCredentials, Grant, TokenSource
from hrsync.sources.pagination import HEADER_SIGNS, PageRequest

log = structlog.get_logger(__name__)

SPOOL_IN_MEMORY_BYTES = 8 * 1024 * 1024
_HEADER_FORM = re.compile(r"^([A-Za-z0-9!#$%&'*+.^_`|~-]+):\s*(.*)$", re.DOTALL)
_SECRET_PARAM = re.compile(r"token|key|secret|pass|auth|sig|credential|code", re.IGNORECASE)


@dataclass(frozen=True)
class Fetched:
    payload: Payload
    content_type: str
    size: int
    link: str = ""  # the Link header, where a next page may be named
    # The headers that may tell of more pages (`pagination.HEADER_SIGNS`), lower-case names.
    paging: Mapping[str, str] = field(default_factory=dict)


def safe_url(url: str) -> str:
    """The URL as it may be shown: no user-info, secret-looking query values masked."""
    try:
        parts = urlsplit(url)
        host = parts.hostname or ""
        if parts.port is not None:
            host = f"{host}:{parts.port}"
    except ValueError:  # e.g. a broken IPv6 address or port; nothing of it is safe to show
        return "source.url (unparsable)"
    query = urlencode(
        [
            (key, "***" if _SECRET_PARAM.search(key) else value)
            for key, value in parse_qsl(parts.query, keep_blank_values=True)
        ],
        safe="*$,()",
    )
    return urlunsplit((parts.scheme, host, parts.path, query, ""))


class _Transient(SourceUnavailable):
    def __init__(self, message: str, retry_after_s: float | None = None) -> None:
        super().__init__(message)
        self.retry_after_s = retry_after_s


class _Unauthorized(SourceError):
    """HTTP 401 while an OAuth2 token was sent: worth one fresh token."""


def _grant(
    settings: SourceSettings, environ: Mapping[str, str], wall_clock: Callable[[], float]
) -> Grant | None:
    if settings.oauth2.token_url:
        return ClientCredentials(settings.oauth2, environ)
    if settings.google_service_account.key_file_env:
        return JwtBearer(
            settings.google_service_account,
            environ,
            clock=wall_clock,
            allow_insecure_http=settings.allow_insecure_http,
        )
    return None


class HttpSession:
    """The requests of one export: credentials, an OAuth2 token, retries, a byte budget.

    `source.max_bytes` bounds the sum of all pages. A page that fails with a timeout, a
    network error, 429 or 5xx is tried again `source.retries` times, with the DX client's
    backoff (exponential, full jitter, ``Retry-After`` honoured), then fails the read.
    """

    def __init__(
        self,
        settings: SourceSettings,
        environ: Mapping[str, str],
        http: httpx.Client | None = None,
        *,
        sleep: Callable[[float], None] = time.sleep,
        clock: Callable[[], float] = time.monotonic,
        wall_clock: Callable[[], float] = time.time,  # seconds since the epoch, for a JWT
    ) -> None:
        self.settings = settings
        self.shown = safe_url(settings.url or "")
        self._own_client = http is None
        # Our own transport, which the deadline's watchdog may close (a slow response head).
        self._transport = httpx.HTTPTransport() if http is None else None
        self.client = http or httpx.Client(follow_redirects=True, transport=self._transport)
        self._sleep = sleep
        self._clock = clock
        self.received = 0  # bytes of all pages so far
        self.retry = RetryPolicy(
            max_attempts=settings.retries + 1, base_delay_s=0.5, max_delay_s=10, deadline_s=120
        )
        self.deadline = ReadDeadline(self.shown, settings.deadline_s, clock)
        try:
            self.deadline.install(self.client)
            if self._transport is not None:
                self.deadline.guard(self._transport)
            self.headers, self.auth, self._secrets = _credentials(settings, environ, self.shown)
            # Every log line and stored reason is scrubbed of them too, not only the
            # messages built here: a traceback or an escaping exception may carry them.
            for secret in _url_secrets(settings.url or ""):
                logs.register_secret(secret)
            grant = _grant(settings, environ, wall_clock)
            self.tokens = (
                TokenSource(
                    grant,
                    self.client,
                    timeout_s=settings.timeout_s,
                    shown_url=safe_url,
                    clock=clock,
                )
                if grant is not None
                else None
            )
        except BaseException:
            self.close()
            raise
        if self.headers or self.auth is not None or self.tokens is not None:
            self.client.event_hooks["response"].append(self._refuse_redirect_elsewhere)

    def _refuse_redirect_elsewhere(self, response: httpx.Response) -> None:
        """httpx drops only `Authorization` on a redirect to another origin: headers from
        source.headers (an `X-API-Key`, say) would follow to whoever answers there. A source
        with credentials is only ever redirected within its own origin."""
        location = response.headers.get("location")
        if not response.is_redirect or not location:
            return
        requested = str(response.request.url)
        target = str(response.request.url.join(location))
        if origin(target) != origin(requested):
            # The token endpoint shares this client: name the setting that redirected.
            if self.tokens is not None and _same_endpoint(requested, self.tokens.grant.token_url):
                shown, setting = self.tokens.shown, self.tokens.grant.setting
            else:
                shown, setting = self.shown, "source.url"
            raise SourceError(
                f"{shown} redirected to another origin ({safe_url(target)}); its "
                f"credentials are not sent there: set {setting} to the final address"
            )

    def close(self) -> None:
        self.deadline.stand_down()
        if self._own_client:
            self.client.close()
            return
        # A client lent by the caller outlives this read: it keeps no guard of it.
        self.deadline.uninstall(self.client)
        hooks = self.client.event_hooks["response"]
        if self._refuse_redirect_elsewhere in hooks:
            hooks.remove(self._refuse_redirect_elsewhere)

    def page(self, request: PageRequest, number: int) -> Fetched:
        """Fetch one page, trying again after a transient failure."""
        started = self._clock()
        attempt = 0
        refreshed = False
        while True:
            attempt += 1
            try:
                return self._once(request, number)
            except _Unauthorized as exc:
                if refreshed or self.tokens is None:
                    raise SourceError(str(exc)) from None
                # The token may have been revoked or expired early: one fresh one.
                refreshed = True
                attempt -= 1
                self.tokens.invalidate()
                log.info("source.oauth2_refresh", url=self.shown, page=number)
            except _Transient as exc:
                delay = next_delay(
                    self.retry,
                    attempt,
                    elapsed_s=self._clock() - started,
                    retry_after_s=exc.retry_after_s,
                )
                if delay is None:
                    tries = f" (tried {attempt} times)" if attempt > 1 else ""
                    raise SourceUnavailable(f"{exc}{tries}") from None
                if not self.deadline.allows_wait(delay):
                    raise self.deadline.passed(
                        f"{exc}; the next try was {delay:g} s away"
                    ) from None
                log.warning(
                    "source.retry", page=number, attempt=attempt, delay_s=delay, detail=str(exc)
                )
                self._sleep(delay)

    def _once(self, request: PageRequest, number: int) -> Fetched:
        settings = self.settings
        url = request.url
        shown = safe_url(url)
        where = shown if number == 1 else f"page {number} of {self.shown} ({shown})"
        # Only what hrsync decodes itself, whatever source.headers says.
        headers = {k: v for k, v in self.headers.items() if k.lower() != "accept-encoding"}
        headers["Accept-Encoding"] = ACCEPT_ENCODING
        secrets = list(self._secrets)
        if self.tokens is not None:
            try:
                headers["Authorization"] = self.tokens.authorization()
            except SourceUnavailable:
                if self.deadline.expired:  # the watchdog closed the token's connection
                    raise self.deadline.passed() from None
                raise
            secrets.extend(self.tokens.secrets)
        content: bytes | None = None
        if settings.method == "POST":
            headers["Content-Type"] = "application/json"
            content = json.dumps(request.body).encode() if request.body is not None else b""
        budget = settings.max_bytes - self.received
        # Not a with-block: the spool outlives this call, as the page's bytes.
        spool: tempfile.SpooledTemporaryFile[bytes] = tempfile.SpooledTemporaryFile(  # noqa: SIM115
            max_size=SPOOL_IN_MEMORY_BYTES
        )
        size = 0
        content_type = ""
        link = ""
        paging: dict[str, str] = {}
        try:
            with self.client.stream(
                settings.method,
                url,
                headers=headers,
                content=content,
                auth=self.auth,
                timeout=settings.timeout_s,
            ) as response:
                if not response.is_success:
                    status = response.status_code
                    said = f"HTTP {status} {response.reason_phrase}".rstrip()
                    message = f"{where} answered {said}"
                    if status == 401 and self.tokens is not None:
                        raise _Unauthorized(
                            f"{message} with a fresh OAuth2 token; "
                            f"{self.tokens.grant.unauthorized_hint()}"
                        )
                    if is_retryable_status(status):
                        raise _Transient(
                            message,
                            parse_retry_after(response.headers.get("retry-after")),
                        )
                    if status == 403 and self.tokens is not None:
                        # The token was good; what it may read is not.
                        raise SourceError(f"{message}; {self.tokens.grant.unauthorized_hint()}")
                    if status in (401, 403):
                        # What happened, in words: the export itself was never read.
                        message = f"{where} refused the credentials ({said})"
                    raise SourceError(
                        message + _status_hint(status, response.headers.get("location", ""))
                    )
                declared = response.headers.get("content-length", "")
                # A compressed answer's length is that of its compressed bytes.
                plain = all(coding == "identity" for coding in codings(response))
                if plain and declared.isdigit() and int(declared) > budget:
                    raise SourceError(
                        self._too_large(where, f"announces {declared} bytes, over", number)
                    )
                try:
                    for block in iter_capped(response, budget):
                        size += len(block)
                        spool.write(block)
                except TooLarge:
                    raise SourceError(
                        self._too_large(where, "sent more than", number, decoded=True)
                    ) from None
                except BodyRefused as refused:
                    raise SourceError(f"{where} {refused}") from None
                content_type = response.headers.get("content-type", "")
                link = ", ".join(response.headers.get_list("link"))
                told = response.headers
                paging = {name: told[name] for name in HEADER_SIGNS if name in told}
        except SourceError:
            spool.close()
            raise
        except httpx.TimeoutException:
            spool.close()
            raise _Transient(
                f"{where} did not answer within {settings.timeout_s:g} s (source.timeout_s)"
            ) from None
        except (httpx.InvalidURL, httpx.UnsupportedProtocol):
            spool.close()
            what = "source.url" if number == 1 else "the API's next page"
            raise SourceError(f"{shown} is not a valid http(s) URL ({what})") from None
        except httpx.HTTPError as exc:
            spool.close()
            if self.deadline.expired:  # the watchdog closed the connection
                raise self.deadline.passed() from None
            hidden = [*secrets, *_userinfo(url)]
            if url != shown:
                hidden.append(url)
            detail = redact(str(exc), hidden) or type(exc).__name__
            raise _Transient(f"could not fetch {where}: {detail}") from None
        except BaseException:
            spool.close()
            raise
        self.received += size
        log.debug("source.page", url=shown, page=number, bytes=size)
        return Fetched(Payload.from_spool(self.shown, spool), content_type, size, link, paging)

    def _too_large(self, where: str, what: str, number: int, *, decoded: bool = False) -> str:
        limit = self.settings.max_bytes
        if number == 1:
            return too_large(where, limit, what, decoded=decoded)
        return (
            f"{where} takes the export over {limit:,} bytes (decoded), the limit set by "
            f"source.max_bytes for all pages together ({self.received:,} bytes in the pages "
            f"before); raise it if the export really is this large"
        )


def _credentials(
    settings: SourceSettings, environ: Mapping[str, str], shown: str
) -> tuple[dict[str, str], httpx.BasicAuth | None, list[str]]:
    headers: dict[str, str] = {}
    secrets: list[str] = []
    auth = None
    if settings.username_env or settings.password_env:
        user = _required_env(environ, settings.username_env, "source.username_env", shown)
        password = _required_env(environ, settings.password_env, "source.password_env", shown)
        auth = httpx.BasicAuth(user, password)
        logs.register_secret(password)  # the user name stays readable in the log
        secrets.extend([user, password])
    for header, variable in settings.headers.items():
        value = _required_env(environ, variable, f"source.headers.{header}", shown, header=True)
        logs.register_secret(value)
        match = _HEADER_FORM.match(value) if header.lower() == "authorization" else None
        if match and " " not in match.group(1):
            headers[match.group(1)] = match.group(2).strip()
            logs.register_secret(headers[match.group(1)])
        else:
            headers[header] = value
        secrets.append(value)
    return headers, auth, secrets


def _required_env(
    environ: Mapping[str, str], name: str, key: str, shown: str, *, header: bool = False
) -> str:
    if not name:
        raise SourceError(
            f"cannot fetch {shown}: {key} is not set, but basic auth needs both "
            f"source.username_env and source.password_env"
        )
    return required_env(environ, name, key, f"fetch {shown}", header=header)


def _status_hint(status: int, location: str) -> str:
    if status in (401, 403):
        return (
            "; check the credentials in the variables named by source.headers or "
            "source.username_env/source.password_env"
        )
    if status == 404:
        return "; check source.url"
    if 300 <= status < 400:
        return f"; a redirect to {safe_url(location)}" if location else "; a redirect"
    return ""


def _url_secrets(url: str) -> list[str]:
    """The URL's password and its secret-looking query values (those `safe_url` masks)."""
    try:
        parts = urlsplit(url)
        password = [parts.password] if parts.password else []
    except ValueError:
        return []
    query = parse_qsl(parts.query, keep_blank_values=True)
    return [*password, *(value for key, value in query if value and _SECRET_PARAM.search(key))]


def _userinfo(url: str) -> list[str]:
    try:
        parts = urlsplit(url)
        return [part for part in (parts.username, parts.password) if part]
    except ValueError:
        return []


def _same_endpoint(url: str, other: str) -> bool:
    return origin(url) == origin(other) and urlsplit(url).path == urlsplit(other).path


def origin(url: str) -> tuple[str, str, int | None]:
    """Scheme, host and port of `url` (the default port when none is written)."""
    parts = urlsplit(url)
    scheme = parts.scheme.lower()
    try:
        port = parts.port or {"http": 80, "https": 443}.get(scheme)
    except ValueError:
        port = -1
    return scheme, (parts.hostname or "").lower(), port
