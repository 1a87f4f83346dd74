"""Keys this release still reads but no longer documents: each is taken out of the file's
tables (and the `HRSYNC_<SECTION>__<KEY>` overrides) before the settings are built, with
one line naming the new way. A key whose value still means something is carried over to
the key that now decides it; one that no longer means anything is ignored. Never an error:
a config that worked keeps working for one release, and says what to change.

The next release drops this table, and the keys become unknown keys.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, fields
from typing import Any

from hrsync.config.second_table_checks import table_label
from hrsync.core import defaults
from hrsync.core.people.second_tables import JOIN, UNION, Kind
from hrsync.core.settings import AttributeSettings, is_key

# A raw table (the one holding the old key), the whole raw config, the old key's value.
Move = Callable[[dict[str, Any], dict[str, Any], Any], None]


@dataclass(frozen=True)
class Deprecated:
    key: str  # dotted from the top: "sync.healthcheck_max_age_s"
    instead: str  # the new way, for the warning
    move: Move | None = None  # carries the value over; None: it is ignored


def _written(value: Any) -> Any:
    """A value as the file wrote it, or the text of an environment variable."""
    return getattr(value, "text", value)


def _says_true(value: Any) -> bool:
    written = _written(value)
    if isinstance(written, str):
        return written.strip().lower() in ("1", "true", "yes", "on")
    return written is True


def _insecure_http(_table: dict[str, Any], raw: dict[str, Any], value: Any) -> None:
    dx = raw.setdefault("dx", {})
    if _says_true(value) and isinstance(dx, dict):
        dx.setdefault("allow_insecure_http", value)


def _auth_header(table: dict[str, Any], _raw: dict[str, Any], value: Any) -> None:
    headers = table.setdefault("headers", {})
    if isinstance(headers, dict) and not any(
        str(name).lower() == "authorization" for name in headers
    ):
        headers["Authorization"] = value


def _method(table: dict[str, Any], _raw: dict[str, Any], value: Any) -> None:
    written = _written(value)
    if isinstance(written, str) and written.strip().upper() == "POST":
        table.setdefault("body", "{}")


def _page_key(new: str) -> Move:
    def move(table: dict[str, Any], _raw: dict[str, Any], value: Any) -> None:
        written = _written(table.get("style"))
        if isinstance(written, str) and written.strip().lower() == "page":
            table.setdefault(new, value)

    return move


def _person_problem(table: dict[str, Any], _raw: dict[str, Any], value: Any) -> None:
    written = _written(value)
    if isinstance(written, str) and written.strip().lower() == "refuse":
        table.setdefault("max_held", 0)


def _attributes_enabled(table: dict[str, Any], _raw: dict[str, Any], value: Any) -> None:
    if not _says_true(value) and _written(value) is not None:
        reserved = {f.name for f in fields(AttributeSettings) if is_key(f.metadata)}
        for name in [name for name in table if name not in reserved]:
            del table[name]


_INSECURE = (
    "dx.allow_insecure_http is the one key for every URL (the DX token, the export's "
    "credentials, the webhook): set dx.allow_insecure_http = true"
)
_CONSTANT = "hrsync keeps it fixed"

DEPRECATED: tuple[Deprecated, ...] = (
    Deprecated(
        "dx.max_requests_per_minute",
        "DX allows 1,000 requests a minute per account and "
        f"{_CONSTANT} at {defaults.DX_MAX_REQUESTS_PER_MINUTE}",
    ),
    Deprecated(
        "dx.max_response_bytes",
        f"{_CONSTANT} at {defaults.DX_MAX_RESPONSE_BYTES // 2**20} MiB, far above any org's "
        "teams.list",
    ),
    Deprecated("source.allow_insecure_http", _INSECURE, _insecure_http),
    Deprecated("notify.allow_insecure_http", _INSECURE, _insecure_http),
    Deprecated(
        "source.auth_header_env",
        'write [source.headers] Authorization = "THE_VARIABLE" (the header\'s whole value)',
        _auth_header,
    ),
    Deprecated(
        "source.method",
        'a source.body means POST, none means GET (a POST with nothing to say: body = "{}")',
        _method,
    ),
    Deprecated(
        "source.pagination.page_param",
        'with style = "page", source.pagination.offset_param names the page number '
        '(default "page")',
        _page_key("offset_param"),
    ),
    Deprecated(
        "source.pagination.page_size_param",
        'with style = "page", source.pagination.limit_param names the page size (default: '
        "not sent)",
        _page_key("limit_param"),
    ),
    Deprecated(
        "sync.on_person_problem",
        'sync.max_held = 0 refuses a run for any person\'s problem (what "refuse" did)',
        _person_problem,
    ),
    Deprecated(
        "sync.min_join_fraction",
        "a join's matches are guarded by sync.min_people_fraction, and people a join "
        "leaves unmatched are held (sync.max_held)",
    ),
    Deprecated(
        "sync.healthcheck_max_age_s",
        f"the healthcheck allows {defaults.HEARTBEATS_MISSED} sync.heartbeat_s "
        f"({defaults.HEALTHCHECK_MAX_AGE_S:g} s at the default)",
    ),
    Deprecated(
        "sync.quarantine_alert_s", f"{_CONSTANT} at {defaults.QUARANTINE_ALERT_S / 3600:g} hours"
    ),
    Deprecated(
        "sync.recheck_not_in_dx_hours",
        f"{_CONSTANT}: people DX does not count yet are sent again at most every "
        f"{defaults.RECHECK_NOT_IN_DX_HOURS:g} hours",
    ),
    Deprecated(
        "sync.not_in_dx_alert_days", f"{_CONSTANT} at {defaults.NOT_IN_DX_ALERT_DAYS:g} days"
    ),
    Deprecated(
        "sync.lead_left_alert_days", f"{_CONSTANT} at {defaults.LEAD_LEFT_ALERT_DAYS:g} days"
    ),
    Deprecated("sync.approval_ttl_hours", f"{_CONSTANT} at {defaults.APPROVAL_TTL_HOURS:g} hours"),
    Deprecated(
        "sync.shutdown_grace_s",
        f"{_CONSTANT}: on SIGTERM the daemon waits {defaults.SHUTDOWN_GRACE_S:g} s for the "
        "current step (give the "
        "container more, e.g. 45 s, to stop)",
    ),
    Deprecated(
        "attributes.enabled",
        "the step is on when [attributes] maps an attribute; to turn it off, remove or "
        "comment out the attribute entries",
        _attributes_enabled,
    ),
    Deprecated(
        "mapping.lead_not_in_dx",
        "a team lead DX does not know yet is always stood in for by the nearest lead above "
        "until they join",
    ),
    Deprecated(
        "notify.preview_refused",
        "a refused plan's message always links to DX's preview of it",
    ),
    Deprecated("log.events_per_kind", f"{_CONSTANT} at {defaults.EVENTS_PER_KIND} events per kind"),
)

# The keys of `[source]` are also the keys of each `[[source.join]]` and
# `[[source.union]]` table.
_SOURCE = "source."


def take_deprecated(raw: dict[str, Any]) -> list[str]:
    """Take every deprecated key out of `raw` (the file's tables, the environment's
    overrides in them), carrying over what still means something; one line each."""
    lines: list[str] = []
    for old in DEPRECATED:
        for table, where in _tables(raw, old.key):
            name = old.key.rsplit(".", 1)[1]
            if name not in table:
                continue
            value = table.pop(name)
            origin = getattr(value, "origin", None)
            shown = f"{origin} ({where})" if origin else where
            if old.move is not None:
                old.move(table, raw, value)
                fate = "its value is used for this release"
            else:
                fate = "it is ignored"
            lines.append(f"{shown} is no longer a key ({fate}): {old.instead}")
    return lines


def _tables(raw: dict[str, Any], dotted: str) -> list[tuple[dict[str, Any], str]]:
    """The tables that may hold `dotted`, each with how a message names the key there."""
    path = dotted.split(".")[:-1]
    found = [(_at(raw, path), dotted)]
    if dotted.startswith(_SOURCE):
        source = raw.get("source")
        rest = path[1:]
        tail = dotted[len(_SOURCE) :]
        if isinstance(source, dict):
            kinds: tuple[tuple[str, Kind], ...] = (("join", JOIN), ("union", UNION))
            for list_key, kind in kinds:
                items = source.get(list_key)
                if not isinstance(items, list):
                    continue
                for position, item in enumerate(items, 1):
                    if isinstance(item, dict):
                        named = _written(item.get("name", ""))
                        where = table_label(kind, named if isinstance(named, str) else "", position)
                        found.append((_at(item, rest), f"{where}.{tail}"))
    return [(table, where) for table, where in found if table is not None]


def _at(node: Any, path: list[str]) -> dict[str, Any] | None:
    for part in path:
        if not isinstance(node, dict):
            return None
        node = node.get(part)
    return node if isinstance(node, dict) else None
