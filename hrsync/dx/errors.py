"""What can go wrong talking to DX, arranged by what the sync engine should do next.

- ``DxRejected``: DX refused the request; resending it unchanged will not help
  (outcome ``rejected``). ``DxAuthError`` for token and scope problems,
  ``DxInvalidRequest`` for a request DX found invalid.
- ``DxDeferred``: DX is busy (snapshot window, running import); try later.
- ``DxUnavailable``: DX could not be reached or kept failing after the retries
  (outcome ``failed``).
- ``DxOutcomeUnknown``: a write may have reached DX but no answer came back;
  verify what DX holds instead of sending the write again.
- ``DxBadResponse``: DX (or a proxy in front of it) answered something that is
  not the API's JSON.

Every error keeps the API ``method``, the ``error`` code, the ``message``, the
``error_details`` exactly as DX sent them, and the HTTP ``status``.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

AUTH_CODES = frozenset({"not_authed", "invalid_auth", "not_authorized"})
INVALID_REQUEST_CODES = frozenset(
    {"invalid_rows", "circular_reference", "payload_too_large", "invalid_email"}
)
SNAPSHOT_IN_PROGRESS = "snapshot_in_progress"
IMPORT_IN_PROGRESS = "import_in_progress"
TOO_MANY_REQUESTS = "too_many_requests"

_DETAILS_PREVIEW_CHARS = 300


class DxError(Exception):
    """Base of every error the DX client raises."""

    # Subclasses whose message already spells out the details turn this off.
    show_details_in_str = True

    def __init__(
        self,
        method: str,
        message: str,
        *,
        error: str | None = None,
        status: int | None = None,
        error_details: Any = None,
    ) -> None:
        super().__init__(message)
        self.method = method
        self.error = error
        self.message = message
        self.status = status
        self.error_details = error_details

    def __str__(self) -> str:
        parts = [f"{self.method}:"]
        if self.error:
            parts.append(f"{self.error}:")
        parts.append(self.message or "(no message)")
        if self.status is not None:
            parts.append(f"(HTTP {self.status})")
        if self.show_details_in_str and self.error_details not in (None, "", [], {}):
            parts.append(f"details: {_preview(self.error_details)}")
        return " ".join(parts)

    def __repr__(self) -> str:
        return (
            f"{type(self).__name__}(method={self.method!r}, error={self.error!r}, "
            f"status={self.status!r}, message={self.message!r})"
        )


class DxRejected(DxError):
    """DX refused the request; the same request will be refused again."""


class DxAuthError(DxRejected):
    """Missing or invalid token, or a token without the scope the method needs."""


class DxInvalidRequest(DxRejected):
    """DX found the request invalid (rows, cycles, size, notification address)."""


class DxDeferred(DxError):
    """DX is busy with something that blocks the request; try again later."""


class SnapshotInProgress(DxDeferred):
    """A snapshot is live or inside its retroactive window."""


class ImportInProgress(DxDeferred):
    """A team hierarchy import is still running."""


class DxUnavailable(DxError):
    """DX could not be reached, or kept failing until the retries ran out."""


class DxOutcomeUnknown(DxError):
    """A write may have reached DX, but no answer says whether it was applied."""


class DxBadResponse(DxError):
    """The reply is not the API's JSON (for example a proxy's error page)."""


def error_for_code(
    method: str,
    code: str | None,
    *,
    message: str | None,
    status: int | None,
    error_details: Any = None,
) -> DxError:
    """The exception for a DX error code; unknown codes are a plain rejection."""
    cls: type[DxError]
    if code in AUTH_CODES:
        cls = DxAuthError
    elif code in INVALID_REQUEST_CODES:
        cls = DxInvalidRequest
    elif code == SNAPSHOT_IN_PROGRESS:
        cls = SnapshotInProgress
    elif code == IMPORT_IN_PROGRESS:
        cls = ImportInProgress
    else:
        cls = DxRejected
    text = message or _default_message(code)
    return cls(method, text, error=code, status=status, error_details=error_details)


def error_from_body(method: str, status: int | None, body: Mapping[str, Any]) -> DxError:
    """The exception for a failure body ``{ok: false, error, message?, error_details?}``."""
    code = body.get("error")
    message = body.get("message")
    return error_for_code(
        method,
        code if isinstance(code, str) and code else None,
        message=message if isinstance(message, str) else None,
        status=status,
        error_details=body.get("error_details"),
    )


def _default_message(code: str | None) -> str:
    known = {
        "not_authed": "no token was sent",
        "invalid_auth": "the token was not accepted",
        "not_authorized": "the token lacks the scope this method needs",
        "invalid_rows": "a team entry is invalid",
        "circular_reference": "a team would be its own ancestor",
        "payload_too_large": "the teams payload is larger than DX accepts",
        "invalid_email": "the notification e-mail address is malformed",
        SNAPSHOT_IN_PROGRESS: "a snapshot is live or in its retroactive window",
        IMPORT_IN_PROGRESS: "a team hierarchy import is running",
        TOO_MANY_REQUESTS: "rate limit exceeded",
    }
    if code is None:
        return "DX reported a failure without an error code"
    return known.get(code, "DX refused the request")


def _preview(details: Any) -> str:
    try:
        text = json.dumps(details, ensure_ascii=False, separators=(",", ":"), default=str)
    except (TypeError, ValueError):
        text = repr(details)
    if len(text) > _DETAILS_PREVIEW_CHARS:
        text = text[:_DETAILS_PREVIEW_CHARS] + "…"
    return text
