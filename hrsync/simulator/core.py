"""The simulated DX account: state, auth, methods and faults, without sockets.

``SimulatedDx.handle`` takes one request's parts and returns a ``Response``; the
HTTP layer (``server.py``) only moves bytes. All state sits behind one lock.
Time comes from an injected clock, or from the simulator's own clock that tests
and demos move with ``advance``. Accepted imports are applied lazily: every call
first applies an import whose delay has passed, so no background thread is needed
and any clock gives deterministic results.

HTTP statuses (DX documents none of them; clients must decide on the body):
401 ``not_authed``/``invalid_auth``, 403 ``not_authorized``, 404 ``unknown_method``
and unknown snapshot, 404 ``user_not_found`` (``users.attributes.update`` for an
e-mail DX does not know: the spec shows no error for it, so this code and status are
the simulator's assumption), 405 wrong HTTP verb, 400 ``invalid_arguments``, 413
``payload_too_large``, 429 rate limit; the other orgfiles errors (``invalid_rows``,
``circular_reference``, ``invalid_email``, ``snapshot_in_progress``,
``import_in_progress``) come as HTTP 200 with ``ok: false``, as many DX errors do.
"""

from __future__ import annotations

import base64
import binascii
import json
import math
import threading
import zlib
from collections import deque
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta
from typing import Any, Final

import structlog

from hrsync.clock import Clock, utcnow
from hrsync.dx import methods
from hrsync.simulator.faults import Fault, FaultBook
from hrsync.simulator.hierarchy import (
    MAX_TEAMS_PAYLOAD_BYTES,
    Rejection,
    looks_like_email,
    teams_payload_size,
    validate_teams,
)
from hrsync.simulator.importer import apply_import, user_json
from hrsync.simulator.records import (
    ORG_TOKEN,
    PERSONAL_TOKEN,
    ROOT_SENTINEL,
    ApiKeyRecord,
    AuditRecord,
    IdMint,
    ImportRecord,
    Notification,
    SnapshotRecord,
    TeamRecord,
    TokenRecord,
    UserRecord,
    opaque_id,
)
from hrsync.simulator.scenario import Scenario, ScenarioUser, TimeRef, default_scenario
from hrsync.simulator.variation import Variation, choose_seed, order_rng, variation_for
from hrsync.simulator.wire import (
    HTML_TYPE,
    RecordedRequest,
    Response,
    failure,
    iso,
    json_response,
    ok,
)

log = structlog.get_logger(__name__)


# The simulator's own method (not DX's): make a person a DX user now.
SIMULATOR_USERS_ADD: Final = "simulator.users.add"
_PROXY_PAGE: Final = (
    b"<html><head><title>502 Bad Gateway</title></head><body>"
    b"<center><h1>502 Bad Gateway</h1></center><hr><center>nginx</center></body></html>"
)
_CURSOR_PREFIX: Final = "before:"
_RECORDED_TEXT_LIMIT: Final = 2000
_API_KEY_USE_GRANULARITY: Final = timedelta(minutes=1)


@dataclass(slots=True)
class _Call:
    method: str
    http_method: str
    headers: Mapping[str, str]
    query: dict[str, str]
    body: dict[str, Any] | None
    body_problem: str | None
    now: datetime
    token: TokenRecord | None = None


@dataclass(frozen=True, slots=True)
class _Method:
    http_method: str
    scope: str | None
    handler: Callable[[SimulatedDx, _Call], Response]


class SimulatedDx:
    """One simulated DX account. Thread-safe; every public method takes the lock."""

    def __init__(
        self,
        scenario: Scenario | None = None,
        clock: Clock | None = None,
        *,
        seed: int | None = None,
    ) -> None:
        self.scenario = scenario if scenario is not None else default_scenario()
        if seed is None:
            seed = self.scenario.seed if self.scenario.seed is not None else choose_seed()
        # Public so that a test may pin one choice: `dataclasses.replace(dx.variation, …)`.
        self.variation: Variation = variation_for(seed)
        self._order = order_rng(seed)
        self._external_clock = clock
        self._offset = timedelta(0)
        self._lock = threading.RLock()
        self.requests: list[RecordedRequest] = []
        self.imports: list[ImportRecord] = []
        self.notifications: list[Notification] = []
        self.tokens: dict[str, TokenRecord] = {}
        self._faults = FaultBook()
        self._users: dict[str, UserRecord] = {}
        self._users_by_email: dict[str, UserRecord] = {}
        self._api_keys: dict[str, ApiKeyRecord] = {}
        self._teams: dict[str, TeamRecord] = {}
        self._snapshots: dict[str, SnapshotRecord] = {}
        self._events: list[AuditRecord] = []
        # The account's user attribute groups, by name: when each was created.
        self._attribute_groups: dict[str, datetime] = {}
        self._pending: ImportRecord | None = None
        # Users who become DX users later (scenario `joins_at`), soonest first.
        self._joining: list[tuple[datetime, ScenarioUser]] = []
        self._recent_requests: deque[datetime] = deque()
        self._user_ids = IdMint(512050)
        self._team_ids = IdMint(50600)
        self._event_ids = IdMint(141000)
        self._import_ids = IdMint(7100)
        self._snapshot_ids = IdMint(9000)
        self._seed(self.now())

    @property
    def seed(self) -> int:
        return self.variation.seed

    # ---- time -------------------------------------------------------------------------

    def now(self) -> datetime:
        moment = self._external_clock() if self._external_clock else utcnow()
        if moment.tzinfo is None:
            raise ValueError("the simulator's clock must return timezone-aware datetimes")
        return moment + self._offset

    def advance(self, seconds: float) -> None:
        """Move the simulator's own clock forward (only without an injected clock)."""
        if self._external_clock is not None:
            raise RuntimeError("this simulator runs on an injected clock; advance that clock")
        with self._lock:
            self._offset += timedelta(seconds=seconds)

    # ---- seeding ----------------------------------------------------------------------

    def _seed(self, start: datetime) -> None:
        scenario = self.scenario
        for user in scenario.users:
            joins = _resolve(user.joins_at, start) if user.joins_at is not None else start
            if joins <= start:
                self._add_user(user.name, user.email, user.id)
            else:
                self._joining.append((joins, user))
        self._joining.sort(key=lambda pair: pair[0])
        for key in scenario.api_keys:
            self._api_keys[key.id] = ApiKeyRecord(
                id=key.id,
                name=key.name,
                scopes=key.scopes,
                created_at=_resolve(key.created_at, start),
                last_used_at=_resolve(key.last_used_at, start) if key.last_used_at else None,
            )
        for token in scenario.tokens:
            self.tokens[token.value] = TokenRecord(
                value=token.value,
                kind=token.kind,
                scopes=frozenset(token.scopes),
                user_email=self._users_by_email[token.user_email.casefold()].email
                if token.user_email
                else None,
                api_key_id=token.api_key_id,
            )
        ids_by_position: list[str] = []
        for team in scenario.teams:
            record = TeamRecord(
                id=self._team_ids.mint(),
                name=team.name,
                reference_id=team.reference_id,
                parent_id=None,
                manager_id=self._users_by_email[team.lead_email.casefold()].id,
                member_emails=self._known_members(team.contributors),
                last_changed_at=_resolve(team.last_changed_at, start)
                if team.last_changed_at is not None
                else start,
            )
            self._teams[record.id] = record
            ids_by_position.append(record.id)
        by_reference = {
            t.reference_id: ids_by_position[i]
            for i, t in enumerate(scenario.teams)
            if t.reference_id is not None
        }
        by_name = {t.name: ids_by_position[i] for i, t in enumerate(scenario.teams)}
        for i, team in enumerate(scenario.teams):
            if team.parent_reference_id is not None:
                self._teams[ids_by_position[i]].parent_id = by_reference[team.parent_reference_id]
            elif team.parent_name is not None:
                self._teams[ids_by_position[i]].parent_id = by_name[team.parent_name]
        for snap in scenario.snapshots:
            scheduled = snap.scheduled_for
            self._add_snapshot(
                SnapshotRecord(
                    id=snap.id,
                    scheduled_for=(start + scheduled).date()
                    if isinstance(scheduled, timedelta)
                    else scheduled,
                    completed_at=_resolve(snap.completed_at, start) if snap.completed_at else None,
                    deleted_at=_resolve(snap.deleted_at, start) if snap.deleted_at else None,
                    completed_count=snap.completed_count,
                    total_count=snap.total_count,
                )
            )
        for fault in scenario.faults:
            self._faults.add(fault)

    def _add_user(self, name: str, email: str, user_id: str | None) -> UserRecord:
        if email.casefold() in self._users_by_email:
            raise ValueError(f"a user with e-mail {email!r} already exists")
        if user_id is None:
            user_id = self._user_ids.mint()
        elif user_id in self._users:
            raise ValueError(f"a user with id {user_id!r} already exists")
        else:
            self._user_ids.reserve(user_id)
        user = UserRecord(id=user_id, name=name, email=email)
        self._users[user.id] = user
        self._users_by_email[email.casefold()] = user
        return user

    def _admit_due_users(self, now: datetime) -> None:
        """Users whose `joins_at` has come are DX users from now on (in time order)."""
        while self._joining and self._joining[0][0] <= now:
            _, user = self._joining.pop(0)
            if user.email.casefold() not in self._users_by_email:  # added by hand meanwhile
                self._add_user(user.name, user.email, user.id)

    def _add_snapshot(self, snapshot: SnapshotRecord) -> None:
        if snapshot.id in self._snapshots:
            raise ValueError(f"a snapshot with id {snapshot.id!r} already exists")
        self._snapshot_ids.reserve(snapshot.id)
        self._snapshots[snapshot.id] = snapshot

    def _known_members(self, emails: tuple[str, ...] | list[str]) -> list[str]:
        members: list[str] = []
        for email in emails:
            user = self._users_by_email.get(email.casefold())
            if user is not None and user.email not in members:
                members.append(user.email)
        return members

    # ---- helpers for tests and demos --------------------------------------------------

    def add_fault(self, fault: Fault) -> None:
        with self._lock:
            self._faults.add(fault)

    def clear_faults(self) -> None:
        with self._lock:
            self._faults.clear()

    def pending_faults(self) -> list[tuple[Fault, int]]:
        with self._lock:
            return self._faults.pending()

    def add_user(self, name: str, email: str, user_id: str | None = None) -> str:
        """Create a user (DX learns about people from other integrations); returns its id."""
        with self._lock:
            return self._add_user(name, email, user_id).id

    def add_snapshot(
        self,
        *,
        snapshot_id: str | None = None,
        scheduled_for: date | None = None,
        completed_at: datetime | None = None,
        deleted_at: datetime | None = None,
        completed_count: int = 0,
        total_count: int = 0,
    ) -> str:
        """Add a snapshot; without ``completed_at`` it is live. Returns its id."""
        with self._lock:
            now = self.now()
            snapshot = SnapshotRecord(
                id=snapshot_id or self._snapshot_ids.mint(),
                scheduled_for=scheduled_for or now.date(),
                completed_at=completed_at,
                deleted_at=deleted_at,
                completed_count=completed_count,
                total_count=total_count,
            )
            self._add_snapshot(snapshot)
            return snapshot.id

    def teams_view(self) -> list[dict[str, Any]]:
        """Current (non-archived) teams exactly as ``teams.list`` shows them, plus the
        member e-mails under ``member_emails``."""
        with self._lock:
            now = self.now()
            self._apply_due_import(now)
            parents = self._parent_ids()
            return [
                {**self._team_json(team, parents, now), "member_emails": list(team.member_emails)}
                for team in self._active_teams()
            ]

    def counts_pending(self) -> bool:
        """Some team's contributor count is not shown yet (the seed's count lag): what a
        test reads as DX's settled state waits for this to be False."""
        with self._lock:
            now = self.now()
            self._apply_due_import(now)
            return any(
                team.count_shown_at is not None and now < team.count_shown_at
                for team in self._teams.values()
            )

    def archived_teams(self) -> list[dict[str, Any]]:
        with self._lock:
            self._apply_due_import(self.now())
            return [
                {
                    "id": team.id,
                    "name": team.name,
                    "reference_id": team.reference_id,
                    "archived_at": iso(team.archived_at),
                }
                for team in self._teams.values()
                if team.archived_at is not None
            ]

    def audit_events(self) -> list[dict[str, Any]]:
        """Every audit event, newest first, as ``teams.auditTrail`` shows them."""
        with self._lock:
            now = self.now()
            self._apply_due_import(now)
            return [_event_json(event) for event in reversed(self._events) if event.shown(now)]

    @property
    def pending_import(self) -> ImportRecord | None:
        with self._lock:
            self._apply_due_import(self.now())
            return self._pending

    def users_view(self) -> list[dict[str, str]]:
        """Every user DX knows now: ``id``, ``name``, ``email``."""
        with self._lock:
            self._admit_due_users(self.now())
            return [user_json(user) for user in self._users.values()]

    def joining_users(self) -> list[tuple[datetime, str]]:
        """Who becomes a DX user later, and when, soonest first."""
        with self._lock:
            self._admit_due_users(self.now())
            return [(at, user.email) for at, user in self._joining]

    def user_attributes(self, email: str) -> dict[str, str]:
        with self._lock:
            return dict(self._users_by_email[email.casefold()].attributes)

    def attribute_groups(self) -> list[str]:
        """The user attribute groups of the account, in the order they were created."""
        with self._lock:
            return list(self._attribute_groups)

    # ---- the request core -------------------------------------------------------------

    def handle(
        self,
        http_method: str,
        path_method: str,
        headers: Mapping[str, str],
        query: Mapping[str, str],
        body_bytes: bytes,
    ) -> Response:
        """Answer one request. ``path_method`` is the last path segment (the method)."""
        method = path_method.strip("/")
        verb = http_method.upper()
        lowered = {key.lower(): value for key, value in headers.items()}
        with self._lock:
            now = self.now()
            self._admit_due_users(now)
            self._apply_due_import(now)
            body, problem, recorded_body = _parse_body(verb, lowered, body_bytes)
            call = _Call(method, verb, lowered, dict(query), body, problem, now)
            response = self._respond(call)
            error = _error_of(response)
            self.requests.append(
                RecordedRequest(
                    method_name=method,
                    http_method=verb,
                    query=dict(query),
                    body=recorded_body,
                    token_kind=call.token.kind if call.token else None,
                    status=0 if response.disconnect else response.status,
                    at=now,
                    error=error,
                )
            )
        log.debug(
            "simulator.request",
            method=method,
            http_method=verb,
            status=0 if response.disconnect else response.status,
            error=error,
            token_kind=call.token.kind if call.token else None,
        )
        return response

    def _respond(self, call: _Call) -> Response:
        fault = self._faults.take(call.method)
        if fault is not None and fault.kind in ("429", "500", "503", "drop", "html"):
            return _fault_response(fault)
        response = self._serve(call)
        if fault is not None and fault.kind == "drop_after_send":
            return Response(status=response.status, disconnect=True)
        if fault is not None and fault.kind == "latency":
            return Response(
                status=response.status,
                body=response.body,
                content_type=response.content_type,
                headers=response.headers,
                delay_s=fault.latency_s,
            )
        return response

    def _serve(self, call: _Call) -> Response:
        spec = _METHODS.get(call.method)
        if spec is None:
            return failure(404, "unknown_method", f"unknown method {call.method!r}")
        limited = self._rate_limit(call.now)
        if limited is not None:
            return limited
        if call.http_method != spec.http_method:
            return failure(
                405,
                "invalid_arguments",
                f"{call.method} is called with {spec.http_method}, not {call.http_method}",
            )
        denied = self._authenticate(call)
        if denied is not None:
            return denied
        token = call.token
        assert token is not None
        # DX lists not_authorized only for some methods; we answer it for every method whose
        # scope is missing (teams, snapshots, orgfiles included) since a 200 would be a lie.
        if spec.scope is not None and spec.scope not in token.scopes:
            return failure(
                403, "not_authorized", f"this token lacks the {spec.scope} scope for {call.method}"
            )
        if spec.http_method == "POST" and call.body_problem is not None:
            return failure(400, "invalid_arguments", call.body_problem)
        return spec.handler(self, call)

    def _rate_limit(self, now: datetime) -> Response | None:
        limit = self.scenario.rate_limit_per_minute
        if limit is None:
            return None
        window_start = now - timedelta(minutes=1)
        while self._recent_requests and self._recent_requests[0] <= window_start:
            self._recent_requests.popleft()
        if len(self._recent_requests) >= limit:
            wait = (self._recent_requests[0] - window_start).total_seconds()
            return _with_headers(
                failure(429, "too_many_requests", "more than the account's requests per minute"),
                (("Retry-After", str(max(1, math.ceil(wait)))),),
            )
        self._recent_requests.append(now)
        return None

    def _authenticate(self, call: _Call) -> Response | None:
        header = call.headers.get("authorization", "")
        scheme, _, value = header.strip().partition(" ")
        if scheme.lower() != "bearer" or not value.strip():
            return failure(401, "not_authed", "no authentication token provided")
        token = self.tokens.get(value.strip())
        if token is None:
            return failure(401, "invalid_auth", "the token cannot be validated")
        call.token = token
        if token.api_key_id is not None:
            key = self._api_keys.get(token.api_key_id)
            if key is not None and (
                key.last_used_at is None or call.now - key.last_used_at >= _API_KEY_USE_GRANULARITY
            ):
                key.last_used_at = call.now
        return None

    # ---- methods ----------------------------------------------------------------------

    def _whoami(self, call: _Call) -> Response:
        token = call.token
        assert token is not None
        user = self._users_by_email[token.user_email.casefold()] if token.user_email else None
        team = self._team_of(user) if user is not None else None
        team_json = None
        if team is not None:
            team_json = {
                "id": team.id,
                "name": team.name,
                "lead": user_json(self._users[team.manager_id]),
                "contributors": [
                    user_json(self._users_by_email[email.casefold()])
                    for email in team.member_emails
                ],
            }
        return ok(
            auth_token_type=token.kind,
            account={"name": self.scenario.account_name},
            user=user_json(user) if user is not None else None,
            team=team_json,
        )

    def _team_of(self, user: UserRecord) -> TeamRecord | None:
        active = self._active_teams()
        for team in active:
            if user.email in team.member_emails:
                return team
        for team in active:
            if team.manager_id == user.id:
                return team
        return None

    def _api_keys_list(self, call: _Call) -> Response:
        keys = sorted(self._api_keys.values(), key=lambda k: k.created_at, reverse=True)
        return ok(
            api_keys=[
                {
                    "id": key.id,
                    "name": key.name,
                    "scopes": list(key.scopes),
                    "last_used_at": iso(key.last_used_at) if key.last_used_at else None,
                    "created_at": iso(key.created_at),
                }
                for key in keys
            ]
        )

    def _snapshots_list(self, call: _Call) -> Response:
        return ok(snapshots=[self._snapshot_json(s) for s in self._snapshots.values()])

    def _snapshot_json(self, snapshot: SnapshotRecord) -> dict[str, Any]:
        changed = snapshot.completed_at or datetime.combine(
            snapshot.scheduled_for, datetime.min.time(), UTC
        )
        return {
            "id": snapshot.id,
            "account_id": self.scenario.account_id,
            "last_result_change_at": iso(changed),
            "scheduled_for": snapshot.scheduled_for.isoformat(),
            "completed_at": iso(snapshot.completed_at) if snapshot.completed_at else None,
            "completed_count": snapshot.completed_count,
            "deleted_at": iso(snapshot.deleted_at) if snapshot.deleted_at else None,
            "total_count": snapshot.total_count,
        }

    def _snapshots_info(self, call: _Call) -> Response:
        snapshot_id = call.query.get("snapshot_id", "")
        if not snapshot_id:
            return failure(400, "invalid_arguments", "snapshot_id is required")
        snapshot = self._snapshots.get(snapshot_id)
        if snapshot is None:
            return failure(404, "snapshot_not_found", f"no snapshot {snapshot_id!r}")
        factor = {"id": "factor-deep-work", "name": "Deep work"}
        scores = []
        parents = self._parent_ids()
        for team in self._active_teams():
            # Teams with fewer than three contributors are left out of snapshot results.
            if len(team.member_emails) < 3:
                continue
            seed = zlib.crc32(f"{snapshot.id}/{team.id}".encode())
            team_json = self._team_json(team, parents, call.now)
            scores.append(
                {
                    "snapshot_team": {
                        "id": opaque_id(seed % 1_000_000),
                        "name": team.name,
                        "team_id": team.id,
                        "parent": team_json["parent"],
                        "parent_id": team_json["parent_id"],
                        "ancestors": team_json["ancestors"],
                    },
                    "item_id": factor["id"],
                    "item_type": "factor",
                    "item_name": factor["name"],
                    "response_count": len(team.member_emails),
                    "score": 50 + seed % 40,
                    "contributor_count": len(team.member_emails),
                    **{name: float(seed % 11) - 5 for name in _VS_FIELDS},
                }
            )
        return ok(
            snapshot={
                **self._snapshot_json(snapshot),
                "team_scores": scores,
                "snapshot_items": {"factors": [factor], "csat": [], "kpis": []},
            }
        )

    def _teams_list(self, call: _Call) -> Response:
        parents = self._parent_ids()
        teams = self._active_teams()
        # The contract gives no order: each seed picks one (hrsync.simulator.variation).
        if self.variation.teams_order == "newest_first":
            teams.reverse()
        elif self.variation.teams_order == "shuffled":
            self._order.shuffle(teams)
        return ok(teams=[self._team_json(team, parents, call.now) for team in teams])

    def _active_teams(self) -> list[TeamRecord]:
        return [team for team in self._teams.values() if team.active]

    def _parent_ids(self) -> set[str]:
        """Ids of teams that have an active child: computed once per answer, not per team,
        so a 10,000-team account answers in milliseconds rather than seconds."""
        return {
            team.parent_id
            for team in self._teams.values()
            if team.active and team.parent_id is not None
        }

    def _team_json(self, team: TeamRecord, parents: set[str], now: datetime) -> dict[str, Any]:
        ancestors = [team.id]
        seen = {team.id}
        parent_id = team.parent_id
        while parent_id is not None and parent_id not in seen:
            ancestors.append(parent_id)
            seen.add(parent_id)
            parent_id = self._teams[parent_id].parent_id
        ancestors.append(ROOT_SENTINEL)
        return {
            "id": team.id,
            "parent_id": team.parent_id or ROOT_SENTINEL,
            "manager_id": team.manager_id,
            "name": team.name,
            "parent": team.id in parents,
            "ancestors": list(reversed(ancestors)),
            "last_changed_at": iso(team.last_changed_at),
            "contributors": team.contributor_count(now),
            "reference_id": team.reference_id,
        }

    def _audit_trail(self, call: _Call) -> Response:
        cursor = call.query.get("cursor") or None
        events = [event for event in reversed(self._events) if event.shown(call.now)]
        if cursor is not None:
            before = _decode_cursor(cursor)
            if before is None:
                return failure(400, "invalid_arguments", "cursor is not one this server gave out")
            events = [event for event in events if event.seq < before]
        page = events[: self.scenario.audit_page_size]
        more = len(events) > len(page)
        # The sample response has no `ok`; we keep it that way so clients must cope.
        return json_response(
            200,
            {
                "events": [_event_json(event) for event in page],
                "response_metadata": {
                    "next_cursor": _encode_cursor(page[-1].seq) if more and page else None
                },
            },
        )

    def _preview(self, call: _Call) -> Response:
        accepted = self._accept(call, kind="preview")
        if isinstance(accepted, Response):
            return accepted
        return ok(
            import_id=accepted.id,
            preview_url=f"{self.scenario.app_url}/admin/teams/imports/{accepted.id}",
        )

    def _process(self, call: _Call) -> Response:
        accepted = self._accept(call, kind="process")
        if isinstance(accepted, Response):
            return accepted
        return ok(import_id=accepted.id)

    def _accept(self, call: _Call, *, kind: str) -> ImportRecord | Response:
        body = call.body or {}
        teams = body.get("teams")
        if not isinstance(teams, list):
            return failure(400, "invalid_arguments", "teams is required: an array of teams")
        email = body.get("email")
        if kind == "process" and email is not None and not looks_like_email(email):
            return failure(200, "invalid_email", f"{email!r} is not an e-mail address")
        size = teams_payload_size(teams)
        if size > MAX_TEAMS_PAYLOAD_BYTES:
            return failure(
                413,
                "payload_too_large",
                f"teams is {size} bytes; the limit is {MAX_TEAMS_PAYLOAD_BYTES}",
            )
        blocking = self._blocking_snapshot(call.now)
        if blocking is not None:
            state = "live" if blocking.completed_at is None else "in its retroactive window"
            return failure(200, "snapshot_in_progress", f"snapshot {blocking.id} is {state}")
        if self._pending is not None:
            return failure(200, "import_in_progress", "a team hierarchy import is running")
        rows = validate_teams(
            teams,
            lambda e: e.casefold() in self._users_by_email,
            self.variation.invalid_rows,
        )
        if isinstance(rows, Rejection):
            return failure(200, rows.error, rows.message, rows.details)
        token = call.token
        assert token is not None
        record = ImportRecord(
            id=self._import_ids.mint(),
            kind="process" if kind == "process" else "preview",
            accepted_at=call.now,
            rows=rows,
            actor=token.user_email or self.scenario.import_actor_email,
            email=email if kind == "process" else None,
        )
        if kind == "process":
            record.due_at = call.now + timedelta(seconds=self.scenario.import_delay_s)
            self._pending = record
        self.imports.append(record)
        log.debug("simulator.import_accepted", import_id=record.id, kind=kind, teams=len(rows))
        # A zero delay completes at once, as seen by the very next request.
        self._apply_due_import(call.now)
        return record

    def _blocking_snapshot(self, now: datetime) -> SnapshotRecord | None:
        window = timedelta(days=self.scenario.retro_window_days)
        for snapshot in self._snapshots.values():
            if snapshot.deleted_at is not None:
                continue
            if snapshot.completed_at is None and snapshot.scheduled_for > now.date():
                continue  # scheduled for a later day: not live yet
            if snapshot.completed_at is None or now < snapshot.completed_at + window:
                return snapshot
        return None

    def _apply_due_import(self, now: datetime) -> None:
        pending = self._pending
        if pending is None or pending.due_at is None or now < pending.due_at:
            return
        at = pending.due_at
        shown_before = {team.id: team.contributor_count(at) for team in self._teams.values()}
        drafts = apply_import(
            self._teams, pending.rows, self._users_by_email, self._users, at, self._team_ids.mint
        )
        # DX may show an import's counts and audit events a little after the import itself.
        counts_at = at + timedelta(seconds=self.variation.count_lag_s)
        for team in self._teams.values():
            before = shown_before.get(team.id, 0)
            if counts_at > at and before != len(team.member_emails):
                team.count_before, team.count_shown_at = before, counts_at
        events_at = at + timedelta(seconds=self.variation.audit_lag_s)
        for draft in drafts:
            seq = len(self._events) + 1
            self._events.append(
                AuditRecord(
                    seq=seq,
                    id=self._event_ids.mint(),
                    actor=pending.actor,
                    team=draft.team,
                    action=draft.action,
                    metadata=draft.metadata,
                    created=at,
                    shown_at=events_at,
                )
            )
        pending.applied_at = at
        self._pending = None
        if pending.email is not None:
            self.notifications.append(Notification(pending.email, pending.id, "succeeded", at))
        log.debug("simulator.import_applied", import_id=pending.id, events=len(drafts))

    def _update_attributes(self, call: _Call) -> Response:
        body = call.body or {}
        email = body.get("email")
        attributes = body.get("attributes")
        if not isinstance(email, str) or not email:
            return failure(400, "invalid_arguments", "email is required")
        if not isinstance(attributes, list):
            return failure(400, "invalid_arguments", "attributes is required: an array")
        user = self._users_by_email.get(email.casefold())
        if user is None:
            return failure(404, "user_not_found", f"no user with e-mail {email!r}")
        results: list[dict[str, Any]] = []
        failures: list[dict[str, Any]] = []
        for position, item in enumerate(attributes):
            name = item.get("name") if isinstance(item, dict) else None
            value = item.get("value") if isinstance(item, dict) else None
            if not isinstance(name, str) or not name or not isinstance(value, str | int | float):
                failures.append({"index": position, "message": "expected {name, value}"})
                continue
            text = str(value)
            # "An attribute whose group does not exist creates the group."
            self._attribute_groups.setdefault(name, call.now)
            updated = user.attributes.get(name) != text
            user.attributes[name] = text
            results.append({"name": name, "value": text, "updated": updated})
        return ok(
            user={"id": user.id, "email": user.email, "failures": failures, "attributes": results}
        )

    def _simulator_users_add(self, call: _Call) -> Response:
        """`POST /simulator.users.add {"name", "email", "id"?}`: a person becomes a DX user
        now, as when DX's other integrations bring them in."""
        body = call.body or {}
        name, email = _text_field(body, "name"), _text_field(body, "email")
        if name is None or email is None or not looks_like_email(email):
            return failure(400, "invalid_arguments", "name and a valid email are required")
        user_id = _text_field(body, "id")
        try:
            user = self._add_user(name, email, user_id)
        except ValueError as exc:
            return failure(409, "already_exists", str(exc))
        self._joining = [
            pair for pair in self._joining if pair[1].email.casefold() != email.casefold()
        ]
        return ok(user=user_json(user))


_VS_FIELDS: Final = ("vs_prev", "vs_org", "vs_50th", "vs_75th", "vs_90th")

_METHODS: Final[dict[str, _Method]] = {
    methods.WHOAMI: _Method("GET", None, SimulatedDx._whoami),
    methods.API_KEYS_LIST: _Method("GET", "apiKeys:read", SimulatedDx._api_keys_list),
    methods.SNAPSHOTS_LIST: _Method("GET", "snapshots:read", SimulatedDx._snapshots_list),
    methods.SNAPSHOTS_INFO: _Method("GET", "snapshots:read", SimulatedDx._snapshots_info),
    methods.TEAMS_LIST: _Method("GET", "snapshots:read", SimulatedDx._teams_list),
    methods.TEAMS_AUDIT_TRAIL: _Method("GET", "snapshots:read", SimulatedDx._audit_trail),
    methods.PREVIEW: _Method("POST", "snapshots:admin", SimulatedDx._preview),
    methods.PROCESS: _Method("POST", "snapshots:admin", SimulatedDx._process),
    methods.USER_ATTRIBUTES_UPDATE: _Method("POST", "users:write", SimulatedDx._update_attributes),
    # Not DX's: the simulator's own call, so a rehearsal can make a person a DX user.
    SIMULATOR_USERS_ADD: _Method("POST", "snapshots:admin", SimulatedDx._simulator_users_add),
}

SERVED_METHODS: Final = frozenset(_METHODS)


def _text_field(body: Mapping[str, Any], key: str) -> str | None:
    value = body.get(key)
    return value.strip() if isinstance(value, str) and value.strip() else None


def _resolve(ref: TimeRef, start: datetime) -> datetime:
    return start + ref if isinstance(ref, timedelta) else ref


def _parse_body(
    verb: str, headers: Mapping[str, str], body_bytes: bytes
) -> tuple[dict[str, Any] | None, str | None, Any]:
    """The JSON object of a POST body, the problem with it, and what to record of it."""
    if verb != "POST":
        return None, None, None
    text = body_bytes.decode("utf-8", errors="replace")
    recorded: Any = text[:_RECORDED_TEXT_LIMIT] if text else None
    if "application/json" not in headers.get("content-type", "").lower():
        return None, "POST bodies must be JSON sent with Content-Type: application/json", recorded
    try:
        parsed = json.loads(body_bytes)
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        return None, f"the body is not valid JSON: {exc}", recorded
    if not isinstance(parsed, dict):
        return None, "the body must be a JSON object", parsed
    return parsed, None, parsed


def _error_of(response: Response) -> str | None:
    if response.disconnect or not response.content_type.startswith("application/json"):
        return None
    try:
        payload = json.loads(response.body)
    except json.JSONDecodeError:
        return None
    error = payload.get("error") if isinstance(payload, dict) else None
    return error if isinstance(error, str) else None


def _fault_response(fault: Fault) -> Response:
    if fault.kind == "drop":
        return Response(status=0, disconnect=True)
    if fault.kind == "html":
        return Response(status=502, body=_PROXY_PAGE, content_type=HTML_TYPE)
    if fault.kind == "429":
        response = failure(429, "too_many_requests", "rate limit exceeded")
        if fault.retry_after_s is None:
            return response
        return _with_headers(response, (("Retry-After", _seconds(fault.retry_after_s)),))
    if fault.kind == "500":
        return failure(500, "internal_error", "simulated server error")
    return failure(503, "service_unavailable", "simulated outage")


def _seconds(value: float) -> str:
    # HTTP wants whole seconds; fractions are kept (e.g. "0.2") so tests need not wait 1 s.
    return str(int(value)) if float(value).is_integer() else f"{value:g}"


def _with_headers(response: Response, headers: tuple[tuple[str, str], ...]) -> Response:
    return Response(
        status=response.status,
        body=response.body,
        content_type=response.content_type,
        headers=response.headers + headers,
        disconnect=response.disconnect,
        delay_s=response.delay_s,
    )


def _event_json(event: AuditRecord) -> dict[str, Any]:
    return {
        "id": event.id,
        "actor": event.actor,
        "team": event.team,
        "action": event.action,
        "metadata": event.metadata,
        "created": int(event.created.timestamp()),
    }


def _encode_cursor(seq: int) -> str:
    return base64.urlsafe_b64encode(f"{_CURSOR_PREFIX}{seq}".encode()).decode().rstrip("=")


def _decode_cursor(cursor: str) -> int | None:
    try:
        padded = cursor + "=" * (-len(cursor) % 4)
        text = base64.urlsafe_b64decode(padded.encode("ascii")).decode("ascii")
    except (binascii.Error, UnicodeError, ValueError):
        return None
    if not text.startswith(_CURSOR_PREFIX):
        return None
    number = text.removeprefix(_CURSOR_PREFIX)
    return int(number) if number.isdigit() else None


__all__ = ["ORG_TOKEN", "PERSONAL_TOKEN", "SERVED_METHODS", "SIMULATOR_USERS_ADD", "SimulatedDx"]
