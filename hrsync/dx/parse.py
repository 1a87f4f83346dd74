"""Turning DX reply bodies into the typed values of ``hrsync.dx.models``.

Liberal in what we accept: unknown fields are ignored; optional fields may be
missing, null or of a near type (an id sent as a number, a count as a string);
timestamps may end in ``Z`` or an offset, or be Unix seconds. What we cannot
do without (a team's id, an event's time, the list a method returns) fails
with a ``DxBadResponse`` that names the method, the element and the field,
rather than silently dropping data the sync engine relies on.
"""

from __future__ import annotations

import contextlib
import json
import math
from collections.abc import Iterator, Mapping
from datetime import UTC, datetime
from typing import Any

from hrsync.dx.errors import DxBadResponse
from hrsync.dx.models import ApiKey, AuditEvent, DxTeam, DxUser, ImportAccepted, Snapshot, WhoAmI

SNIPPET_BYTES = 200


def body_snippet(content: bytes, limit: int = SNIPPET_BYTES) -> str:
    """The first ``limit`` bytes of a reply, readable in a one-line message."""
    text = content[:limit].decode("utf-8", errors="replace")
    text = " ".join(text.split())
    return text + ("…" if len(content) > limit else "")


def decode_body(method: str, status: int, content: bytes) -> dict[str, Any]:
    """The reply as a JSON object, or ``DxBadResponse`` with the status and first bytes."""
    try:
        value = json.loads(content) if content.strip() else None
    except (ValueError, UnicodeDecodeError):
        value = None
    else:
        if isinstance(value, dict):
            return value
    shown = body_snippet(content) if content.strip() else "(empty body)"
    raise DxBadResponse(
        method,
        f"reply is not a JSON object (HTTP {status}): {shown}",
        status=status,
    )


def parse_timestamp(value: Any) -> datetime | None:
    """A UTC-aware datetime from ISO 8601 text or Unix seconds; None when absent.

    Raises ValueError for a value that is present but not a time.
    """
    if value is None or value == "":
        return None
    if isinstance(value, bool):
        raise ValueError(f"not a timestamp: {value!r}")
    if isinstance(value, int | float):
        if not math.isfinite(value):
            raise ValueError(f"not a timestamp: {value!r}")
        return datetime.fromtimestamp(value, tz=UTC)
    if isinstance(value, str):
        text = value.strip()
        try:
            return datetime.fromtimestamp(float(text), tz=UTC)
        except (ValueError, OverflowError):
            pass
        if text.endswith(("Z", "z")):
            text = text[:-1] + "+00:00"
        parsed = datetime.fromisoformat(text)
        if parsed.tzinfo is None:
            # DX writes UTC; a time without a zone is read as UTC.
            return parsed.replace(tzinfo=UTC)
        return parsed.astimezone(UTC)
    raise ValueError(f"not a timestamp: {value!r}")


def parse_whoami(body: Mapping[str, Any]) -> WhoAmI:
    account = _object(body.get("account"))
    user_obj = body.get("user")
    team = body.get("team")
    return WhoAmI(
        auth_token_type=_text(body.get("auth_token_type")) or "",
        account_name=_text(account.get("name")) or "",
        user=_user(user_obj) if isinstance(user_obj, Mapping) else None,
        team_name=_text(team.get("name")) if isinstance(team, Mapping) else None,
    )


def parse_api_keys(method: str, body: Mapping[str, Any]) -> list[ApiKey]:
    return [
        ApiKey(
            id=_required_text(method, item, "id", where),
            name=_text(item.get("name")) or "",
            scopes=_scopes(item.get("scopes")),
            created_at=_optional_time(item.get("created_at")),
            last_used_at=_optional_time(item.get("last_used_at")),
        )
        for where, item in _items(method, body, "api_keys")
    ]


def parse_teams(method: str, body: Mapping[str, Any]) -> list[DxTeam]:
    return [
        DxTeam(
            id=_required_text(method, item, "id", where),
            name=_text(item.get("name")) or "",
            parent_id=_text(item.get("parent_id")),
            reference_id=_text(item.get("reference_id")),
            manager_id=_text(item.get("manager_id")),
            contributors=_count(item.get("contributors")),
            is_parent=item.get("parent") is True,
            ancestors=tuple(
                text
                for text in (_text(a) for a in _list(item.get("ancestors")))
                if text is not None
            ),
            last_changed_at=_optional_time(item.get("last_changed_at")),
        )
        for where, item in _items(method, body, "teams")
    ]


def parse_snapshots(method: str, body: Mapping[str, Any]) -> list[Snapshot]:
    return [
        Snapshot(
            id=_required_text(method, item, "id", where),
            scheduled_for=_text(item.get("scheduled_for")),
            completed_at=_optional_time(item.get("completed_at")),
            deleted_at=_optional_time(item.get("deleted_at")),
            completed_count=_count(item.get("completed_count")),
            total_count=_count(item.get("total_count")),
        )
        for where, item in _items(method, body, "snapshots")
    ]


def parse_audit_events(method: str, body: Mapping[str, Any]) -> list[AuditEvent]:
    events: list[AuditEvent] = []
    for where, item in _items(method, body, "events"):
        raw_created = item.get("created")
        try:
            created = parse_timestamp(raw_created)
        except (ValueError, OverflowError, OSError):
            created = None
        if created is None:
            raise DxBadResponse(
                method,
                f"{where}.created is {raw_created!r}, expected Unix seconds or an ISO 8601 time",
            )
        metadata = _audit_metadata(item.get("metadata"))
        events.append(
            AuditEvent(
                id=_required_text(method, item, "id", where),
                actor=_text(item.get("actor")) or "",
                team=_text(item.get("team")) or "",
                action=_text(item.get("action")) or "",
                created=created,
                before=_audit_side(metadata.get("from")),
                after=_audit_side(metadata.get("to")),
                metadata=metadata,
            )
        )
    return events


def _audit_metadata(value: Any) -> dict[str, Any]:
    """An event's metadata: an object, or an object written as a JSON string (the shape
    is not public, and both were seen); anything else reads as no metadata."""
    if isinstance(value, str):
        try:
            value = json.loads(value)
        except ValueError:
            return {}
    return dict(value) if isinstance(value, Mapping) else {}


def _audit_side(value: Any) -> Any:
    """`from` or `to`: a name, an e-mail, or a user object, perhaps as a JSON string."""
    if isinstance(value, str) and value.strip().startswith("{"):
        with contextlib.suppress(ValueError):
            return json.loads(value)
    return value


def parse_next_cursor(body: Mapping[str, Any]) -> str | None:
    """The cursor of the next page; None (last page) when missing, null or empty."""
    meta = body.get("response_metadata")
    if not isinstance(meta, Mapping):
        return None
    cursor = _text(meta.get("next_cursor"))
    return cursor or None


def parse_import_accepted(body: Mapping[str, Any]) -> ImportAccepted:
    return ImportAccepted(
        import_id=_text(body.get("import_id")),
        preview_url=_text(body.get("preview_url")),
        raw=dict(body),
    )


def parse_user_attributes(body: Mapping[str, Any]) -> dict[str, Any]:
    """The ``user`` result of ``users.attributes.update``; the whole body if it has none."""
    user = body.get("user")
    if isinstance(user, Mapping):
        return dict(user)
    return {key: value for key, value in body.items() if key != "ok"}


def _user(obj: Mapping[str, Any]) -> DxUser:
    return DxUser(
        id=_text(obj.get("id")) or "",
        name=_text(obj.get("name")) or "",
        email=_text(obj.get("email")) or "",
    )


def _items(
    method: str, body: Mapping[str, Any], key: str
) -> Iterator[tuple[str, Mapping[str, Any]]]:
    """Each object of the reply's `key` list, with where it is (``teams[3]``) for a message."""
    for index, item in enumerate(_list_of_objects(method, body, key)):
        yield f"{key}[{index}]", item


def _list_of_objects(method: str, body: Mapping[str, Any], key: str) -> list[Mapping[str, Any]]:
    if key not in body:
        raise DxBadResponse(method, f"reply has no {key!r} list")
    value = body[key]
    if value is None:
        return []
    if not isinstance(value, list):
        raise DxBadResponse(
            method, f"reply field {key!r} is {type(value).__name__}, expected a list"
        )
    for index, item in enumerate(value):
        if not isinstance(item, Mapping):
            raise DxBadResponse(
                method, f"{key}[{index}] is {type(item).__name__}, expected an object"
            )
    return value


def _required_text(method: str, item: Mapping[str, Any], key: str, where: str) -> str:
    text = _text(item.get(key))
    if not text:
        raise DxBadResponse(method, f"{where}.{key} is {item.get(key)!r}, expected a string")
    return text


def _text(value: Any) -> str | None:
    """A string field; numbers (ids sent as numbers) become their text, other types None."""
    if value is None or isinstance(value, bool):
        return None
    if isinstance(value, str):
        return value
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return None


def _count(value: Any) -> int:
    if isinstance(value, bool) or value is None:
        return 0
    if isinstance(value, int):
        return value
    if isinstance(value, float) and math.isfinite(value):
        return int(value)
    if isinstance(value, str):
        try:
            return int(value.strip())
        except ValueError:
            return 0
    if isinstance(value, list):
        # Some replies carry the contributors themselves instead of their number.
        return len(value)
    return 0


def _scopes(value: Any) -> tuple[str, ...]:
    if isinstance(value, str):
        return tuple(part for part in value.replace(",", " ").split() if part)
    return tuple(text for text in (_text(v) for v in _list(value)) if text)


def _optional_time(value: Any) -> datetime | None:
    try:
        return parse_timestamp(value)
    except (ValueError, OverflowError, OSError):
        return None


def _object(value: Any) -> Mapping[str, Any]:
    return value if isinstance(value, Mapping) else {}


def _list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []
