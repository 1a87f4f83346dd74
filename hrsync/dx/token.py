"""The DX token: revealed only into the Authorization header, and scrubbed from every
error DX's replies could have echoed it into (messages, error details, exception args)."""

from __future__ import annotations

from collections.abc import Generator
from typing import Any

import httpx

from hrsync.dx.errors import DxError
from hrsync.secret import Secret

_REDACTED = "***"
_MIN_REDACTED_LEN = 6


class BearerAuth(httpx.Auth):
    """Adds the bearer header to each request, revealing the token only right then."""

    def __init__(self, token: Secret) -> None:
        self._token = token

    def auth_flow(self, request: httpx.Request) -> Generator[httpx.Request, httpx.Response, None]:
        # An empty token sends no header at all, so DX answers not_authed.
        if self._token.reveal():
            request.headers["Authorization"] = "Bearer " + self._token.reveal()
        yield request


def scrub(exc: DxError, token: Secret) -> None:
    """Blank out the token wherever server-supplied text could have echoed it."""
    secret = token.reveal()
    if len(secret) < _MIN_REDACTED_LEN:
        # Too short to be a real token; replacing it would only garble the message.
        return
    exc.message = exc.message.replace(secret, _REDACTED)
    exc.error_details = _redact(exc.error_details, secret)
    exc.args = tuple(_redact(arg, secret) for arg in exc.args)


def _redact(value: Any, secret: str) -> Any:
    """`value`, an untyped JSON body or exception argument, with `secret` blanked out."""
    if isinstance(value, str):
        return value.replace(secret, _REDACTED)
    if isinstance(value, list):
        return [_redact(item, secret) for item in value]
    if isinstance(value, tuple):
        return tuple(_redact(item, secret) for item in value)
    if isinstance(value, dict):
        return {key: _redact(item, secret) for key, item in value.items()}
    return value
