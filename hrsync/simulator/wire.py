"""What the simulator answers and what it remembers of each request."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any, Final

JSON_TYPE: Final = "application/json; charset=utf-8"
HTML_TYPE: Final = "text/html; charset=utf-8"


@dataclass(frozen=True, slots=True)
class Response:
    """One answer of the core. ``disconnect`` means: close the connection without
    answering; ``delay_s`` means: answer that much later."""

    status: int
    body: bytes = b""
    content_type: str = JSON_TYPE
    headers: tuple[tuple[str, str], ...] = ()
    disconnect: bool = False
    delay_s: float = 0.0

    def json(self) -> Any:
        return json.loads(self.body)

    def header(self, name: str) -> str | None:
        for key, value in self.headers:
            if key.lower() == name.lower():
                return value
        return None


def json_response(
    status: int, payload: dict[str, Any], headers: tuple[tuple[str, str], ...] = ()
) -> Response:
    return Response(status=status, body=json.dumps(payload).encode("utf-8"), headers=headers)


def ok(**fields: Any) -> Response:
    return json_response(200, {"ok": True, **fields})


def failure(status: int, error: str, message: str | None = None, details: Any = None) -> Response:
    payload: dict[str, Any] = {"ok": False, "error": error}
    if message is not None:
        payload["message"] = message
    if details is not None:
        payload["error_details"] = details
    return json_response(status, payload)


@dataclass(frozen=True, slots=True)
class RecordedRequest:
    """A request as the simulator saw it. ``status`` is 0 when the connection was
    closed without an answer. ``token_kind`` is None without a valid token."""

    method_name: str
    http_method: str
    query: dict[str, str]
    body: Any
    token_kind: str | None
    status: int
    at: datetime
    error: str | None = field(default=None)


def iso(moment: datetime) -> str:
    """DX's timestamp style: UTC with milliseconds and a ``Z``."""
    return moment.astimezone(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")
