"""The DX Web API client: the methods hrsync calls, their payloads and typed replies.

How a call travels (one connection pool, the rate limit, retries, which writes may be
resent and when ``DxOutcomeUnknown`` is raised instead) is hrsync.dx.transport's.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from datetime import UTC, datetime
from types import TracebackType
from typing import TYPE_CHECKING, Any

import httpx
import structlog

from hrsync.clock import Clock
from hrsync.core import defaults
from hrsync.dx import parse
from hrsync.dx.methods import (
    API_KEYS_LIST,
    PREVIEW,
    PROCESS,
    SNAPSHOTS_LIST,
    TEAMS_AUDIT_TRAIL,
    TEAMS_LIST,
    USER_ATTRIBUTES_UPDATE,
    WHOAMI,
)
from hrsync.dx.models import ApiKey, AuditEvent, DxTeam, ImportAccepted, Snapshot, WhoAmI
from hrsync.dx.payload import check_payload_size, encode_json
from hrsync.dx.retry import RetryPolicy
from hrsync.dx.transport import DxObserver, Transport, call_outcome
from hrsync.secret import Secret

if TYPE_CHECKING:
    from hrsync.config.loading import Settings

log = structlog.get_logger(__name__)

__all__ = ["DxClient", "DxObserver", "call_outcome"]


class DxClient:
    """Calls the DX Web API methods hrsync needs. Use as a context manager or call close()."""

    def __init__(
        self,
        base_url: str,
        token: Secret,
        *,
        timeout_s: float = 30.0,
        retry: RetryPolicy | None = None,
        max_requests_per_minute: int = defaults.DX_MAX_REQUESTS_PER_MINUTE,
        max_response_bytes: int = defaults.DX_MAX_RESPONSE_BYTES,
        clock: Clock | None = None,
        sleep: Callable[[float], None] | None = None,
        transport: httpx.BaseTransport | None = None,
        observer: DxObserver | None = None,
    ) -> None:
        self.base_url = _checked_base_url(base_url)
        self._transport = Transport(
            self.base_url,
            token,
            timeout_s=timeout_s,
            retry=retry if retry is not None else RetryPolicy(),
            max_requests_per_minute=max_requests_per_minute,
            max_response_bytes=max_response_bytes,
            clock=clock,
            sleep=sleep,
            transport=transport,
            observer=observer,
        )

    @classmethod
    def from_settings(cls, settings: Settings, *, observer: DxObserver | None = None) -> DxClient:
        """The client a run or `hrsync check` uses: URL, token and timeout from config."""
        if settings.token is None:
            raise ValueError("the DX token is missing (it is checked when the config loads)")
        return cls(
            settings.dx.base_url,
            settings.token,
            timeout_s=settings.dx.timeout_s,
            observer=observer,
        )

    def __repr__(self) -> str:
        return f"DxClient(base_url={self.base_url!r})"

    def __enter__(self) -> DxClient:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    def close(self) -> None:
        self._transport.close()

    # --- the API methods -------------------------------------------------------------

    def whoami(self) -> WhoAmI:
        return parse.parse_whoami(self._transport.call(WHOAMI, "GET"))

    def api_keys(self) -> list[ApiKey]:
        return parse.parse_api_keys(API_KEYS_LIST, self._transport.call(API_KEYS_LIST, "GET"))

    def snapshots(self) -> list[Snapshot]:
        return parse.parse_snapshots(SNAPSHOTS_LIST, self._transport.call(SNAPSHOTS_LIST, "GET"))

    def teams(self) -> list[DxTeam]:
        return parse.parse_teams(TEAMS_LIST, self._transport.call(TEAMS_LIST, "GET"))

    def audit_trail(
        self, *, since: datetime | None = None, max_pages: int = 200
    ) -> Iterator[AuditEvent]:
        """Audit events with ``created >= since`` (all when None), page after page.

        Events are filtered here; DX's newest-first order only lets us stop
        early once a whole page is older than ``since``.
        """
        if since is not None and since.tzinfo is None:
            since = since.replace(tzinfo=UTC)
        cursor: str | None = None
        seen: set[str] = set()
        for page in range(1, max_pages + 1):
            params = {"cursor": cursor} if cursor else None
            body = self._transport.call(TEAMS_AUDIT_TRAIL, "GET", params=params)
            events = parse.parse_audit_events(TEAMS_AUDIT_TRAIL, body)
            for event in events:
                if since is None or event.created >= since:
                    yield event
            cursor = parse.parse_next_cursor(body)
            if cursor is None:
                return
            if since is not None and events and all(e.created < since for e in events):
                log.debug("dx.audit_trail.older_than_since", pages=page)
                return
            if cursor in seen:
                log.warning("dx.audit_trail.cursor_repeated", pages=page)
                return
            seen.add(cursor)
        log.warning("dx.audit_trail.page_cap", max_pages=max_pages)

    def preview(self, teams: Sequence[Mapping[str, Any]]) -> ImportAccepted:
        check_payload_size(teams, method=PREVIEW)
        body = {"teams": [dict(team) for team in teams]}
        reply = self._transport.call(PREVIEW, "POST", payload=encode_json(body), idempotent=False)
        return parse.parse_import_accepted(reply)

    def process(
        self, teams: Sequence[Mapping[str, Any]], *, email: str | None = None
    ) -> ImportAccepted:
        check_payload_size(teams, method=PROCESS)
        body: dict[str, Any] = {"teams": [dict(team) for team in teams]}
        if email is not None:
            body["email"] = email
        reply = self._transport.call(PROCESS, "POST", payload=encode_json(body), idempotent=False)
        return parse.parse_import_accepted(reply)

    def update_user_attributes(self, email: str, attributes: Mapping[str, str]) -> dict[str, Any]:
        """Sets custom attributes of one user; returns DX's ``user`` result."""
        body = {
            "email": email,
            "attributes": [{"name": name, "value": value} for name, value in attributes.items()],
        }
        # Setting the same values twice leaves the same state, so resending is safe.
        reply = self._transport.call(USER_ATTRIBUTES_UPDATE, "POST", payload=encode_json(body))
        return parse.parse_user_attributes(reply)


def _checked_base_url(base_url: str) -> str:
    text = base_url.strip().rstrip("/")
    try:
        url = httpx.URL(text)
    except httpx.InvalidURL as exc:
        raise ValueError(f"DX base_url {text!r} is not a URL: {exc}") from None
    if url.scheme not in ("http", "https") or not url.host:
        raise ValueError(f"DX base_url {text!r} must be an http:// or https:// URL with a host")
    return text
