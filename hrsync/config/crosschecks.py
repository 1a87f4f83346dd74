"""The checks `load_settings` runs once every key is parsed: keys that depend on each
other, names of columns, zones, cron expressions, e-mail addresses and databases. (The
range of each number is `hrsync.config.numbers`', checked as the number is read.)

Each message names the key, the value and what was expected; every problem is returned,
so an operator fixes a config in one pass.
"""

from __future__ import annotations

import codecs
import dataclasses
import json
import re
from urllib.parse import urlsplit
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from hrsync.config.plain_http import IN_CLEAR, plain_http_host, refusal
from hrsync.core.export.json_paths import PathError, has_pick, parse_path
from hrsync.core.export.read_columns import columns_read
from hrsync.core.export.templates import check_template, is_template, template_names
from hrsync.core.listen import EXPECTED as LISTEN_FORM
from hrsync.core.listen import parse_listen
from hrsync.core.people.emails import EMAIL_RULE, is_valid_email
from hrsync.core.settings import (
    NOTIFY_EVENTS,
    PaginationSettings,
    Settings,
    SourceSettings,
    SyncSettings,
)
from hrsync.secret import NAME_FORM, is_variable_name
from hrsync.store.url import check_database_url


def cross_checks(s: Settings, *, require_source: bool, require_dx: bool) -> list[str]:
    """Every problem a parsed config still has: ranges, keys that depend on each other,
    what must name a column, a zone, a cron expression, an address or a database."""
    p: list[str] = []
    if not s.dx.base_url:
        if require_dx:
            p.append("dx.base_url is required, e.g. https://api.getdx.com")
    elif not re.match(r"^https?://", s.dx.base_url):
        p.append(f"dx.base_url must start with http:// or https://, got {s.dx.base_url!r}")
    src = s.source
    if require_source and src.path is None and not src.url:
        p.append("source.path or source.url is required")
    p.extend(table_checks(src, "source"))
    p.extend(_http_source_checks(src))
    p.extend(_plain_http_checks(s))
    for key in ("employee_id", "email", "name"):
        if not getattr(src.fields, key):
            p.append(f"source.fields.{key} must name a column, got ''")
    p.extend(_field_template_checks(src))
    p.extend(_path_checks(s))
    fields = src.fields
    if s.mapping.strategy == "manager" and not (
        fields.manager_id or fields.manager_email or fields.manager_name
    ):
        p.append(
            "source.fields.manager_id, manager_email or manager_name must name a column "
            "for mapping.strategy 'manager'"
        )
    if s.mapping.strategy == "department" and not src.fields.department:
        p.append("source.fields.department must name a column for mapping.strategy 'department'")
    sync = s.sync
    try:
        ZoneInfo(sync.timezone)
    except (ZoneInfoNotFoundError, ValueError):
        p.append(
            f"sync.timezone must be an IANA time zone such as Europe/Berlin, got {sync.timezone!r}"
        )
    cron_problem = _check_cron(sync.schedule)
    if cron_problem:
        p.append(
            "sync.schedule must be a cron expression (5 fields, or 6 with seconds first), "
            f"got {sync.schedule!r} ({cron_problem})"
        )
    # The export's rule (DX refuses what it refuses, e.g. hr..ops@acme.test). Only the
    # case is folded: spaces around the address would be sent to DX as they are.
    if sync.notify_email is not None and not is_valid_email(sync.notify_email.lower()):
        p.append(f"sync.notify_email must be {EMAIL_RULE}, got {sync.notify_email!r}")
    database_problem = check_database_url(s.state.database_url)
    if database_problem is not None:
        p.append(database_problem)
    p.extend(_monitoring_checks(s))
    p.extend(_variable_name_checks(s))
    return p


# What each `*_env` key's variable holds, and a name to give as an example. A key not
# listed (one added later) is checked all the same, with a plainer message.
_VARIABLES = {
    "source.username_env": ("the basic auth user name", "HR_API_USER"),
    "source.password_env": ("the basic auth password", "HR_API_PASSWORD"),
    "source.oauth2.client_id_env": ("the OAuth2 client id", "HR_CLIENT_ID"),
    "source.oauth2.client_secret_env": ("the OAuth2 client secret", "HR_CLIENT_SECRET"),
    "source.google_service_account.key_file_env": (
        "the key file's path",
        "GOOGLE_APPLICATION_CREDENTIALS",
    ),
    "notify.webhook_url_env": ("the webhook URL", "HRSYNC_WEBHOOK_URL"),
}


def _variable_name_checks(s: Settings) -> list[str]:
    """Every `*_env` key names an environment variable. What is written there instead is
    most likely the secret itself (a header, a password, a URL): refused, never shown."""
    p: list[str] = []
    for key, value in _env_keys(s, ""):
        if value and not is_variable_name(value):
            # A joined table's keys are the source's: `source.join[x].username_env`.
            known = re.sub(r"^source\.join\[[^\]]*\]\.", "source.", key)
            what, example = _VARIABLES.get(known, ("the value", "A_VARIABLE_NAME"))
            p.append(
                f"{key} must name an environment variable holding {what} (e.g. {example}; "
                f"{NAME_FORM}), not the value itself: what is written looks like a value "
                "rather than a name (not shown here)"
            )
    return p


def _env_keys(node: object, prefix: str) -> list[tuple[str, str]]:
    """(dotted key, value) of every `*_env` setting under `node`, a settings dataclass."""
    found: list[tuple[str, str]] = []
    for field in dataclasses.fields(node):  # type: ignore[arg-type]
        value = getattr(node, field.name)
        if field.name == "table" and dataclasses.is_dataclass(value):
            # A join's table: its `[source]` keys are written at the join's own level.
            found.extend(_env_keys(value, prefix))
        elif dataclasses.is_dataclass(value):
            found.extend(_env_keys(value, f"{prefix}{field.name}."))
        elif isinstance(value, tuple):  # [[source.join]]: each named as messages name it
            for at, item in enumerate(value, start=1):
                if dataclasses.is_dataclass(item):
                    name = getattr(item, "name", "") or at
                    found.extend(_env_keys(item, f"{prefix}{field.name}[{name}]."))
        elif field.name.endswith("_env") and isinstance(value, str):
            found.append((f"{prefix}{field.name}", value))
    return found


def _shown(key: str, value: object) -> str:
    """A value as a message may quote it: an `*_env` key's only when it is a name."""
    if key.endswith("_env") and not (isinstance(value, str) and is_variable_name(value)):
        return "a value not shown here"
    return repr(value)


def _monitoring_checks(s: Settings) -> list[str]:
    """[daemon] listen and [notify]: the endpoints' address and the webhook's keys."""
    p: list[str] = []
    listen = s.daemon.listen
    if listen:
        try:
            parse_listen(listen)
        except ValueError as exc:
            p.append(f"daemon.listen must be {LISTEN_FORM} (empty: off), got {listen!r}: {exc}")
    notify = s.notify
    unknown = [event for event in notify.on if event not in NOTIFY_EVENTS]
    if unknown:
        p.append(f"notify.on must list events among {', '.join(NOTIFY_EVENTS)}, got {unknown!r}")
    return p


def table_checks(src: SourceSettings, where: str) -> list[str]:
    """How one table is read: `[source]`'s, or a `[[source.join]]` table's (`where` is how
    messages name it)."""
    p: list[str] = []
    if src.path is not None and src.url:
        p.append(f"{where}.path and {where}.url are both set; choose one")
    if src.url and not re.match(r"^https?://", src.url):
        p.append(f"{where}.url must start with http:// or https://, got {src.url!r}")
    if len(src.delimiter) > 1:
        p.append(f"{where}.delimiter must be a single character, got {src.delimiter!r}")
    if src.encoding:
        try:
            codecs.lookup(src.encoding)
        except LookupError:
            p.append(f"{where}.encoding must be a known text encoding, got {src.encoding!r}")
    return p


def _plain_http_checks(s: Settings) -> list[str]:
    """A credential never crosses a network over plain http:// unless
    `dx.allow_insecure_http = true`: the DX token, the source's credentials, a client secret."""
    p: list[str] = []
    host = plain_http_host(s.dx.base_url)
    if host and not s.dx.allow_insecure_http:
        why = f": the DX token {IN_CLEAR}"
        p.append(refusal("dx.base_url", host, why, "dx.allow_insecure_http"))
    p.extend(plain_http_source_checks(s.source, "source"))
    return p


def plain_http_source_checks(src: SourceSettings, where: str) -> list[str]:
    """`_plain_http_checks` for one table read as a source is: `[source]` itself, or a
    `[[source.join]]` table (`where` is how messages name it)."""
    if src.allow_insecure_http:
        return []
    p: list[str] = []
    allow = "dx.allow_insecure_http"
    host = plain_http_host(src.url or "")
    sent = _source_credentials(src)
    if host and sent:
        p.append(refusal(f"{where}.url", host, f" and sends {sent}: it {IN_CLEAR}", allow))
    host = plain_http_host(src.oauth2.token_url)
    if host:
        why = f": the client secret {IN_CLEAR}"
        p.append(refusal(f"{where}.oauth2.token_url", host, why, allow))
    return p


def _source_credentials(src: SourceSettings) -> str | None:
    """What credential every request to source.url carries, for a message; None: none."""
    try:
        parts = urlsplit(src.url or "")
        written = parts.username is not None or parts.password is not None
    except ValueError:
        written = False  # an unparsable URL is refused by the fetch, with its own message
    if written:
        return "the user name and password written in it"
    if src.oauth2.token_url:
        return "the OAuth2 access token"
    if src.google_service_account.key_file_env:
        return "the Google access token"
    if src.username_env or src.password_env:
        return "basic auth"
    if src.headers:
        return "source.headers"
    return None


def _field_template_checks(src: SourceSettings) -> list[str]:
    """[source.fields] templates: their shape here; their columns when the export is read."""
    p: list[str] = []
    for field in dataclasses.fields(src.fields):
        value = getattr(src.fields, field.name)
        if not is_template(value):
            continue
        where = f"source.fields.{field.name} {value!r}"
        if field.name in _COLUMN_ONLY:
            p.append(
                f"{where} must name a column: the department strategy reads it from each "
                "person's row (a template is for the person's own fields)"
            )
            continue
        p.extend(check_template(value, template_names(value), where=where))
    return p


def _path_checks(s: Settings) -> list[str]:
    """Paths that pick from a JSON list (``relations[type=manager].value``) wherever the
    config names a column: their syntax, once, here. The reader takes a path that does
    not parse for a plain name, which no JSON export has, so it would read nothing. A CSV
    export's columns are names as they are."""
    src = s.source
    csv_suffix = src.path is not None and src.path.suffix.lower() in (".csv", ".tsv", ".txt")
    if src.format == "csv" or (not src.format and csv_suffix):
        return []
    named: list[tuple[str, str]] = []  # (what a message names, a column)
    for field in dataclasses.fields(src.fields):
        value = getattr(src.fields, field.name)
        names = template_names(value) if is_template(value) else (value,)
        named.extend((f"source.fields.{field.name} {name!r}", name) for name in names)
    named.extend((f"{r.setting} {r.written!r}", r.name) for r in columns_read(s).every)
    p: list[str] = []
    for where, name in named:
        if not has_pick(name):
            continue
        try:
            parse_path(name)
        except PathError as exc:
            p.append(f"{where} {exc}")
    return p


# Read by the department strategy from the rows themselves, by column.
_COLUMN_ONLY = ("department_parent", "department_lead")

GOOGLE_DIRECTORY_SCOPE = "https://www.googleapis.com/auth/admin.directory.user.readonly"
_HEADER_NAME = re.compile(r"^[A-Za-z0-9!#$%&'*+.^_`|~-]+$")


# Styles that add the page's position to the request (a body field for POST).
_POSITION_STYLES = ("cursor", "offset", "page", "scim")


def _new_paging_checks(paging: PaginationSettings) -> list[str]:
    """The keys of styles "next_url" and "page": required with their style, and only
    there (a key set for another style reads as paging that is not done)."""
    p: list[str] = []
    if paging.style == "next_url" and not paging.next_url_path:
        p.append(
            "source.pagination.next_url_path must name where each page holds the next "
            'page\'s URL (a dotted path, e.g. "links.next") for style "next_url"'
        )
    defaults = PaginationSettings()
    for key, style in (
        ("next_url_path", "next_url"),
        ("first_page", "page"),
    ):
        value = getattr(paging, key)
        if paging.style != style and value != getattr(defaults, key):
            p.append(
                f'source.pagination.{key} is only used with style = "{style}", got '
                f"{value!r} with style = {paging.style!r}"
            )
    return p


def _http_source_checks(src: SourceSettings) -> list[str]:
    """[source] keys for reading over HTTP: method, body, headers, pagination, oauth2."""
    p: list[str] = []
    paging = src.pagination
    if not src.url:
        for key, value, default in (
            ("source.body", src.body, ""),
            ("source.pagination.style", paging.style, "none"),
            ("source.oauth2.token_url", src.oauth2.token_url, ""),
            (
                "source.google_service_account.key_file_env",
                src.google_service_account.key_file_env,
                "",
            ),
        ):
            if value != default:
                p.append(f"{key} is only used with source.url, got {_shown(key, value)}")
        if src.headers:
            p.append("source.headers is only used with source.url")
    if src.body:
        try:
            body = json.loads(src.body)
        except json.JSONDecodeError as exc:
            p.append(f"source.body must be JSON text, got {exc.msg} at column {exc.colno}")
        except ValueError:
            # Python reads no whole number of more than 4,300 digits (not a JSONDecodeError).
            digits = max(len(run) for run in re.findall(r"\d+", src.body))
            p.append(f"source.body must be JSON text, got a number of {digits:,} digits")
        else:
            if paging.style in _POSITION_STYLES and not isinstance(body, dict):
                p.append(
                    f"source.body must be a JSON object for source.pagination.style "
                    f"{paging.style!r}: the page position is added to it as a field"
                )
    for header, variable in src.headers.items():
        if not _HEADER_NAME.match(header):
            p.append(f"source.headers: {header!r} is not a valid HTTP header name")
        if not is_variable_name(variable):
            p.append(
                f"source.headers.{header} must name an environment variable holding the "
                f'header\'s value (e.g. "HR_API_KEY"; {NAME_FORM}), not the value itself: '
                "what is written looks like a value rather than a name (not shown here)"
            )
    if paging.style == "cursor":
        if not paging.next_cursor_path:
            p.append(
                "source.pagination.next_cursor_path must name where each page holds the next "
                'cursor (a dotted path, e.g. "response_metadata.next_cursor") for style "cursor"'
            )
        if not paging.cursor_param:
            p.append("source.pagination.cursor_param must name the parameter for the cursor")
    p.extend(_new_paging_checks(paging))
    oauth = src.oauth2
    if oauth.token_url:
        if not re.match(r"^https?://", oauth.token_url):
            p.append(
                f"source.oauth2.token_url must start with http:// or https://, "
                f"got {oauth.token_url!r}"
            )
        for key in ("client_id_env", "client_secret_env"):
            if not getattr(oauth, key):
                p.append(f"source.oauth2.{key} must name an environment variable")
        if src.username_env or src.password_env:
            p.append(
                "source.oauth2 sends its own Authorization header: drop "
                "source.username_env/password_env"
            )
        if any(name.lower() == "authorization" for name in src.headers):
            p.append(
                "source.oauth2 sends its own Authorization header: drop it from source.headers"
            )
    elif oauth.client_id_env or oauth.client_secret_env or oauth.scope or oauth.audience:
        p.append("source.oauth2.token_url is required when [source.oauth2] is used")
    p.extend(_google_checks(src))
    return p


def _google_checks(src: SourceSettings) -> list[str]:
    """`[source.google_service_account]`: the JWT-bearer grant's keys."""
    google = src.google_service_account
    key = "source.google_service_account"
    if not google.key_file_env:
        if google.subject or google.scopes:
            return [
                f"{key}.key_file_env is required when [{key}] is used: the name of the "
                f"environment variable holding the path of the service account's key file"
            ]
        return []
    p: list[str] = []
    if not google.scopes:
        p.append(
            f'{key}.scopes must list at least one OAuth2 scope, e.g. ["{GOOGLE_DIRECTORY_SCOPE}"]'
        )
    for scope in google.scopes:
        if not scope.strip() or any(c.isspace() for c in scope):
            p.append(f"{key}.scopes must hold one scope per item, without spaces, got {scope!r}")
    if google.subject and not is_valid_email(google.subject):
        p.append(
            f"{key}.subject must be the e-mail address of the Workspace user the service "
            f"account acts as (domain-wide delegation), got {google.subject!r}"
        )
    if src.oauth2.token_url:
        p.append(f"[{key}] and [source.oauth2] are both set; choose one")
    if src.username_env or src.password_env:
        p.append(
            f"[{key}] sends its own Authorization header: drop source.username_env/password_env"
        )
    if any(name.lower() == "authorization" for name in src.headers):
        p.append(f"[{key}] sends its own Authorization header: drop it from source.headers")
    return p


_DEFAULT_SCHEDULE = SyncSettings().schedule


def _check_cron(expression: str) -> str | None:
    if expression == _DEFAULT_SCHEDULE:
        return None  # known good: a one-shot command need not load APScheduler to see it
    # The very function the daemon schedules with, so validation accepts exactly that.
    from hrsync.daemon.cron import cron_trigger

    if len(expression.split()) not in (5, 6):
        return f"{len(expression.split())} fields"
    try:
        cron_trigger(expression, "UTC")
    except ValueError as exc:
        return str(exc)
    return None
