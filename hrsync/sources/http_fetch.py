"""Fetching an export over HTTP(S): auth from environment variables, a timeout, a size cap.

The body is streamed into a spooled temporary file (memory up to a few MB, then disk) and
counted as it arrives; the download stops as soon as it passes `source.max_bytes`.

Credentials:
- `source.auth_header_env` names a variable holding the value of the Authorization header,
  e.g. ``Bearer eyJ...`` or ``Basic dXNlcjpwYXNz``. To send another header instead, write it
  whole: ``X-API-Key: abc123`` (a header name, a colon, the value).
- `source.username_env` and `source.password_env` name variables holding HTTP basic auth
  credentials.
`source.timeout_s` bounds each step (connecting, each read), not the whole download.
Credentials and URL user-info never appear in messages or logs; query parameters that look
like secrets (token, key, signature, ...) are masked.
"""

from __future__ import annotations

import re
import tempfile
from collections.abc import Mapping
from dataclasses import dataclass
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

import httpx
import structlog

from hrsync.config import SourceSettings
from hrsync.sources.base import Payload, SourceError, SourceUnavailable, too_large

log = structlog.get_logger(__name__)

SPOOL_IN_MEMORY_BYTES = 8 * 1024 * 1024
_HEADER_FORM = re.compile(r"^([A-Za-z0-9!#$%&'*+.^_`|~-]+):\s*(.*)$", re.DOTALL)
_SECRET_PARAM = re.compile(r"token|key|secret|pass|auth|sig|credential|code", re.IGNORECASE)


@dataclass(frozen=True)
class Fetched:
    payload: Payload
    content_type: str
    size: int


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
        safe="*",
    )
    return urlunsplit((parts.scheme, host, parts.path, query, ""))


def fetch(
    settings: SourceSettings,
    environ: Mapping[str, str],
    http: httpx.Client | None = None,
) -> Fetched:
    url = settings.url or ""
    shown = safe_url(url)
    headers, auth, secrets = _credentials(settings, environ, shown)
    client = http or httpx.Client(follow_redirects=True)
    # Not a with-block: the spool outlives this call, as the export's bytes.
    spool: tempfile.SpooledTemporaryFile[bytes] = tempfile.SpooledTemporaryFile(  # noqa: SIM115
        max_size=SPOOL_IN_MEMORY_BYTES
    )
    size = 0
    content_type = ""
    try:
        with client.stream(
            "GET", url, headers=headers, auth=auth, timeout=settings.timeout_s
        ) as response:
            if not response.is_success:
                transient = response.status_code >= 500 or response.status_code == 429
                raise (SourceUnavailable if transient else SourceError)(
                    f"{shown} answered HTTP {response.status_code} "
                    f"{response.reason_phrase}".rstrip()
                    + _status_hint(response.status_code, response.headers.get("location", ""))
                )
            declared = response.headers.get("content-length", "")
            if declared.isdigit() and int(declared) > settings.max_bytes:
                raise SourceError(
                    too_large(shown, settings.max_bytes, f"announces {declared} bytes, over")
                )
            for block in response.iter_bytes():
                size += len(block)
                if size > settings.max_bytes:
                    raise SourceError(too_large(shown, settings.max_bytes, "sent more than"))
                spool.write(block)
            content_type = response.headers.get("content-type", "")
    except SourceError:
        spool.close()
        raise
    except httpx.TimeoutException:
        spool.close()
        raise SourceUnavailable(
            f"{shown} did not answer within {settings.timeout_s:g} s (source.timeout_s)"
        ) from None
    except httpx.InvalidURL:
        spool.close()
        raise SourceError(f"{shown} is not a valid URL (source.url)") from None
    except httpx.HTTPError as exc:
        spool.close()
        hidden = [*secrets, *_userinfo(url)]
        if url != shown:
            hidden.append(url)
        detail = _redact(str(exc), hidden) or type(exc).__name__
        raise SourceUnavailable(f"could not fetch {shown}: {detail}") from None
    finally:
        if http is None:
            client.close()
    log.info("source.fetched", url=shown, bytes=size, content_type=content_type)
    return Fetched(Payload.from_spool(shown, spool), content_type, size)


def _credentials(
    settings: SourceSettings, environ: Mapping[str, str], shown: str
) -> tuple[dict[str, str], httpx.BasicAuth | None, list[str]]:
    headers: dict[str, str] = {}
    secrets: list[str] = []
    if settings.auth_header_env:
        value = _required_env(environ, settings.auth_header_env, "source.auth_header_env", shown)
        match = _HEADER_FORM.match(value)
        if match and " " not in match.group(1):
            headers[match.group(1)] = match.group(2).strip()
        else:
            headers["Authorization"] = value
        secrets.append(value)
    auth = None
    if settings.username_env or settings.password_env:
        user = _required_env(environ, settings.username_env, "source.username_env", shown)
        password = _required_env(environ, settings.password_env, "source.password_env", shown)
        auth = httpx.BasicAuth(user, password)
        secrets.extend([user, password])
    return headers, auth, secrets


def _required_env(environ: Mapping[str, str], name: str, key: str, shown: str) -> str:
    if not name:
        raise SourceError(
            f"cannot fetch {shown}: {key} is not set, but basic auth needs both "
            f"source.username_env and source.password_env"
        )
    value = environ.get(name, "").strip()
    if not value:
        raise SourceError(f"cannot fetch {shown}: ${name} (named by {key}) is not set or empty")
    return value


def _status_hint(status: int, location: str) -> str:
    if status in (401, 403):
        return (
            "; check the credentials in the variables named by source.auth_header_env or "
            "source.username_env/source.password_env"
        )
    if status == 404:
        return "; check source.url"
    if 300 <= status < 400:
        return f"; a redirect to {safe_url(location)}" if location else "; a redirect"
    return ""


def _userinfo(url: str) -> list[str]:
    try:
        parts = urlsplit(url)
        return [part for part in (parts.username, parts.password) if part]
    except ValueError:
        return []


def _redact(text: str, secrets: list[str]) -> str:
    for secret in sorted(secrets, key=len, reverse=True):
        if secret:
            text = text.replace(secret, "***")
    return text
