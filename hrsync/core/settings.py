"""The settings, as plain frozen data: what every part of hrsync is configured with.

No loading here: `hrsync.config.loading` reads the TOML file and the environment, validates, and
builds these. The core takes its settings from this module, never from the loader.
"""

from __future__ import annotations

import re

# Imported at run time, not under TYPE_CHECKING: the loader resolves these annotations
# (typing.get_type_hints) to know how to parse each key.
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from hrsync.core import defaults
from hrsync.secret import Secret

# SuccessFactors writes NO_MANAGER as the manager of the top of the org.
DEFAULT_NULL_VALUES: tuple[str, ...] = ("NULL", "null", "None", "N/A", "n/a", "#N/A", "-")
DEFAULT_NULL_VALUES += ("NO_MANAGER",)


@dataclass(frozen=True)
class DxSettings:
    base_url: str = ""
    token_file: Path | None = None
    timeout_s: float = 30.0
    # Client-side ceiling, below DX's 1,000 requests per minute per account.
    max_requests_per_minute: int = 900
    # The most one DX answer may decode to. teams.list of a 100,000-person org is tens of
    # MB at most (about 500 bytes a team, and fewer teams than people).
    max_response_bytes: int = 256 * 1024 * 1024
    # base_url may be plain http:// to another machine (the token then travels in clear).
    allow_insecure_http: bool = False


@dataclass(frozen=True)
class FieldSettings:
    """HR column names (CSV header or JSON dotted path) for each Person field, or a
    template over columns (a value holding ``{...}``, see hrsync.core.export.templates).

    An empty string means the export has no such column.
    """

    employee_id: str = "employee_id"
    email: str = "email"
    name: str = "name"
    manager_id: str = "manager_id"
    manager_email: str = ""
    # The manager's display name, matched by `people.name_key` (case, spaces, dots, and
    # the `Last, First` order do not matter).
    manager_name: str = ""
    # Optional, as documented: a default naming a column most exports lack made them
    # required in practice.
    department: str = ""
    status: str = ""
    # Department strategy: parent unit column and unit lead column (employee id or e-mail).
    department_parent: str = ""
    department_lead: str = ""


@dataclass(frozen=True)
class PaginationSettings:
    """How to read an HTTP source's every page (`[source.pagination]`)."""

    # none: one answer is the whole export, and one that shows it is a page is refused.
    style: Literal[
        "none", "odata", "link_header", "cursor", "next_url", "offset", "page", "scim"
    ] = "none"
    next_cursor_path: str = ""  # cursor: dotted path of the next cursor in each page's body
    cursor_param: str = "cursor"  # cursor: query parameter (GET) or body field (POST)
    next_url_path: str = ""  # next_url: dotted path of the next page's URL in each body
    offset_param: str = "offset"
    limit_param: str = "limit"
    # offset: records asked for per page, a shorter page is the last; scim: the count sent;
    # page: sent as page_size_param when that is set.
    page_size: int = 100
    page_param: str = "page"  # page: the page number's parameter
    first_page: int = 1  # page: the first page's number (0 or 1)
    page_size_param: str = ""  # page: the page size's parameter; empty: not sent
    # Reaching it is an error: a silent stop would read part of the org as the whole.
    max_pages: int = 10_000


@dataclass(frozen=True)
class OAuth2Settings:
    """OAuth2 client credentials (`[source.oauth2]`): names of variables, never values."""

    token_url: str = ""
    client_id_env: str = ""
    client_secret_env: str = ""
    scope: str = ""
    audience: str = ""


@dataclass(frozen=True)
class GoogleServiceAccountSettings:
    """A Google service account (`[source.google_service_account]`): the OAuth2 JWT-bearer
    grant. The key file's path is in the variable named here, never in the config."""

    key_file_env: str = ""
    # The Workspace user the service account acts as (domain-wide delegation); empty:
    # the service account itself, when it holds an admin role of its own.
    subject: str = ""
    scopes: tuple[str, ...] = ()


@dataclass(frozen=True)
class SourceSettings:
    path: Path | None = None
    url: str | None = None
    format: Literal["", "csv", "json"] = ""
    encoding: str = "utf-8-sig"
    delimiter: str = ""
    records_path: str = ""
    timeout_s: float = 60.0
    # One read of an HTTP source, every page, retry and token: a server answering a byte
    # at a time stays within timeout_s at every step, but not within this.
    deadline_s: float = 300.0
    max_bytes: int = 200 * 1024 * 1024
    # Names of environment variables holding HTTP credentials, never the values.
    auth_header_env: str = ""
    username_env: str = ""
    password_env: str = ""
    method: Literal["GET", "POST"] = "GET"
    body: str = ""  # JSON text sent with POST
    # Header name -> name of the environment variable holding the header's whole value.
    headers: Mapping[str, str] = field(default_factory=dict)
    # Extra attempts for a page that fails with a timeout, a network error, 429 or 5xx.
    retries: int = 3
    pagination: PaginationSettings = field(default_factory=PaginationSettings)
    oauth2: OAuth2Settings = field(default_factory=OAuth2Settings)
    google_service_account: GoogleServiceAccountSettings = field(
        default_factory=GoogleServiceAccountSettings
    )
    fields: FieldSettings = field(default_factory=FieldSettings)
    # A cell equal to one of these (after trimming) is empty: how exports write "no value".
    null_values: tuple[str, ...] = DEFAULT_NULL_VALUES
    # "top": a person whose manager is not in the export (or filtered out) is top of the
    # org, with a warning per unknown manager; "refuse": such a reference is an error.
    unknown_manager: Literal["refuse", "top"] = "refuse"
    # url and oauth2.token_url may send credentials over plain http:// to another machine.
    allow_insecure_http: bool = False
    # The API answers everyone in one answer: a first run may read one of exactly a common
    # page size of records (hrsync.core.export.page_signs.PAGE_SIZES) without paging.
    single_page: bool = False
    # `[[source.join]]`: tables joined to the people, in order (hrsync.core.people.joins).
    join: tuple[JoinSettings, ...] = ()
    # The export's own name, so that a precedence list may name its columns as
    # ``name.COLUMN`` beside a join's (``workday.Work_Email``); "" when it has none.
    name: str = ""
    # `[source.fields]` entries written as a list of columns, the first non-empty wins
    # (hrsync.core.people.precedence): field -> the columns, in order. The field itself then
    # names the column that list makes (`precedence.first_of_column`). Set by the
    # loader from the lists, never written as a key.
    first_of: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    # `[[source.union]]`: more people exports merged into the same org (hrsync.core.people.union).
    union: tuple[UnionSettings, ...] = ()


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

    name: str = ""
    # One entry: the people's side (a column of the export, an earlier join's
    # ``name.COLUMN``, or "email" / "employee_id") -> a column of the table.
    on: Mapping[str, str] = field(default_factory=dict)
    # "one": every person must match exactly one row; "optional": at most one. A second
    # match is always a problem of that person's row.
    match: Literal["one", "optional"] = "one"
    table: SourceSettings = field(default_factory=lambda: SourceSettings())

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

    name: str = ""
    # None: "<name>:". Never empty (the loader refuses it): the namespace of its ids.
    id_prefix: str | None = None
    # An employee id of the primary export, bare: the manager of this export's people who
    # name none. Empty: they are roots of their own.
    attach_root_to: str = ""
    table: SourceSettings = field(default_factory=lambda: SourceSettings())

    @property
    def prefix(self) -> str:
        return f"{self.name}:" if self.id_prefix is None else self.id_prefix


@dataclass(frozen=True)
class FilterSettings:
    active_status: tuple[str, ...] = ("Active",)
    root: str | None = None
    # field name -> glob patterns; a person must match every include field
    # and no exclude field.
    include: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    exclude: Mapping[str, tuple[str, ...]] = field(default_factory=dict)


@dataclass(frozen=True)
class MappingSettings:
    strategy: Literal["manager", "department"] = "manager"
    team_name: str = "{lead_name}'s team"
    min_team_size: int = 0
    department_separator: str = "/"
    # A team lead DX does not know yet (DX names the row): "next_manager" lets the nearest
    # lead above stand in until they join; "reject" ends the run rejected, as DX did.
    lead_not_in_dx: Literal["next_manager", "reject"] = "next_manager"


@dataclass(frozen=True)
class AttributeSettings:
    """`[attributes]`: DX user attribute name -> HR column or template over columns.

    In the TOML file the entries and the reserved keys below share one table.
    """

    entries: Mapping[str, str] = field(default_factory=dict)
    # None: on when there are entries.
    enabled: bool | None = None
    # An empty value is not sent (DX keeps what it has) unless this is true.
    clear_empty: bool = False
    # Refuse the attribute step when more than this share of one attribute's
    # confirmed values would change (a renamed column, a broken template).
    max_change_fraction: float = 0.3
    # Sync attributes only after a hierarchy step that ended applied or in sync.
    with_hierarchy_only: bool = False

    @property
    def active(self) -> bool:
        return bool(self.entries) and self.enabled is not False


@dataclass(frozen=True)
class SyncSettings:
    schedule: str = "0 6 * * *"
    timezone: str = "UTC"
    notify_email: str | None = None
    max_archive: int = 10
    max_archive_fraction: float = 0.2
    min_people_fraction: float = 0.8
    # A problem of one person's own row holds that person ("hold") or refuses the run.
    on_person_problem: Literal["hold", "refuse"] = "hold"
    max_held: int = 25  # more held people than this refuses the run
    max_held_fraction: float = 0.02  # … or more than this share of the export's people
    # A join matching a smaller share of the export's rows than this fraction of the share
    # it matched in the last accepted run refuses the plan (hrsync.core.gate.guards).
    min_join_fraction: float = 0.9
    retro_window_days: int = 21
    verify_timeout_s: float = 600.0
    max_resends: int = 2
    quarantine_after: int = 5
    heartbeat_s: float = 30.0
    shutdown_grace_s: float = 30.0
    healthcheck_max_age_s: float = defaults.HEALTHCHECK_MAX_AGE_S
    quarantine_alert_s: float = defaults.QUARANTINE_ALERT_S
    # While people DX does not count yet are listed, the hierarchy is sent again at most
    # this often even when nothing else changed, so they are placed once they join DX.
    recheck_not_in_dx_hours: float = 24.0
    # Someone DX has not counted for longer than this is told once (notify.on not_in_dx).
    not_in_dx_alert_days: float = 14.0
    # A manager who left while people still name them: their team stays with a stand-in
    # lead; told once (notify.on lead_left) when HR has not re-pointed them after this.
    lead_left_alert_days: float = 3.0
    # From this long before the next snapshot's day starts (UTC) the daemon checks for
    # pending changes every few hours and syncs them, whatever the schedule says.
    pre_snapshot_hours: float = 48.0
    # An approval (`hrsync approve`) not applied within this long lapses: a plan approved
    # on Friday is not applied weeks later under a person's name.
    approval_ttl_hours: float = 72.0


@dataclass(frozen=True)
class DaemonSettings:
    # "HOST:PORT" for /healthz, /readyz and /metrics; empty: no HTTP server.
    listen: str = ""


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
    """`[notify]`: a webhook POSTed when a person is needed (the daemon only)."""

    # The NAME of the environment variable holding the URL: the URL is a secret.
    webhook_url_env: str = ""
    # The webhook URL (a secret) may be plain http:// to another machine.
    allow_insecure_http: bool = False
    format: Literal["json", "slack", "teams"] = "json"
    on: tuple[str, ...] = NOTIFY_EVENTS
    # The same attention state, with the same plan, is sent again after this long.
    repeat_s: float = 86400.0
    # A daemon run a guard refuses asks DX for a preview of exactly that plan (once per
    # plan id, never inside a window), so the message links a person to it in DX.
    preview_refused: bool = True


@dataclass(frozen=True)
class StateSettings:
    database_url: str = defaults.DATABASE_URL
    # Runs, submissions and other history older than this many days are pruned by the
    # daemon once a day (never what a guard still needs); 0 keeps everything.
    keep_days: int = 180


@dataclass(frozen=True)
class LogSettings:
    format: Literal["auto", "json", "console"] = "auto"
    level: Literal["debug", "info", "warning", "error"] = "info"
    # Events about one team or person each (plan.change, identity.decision, …): this
    # many per kind at their level, the rest at debug, then one log.capped summary.
    events_per_kind: int = 50


@dataclass(frozen=True)
class Settings:
    dx: DxSettings = field(default_factory=DxSettings)
    source: SourceSettings = field(default_factory=SourceSettings)
    filter: FilterSettings = field(default_factory=FilterSettings)
    mapping: MappingSettings = field(default_factory=MappingSettings)
    attributes: AttributeSettings = field(default_factory=AttributeSettings)
    sync: SyncSettings = field(default_factory=SyncSettings)
    state: StateSettings = field(default_factory=StateSettings)
    log: LogSettings = field(default_factory=LogSettings)
    daemon: DaemonSettings = field(default_factory=DaemonSettings)
    notify: NotifySettings = field(default_factory=NotifySettings)
    token: Secret | None = None
    config_path: Path | None = None
    # The --config a printed command repeats: none for ./hrsync.toml, which the command,
    # typed where the person is, finds again.
    command_config: Path | None = None
