"""The settings, as plain frozen data: what every part of hrsync is configured with.

No loading here: `hrsync.config.loading` reads the TOML file and the environment, validates, and
builds these. The core takes its settings from this module, never from the loader.

Every key's description lives here, once, beside its field (`key(default, "what it
decides")`): the configuration reference, the example file and the JSON Schema are
generated from them (`python -m hrsync.config.reference`). A key is a decision a user must
make; what hrsync derives, or what is DX's own rule, is a property or a constant
(`hrsync.core.defaults`), never a key.
"""

from __future__ import annotations

import re

# Imported at run time, not under TYPE_CHECKING: the loader resolves these annotations
# (typing.get_type_hints) to know how to parse each key.
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, TypeVar

from hrsync.core import defaults
from hrsync.secret import Secret

# SuccessFactors writes NO_MANAGER as the manager of the top of the org.
DEFAULT_NULL_VALUES: tuple[str, ...] = ("NULL", "null", "None", "N/A", "n/a", "#N/A", "-")
DEFAULT_NULL_VALUES += ("NO_MANAGER",)

_T = TypeVar("_T")


def key(
    default: _T,
    doc: str,
    *,
    example: object = None,
    commented: bool = False,
    shown: str = "",
) -> _T:
    """A key of the file: its default and what it decides (Markdown, one paragraph).

    `example`: the value the example file writes instead of the default; `commented`: the
    example file shows it commented out; `shown`: the reference's default column, when the
    default itself says nothing (a required key).
    """
    meta = {"doc": doc, "example": example, "commented": commented, "shown": shown}
    return field(default=default, metadata=meta)


def key_table(factory: Callable[[], _T], doc: str, *, shown: str = "") -> _T:
    """A key whose value is a table or a list (a fresh one per instance)."""
    meta = {"doc": doc, "example": None, "commented": False, "shown": shown}
    return field(default_factory=factory, metadata=meta)


def internal(default: _T) -> _T:
    """A field the loader sets, never written in the file (no key, no documentation)."""
    return field(default=default, metadata={"internal": True})


def internal_table(factory: Callable[[], _T]) -> _T:
    return field(default_factory=factory, metadata={"internal": True})


@dataclass(frozen=True)
class DxSettings:
    """The DX Web API."""

    base_url: str = key(
        "",
        "DX Web API base URL, e.g. `https://api.getdx.com`; plain `http://` only to this "
        "machine (loopback, e.g. the bundled simulator) unless `allow_insecure_http`",
        example="https://api.getdx.com",
        shown="— (required)",
    )
    token_file: Path | None = key(
        None,
        "a file holding the DX token (else `$HRSYNC_DX_TOKEN`); must be readable and not empty",
        example="/run/secrets/dx-token",
        commented=True,
    )
    timeout_s: float = key(30.0, "per-request timeout, seconds")
    allow_insecure_http: bool = key(
        False,
        "`true`: a credential may cross the network in clear text over plain `http://` to "
        "another machine (a network you trust): the DX token (`base_url`), the export's "
        "credentials (`source.url` with a header, basic auth, OAuth2 or a Google service "
        "account; a join's or a union's too), the client secret (`source.oauth2.token_url`), "
        "and the webhook URL (`notify.webhook_url_env`). One decision for every URL",
    )


@dataclass(frozen=True)
class FieldSettings:
    """HR column names (CSV header or JSON dotted path) for each Person field, or a
    template over columns (a value holding ``{...}``, see hrsync.core.export.templates).

    An empty string means the export has no such column.
    """

    employee_id: str = key(
        "employee_id", "unique id of the person (required)", example="Employee ID"
    )
    email: str = key(
        "email", "work e-mail; must match the DX user (required)", example="Work Email"
    )
    name: str = key("name", "display name (required)", example="Full Name")
    manager_id: str = key(
        "manager_id",
        'the manager\'s employee id (`""` if the export has none)',
        example="Manager ID",
    )
    manager_email: str = key("", "the manager's e-mail, instead of or beside `manager_id`")
    # Matched by `people.name_key` (case, spaces, dots, and the `Last, First` order do not
    # matter).
    manager_name: str = key(
        "",
        'the manager\'s display name (`"LeBlanc, Brandon R"` matches `"Brandon R. LeBlanc"`)',
    )
    # Optional, as documented: a default naming a column most exports lack made them
    # required in practice.
    department: str = key(
        "",
        "department or org unit (optional; required by the department strategy)",
        example="Department",
    )
    status: str = key(
        "",
        "employment status, compared with `filter.active_status` (optional)",
        example="Status",
    )
    department_parent: str = key("", "department strategy: the parent unit column")
    department_lead: str = key("", "department strategy: the unit lead (employee id or e-mail)")


@dataclass(frozen=True)
class PaginationSettings:
    """How to read an HTTP source's every page."""

    # none: one answer is the whole export, and one that shows it is a page is refused.
    style: Literal[
        "none", "odata", "link_header", "cursor", "next_url", "offset", "page", "scim"
    ] = key(
        "none",
        '`"none"`, `"odata"`, `"link_header"`, `"cursor"`, `"next_url"`, `"offset"`, '
        '`"page"` or `"scim"` ([HR APIs](http-sources.md#pages)); `"odata"` follows '
        '`@odata.nextLink` (v4) and `d.__next` (v2); with `"none"` an answer that shows it '
        "is one page of more is refused",
    )
    next_cursor_path: str = key(
        "", "cursor: the dotted path of the next cursor in a page (required)"
    )
    cursor_param: str = key(
        "cursor", "cursor: the query parameter (GET) or body field (POST) it is sent back as"
    )
    next_url_path: str = key(
        "",
        'next_url: the dotted path of the next page\'s URL in a page, e.g. `"links.next"` '
        "(required; only with this style)",
    )
    offset_param: str = key(
        "",
        "offset: the parameter for the first record's position; page: the parameter for the "
        'page number. Empty: the style\'s own name, `"offset"` or `"page"`',
    )
    limit_param: str = key(
        "",
        "offset and page: the parameter for the page size. Empty: the style's own, "
        '`"limit"` for offset; with page, no page size is sent',
    )
    page_size: int = key(
        100,
        "offset: records per page, a shorter page is the last; scim: the `count` asked; "
        "page: sent as `limit_param` when that is set",
    )
    first_page: int = key(1, "page: the first page's number, `0` or `1` (only with this style)")
    # Reaching it is an error: a silent stop would read part of the org as the whole.
    max_pages: int = key(10_000, "reaching it is an error, never a silent stop")


@dataclass(frozen=True)
class OAuth2Settings:
    """OAuth2 client credentials (names of environment variables, never values)."""

    token_url: str = key("", "e.g. `https://login.microsoftonline.com/<tenant>/oauth2/v2.0/token`")
    client_id_env: str = key("", "the variable holding the client id")
    client_secret_env: str = key("", "the variable holding the client secret")
    scope: str = key("", "e.g. `https://graph.microsoft.com/.default`")
    audience: str = key("", "sent when set (some token servers need it)")


@dataclass(frozen=True)
class GoogleServiceAccountSettings:
    """A Google service account (the OAuth2 JWT-bearer grant). The key file's path is in
    the variable named here, never in the config."""

    key_file_env: str = key(
        "",
        "the variable holding the **path** of the service account's JSON key file (not its "
        "contents); setting it turns the grant on",
    )
    subject: str = key(
        "",
        "the e-mail of the Workspace user the service account acts as (domain-wide "
        "delegation); empty: the service account itself",
    )
    scopes: tuple[str, ...] = key(
        (),
        "at least one, one scope per item, e.g. "
        '`["https://www.googleapis.com/auth/admin.directory.user.readonly"]`; from the '
        "environment, comma-separated",
    )


@dataclass(frozen=True)
class SourceSettings:
    """The HR export: `path` or `url`, one of them (required)."""

    path: Path | None = key(
        None,
        "the export file (CSV or JSON), relative to the config file's directory",
        example="sample-org.csv",
    )
    url: str | None = key(
        None,
        "the export over `https://` (or `http://`): a published report or an HR API; plain "
        "`http://` to another machine is refused when it would send credentials, unless "
        "`dx.allow_insecure_http`",
        example="https://wd5-services1.myworkday.com/ccx/service/customreport2/acme/ISU/Org"
        "?format=json",
        commented=True,
    )
    format: Literal["", "csv", "json"] = key(
        "",
        '`"csv"` or `"json"`; empty: from the extension (`.csv`, `.tsv`, `.txt`, `.json`), '
        "else a `format=` query parameter or the HTTP content type, else the first non-blank "
        "byte (`[` or `{` is JSON)",
    )
    encoding: str = key(
        "utf-8-sig",
        'text encoding; `utf-8-sig` accepts a UTF-8 BOM; e.g. `"latin-1"`',
    )
    delimiter: str = key(
        "",
        "CSV delimiter, one character; empty: sniffed among comma, semicolon, tab and pipe",
    )
    records_path: str = key("", 'JSON: the dotted path of the people list, e.g. `"Report_Entry"`')
    timeout_s: float = key(
        60.0,
        "HTTP source timeout, seconds: each step (connecting, each read of the answer), not "
        "the whole download",
    )
    # One read of an HTTP source, every page, retry and token: a server answering a byte
    # at a time stays within timeout_s at every step, but not within this.
    deadline_s: float = key(
        300.0,
        "HTTP source: one read of the export, every page, retry, redirect and token fetch "
        "together, ends within this many seconds (above 0); past it the run fails, nothing "
        "is sent, and the next run tries again ([Limits](limits.md#time))",
    )
    max_bytes: int = key(
        200 * 1024 * 1024,
        "refuse an export (file or download, all pages together) over this (200 MB); a "
        "download counts its decoded bytes (after gzip or deflate), and stops as soon as it "
        "passes ([Limits](limits.md#bytes))",
    )
    # Names of environment variables holding HTTP credentials, never the values.
    username_env: str = key("", "the name of the variable holding the basic-auth user name")
    password_env: str = key("", "the name of the variable holding the basic-auth password")
    body: str = key(
        "",
        "JSON text: when set, the export is asked for with POST and this body (sent as "
        "`application/json`, paging fields added to it); empty: GET. A POST with nothing "
        'to say is `body = "{}"`',
    )
    # Header name -> name of the environment variable holding the header's whole value.
    headers: Mapping[str, str] = key_table(
        dict,
        "a table: header name = the *name* of an environment variable holding the header's "
        'whole value, e.g. `Authorization = "OKTA_API_AUTH"` where `$OKTA_API_AUTH` holds '
        "`SSWS 00abc…` (the `Authorization` header is how a token or API key is sent)",
        shown="empty",
    )
    # Extra attempts for a page that fails with a timeout, a network error, 429 or 5xx.
    retries: int = key(3, "extra attempts for a page that times out, or answers 429 or 5xx")
    pagination: PaginationSettings = key_table(
        PaginationSettings, "reading every page of an HTTP source"
    )
    oauth2: OAuth2Settings = key_table(
        OAuth2Settings, "OAuth2 client credentials (names of env vars)"
    )
    google_service_account: GoogleServiceAccountSettings = key_table(
        GoogleServiceAccountSettings, "a Google service account (JWT-bearer grant)"
    )
    fields: FieldSettings = key_table(FieldSettings, "the export's column for each field")
    # A cell equal to one of these (after trimming) is empty: how exports write "no value".
    null_values: tuple[str, ...] = key(
        DEFAULT_NULL_VALUES,
        'cells that mean "empty" (after trimming), in every column; `[]`: none',
    )
    # "top": a person whose manager is not in the export (or filtered out) is top of the
    # org, with a warning per unknown manager; "refuse": such a reference is an error.
    unknown_manager: Literal["refuse", "top"] = key(
        "refuse",
        'a manager not in the export: `"refuse"`, or `"top"` (the person is top of the org, '
        "warned)",
    )
    # The API answers everyone in one answer: a first run may read one of exactly a common
    # page size of records (hrsync.core.export.page_signs.PAGE_SIZES) without paging.
    single_page: bool = key(
        False,
        "`true`: the API answers everyone in one answer; without it, a first run refuses an "
        "answer (`url`, no paging) of exactly a common page size of records (10, 20, 25, 50, "
        "100, 200, 250, 500, 1000, 2000, 5000, 10000), see "
        "[HTTP sources](http-sources.md#one-page-is-never-the-whole-org)",
    )
    # `[[source.join]]`: tables joined to the people, in order (hrsync.core.people.joins).
    join: tuple[JoinSettings, ...] = key(
        (), "a table joined to the people, one block per table", shown="none"
    )
    # The export's own name, so that a precedence list may name its columns as
    # ``name.COLUMN`` beside a join's (``workday.Work_Email``); "" when it has none.
    name: str = key(
        "",
        "the export's own name, one word: a precedence list may then write its columns as "
        "`workday.Work_Email`, beside a join's `entra.mail`. Not a join's name",
    )
    # `[source.fields]` entries written as a list of columns, the first non-empty wins
    # (hrsync.core.people.precedence): field -> the columns, in order. The field itself then
    # names the column that list makes (`precedence.first_of_column`). Set by the
    # loader from the lists, never written as a key.
    first_of: Mapping[str, tuple[str, ...]] = internal_table(dict)
    # `[[source.union]]`: more people exports merged into the same org (hrsync.core.people.union).
    union: tuple[UnionSettings, ...] = key(
        (), "another people export merged into the org, one block per export", shown="none"
    )
    # `dx.allow_insecure_http`, set by the loader for the export and each join's and
    # union's table alike.
    allow_insecure_http: bool = internal(False)

    @property
    def method(self) -> Literal["GET", "POST"]:
        """A body is sent with POST; without one the export is asked for with GET."""
        return "POST" if self.body else "GET"


# A `source.` key in a message (not inside a URL or a word), as the `[source]` checks
# and readers write it.
_SOURCE_KEY = re.compile(r"(?<![\w./-])source\.")


def keyed_under(table: str, message: str) -> str:
    """A message about `[source]` keys, about another table's instead: a join's or a
    union's own keys are `[source]` keys (``source.url`` -> ``source.join[d].url``)."""
    return _SOURCE_KEY.sub(f"{table}.", message)


# What a person's row names a join's key by, beside a column: their own field as
# `[source.fields]` reads it (the e-mail lower-cased).
JOIN_FIELDS = ("email", "employee_id")


@dataclass(frozen=True)
class JoinSettings:
    """`[[source.join]]`: a second table joined to the people on one key; its columns
    read as ``{name.COLUMN}`` wherever a column of the export can be named.

    The table is read exactly as the export is: `table` holds its `[source]` keys (path
    or url, format, paging, OAuth2, max_bytes …); its `fields` are not used.
    """

    name: str = key(
        "",
        "the join's name, one word (letters, digits, `_`, `-`): the prefix of its columns",
        shown="(required)",
    )
    # One entry: the people's side (a column of the export, an earlier join's
    # ``name.COLUMN``, or "email" / "employee_id") -> a column of the table.
    on: Mapping[str, str] = key_table(
        dict,
        "one key: the people's side = the table's column. The people's side is a column of "
        "the export, a column an earlier join brought (`departments.LOCATION_ID`), or "
        "`email` / `employee_id`: the person's own field as `[source.fields]` reads it (an "
        "e-mail key matches in any case)",
        shown="(required)",
    )
    # "one": every person must match exactly one row; "optional": at most one. A second
    # match is always a problem of that person's row.
    match: Literal["one", "optional"] = key(
        "one",
        '`"one"`: a person matching no row is [held](../explanation/held-people.md); '
        '`"optional"`: such a person\'s joined columns are empty. A person matching two rows '
        "or more is held either way",
    )
    table: SourceSettings = internal_table(lambda: SourceSettings())

    @property
    def left(self) -> str:
        return next(iter(self.on), "")

    @property
    def right(self) -> str:
        return next(iter(self.on.values()), "")


@dataclass(frozen=True)
class UnionSettings:
    """`[[source.union]]`: another people export merged into the same org (a second HR
    system after an acquisition). Its people are read with its own `[source.union.fields]`
    (`table.fields`), and its employee ids, and the manager ids referring to them, with
    `prefix`, so that they never collide with the primary export's bare ids.

    The export is read exactly as the primary one is: `table` holds its `[source]` keys
    (path or url, format, paging, OAuth2, max_bytes …) and its fields.
    """

    name: str = key(
        "",
        "the source's name, one word (letters, digits, `_`, `-`): how messages, counts, "
        "`check`, `plan --format json` (`sources`) and `explain` name it, as "
        "`source.union[acq]`",
        shown="(required)",
    )
    # None: "<name>:". Never empty (the loader refuses it): the namespace of its ids.
    id_prefix: str | None = key(
        None,
        "put before each of its employee ids, its `manager_id` references and its "
        "`department_lead` ids (a value without `@`); never empty, no union's prefix may "
        "start another's, and the run is refused when it begins an id of the primary export",
        shown='`"<name>:"`',
    )
    # An employee id of the primary export, bare: the manager of this export's people who
    # name none. Empty: they are roots of their own.
    attach_root_to: str = key(
        "",
        "an employee id of the primary export, bare: the manager of each of its people who "
        "name no manager (or only themselves); the run is refused when it names nobody in "
        "the primary export (a person held for their own row still counts). Empty: such "
        "people are roots of their own",
    )
    table: SourceSettings = internal_table(lambda: SourceSettings())

    @property
    def prefix(self) -> str:
        return f"{self.name}:" if self.id_prefix is None else self.id_prefix


@dataclass(frozen=True)
class FilterSettings:
    """Who is synced."""

    active_status: tuple[str, ...] = key(
        ("Active",),
        "statuses kept (compared without regard to case or surrounding spaces); others "
        "(Terminated, …) drop out; `[]` keeps every status. Applies only when "
        "`source.fields.status` is set",
    )
    root: str | None = key(
        None,
        "only the org under this person (employee id or e-mail)",
        example="ceo@example.com",
        commented=True,
    )
    # field name -> glob patterns; a person must match every include field
    # and no exclude field.
    include: Mapping[str, tuple[str, ...]] = key_table(
        dict,
        "a table: field = [glob patterns]: keep only people matching every field",
        shown="empty",
    )
    exclude: Mapping[str, tuple[str, ...]] = key_table(
        dict,
        "a table: field = [glob patterns]: drop people matching any field",
        shown="empty",
    )


@dataclass(frozen=True)
class MappingSettings:
    """How people become teams."""

    strategy: Literal["manager", "department"] = key(
        "manager", '`"manager"` (teams from the manager chain) or `"department"`'
    )
    team_name: str = key("{lead_name}'s team", "template for team names (below)")
    min_team_size: int = key(
        0,
        "a team with fewer contributors folds into its parent (3: DX's reporting floor; "
        "teams under it are named ahead of each snapshot, [Snapshots and readiness]"
        "(../explanation/snapshot-windows.md#teams-under-dxs-reporting-floor))",
    )
    department_separator: str = key(
        "/",
        'department strategy: the path separator, e.g. `Eng/Platform`; `""`: no nesting',
    )


@dataclass(frozen=True)
class AttributeSettings:
    """`[attributes]`: DX user attribute name -> HR column or template over columns.

    In the TOML file the entries and the reserved keys below share one table. The step
    is on when the table maps an attribute.
    """

    entries: Mapping[str, str] = internal_table(dict)
    # An empty value is not sent (DX keeps what it has) unless this is true.
    clear_empty: bool = key(
        False,
        '`true`: an empty HR value is sent as `""` and clears DX\'s (else it is not sent)',
    )
    # Refuse the attribute step when more than this share of one attribute's
    # confirmed values would change (a renamed column, a broken template).
    max_change_fraction: float = key(
        0.3,
        "refuse attributes when more than this share of one attribute's confirmed values "
        "would change",
    )
    # Sync attributes only after a hierarchy step that ended applied or in sync.
    with_hierarchy_only: bool = key(
        False, "`true`: only after a hierarchy step that applied or was in sync"
    )

    @property
    def active(self) -> bool:
        return bool(self.entries)


@dataclass(frozen=True)
class SyncSettings:
    """When and how safely a sync runs."""

    schedule: str = key(
        "0 6 * * *", "cron (5 fields; a sixth leading field adds seconds) for the daemon"
    )
    timezone: str = key(
        "UTC",
        "the schedule's time zone (IANA name, e.g. `Europe/Berlin`). Across a clock change "
        "no day's run is lost: a time the spring jump skips runs an hour later that day, "
        "and a time in the repeated autumn hour runs in both passes (the second finds DX in "
        "sync)",
    )
    notify_email: str | None = key(
        None,
        "DX e-mails this address when an import ends (sent with `process`)",
        example="people-ops@example.com",
        commented=True,
    )
    max_archive: int = key(10, "refuse a run that would archive more teams than this")
    max_archive_fraction: float = key(
        0.2, "… or more than this share of current teams (and more than one team)"
    )
    min_people_fraction: float = key(
        0.8,
        "refuse an export with fewer people than this share of the last accepted one (per "
        "source with `[[source.union]]`), and a plan in which a `[[source.join]]` matches a "
        "smaller share of the export's rows than this fraction of the share it matched in "
        "the last accepted run (`sync --allow-shrink` or `hrsync approve PLAN_ID` lets "
        "either through; [Safety guards](../explanation/guards.md))",
    )
    max_held: int = key(
        25,
        "refuse a run that would hold more people than this (`sync --allow-held N` lets a "
        "manual run hold up to N); `0`: a problem of one person's own row (an e-mail, an "
        "id, their manager) refuses the whole run ([Held people](../explanation/held-people.md))",
    )
    max_held_fraction: float = key(0.02, "… or more than this share of the export's people")
    retro_window_days: int = key(
        21,
        "days after a snapshot completes during which imports are deferred (DX's "
        'retroactive window, "typically three weeks")',
    )
    verify_timeout_s: float = key(600.0, "how long to wait for DX to show the submitted hierarchy")
    max_resends: int = key(
        2, "the same payload sent again when DX's answer was lost and it shows nothing"
    )
    quarantine_after: int = key(
        5, "consecutive failed runs before the daemon backs off (at least 1)"
    )
    heartbeat_s: float = key(
        defaults.HEARTBEAT_S,
        "daemon heartbeat interval, seconds; the healthcheck fails when the heartbeat is "
        f"older than {defaults.HEARTBEATS_MISSED} of them "
        f"({defaults.HEALTHCHECK_MAX_AGE_S:g} s at the default); also how often the metrics' "
        "state gauges are read from the state store",
    )
    pre_snapshot_hours: float = key(
        48.0,
        "from this many hours before the next DX snapshot's day starts (UTC) the daemon "
        "checks for pending changes at least every 4 hours and syncs them, whatever "
        "`schedule` says and whatever ran before, with a last check 3 hours before the day "
        'starts; also how close a snapshot must be before "DX will not be ready" is told '
        "(greater than 0; "
        "[Snapshots and readiness](../explanation/snapshot-windows.md#snapshots-and-readiness))",
    )

    @property
    def healthcheck_max_age_s(self) -> float:
        """The healthcheck fails when the heartbeat is older than this."""
        return defaults.healthcheck_max_age_s(self.heartbeat_s)


@dataclass(frozen=True)
class DaemonSettings:
    """The daemon's HTTP endpoints."""

    # "HOST:PORT" for /healthz, /readyz and /metrics; empty: no HTTP server.
    listen: str = key(
        "",
        '`"HOST:PORT"` for `/healthz`, `/readyz`, `/metrics`: an IPv4 address, a host name, '
        'or an IPv6 address in brackets (`"[::]:9464"`, `"[::1]:0"`); port 0 (any free one) '
        "to 65535 (the image: `0.0.0.0:9464`); empty: off ([Metrics and endpoints](metrics.md), "
        "[the listener's limits](limits.md#the-http-listener))",
    )


NOTIFY_EVENTS = (
    "refused",
    "rejected",
    "quarantined",
    "unverified",
    "recovered",
    "stand_in",
    "held",
    "not_in_dx",
    "lead_left",
    "snapshot_not_ready",
    "snapshot_ready",
)


@dataclass(frozen=True)
class NotifySettings:
    """A webhook POSTed when a person is needed (the daemon only)."""

    # The NAME of the environment variable holding the URL: the URL is a secret.
    webhook_url_env: str = key(
        "",
        "the NAME of the environment variable holding the webhook URL (a secret); empty: "
        "off. A plain `http://` URL to another machine is not used (`notify.insecure_url`, "
        "an error at start) unless `dx.allow_insecure_http`",
    )
    format: Literal["json", "slack", "teams"] = key(
        "json",
        '`"json"` (fields for a program), `"slack"` (`{"text": …}`) or `"teams"` (an '
        "Adaptive Card for a Teams workflow; [Monitoring](../how-to/monitoring.md))",
    )
    on: tuple[str, ...] = key(
        NOTIFY_EVENTS,
        "the events that POST (`stand_in`: a stand-in lead begins or ends; `held`: a "
        "person's hold begins or ends; `not_in_dx`: someone DX has not counted for longer "
        f"than {defaults.NOT_IN_DX_ALERT_DAYS:g} days, once per person; `lead_left`: a manager "
        "who left while people still name them, and HR has not re-pointed those people after "
        f"{defaults.LEAD_LEFT_ALERT_DAYS:g} days, once when it "
        "starts and once when it clears; `snapshot_not_ready`: the next snapshot is less "
        "than `sync.pre_snapshot_hours` away and DX is not ready for it, once per snapshot; "
        "`snapshot_ready`: it became ready after that, or it is ready and teams will have "
        "fewer than 3 counted contributors, which DX leaves out of the snapshot's results)",
    )
    # The same attention state, with the same plan, is sent again after this long.
    repeat_s: float = key(
        86400.0, "the same state about the same plan is sent again after this long"
    )
    # `dx.allow_insecure_http`, set by the loader.
    allow_insecure_http: bool = internal(False)


@dataclass(frozen=True)
class StateSettings:
    """The state store."""

    database_url: str = key(
        defaults.DATABASE_URL,
        "SQLAlchemy URL of the [state store](state-store.md); `postgresql+psycopg://…` with "
        "the `postgres` extra",
    )
    # Runs, submissions and other history older than this many days are pruned by the
    # daemon once a day (never what a guard still needs); 0 keeps everything.
    keep_days: int = key(
        180,
        "history older than this many days (runs, submissions, settled deferrals, approvals "
        "no longer pending, refused plans nothing names) is pruned by the daemon once a day; "
        "never what a guard needs ([Retention](state-store.md#retention)). `0` keeps "
        "everything",
    )


@dataclass(frozen=True)
class LogSettings:
    """The log."""

    format: Literal["auto", "json", "console"] = key(
        "auto", '`"auto"` (JSON unless on a terminal), `"json"` or `"console"`'
    )
    level: Literal["debug", "info", "warning", "error"] = key(
        "info",
        '`"debug"`, `"info"`, `"warning"` or `"error"`, in any case (`"INFO"` too; so are '
        "the words of every other key with a fixed set of values)",
    )


@dataclass(frozen=True)
class Settings:
    dx: DxSettings = key_table(DxSettings, "")
    source: SourceSettings = key_table(SourceSettings, "")
    filter: FilterSettings = key_table(FilterSettings, "")
    mapping: MappingSettings = key_table(MappingSettings, "")
    attributes: AttributeSettings = key_table(AttributeSettings, "")
    sync: SyncSettings = key_table(SyncSettings, "")
    state: StateSettings = key_table(StateSettings, "")
    log: LogSettings = key_table(LogSettings, "")
    daemon: DaemonSettings = key_table(DaemonSettings, "")
    notify: NotifySettings = key_table(NotifySettings, "")
    token: Secret | None = internal(None)
    config_path: Path | None = internal(None)
    # The --config a printed command repeats: none for ./hrsync.toml, which the command,
    # typed where the person is, finds again.
    command_config: Path | None = internal(None)
    # What the file or the environment wrote in a way this release still reads but the
    # next will not (`hrsync.config.deprecated`): one line each, naming the new way.
    deprecations: tuple[str, ...] = internal(())


def is_key(meta: Mapping[str, Any]) -> bool:
    """Whether a field's metadata makes it a key of the file (not set by the loader)."""
    return not meta.get("internal", False)
