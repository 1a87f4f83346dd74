"""Scenarios: the account a simulator starts with, loaded from JSON.

A scenario file (unknown keys are refused, so typos do not pass silently)::

    {
      "account_name": "Acme", "app_url": "https://app.dx.example",
      "users": [{"name": "Ada", "email": "ada@acme.example", "id": "U1"}],
      "tokens": [{"value": "tok", "kind": "account_web_api_token",
                  "scopes": ["snapshots:read", "snapshots:admin"], "api_key_id": "k1"},
                 {"value": "pat", "kind": "personal_access_token", "scopes": [],
                  "user_email": "ada@acme.example"}],
      "api_keys": [{"id": "k1", "name": "hrsync", "scopes": [], "created_at": {"days_ago": 9}}],
      "teams": [{"name": "Eng", "reference_id": "eng-001", "lead_email": "ada@acme.example",
                 "contributors": [], "parent_reference_id": null}],
      "snapshots": [{"id": "s1", "scheduled_for": "2026-01-05",
                     "completed_at": "2026-01-19T10:00:00Z", "deleted_at": null}],
      "import_delay_s": 2.0, "audit_page_size": 50, "retro_window_days": 21,
      "faults": [{"method": "teams.list", "kind": "429", "count": 2, "retry_after_s": 1}],
      "import_actor_email": "web-api@dx.example", "rate_limit_per_minute": 1000,
      "seed": 7
    }

Only ``account_name``, ``app_url`` and the lists' required fields must be given; a
scenario served by ``hrsync simulator`` also needs a token (``require_tokens``).
Times are ISO 8601 strings (a zone is required), or relative to the moment the
simulator starts: ``{"days_ago": 30}`` / ``{"hours_ago": 2}``, or ahead of it:
``{"in_days": 3}`` / ``{"in_hours": 6}``. A user with ``joins_at`` becomes a DX user
then (``{"name": "Nina", "email": "nina@acme.example", "joins_at": {"in_days": 2}}``);
until then DX ignores them as a contributor and refuses them as a lead. Tokens and
seeded teams need users who are there from the start. ``scheduled_for``
is a ``YYYY-MM-DD`` date or relative the same way. A team's parent is given by
``parent_reference_id`` or, for teams created in the web app without one, by
``parent_name``; ``reference_id`` null makes such a web-app team. A team's
``last_changed_at`` (a time) is when DX last changed it, else the simulator's start:
`hrsync demo --keep` writes it, so a kept DX started again shows no team edited since.

``seed`` picks what the simulator varies where DX's contract is silent (the shape of
``invalid_rows``, the order of ``teams.list``, how late audit events and contributor
counts trail an import: ``hrsync/simulator/variation.py``); without it a seed is chosen
at start, and ``hrsync simulator --seed N`` overrides it.

Faults (``hrsync/simulator/faults.py``): ``kind`` is ``429`` (with ``retry_after_s``),
``500``, ``503``, ``drop`` (connection closed before DX acts), ``drop_after_send`` (DX
acts, e.g. accepts a ``process``, then the connection closes), ``latency`` (answers
``latency_s`` late), ``html`` (a proxy's 502 page), each for the next ``count``
matching requests; or ``random``: every matching request meets one of the first six,
chosen evenly, with probability ``rate``, replayably with ``seed``, and it never runs
out, e.g. ``{"method": "*", "kind": "random", "rate": 0.3, "seed": 7}``.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import date, datetime, timedelta
from pathlib import Path
from typing import Any, Final, cast

from hrsync.simulator.faults import FAULT_KINDS, Fault, FaultKind
from hrsync.simulator.hierarchy import looks_like_email
from hrsync.simulator.records import ORG_TOKEN, PERSONAL_TOKEN, TOKEN_KINDS

# A time given relative to the simulator's start: a negative offset is in the past.
TimeRef = datetime | timedelta

ALL_SCOPES: Final = (
    "apiKeys:read",
    "snapshots:read",
    "snapshots:admin",
    "catalog:read",
    "catalog:write:entities",
    "scorecards:read",
    "scorecards:write",
    "studio:reports:read",
    "workflowRuns:trigger",
    "users:write",
    "pulse:manage",
)


class ScenarioError(ValueError):
    """A scenario that cannot be used; the message names the file and the field."""


@dataclass(frozen=True, slots=True)
class ScenarioUser:
    name: str
    email: str
    id: str | None = None
    # When the person becomes a DX user (DX learns people from other integrations, often
    # days after HR): until then DX ignores their e-mail as a contributor, refuses it as a
    # lead, and has no attributes for them. None: a user from the start.
    joins_at: TimeRef | None = None


@dataclass(frozen=True, slots=True)
class ScenarioToken:
    value: str
    kind: str  # account_web_api_token | personal_access_token
    scopes: tuple[str, ...]
    user_email: str | None = None  # personal tokens: the owner
    api_key_id: str | None = None  # the API key whose last_used_at this token updates


@dataclass(frozen=True, slots=True)
class ScenarioApiKey:
    id: str
    name: str
    scopes: tuple[str, ...]
    created_at: TimeRef
    last_used_at: TimeRef | None = None


@dataclass(frozen=True, slots=True)
class ScenarioTeam:
    name: str
    reference_id: str | None
    lead_email: str
    contributors: tuple[str, ...] = ()
    parent_reference_id: str | None = None
    parent_name: str | None = None
    # When DX last changed it (a kept DX started again); None: when the simulator starts.
    last_changed_at: TimeRef | None = None


@dataclass(frozen=True, slots=True)
class ScenarioSnapshot:
    id: str
    scheduled_for: date | timedelta
    completed_at: TimeRef | None
    deleted_at: TimeRef | None = None
    completed_count: int = 0
    total_count: int = 0


@dataclass(frozen=True, slots=True)
class Scenario:
    account_name: str
    app_url: str
    users: tuple[ScenarioUser, ...]
    tokens: tuple[ScenarioToken, ...]
    api_keys: tuple[ScenarioApiKey, ...] = ()
    teams: tuple[ScenarioTeam, ...] = ()
    snapshots: tuple[ScenarioSnapshot, ...] = ()
    import_delay_s: float = 2.0
    audit_page_size: int = 50
    retro_window_days: float = 21.0
    faults: tuple[Fault, ...] = ()
    account_id: str = "MTAwMQ"
    import_actor_email: str = "web-api@dx.example"  # audit actor of org-token imports
    rate_limit_per_minute: int | None = 1000
    source: str = "<scenario>"
    # What the simulator varies where the contract is silent (hrsync.simulator.variation);
    # None: chosen when it starts, unless `start_simulator(seed=…)` gives one.
    seed: int | None = None


def load_scenario(path: Path | str) -> Scenario:
    """Read and check a scenario file; ``ScenarioError`` names the file and field."""
    source = str(path)
    try:
        text = Path(path).read_text(encoding="utf-8")
    except OSError as exc:
        raise ScenarioError(f"{source}: cannot read the scenario file: {exc.strerror}") from None
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ScenarioError(
            f"{source}: not valid JSON (line {exc.lineno}, column {exc.colno}: {exc.msg})"
        ) from None
    return scenario_from_dict(data, source=source)


def scenario_from_dict(data: object, *, source: str = "<scenario>") -> Scenario:
    reader = _Reader(source)
    return reader.scenario(data)


_TOP_FIELDS: Final = {
    "account_name",
    "account_id",
    "app_url",
    "users",
    "tokens",
    "api_keys",
    "teams",
    "snapshots",
    "import_delay_s",
    "audit_page_size",
    "retro_window_days",
    "faults",
    "import_actor_email",
    "rate_limit_per_minute",
    "seed",
}


class _Reader:
    """Turns decoded JSON into a Scenario, failing with ``<file>: <field>: <problem>``."""

    def __init__(self, source: str) -> None:
        self.source = source

    def fail(self, where: str, problem: str) -> ScenarioError:
        return ScenarioError(f"{self.source}: {where}: {problem}")

    def obj(self, value: object, where: str, allowed: set[str]) -> Mapping[str, Any]:
        if not isinstance(value, dict):
            raise self.fail(where, f"expected an object, got {_kind(value)}")
        unknown = sorted(set(value) - allowed)
        if unknown:
            raise self.fail(
                f"{where}.{unknown[0]}" if where else unknown[0],
                f"unknown field; expected one of {sorted(allowed)}",
            )
        return cast(Mapping[str, Any], value)

    def text(self, data: Mapping[str, Any], key: str, where: str, *, optional: bool = False) -> Any:
        value = data.get(key)
        if value is None and optional:
            return None
        if not isinstance(value, str) or not value.strip():
            raise self.fail(_join(where, key), f"expected a non-empty string, got {_kind(value)}")
        return value

    def email(
        self, data: Mapping[str, Any], key: str, where: str, *, optional: bool = False
    ) -> Any:
        value = self.text(data, key, where, optional=optional)
        if value is not None and not looks_like_email(value):
            raise self.fail(_join(where, key), f"expected an e-mail address, got {value!r}")
        return value

    def number(self, data: Mapping[str, Any], key: str, default: float, *, minimum: float) -> float:
        value = data.get(key, default)
        if isinstance(value, bool) or not isinstance(value, int | float) or value < minimum:
            raise self.fail(key, f"expected a number of at least {minimum}, got {value!r}")
        return float(value)

    def integer(self, data: Mapping[str, Any], key: str, where: str, default: int) -> int:
        value = data.get(key, default)
        if isinstance(value, bool) or not isinstance(value, int) or value < 0:
            raise self.fail(_join(where, key), f"expected a whole number >= 0, got {value!r}")
        return value

    def items(self, data: Mapping[str, Any], key: str) -> list[tuple[str, Any]]:
        value = data.get(key, [])
        if not isinstance(value, list):
            raise self.fail(key, f"expected an array, got {_kind(value)}")
        return [(f"{key}[{i}]", item) for i, item in enumerate(value)]

    def strings(self, data: Mapping[str, Any], key: str, where: str) -> tuple[str, ...]:
        value = data.get(key, [])
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            raise self.fail(_join(where, key), "expected an array of strings")
        return tuple(value)

    def time(self, value: object, where: str) -> TimeRef:
        if isinstance(value, dict):
            return -self.offset(value, where)
        if isinstance(value, str):
            try:
                parsed = datetime.fromisoformat(value)
            except ValueError:
                raise self.fail(where, f"expected an ISO 8601 timestamp, got {value!r}") from None
            if parsed.tzinfo is None:
                raise self.fail(where, f"timestamp {value!r} needs a zone (e.g. Z or +00:00)")
            return parsed
        raise self.fail(where, f'expected an ISO 8601 string or {{"days_ago": N}}, got {value!r}')

    def offset(self, value: dict[str, Any], where: str) -> timedelta:
        units = {
            "days_ago": timedelta(days=1),
            "hours_ago": timedelta(hours=1),
            "in_days": timedelta(days=-1),
            "in_hours": timedelta(hours=-1),
        }
        if len(value) != 1 or not set(value) <= set(units):
            raise self.fail(where, f"expected exactly one of {', '.join(map(repr, units))}")
        ((unit, amount),) = value.items()
        if isinstance(amount, bool) or not isinstance(amount, int | float):
            raise self.fail(f"{where}.{unit}", f"expected a number, got {amount!r}")
        return units[unit] * amount

    def optional_time(self, data: Mapping[str, Any], key: str, where: str) -> TimeRef | None:
        value = data.get(key)
        return None if value is None else self.time(value, _join(where, key))

    def scenario(self, data: object) -> Scenario:
        top = self.obj(data, "", _TOP_FIELDS)
        users = tuple(self.user(item, where) for where, item in self.items(top, "users"))
        first_user: dict[str, int] = {}
        for position, user in enumerate(users):
            email = user.email.casefold()
            if email in first_user:
                raise self.fail(
                    f"users[{position}].email",
                    f"{user.email!r} is already used by users[{first_user[email]}]"
                    " (e-mails are compared ignoring case)",
                )
            first_user[email] = position
        ids = [u.id for u in users if u.id is not None]
        if len(ids) != len(set(ids)):
            raise self.fail("users", "user ids must be unique")
        # Tokens and seeded teams need their users from the start.
        known = {user.email.casefold() for user in users if user.joins_at is None}
        api_keys = tuple(self.api_key(item, where) for where, item in self.items(top, "api_keys"))
        key_ids = {key.id for key in api_keys}
        tokens = tuple(
            self.token(item, where, known, key_ids) for where, item in self.items(top, "tokens")
        )
        values = [t.value for t in tokens]
        if len(values) != len(set(values)):
            raise self.fail("tokens", "token values must be unique")
        teams = tuple(self.team(item, where, known) for where, item in self.items(top, "teams"))
        self.check_team_tree(teams)
        snapshots = tuple(
            self.snapshot(item, where) for where, item in self.items(top, "snapshots")
        )
        faults = tuple(self.fault(item, where) for where, item in self.items(top, "faults"))
        page_size = top.get("audit_page_size", 50)
        if isinstance(page_size, bool) or not isinstance(page_size, int) or page_size < 1:
            raise self.fail("audit_page_size", f"expected a whole number >= 1, got {page_size!r}")
        rate = top.get("rate_limit_per_minute", 1000)
        if rate is not None and (isinstance(rate, bool) or not isinstance(rate, int) or rate < 1):
            raise self.fail(
                "rate_limit_per_minute", f"expected a whole number >= 1 or null, got {rate!r}"
            )
        seed = top.get("seed")
        if seed is not None and (isinstance(seed, bool) or not isinstance(seed, int) or seed < 0):
            raise self.fail("seed", f"expected a whole number >= 0 or null, got {seed!r}")
        actor = top.get("import_actor_email", "web-api@dx.example")
        if not looks_like_email(actor):
            raise self.fail("import_actor_email", f"expected an e-mail address, got {actor!r}")
        return Scenario(
            account_name=self.text(top, "account_name", ""),
            account_id=top.get("account_id") or "MTAwMQ",
            app_url=str(self.text(top, "app_url", "")).rstrip("/"),
            users=users,
            tokens=tokens,
            api_keys=api_keys,
            teams=teams,
            snapshots=snapshots,
            import_delay_s=self.number(top, "import_delay_s", 2.0, minimum=0.0),
            audit_page_size=page_size,
            retro_window_days=self.number(top, "retro_window_days", 21.0, minimum=0.0),
            faults=faults,
            import_actor_email=actor,
            rate_limit_per_minute=rate,
            source=self.source,
            seed=seed,
        )

    def user(self, item: object, where: str) -> ScenarioUser:
        data = self.obj(item, where, {"id", "name", "email", "joins_at"})
        return ScenarioUser(
            name=self.text(data, "name", where),
            email=self.email(data, "email", where),
            id=self.text(data, "id", where, optional=True),
            joins_at=self.optional_time(data, "joins_at", where),
        )

    def token(
        self, item: object, where: str, known_emails: set[str], key_ids: set[str]
    ) -> ScenarioToken:
        data = self.obj(item, where, {"value", "kind", "scopes", "user_email", "api_key_id"})
        kind = self.text(data, "kind", where)
        if kind not in TOKEN_KINDS:
            raise self.fail(f"{where}.kind", f"expected one of {sorted(TOKEN_KINDS)}, got {kind!r}")
        user_email = self.email(data, "user_email", where, optional=True)
        if kind == PERSONAL_TOKEN and user_email is None:
            raise self.fail(
                f"{where}.user_email", "a personal_access_token needs its owner's e-mail"
            )
        if kind == ORG_TOKEN and user_email is not None:
            raise self.fail(f"{where}.user_email", "an account_web_api_token has no user")
        if user_email is not None and user_email.casefold() not in known_emails:
            raise self.fail(
                f"{where}.user_email", f"{user_email!r} is not one of the users from the start"
            )
        key_id = self.text(data, "api_key_id", where, optional=True)
        if key_id is not None and key_id not in key_ids:
            raise self.fail(f"{where}.api_key_id", f"{key_id!r} is not one of the api_keys")
        return ScenarioToken(
            value=self.text(data, "value", where),
            kind=kind,
            scopes=self.strings(data, "scopes", where),
            user_email=user_email,
            api_key_id=key_id,
        )

    def api_key(self, item: object, where: str) -> ScenarioApiKey:
        data = self.obj(item, where, {"id", "name", "scopes", "created_at", "last_used_at"})
        if "created_at" not in data:
            raise self.fail(f"{where}.created_at", "required")
        return ScenarioApiKey(
            id=self.text(data, "id", where),
            name=self.text(data, "name", where),
            scopes=self.strings(data, "scopes", where),
            created_at=self.time(data["created_at"], f"{where}.created_at"),
            last_used_at=self.optional_time(data, "last_used_at", where),
        )

    def team(self, item: object, where: str, known_emails: set[str]) -> ScenarioTeam:
        data = self.obj(
            item,
            where,
            {
                "name",
                "reference_id",
                "lead_email",
                "contributors",
                "parent_reference_id",
                "parent_name",
                "last_changed_at",
            },
        )
        lead = self.email(data, "lead_email", where)
        if lead.casefold() not in known_emails:
            raise self.fail(
                f"{where}.lead_email", f"{lead!r} is not one of the users from the start"
            )
        parent_ref = self.text(data, "parent_reference_id", where, optional=True)
        parent_name = self.text(data, "parent_name", where, optional=True)
        if parent_ref is not None and parent_name is not None:
            raise self.fail(
                where, "give the parent by parent_reference_id or parent_name, not both"
            )
        return ScenarioTeam(
            name=self.text(data, "name", where),
            reference_id=self.text(data, "reference_id", where, optional=True),
            lead_email=lead,
            contributors=self.strings(data, "contributors", where),
            parent_reference_id=parent_ref,
            parent_name=parent_name,
            last_changed_at=self.optional_time(data, "last_changed_at", where),
        )

    def check_team_tree(self, teams: tuple[ScenarioTeam, ...]) -> None:
        refs: dict[str, int] = {}
        names: dict[str, list[int]] = {}
        for i, team in enumerate(teams):
            if team.reference_id is not None:
                if team.reference_id in refs:
                    raise self.fail(
                        f"teams[{i}].reference_id",
                        f"{team.reference_id!r} is already used by "
                        f"teams[{refs[team.reference_id]}]",
                    )
                refs[team.reference_id] = i
            names.setdefault(team.name, []).append(i)
        parent_of: dict[int, int | None] = {}
        for i, team in enumerate(teams):
            if team.parent_reference_id is not None:
                if team.parent_reference_id not in refs:
                    raise self.fail(
                        f"teams[{i}].parent_reference_id",
                        f"no team has reference_id {team.parent_reference_id!r}",
                    )
                parent_of[i] = refs[team.parent_reference_id]
            elif team.parent_name is not None:
                matches = names.get(team.parent_name, [])
                if len(matches) != 1:
                    raise self.fail(
                        f"teams[{i}].parent_name",
                        f"{len(matches)} teams are named {team.parent_name!r}; "
                        "expected exactly one",
                    )
                parent_of[i] = matches[0]
            else:
                parent_of[i] = None
        for start in parent_of:
            seen: set[int] = set()
            node: int | None = start
            while node is not None:
                if node in seen:
                    raise self.fail(f"teams[{start}]", "the parents form a cycle")
                seen.add(node)
                node = parent_of[node]

    def snapshot(self, item: object, where: str) -> ScenarioSnapshot:
        data = self.obj(
            item,
            where,
            {"id", "scheduled_for", "completed_at", "deleted_at", "completed_count", "total_count"},
        )
        scheduled = data.get("scheduled_for")
        scheduled_for: date | timedelta
        if isinstance(scheduled, dict):
            scheduled_for = -self.offset(scheduled, f"{where}.scheduled_for")
        elif isinstance(scheduled, str):
            try:
                scheduled_for = date.fromisoformat(scheduled)
            except ValueError:
                raise self.fail(
                    f"{where}.scheduled_for", f"expected a YYYY-MM-DD date, got {scheduled!r}"
                ) from None
        else:
            raise self.fail(
                f"{where}.scheduled_for", f"expected a YYYY-MM-DD date, got {scheduled!r}"
            )
        return ScenarioSnapshot(
            id=self.text(data, "id", where),
            scheduled_for=scheduled_for,
            completed_at=self.optional_time(data, "completed_at", where),
            deleted_at=self.optional_time(data, "deleted_at", where),
            completed_count=self.integer(data, "completed_count", where, 0),
            total_count=self.integer(data, "total_count", where, 0),
        )

    def fault(self, item: object, where: str) -> Fault:
        data = self.obj(
            item, where, {"method", "kind", "count", "retry_after_s", "latency_s", "rate", "seed"}
        )
        kind = self.text(data, "kind", where)
        if kind not in FAULT_KINDS:
            raise self.fail(f"{where}.kind", f"expected one of {sorted(FAULT_KINDS)}, got {kind!r}")
        try:
            return Fault(
                method=self.text(data, "method", where),
                kind=cast(FaultKind, kind),
                count=self.integer(data, "count", where, 1),
                retry_after_s=data.get("retry_after_s", 1.0),
                latency_s=data.get("latency_s", 0.2),
                rate=data.get("rate", 0.0),
                seed=data.get("seed"),
            )
        except (ValueError, TypeError) as exc:
            raise self.fail(where, str(exc)) from None


def require_tokens(scenario: Scenario) -> None:
    """Refuse to serve a scenario without tokens: every call would fail ``invalid_auth``
    and there would be no token to print, which looks like a broken client instead."""
    if scenario.tokens:
        return
    example = json.dumps(
        {
            "value": "rehearsal-token",
            "kind": ORG_TOKEN,
            "scopes": ["snapshots:read", "snapshots:admin", "users:write"],
        }
    )
    raise ScenarioError(
        f"{scenario.source}: tokens: the scenario has no token, so every call would fail "
        f'invalid_auth; add one, e.g. "tokens": [{example}]'
    )


def _join(where: str, key: str) -> str:
    return f"{where}.{key}" if where else key


def _kind(value: object) -> str:
    if value is None:
        return "null"
    return {dict: "an object", list: "an array", str: "a string", bool: "a Boolean"}.get(
        type(value), f"a {type(value).__name__}"
    )


def default_scenario() -> Scenario:
    """A small seeded account: seven people, four teams (one made in the web app without
    a reference_id), three tokens and snapshots that leave the import window open."""
    return scenario_from_dict(_DEFAULT, source="<default scenario>")


_DEFAULT: Final[dict[str, Any]] = {
    "account_name": "Acme Robotics (simulated)",
    "app_url": "https://app.dx.example",
    "users": [
        {"name": "Ada Lovelace", "email": "ada@acme.example"},
        {"name": "Grace Hopper", "email": "grace@acme.example"},
        {"name": "Alan Turing", "email": "alan@acme.example"},
        {"name": "Barbara Liskov", "email": "barbara@acme.example"},
        {"name": "Edsger Dijkstra", "email": "edsger@acme.example"},
        {"name": "Margaret Hamilton", "email": "margaret@acme.example"},
        {"name": "Ken Thompson", "email": "ken@acme.example"},
    ],
    "api_keys": [
        {
            "id": "key-org",
            "name": "hrsync",
            "scopes": list(ALL_SCOPES),
            "created_at": {"days_ago": 90},
            "last_used_at": None,
        },
        {
            "id": "key-readonly",
            "name": "dashboards",
            "scopes": ["snapshots:read"],
            "created_at": {"days_ago": 30},
            "last_used_at": {"days_ago": 1},
        },
    ],
    "tokens": [
        {
            "value": "sim-org-token",
            "kind": "account_web_api_token",
            "scopes": list(ALL_SCOPES),
            "api_key_id": "key-org",
        },
        {
            "value": "sim-readonly-token",
            "kind": "account_web_api_token",
            "scopes": ["snapshots:read"],
            "api_key_id": "key-readonly",
        },
        {
            "value": "sim-personal-token",
            "kind": "personal_access_token",
            "scopes": list(ALL_SCOPES),
            "user_email": "grace@acme.example",
        },
    ],
    "teams": [
        {
            "name": "Engineering",
            "reference_id": "eng-001",
            "lead_email": "ada@acme.example",
            "contributors": ["grace@acme.example", "alan@acme.example"],
        },
        {
            "name": "Platform",
            "reference_id": "eng-002",
            "parent_reference_id": "eng-001",
            "lead_email": "grace@acme.example",
            "contributors": ["grace@acme.example", "barbara@acme.example", "edsger@acme.example"],
        },
        {
            "name": "Apps",
            "reference_id": "eng-003",
            "parent_reference_id": "eng-001",
            "lead_email": "alan@acme.example",
            "contributors": ["ken@acme.example"],
        },
        {
            "name": "Design Guild",
            "reference_id": None,
            "lead_email": "margaret@acme.example",
            "contributors": [],
        },
    ],
    "snapshots": [
        {
            "id": "snap-q1",
            "scheduled_for": {"days_ago": 75},
            "completed_at": {"days_ago": 60},
            "completed_count": 6,
            "total_count": 7,
        },
        {
            "id": "snap-cancelled",
            "scheduled_for": {"days_ago": 5},
            "completed_at": None,
            "deleted_at": {"days_ago": 4},
            "completed_count": 0,
            "total_count": 7,
        },
    ],
    "import_delay_s": 2.0,
    "audit_page_size": 50,
    "retro_window_days": 21,
}
