"""The DX Web API's transport: one connection pool, the rate limit, retries, error mapping.

A call is a DX method name in and its reply body out, or a DxError. The body is decoded
by hrsync (`hrsync.capped_body`) within `defaults.DX_MAX_RESPONSE_BYTES` (256 MiB); one
over it, or in a content-coding hrsync does not decode, is a `DxBadResponse`. Reads retry freely on
rate limits, server errors and network failures. A write that replaces the team hierarchy
(`idempotent=False`) is resent only when DX surely never received it (the connection was
never made, or DX said "too many requests" before doing anything); once it may have
arrived, the call raises ``DxOutcomeUnknown`` so the sync verifies instead of resubmitting.
"""

from __future__ import annotations

import ssl
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Protocol

import httpx
import structlog

from hrsync import __version__
from hrsync.capped_body import ACCEPT_ENCODING, BodyRefused, TooLarge, read_capped
from hrsync.clock import Clock, utcnow
from hrsync.dx import parse
from hrsync.dx.errors import (
    TOO_MANY_REQUESTS,
    DxBadResponse,
    DxDeferred,
    DxError,
    DxOutcomeUnknown,
    DxRejected,
    DxUnavailable,
    error_from_body,
)
from hrsync.dx.ratelimit import SlidingWindowLimiter
from hrsync.dx.retry import RetryPolicy, is_retryable_status, next_delay, parse_retry_after
from hrsync.dx.token import BearerAuth, scrub
from hrsync.secret import Secret

log = structlog.get_logger(__name__)


# Failures raised before a single byte of the request left this process.
_NOT_SENT_ERRORS: tuple[type[httpx.TransportError], ...] = (
    httpx.ConnectError,
    httpx.ConnectTimeout,
    httpx.PoolTimeout,
    httpx.ProxyError,
)
# Our own mistakes (a bad base URL): retrying cannot help.
_LOCAL_ERRORS: tuple[type[httpx.TransportError], ...] = (
    httpx.UnsupportedProtocol,
    httpx.LocalProtocolError,
)


def tls_verify_for(base_url: str) -> ssl.SSLContext | bool:
    """What the connection pool verifies TLS with for DX at `base_url`.

    https: httpx's default, the CA bundle (loading it is ~30 ms of every command's start).
    http (a local simulator, a test): no TLS is ever spoken, so a context that trusts no
    certificate at all; should an https connection ever go through it, verification fails
    rather than passing."""
    if httpx.URL(base_url).scheme != "http":
        return True
    return ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)  # verifies, with no CA loaded


@dataclass(frozen=True)
class _Retry:
    """A reply or failure worth another attempt."""

    reason: str
    retry_after_s: float | None
    # True when DX surely did not act on the request, so even a write may be resent.
    safe_to_resend: bool
    status: int | None = None
    rate_limited: bool = False


class DxObserver(Protocol):
    """Told of every call and retry (the daemon's metrics); must not raise or block."""

    def dx_request(self, method: str, outcome: str) -> None: ...

    def dx_retry(self, method: str) -> None: ...


def call_outcome(exc: DxError | None) -> str:
    """A call's outcome as a metric label: ok, or the kind of error (a short, fixed set)."""
    if exc is None:
        return "ok"
    for kind, name in (
        (DxOutcomeUnknown, "unknown"),
        (DxUnavailable, "unavailable"),
        (DxBadResponse, "bad_response"),
        (DxRejected, "rejected"),
        (DxDeferred, "deferred"),
    ):
        if isinstance(exc, kind):
            return name
    return "error"


class Transport:
    """Sends DX method calls over one long-lived HTTP connection pool. `close()` it."""

    def __init__(
        self,
        base_url: str,
        token: Secret,
        *,
        timeout_s: float,
        retry: RetryPolicy,
        max_requests_per_minute: int,
        max_response_bytes: int,
        clock: Clock | None,
        sleep: Callable[[float], None] | None,
        transport: httpx.BaseTransport | None,
        observer: DxObserver | None,
    ) -> None:
        self.base_url = base_url
        self._observer = observer
        self._token = token
        self._retry = retry
        self._max_response_bytes = max_response_bytes
        self._clock = clock
        self._sleep = sleep if sleep is not None else time.sleep
        self._seconds: Callable[[], float] = (
            (lambda: clock().timestamp()) if clock is not None else time.monotonic
        )
        self._limiter = SlidingWindowLimiter(
            max_requests_per_minute, 60.0, clock=self._seconds, sleep=self._sleep
        )
        connect_s = min(timeout_s, 10.0)
        limits = httpx.Limits(max_connections=10, max_keepalive_connections=5)
        if transport is None:
            # Built here only to choose its TLS context; proxies from the environment
            # still get httpx's default verification.
            transport = httpx.HTTPTransport(verify=tls_verify_for(base_url), limits=limits)
        self._http = httpx.Client(
            auth=BearerAuth(token),
            headers={
                "Accept": "application/json",
                "Accept-Encoding": ACCEPT_ENCODING,
                "User-Agent": f"hrsync/{__version__}",
            },
            timeout=httpx.Timeout(
                connect=connect_s, read=timeout_s, write=timeout_s, pool=connect_s
            ),
            limits=limits,
            follow_redirects=False,
            transport=transport,
        )

    def close(self) -> None:
        self._http.close()

    def call(
        self,
        method: str,
        http_method: str,
        *,
        params: Mapping[str, str] | None = None,
        payload: bytes | None = None,
        idempotent: bool = True,
    ) -> dict[str, Any]:
        try:
            body = self._call_with_retries(method, http_method, params, payload, idempotent)
        except DxError as exc:
            scrub(exc, self._token)
            if self._observer is not None:
                self._observer.dx_request(method, call_outcome(exc))
            raise
        if self._observer is not None:
            self._observer.dx_request(method, call_outcome(None))
        return body

    def _call_with_retries(
        self,
        method: str,
        http_method: str,
        params: Mapping[str, str] | None,
        payload: bytes | None,
        idempotent: bool,
    ) -> dict[str, Any]:
        started = self._seconds()
        attempt = 0
        while True:
            attempt += 1
            self._limiter.acquire()
            try:
                outcome = self._attempt(method, http_method, params, payload)
            except DxBadResponse as bad:
                if idempotent or bad.status is None or not 200 <= bad.status < 300:
                    raise
                # Something answered "success" in a form we cannot read: DX may have
                # accepted the write.
                raise DxOutcomeUnknown(
                    method,
                    f"{bad.message}; DX may have accepted the request, verify before "
                    "sending it again",
                    status=bad.status,
                ) from None
            if isinstance(outcome, dict):
                return outcome
            if not idempotent and not outcome.safe_to_resend:
                raise DxOutcomeUnknown(
                    method,
                    f"the request may have reached DX but no usable answer came back "
                    f"({outcome.reason}); verify before sending it again",
                    status=outcome.status,
                )
            delay = next_delay(
                self._retry,
                attempt,
                elapsed_s=self._seconds() - started,
                retry_after_s=outcome.retry_after_s,
            )
            if delay is None:
                raise DxUnavailable(
                    method,
                    f"gave up after {attempt} attempt{'s' if attempt != 1 else ''}: "
                    f"{outcome.reason}",
                    error=TOO_MANY_REQUESTS if outcome.rate_limited else None,
                    status=outcome.status,
                )
            log.warning(
                "dx.retry",
                method=method,
                attempt=attempt,
                delay_s=round(delay, 3),
                reason=outcome.reason,
            )
            if self._observer is not None:
                self._observer.dx_retry(method)
            self._sleep(delay)

    def _attempt(
        self,
        method: str,
        http_method: str,
        params: Mapping[str, str] | None,
        payload: bytes | None,
    ) -> dict[str, Any] | _Retry:
        """One HTTP exchange: the success body, a retryable failure, or a raised DxError."""
        headers = {"Content-Type": "application/json"} if payload is not None else None
        url = f"{self.base_url}/{method}"
        try:
            request = self._http.build_request(
                http_method,
                url,
                params=dict(params) if params else None,
                content=payload,
                headers=headers,
            )
            response = self._http.send(request, stream=True)
            try:
                content = read_capped(response, self._max_response_bytes)
            except BodyRefused as refused:
                raise _refusal(method, url, refused, response.status_code) from None
            finally:
                response.close()
        except _LOCAL_ERRORS as exc:
            raise DxUnavailable(method, f"cannot send the request: {_describe(exc)}") from None
        except _NOT_SENT_ERRORS as exc:
            return _Retry(f"{_describe(exc)} (not sent)", None, safe_to_resend=True)
        except httpx.RequestError as exc:
            # Anything else (a read that failed or timed out, a connection closed without
            # an answer) may come after DX got the whole request.
            return _Retry(_describe(exc), None, safe_to_resend=False)
        return self._interpret(method, response, content)

    def _interpret(
        self, method: str, response: httpx.Response, content: bytes
    ) -> dict[str, Any] | _Retry:
        """What the answer means; `content` is its body, decoded within the cap."""
        status = response.status_code
        retry_after = parse_retry_after(response.headers.get("Retry-After"), now=self._now())
        try:
            body = parse.decode_body(method, status, content)
        except DxError as bad:
            if 300 <= status < 400:
                # A redirect usually means base_url points at the web app, not the API.
                where = response.headers.get("Location", "(no Location)")
                bad.message += f"; redirected to {where}; check dx.base_url"
            if is_retryable_status(status):
                return _Retry(
                    bad.message,
                    retry_after,
                    safe_to_resend=status == 429,
                    status=status,
                    rate_limited=status == 429,
                )
            raise
        log.debug("dx.response", method=method, status=status)

        # The body decides first: DX also reports failures with HTTP 200.
        ok = body.get("ok")
        code = body.get("error")
        failed = ok is False or (ok is None and isinstance(code, str) and bool(code))
        if failed:
            if code == TOO_MANY_REQUESTS:
                return _Retry(
                    f"{TOO_MANY_REQUESTS} (HTTP {status})",
                    retry_after,
                    safe_to_resend=True,
                    status=status,
                    rate_limited=True,
                )
            error = error_from_body(method, status, body)
            if type(error) is DxRejected and is_retryable_status(status):
                # An unknown code on a 429/5xx is the server's trouble, not our request's.
                return _Retry(
                    f"HTTP {status} {error.error or ''}".strip(),
                    retry_after,
                    safe_to_resend=status == 429,
                    rate_limited=status == 429,
                    status=status,
                )
            raise error
        if 200 <= status < 300:
            return body
        if is_retryable_status(status):
            return _Retry(
                f"HTTP {status}",
                retry_after,
                safe_to_resend=status == 429,
                status=status,
                rate_limited=status == 429,
            )
        detail = parse.body_snippet(content) or "(empty body)"
        raise DxRejected(method, f"unexpected HTTP {status}: {detail}", status=status)

    def _now(self) -> datetime:
        return self._clock() if self._clock is not None else utcnow()


def _refusal(method: str, url: str, refused: BodyRefused, status: int) -> DxBadResponse:
    cap = ", hrsync's limit for one DX answer" if isinstance(refused, TooLarge) else ""
    return DxBadResponse(method, f"{url} {refused}{cap}", status=status)


def _describe(exc: httpx.RequestError) -> str:
    text = str(exc).strip()
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__
