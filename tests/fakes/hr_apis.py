"""Fakes of the HR APIs in the how-to recipes (docs/how-to/): their paging and auth shapes.

Each `*Api` is a handler for `tests.fakes.serve`, over the same people (by default the
sample org of config/sample-org.csv, which the DX simulator's demo scenario knows), with
knobs for the failures tests need: a page that fails, a revoked token, a wrong secret.
"""

from __future__ import annotations

import base64
import csv
import secrets
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import quote, urlencode

from tests.fakes import Request, Response

SAMPLE = Path(__file__).resolve().parents[2] / "config" / "sample-org.csv"


@dataclass(frozen=True)
class Person:
    id: str
    name: str
    email: str
    manager_id: str
    department: str
    active: bool


def sample_people() -> list[Person]:
    with SAMPLE.open(encoding="utf-8-sig", newline="") as fh:
        return [
            Person(
                row["Employee ID"],
                row["Full Name"],
                row["Work Email"],
                row["Manager ID"],
                row["Department"],
                row["Status"] == "Active",
            )
            for row in csv.DictReader(fh)
        ]


def basic(user: str, password: str) -> str:
    return "Basic " + base64.b64encode(f"{user}:{password}".encode()).decode()


@dataclass
class Faults:
    """Knobs shared by the fakes."""

    fail_page: int | None = None  # this page (1-based) answers 503 ...
    fail_times: int = 10**9  # ... this many times
    failed: int = 0

    def failing(self, page: int) -> Response | None:
        if page == self.fail_page and self.failed < self.fail_times:
            self.failed += 1
            return Response.of_json({"error": "unavailable"}, 503, {"Retry-After": "0"})
        return None


@dataclass
class OAuth2Server:
    """A client-credentials token endpoint: counts tokens, can revoke or expire them."""

    client_id: str = "hrsync-client"
    client_secret: str = field(default_factory=lambda: "cs-" + secrets.token_hex(12))
    lifetime_s: int = 3600
    issued: list[str] = field(default_factory=list)
    revoked: set[str] = field(default_factory=set)
    forms: list[dict[str, str]] = field(default_factory=list)

    def token(self, request: Request) -> Response:
        form = request.form()
        self.forms.append(form)
        if form.get("grant_type") != "client_credentials":
            return Response.of_json({"error": "unsupported_grant_type"}, 400)
        if (
            form.get("client_id") != self.client_id
            or form.get("client_secret") != self.client_secret
        ):
            return Response.of_json(
                {"error": "invalid_client", "error_description": "AADSTS7000215: bad secret"}, 401
            )
        token = "at-" + secrets.token_hex(16)
        self.issued.append(token)
        return Response.of_json(
            {"access_token": token, "token_type": "Bearer", "expires_in": self.lifetime_s}
        )

    def allows(self, request: Request) -> bool:
        header = request.headers.get("authorization", "")
        token = header.removeprefix("Bearer ")
        return header.startswith("Bearer ") and token in self.issued and token not in self.revoked


def _page(people: list[Any], start: int, size: int) -> list[Any]:
    return people[start : start + size]


@dataclass
class GraphApi:
    """Microsoft Graph: /v1.0/users with $expand=manager, @odata.nextLink, OAuth2; and
    /v1.0/users/delta, whose first round is every user, each page but the last pointing on
    by @odata.nextLink and the last holding @odata.deltaLink instead; a user's manager,
    when $select names it, is the list ``manager@delta`` of one directory object."""

    people: list[Person] = field(default_factory=sample_people)
    page_size: int = 10
    oauth: OAuth2Server = field(default_factory=OAuth2Server)
    faults: Faults = field(default_factory=Faults)
    revoke_after_page: int | None = None  # revoke the token in use after serving this page
    pages_served: int = 0
    delta_selects: dict[int, str] = field(default_factory=dict)  # $skiptoken -> $select
    # As Graph does: /v1.0/users answers only the fields $select names (employeeId,
    # userPrincipalName too), `$filter=accountEnabled eq true` keeps the enabled, and each
    # @odata.nextLink carries the request's own query. Off: the fixed shape older tests read.
    query_options: bool = False
    last_page: int | None = None  # this page answers without its @odata.nextLink (truncated)

    def __call__(self, request: Request, base: str) -> Response:
        if request.path.endswith("/oauth2/v2.0/token") and request.method == "POST":
            return self.oauth.token(request)
        if request.path not in ("/v1.0/users", "/v1.0/users/delta"):
            return Response.of_json({"error": {"code": "NotFound"}}, 404)
        if not self.oauth.allows(request):
            return Response.of_json({"error": {"code": "InvalidAuthenticationToken"}}, 401)
        delta = request.path.endswith("/delta")
        if self.query_options and not delta:
            return self._users(request, base)
        skip = int(request.query.get("$skiptoken", "0"))
        page = skip // self.page_size + 1
        failure = self.faults.failing(page)
        if failure:
            return failure
        chunk = _page(self.people, skip, self.page_size)
        if delta:
            # The first request's $select is carried in the tokens of the links after it.
            select = request.query.get("$select") or self.delta_selects.get(skip, "")
            users = [self._delta_user(p, "manager" in select.split(",")) for p in chunk]
            self.delta_selects[skip + self.page_size] = select
        else:
            users = [self._user(p) for p in chunk]
        body: dict[str, Any] = {"@odata.context": f"{base}/v1.0/$metadata#users", "value": users}
        if skip + self.page_size < len(self.people) and delta:
            body["@odata.nextLink"] = f"{base}/v1.0/users/delta?$skiptoken={skip + self.page_size}"
        elif skip + self.page_size < len(self.people):
            body["@odata.nextLink"] = (
                f"{base}/v1.0/users?$select=id,displayName,mail,department,accountEnabled"
                f"&$expand=manager($select=id)&$top={self.page_size}"
                f"&$skiptoken={skip + self.page_size}"
            )
        elif delta:
            body["@odata.deltaLink"] = f"{base}/v1.0/users/delta?$deltatoken=d{len(self.people)}"
        self.pages_served += 1
        if self.revoke_after_page == self.pages_served:
            self.oauth.revoked.add(request.headers["authorization"].removeprefix("Bearer "))
        return Response.of_json(body)

    def _users(self, request: Request, base: str) -> Response:
        """/v1.0/users with its query options read as Graph reads them."""
        query = dict(request.query)
        skip = int(query.pop("$skiptoken", "0"))
        page = skip // self.page_size + 1
        failure = self.faults.failing(page)
        if failure:
            return failure
        wanted = query.get("$filter", "")
        if wanted not in ("", "accountEnabled eq true"):
            return Response.of_json({"error": {"code": "Request_UnsupportedQuery"}}, 400)
        people = [p for p in self.people if p.active or not wanted]
        select = [name for name in query.get("$select", "").split(",") if name]
        users = [
            {**self._user(p), "employeeId": p.id, "userPrincipalName": p.email}
            for p in _page(people, skip, self.page_size)
        ]
        if select:
            users = [{name: user.get(name) for name in select} for user in users]
        body: dict[str, Any] = {"@odata.context": f"{base}/v1.0/$metadata#users", "value": users}
        if skip + self.page_size < len(people) and page != self.last_page:
            following = urlencode({**query, "$skiptoken": skip + self.page_size}, quote_via=quote)
            body["@odata.nextLink"] = f"{base}/v1.0/users?{following}"
        self.pages_served += 1
        return Response.of_json(body)

    @staticmethod
    def _user(p: Person) -> dict[str, Any]:
        user: dict[str, Any] = {
            "id": p.id,
            "displayName": p.name,
            "mail": p.email,
            "department": p.department,
            "accountEnabled": p.active,
        }
        if p.manager_id:
            user["manager"] = {"@odata.type": "#microsoft.graph.user", "id": p.manager_id}
        return user

    @classmethod
    def _delta_user(cls, p: Person, with_manager: bool) -> dict[str, Any]:
        user = cls._user(p)
        manager = user.pop("manager", None)
        if with_manager and manager:
            user["manager@delta"] = [manager]
        return user


@dataclass
class OktaApi:
    """Okta: /api/v1/users, `Link: <...>; rel="next"`, `Authorization: SSWS <token>`."""

    people: list[Person] = field(default_factory=sample_people)
    api_token: str = field(default_factory=lambda: "00" + secrets.token_hex(16))
    faults: Faults = field(default_factory=Faults)
    max_limit: int = 10  # below the recipe's limit=200, so the sample org spans pages

    def __call__(self, request: Request, base: str) -> Response:
        if request.path != "/api/v1/users":
            return Response.of_json({"errorCode": "E0000022"}, 404)
        if request.headers.get("authorization") != f"SSWS {self.api_token}":
            return Response.of_json({"errorCode": "E0000011", "errorSummary": "Invalid token"}, 401)
        limit = min(int(request.query.get("limit", "200")), self.max_limit)
        after = request.query.get("after", "")
        ids = [p.id for p in self.people]
        start = ids.index(after) + 1 if after else 0
        failure = self.faults.failing(start // limit + 1)
        if failure:
            return failure
        chunk = _page(self.people, start, limit)
        links = [f'<{base}/api/v1/users?limit={limit}>; rel="self"']
        if start + limit < len(self.people):
            links.append(f'<{base}/api/v1/users?after={chunk[-1].id}&limit={limit}>; rel="next"')
        users = [self._user(p, start + n) for n, p in enumerate(chunk)]
        return Response.of_json(users, headers={"Link": ", ".join(links)})

    # Okta's statuses of an account whose person is still employed, beside ACTIVE.
    EMPLOYED = ("LOCKED_OUT", "PASSWORD_EXPIRED", "SUSPENDED", "RECOVERY", "PROVISIONED")

    @classmethod
    def _user(cls, p: Person, n: int) -> dict[str, Any]:
        # Every seventh employed person in another employed status; profile.managerId is
        # the manager's Okta user id (as Okta's own tools set it), not an employee number.
        status = cls.EMPLOYED[n // 7 % len(cls.EMPLOYED)] if n % 7 == 3 else "ACTIVE"
        first, _, last = p.name.partition(" ")
        return {
            "id": "00u" + p.id.lower() + "x8a7",
            "status": status if p.active else "DEPROVISIONED",
            "profile": {
                "employeeNumber": p.id,
                "firstName": first,
                "lastName": last,
                "displayName": p.name,
                "email": p.email,
                "login": p.email,
                "department": p.department,
                "managerId": "00u" + p.manager_id.lower() + "x8a7" if p.manager_id else None,
            },
        }


@dataclass
class BambooHrApi:
    """BambooHR: POST /api/gateway.php/{company}/v1/reports/custom, basic auth (key:x)."""

    people: list[Person] = field(default_factory=sample_people)
    api_key: str = field(default_factory=lambda: secrets.token_hex(20))
    bodies: list[Any] = field(default_factory=list)

    def __call__(self, request: Request, base: str) -> Response:
        if request.path != "/api/gateway.php/acme/v1/reports/custom" or request.method != "POST":
            return Response(404)
        if request.headers.get("authorization") != basic(self.api_key, "x"):
            return Response(401)
        body = request.json()
        self.bodies.append(body)
        fields = body.get("fields", []) if isinstance(body, dict) else []
        employees = [
            {
                key: value
                for key, value in {
                    "id": p.id,
                    "displayName": p.name,
                    "workEmail": p.email,
                    "supervisorEId": p.manager_id or None,
                    "department": p.department,
                    "status": "Active" if p.active else "Inactive",
                }.items()
                if key == "id" or key in fields
            }
            for p in self.people
        ]
        return Response.of_json(
            {"title": "hrsync", "fields": [{"id": f} for f in fields], "employees": employees}
        )


@dataclass
class HiBobApi:
    """HiBob: POST /v1/people/search, basic auth of a service user. As HiBob documents
    it, the search has no paging (no cursor, no limit): one answer holds every employee
    matched, the employed only unless ``showInactive`` is true. With `page_size` it pages
    by a ``cursor`` in the body instead, as other POST APIs do (HiBob's search does not)."""

    people: list[Person] = field(default_factory=sample_people)
    service_user: str = "SERVICE-1234"
    service_token: str = field(default_factory=lambda: secrets.token_hex(16))
    page_size: int | None = None
    bodies: list[Any] = field(default_factory=list)

    def __call__(self, request: Request, base: str) -> Response:
        if request.path != "/v1/people/search" or request.method != "POST":
            return Response(404)
        if request.headers.get("authorization") != basic(self.service_user, self.service_token):
            return Response(401)
        body = request.json()
        self.bodies.append(body)
        everyone = isinstance(body, dict) and body.get("showInactive") is True
        people = [p for p in self.people if everyone or p.active]
        if self.page_size is None:
            return Response.of_json({"employees": [self._employee(p) for p in people]})
        start = int(body.get("cursor") or 0)
        chunk = _page(people, start, self.page_size)
        answer: dict[str, Any] = {"employees": [self._employee(p) for p in chunk]}
        if start + self.page_size < len(people):
            answer["nextCursor"] = str(start + self.page_size)
        return Response.of_json(answer)

    @staticmethod
    def _employee(p: Person) -> dict[str, Any]:
        return {
            "id": p.id,
            "displayName": p.name,
            "email": p.email,
            "work": {
                "department": p.department,
                "reportsTo": {"id": p.manager_id} if p.manager_id else None,
            },
            "internal": {"lifecycleStatus": "employed" if p.active else "terminated"},
        }


@dataclass
class PersonioApi:
    """Personio: OAuth2 at /v2/auth/token, GET /v1/company/employees?limit=&offset=; each
    answer's ``metadata`` gives ``total_elements``, ``current_page`` and ``total_pages``,
    and without ``limit`` a page holds 50 (as Personio documents since 2025)."""

    people: list[Person] = field(default_factory=sample_people)
    oauth: OAuth2Server = field(default_factory=lambda: OAuth2Server(client_id="papi-client"))
    max_limit: int = 100  # Personio's maximum `limit` since January 2025

    def __call__(self, request: Request, base: str) -> Response:
        if request.path == "/v2/auth/token" and request.method == "POST":
            return self.oauth.token(request)
        if request.path != "/v1/company/employees":
            return Response(404)
        if not self.oauth.allows(request):
            return Response.of_json({"success": False, "error": {"code": 401}}, 401)
        limit = min(int(request.query.get("limit", "50")), self.max_limit)
        offset = int(request.query.get("offset", "0"))
        chunk = _page(self.people, offset, limit)
        total = len(self.people)
        metadata = {
            "total_elements": total,
            "current_page": offset // limit,
            "total_pages": -(-total // limit),
        }
        return Response.of_json(
            {
                "success": True,
                "metadata": metadata,
                "limit": limit,
                "offset": offset,
                "data": [self._e(p, offset + n) for n, p in enumerate(chunk)],
            }
        )

    @staticmethod
    def _e(p: Person, n: int) -> dict[str, Any]:
        # Employed: "active", and now and then "leave" or "onboarding"; a leaver "inactive".
        status = ("leave", "onboarding")[n // 9 % 2] if n % 9 == 4 else "active"
        first, _, last = p.name.partition(" ")
        supervisor = (
            {"type": "Employee", "attributes": {"id": {"label": "ID", "value": p.manager_id}}}
            if p.manager_id
            else None
        )
        return {
            "type": "Employee",
            "attributes": {
                "id": {"label": "ID", "value": p.id},
                "first_name": {"label": "First name", "value": first},
                "last_name": {"label": "Last name", "value": last},
                "preferred_name": {"label": "Preferred name", "value": ""},
                "email": {"label": "Email", "value": p.email},
                "department": {
                    "label": "Department",
                    "value": {"type": "Department", "attributes": {"name": p.department}},
                },
                "supervisor": {"label": "Supervisor", "value": supervisor},
                "status": {"label": "Status", "value": status if p.active else "inactive"},
            },
        }


@dataclass
class WorkdayApi:
    """Workday RaaS: one GET of a custom report as JSON, basic auth of an ISU; one answer
    holds every row (RaaS does not page). A worker's positions are a group of the
    report, ``Positions_group``, each with its organization, its manager's employee ID and
    ``Is_Primary_Job`` (``"1"`` or ``"0"``, as RaaS writes booleans); every fifth worker
    also holds a second, additional position in another organization."""

    people: list[Person] = field(default_factory=sample_people)
    user: str = "ISU_hrsync"
    password: str = field(default_factory=lambda: secrets.token_hex(12))
    email_field: str | None = "Email_-_Work"  # None: a report without the work e-mail

    def __call__(self, request: Request, base: str) -> Response:
        if request.path != "/ccx/service/customreport2/acme/ISU_hrsync/DX_Org":
            return Response(404)
        if request.headers.get("authorization") != basic(self.user, self.password):
            return Response(401)
        entries = []
        for n, p in enumerate(self.people):
            primary: dict[str, Any] = {
                "Is_Primary_Job": "1",
                "Supervisory_Organization": p.department,
            }
            if p.manager_id:  # Workday leaves out an empty field: the CEO has no manager
                primary["Manager_ID"] = p.manager_id
            positions = [primary]
            if n % 5 == 4:
                other = self.people[(n + 7) % len(self.people)]
                positions.append(
                    {
                        "Is_Primary_Job": "0",
                        "Supervisory_Organization": "Projects " + other.department,
                        "Manager_ID": other.id,
                    }
                )
            entry: dict[str, Any] = {"Employee_ID": p.id, "Worker": p.name}
            if self.email_field:
                entry[self.email_field] = p.email
            entry["Worker_Status"] = "Active" if p.active else "Terminated"
            entry["Positions_group"] = positions
            entries.append(entry)
        return Response.of_json({"Report_Entry": entries})


SCIM_ENTERPRISE = "urn:ietf:params:scim:schemas:extension:enterprise:2.0:User"


@dataclass
class ScimApi:
    """SCIM 2.0 (RFC 7644), as Deel and identity providers serve it: GET /scim/v2/Users
    with ``startIndex`` (from 1) and ``count``; a ListResponse with ``totalResults``,
    ``itemsPerPage``, ``startIndex`` and ``Resources``; a bearer token. The server answers
    at most `max_count` (RFC 7644 lets it answer fewer than asked)."""

    people: list[Person] = field(default_factory=sample_people)
    token: str = field(default_factory=lambda: "scim-" + secrets.token_hex(16))
    max_count: int = 10

    def __call__(self, request: Request, base: str) -> Response:
        if request.path != "/scim/v2/Users":
            return Response.of_json({"status": "404"}, 404)
        if request.headers.get("authorization") != f"Bearer {self.token}":
            return Response.of_json({"status": "401", "detail": "unauthorized"}, 401)
        start = max(int(request.query.get("startIndex", "1")), 1)
        count = min(int(request.query.get("count", str(self.max_count))), self.max_count)
        chunk = _page(self.people, start - 1, count)
        return Response.of_json(
            {
                "schemas": ["urn:ietf:params:scim:api:messages:2.0:ListResponse"],
                "totalResults": len(self.people),
                "itemsPerPage": len(chunk),
                "startIndex": start,
                "Resources": [self._user(p) for p in chunk],
            },
            headers={"Content-Type": "application/scim+json"},
        )

    @staticmethod
    def _user(p: Person) -> dict[str, Any]:
        enterprise: dict[str, Any] = {"employeeNumber": p.id, "department": p.department}
        if p.manager_id:
            enterprise["manager"] = {"value": "u-" + p.manager_id}
        return {
            "schemas": ["urn:ietf:params:scim:schemas:core:2.0:User", SCIM_ENTERPRISE],
            "id": "u-" + p.id,
            "userName": p.email,
            "displayName": p.name,
            "active": p.active,
            "emails": [{"value": p.email, "type": "work", "primary": True}],
            SCIM_ENTERPRISE: enterprise,
        }


@dataclass
class BambooHrDatasetsApi:
    """BambooHR's Datasets API: POST /api/v1/datasets/employee with the fields in the
    body, basic auth (key:x); each answer's ``links.next`` is the next page's URL (null on
    the last page) and ``meta`` counts the records."""

    people: list[Person] = field(default_factory=sample_people)
    api_key: str = field(default_factory=lambda: secrets.token_hex(20))
    page_size: int = 10

    def __call__(self, request: Request, base: str) -> Response:
        if request.path != "/api/v1/datasets/employee" or request.method != "POST":
            return Response(404)
        if request.headers.get("authorization") != basic(self.api_key, "x"):
            return Response(401)
        page = int(request.query.get("page", "1"))
        chunk = _page(self.people, (page - 1) * self.page_size, self.page_size)
        more = page * self.page_size < len(self.people)
        path = f"{base}/api/v1/datasets/employee"
        return Response.of_json(
            {
                "fields": request.json().get("fields", []),
                "data": [self._row(p) for p in chunk],
                "links": {
                    "self": f"{path}?page={page}",
                    "next": f"{path}?page={page + 1}" if more else None,
                },
                "meta": {"totalRecords": len(self.people), "page": page},
            }
        )

    @staticmethod
    def _row(p: Person) -> dict[str, Any]:
        return {
            "employeeNumber": p.id,
            "name": p.name,
            "email": p.email,
            "supervisorEId": p.manager_id or None,
            "department": p.department,
            "status": "Active" if p.active else "Inactive",
        }


@dataclass
class RipplingApi:
    """Rippling's REST API: GET /workers (``limit``, ``cursor``), a bearer token; each
    answer's ``next_link`` is the next page's full URL (null on the last page), carrying
    the first request's ``expand``. A worker holds ``user_id`` and ``department_id``; the
    user (with its ``display_name``) and the department (with its ``name``) are objects
    only when ``expand`` names them."""

    people: list[Person] = field(default_factory=sample_people)
    token: str = field(default_factory=lambda: "rpl-" + secrets.token_hex(16))
    page_size: int = 10

    def __call__(self, request: Request, base: str) -> Response:
        if request.path != "/workers":
            return Response.of_json({"detail": "Not found"}, 404)
        if request.headers.get("authorization") != f"Bearer {self.token}":
            return Response.of_json({"detail": "Invalid token"}, 401)
        start = int(request.query.get("cursor") or 0)
        expand = request.query.get("expand", "")
        chunk = _page(self.people, start, self.page_size)
        more = start + self.page_size < len(self.people)
        carried = f"&expand={expand}" if expand else ""
        following = f"{base}/workers?cursor={start + self.page_size}{carried}"
        return Response.of_json(
            {
                "__meta": {"redacted_fields": []},
                "results": [self._worker(p, expand.split(",")) for p in chunk],
                "next_link": following if more else None,
            }
        )

    @staticmethod
    def _worker(p: Person, expand: list[str]) -> dict[str, Any]:
        worker: dict[str, Any] = {
            "id": "w-" + p.id,
            "user_id": "u-" + p.id,
            "work_email": p.email,
            "manager_id": "w-" + p.manager_id if p.manager_id else None,
            "department_id": "d-" + p.department.lower().replace(" ", "-"),
            "status": "ACTIVE" if p.active else "TERMINATED",
        }
        if "user" in expand:
            worker["user"] = {"id": "u-" + p.id, "display_name": p.name}
        if "department" in expand:
            worker["department"] = {"id": worker["department_id"], "name": p.department}
        return worker


@dataclass
class SuccessFactorsApi:
    """SAP SuccessFactors' OData v2 API: GET /odata/v2/User, basic auth of ``user@company``.

    As SuccessFactors answers: JSON only with ``$format=json`` (else Atom XML); the body
    is ``{"d": {"results": [...], "__next": URL}}``, ``__next`` (the request's own query
    with a ``$skiptoken``) on every page but the last; ``manager`` is an object only when
    ``$expand`` names it (else a ``__deferred`` link), null for the top of the org;
    without a ``$filter`` on ``status`` only active users (``status`` ``"t"``) are listed.
    """

    people: list[Person] = field(default_factory=sample_people)
    company: str = "ACME"
    user: str = "hrsync_api"
    password: str = field(default_factory=lambda: secrets.token_hex(12))
    page_size: int = 10

    @property
    def username(self) -> str:
        return f"{self.user}@{self.company}"

    def __call__(self, request: Request, base: str) -> Response:
        if request.path != "/odata/v2/User":
            return Response(404)
        if request.headers.get("authorization") != basic(self.username, self.password):
            return Response(401, b"<error>Unauthorized</error>", {"Content-Type": "text/xml"})
        query = dict(request.query)
        start = int(query.pop("$skiptoken", "0") or 0)
        everyone = "status in 't','f'" in query.get("$filter", "")
        people = [p for p in self.people if p.active or everyone]
        expand = query.get("$expand", "").split(",")
        chunk = _page(people, start, self.page_size)
        if query.get("$format") != "json":
            return Response(200, self._atom(base, chunk), {"Content-Type": "application/atom+xml"})
        body: dict[str, Any] = {"results": [self._user(base, p, expand) for p in chunk]}
        if start + self.page_size < len(people):
            following = urlencode({**query, "$skiptoken": start + self.page_size}, quote_via=quote)
            body["__next"] = f"{base}/odata/v2/User?{following}"
        return Response.of_json({"d": body})

    @staticmethod
    def _user(base: str, p: Person, expand: list[str]) -> dict[str, Any]:
        uri = f"{base}/odata/v2/User('{p.id}')"
        manager: Any = {"__deferred": {"uri": f"{uri}/manager"}}
        if "manager" in expand:
            manager = None
            if p.manager_id:
                manager = {
                    "__metadata": {"uri": f"{base}/odata/v2/User('{p.manager_id}')"},
                    "userId": p.manager_id,
                }
        return {
            "__metadata": {"uri": uri, "type": "SFOData.User"},
            "userId": p.id,
            "username": p.email.partition("@")[0],
            "defaultFullName": p.name,
            "email": p.email,
            "department": p.department,
            "status": "t" if p.active else "f",
            "manager": manager,
        }

    @staticmethod
    def _atom(base: str, chunk: list[Person]) -> bytes:
        entries = "".join(
            f"<entry><id>{base}/odata/v2/User('{p.id}')</id><content type=\"application/xml\">"
            f"<m:properties><d:userId>{p.id}</d:userId></m:properties></content></entry>"
            for p in chunk
        )
        return (
            '<?xml version="1.0" encoding="utf-8"?>'
            '<feed xmlns="http://www.w3.org/2005/Atom" '
            'xmlns:d="http://schemas.microsoft.com/ado/2007/08/dataservices" '
            'xmlns:m="http://schemas.microsoft.com/ado/2007/08/dataservices/metadata">'
            f"<title>User</title>{entries}</feed>"
        ).encode()
