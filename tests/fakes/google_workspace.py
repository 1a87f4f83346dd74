"""A fake of Google Workspace for a service account: the token endpoint of the JWT-bearer
grant, and the Admin SDK Directory API's `users.list`.

The token endpoint checks what Google's does: the grant type, the assertion's RS256
signature against the service account's public key, `iss`, `sub` (the user acted as),
`aud` (this endpoint), `scope` (the scopes delegated to the service account), and an `exp`
no more than an hour after `iat` and not past. `users.list` answers in Google's shape
(`{"kind": "admin#directory#users", "users": [...], "nextPageToken": "..."}`), paged at
10 users whatever `maxResults` asks, the next page asked for with `pageToken`; it needs
`customer` or `domain` and a token the endpoint issued.

The private key is made when a test asks for one, never stored in the repository.
"""

from __future__ import annotations

import base64
import json
import secrets
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import padding, rsa

from tests.fakes import Request, Response
from tests.fakes.hr_apis import Person, sample_people

DIRECTORY_SCOPE = "https://www.googleapis.com/auth/admin.directory.user.readonly"
USERS_PATH = "/admin/directory/v1/users"
TOKEN_PATH = "/token"
JWT_BEARER = "urn:ietf:params:oauth:grant-type:jwt-bearer"


@dataclass
class ServiceAccount:
    """A service account and a key of it, made now (2048-bit RSA, as Google's)."""

    client_email: str = "hrsync-reader@acme-hr.iam.gserviceaccount.com"
    key_id: str = field(default_factory=lambda: secrets.token_hex(20))
    key: rsa.RSAPrivateKey = field(
        default_factory=lambda: rsa.generate_private_key(public_exponent=65537, key_size=2048)
    )

    @property
    def pem(self) -> str:
        return self.key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        ).decode()

    def key_file(self, token_uri: str) -> dict[str, str]:
        """The key file as the Google Cloud console downloads it."""
        return {
            "type": "service_account",
            "project_id": "acme-hr",
            "private_key_id": self.key_id,
            "private_key": self.pem,
            "client_email": self.client_email,
            "client_id": "109876543210987654321",
            "auth_uri": "https://accounts.google.com/o/oauth2/auth",
            "token_uri": token_uri,
            "auth_provider_x509_cert_url": "https://www.googleapis.com/oauth2/v1/certs",
            "universe_domain": "googleapis.com",
        }

    def write_key_file(self, path: Path, token_uri: str) -> Path:
        path.write_text(json.dumps(self.key_file(token_uri), indent=2), encoding="utf-8")
        return path


def _unb64(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


@dataclass
class GoogleTokenServer:
    """Google's token endpoint for one service account with domain-wide delegation."""

    account: ServiceAccount = field(default_factory=ServiceAccount)
    subject: str = "hrsync-reader@example.com"  # the user delegation lets it act as
    delegated: tuple[str, ...] = (DIRECTORY_SCOPE,)
    lifetime_s: int = 3599
    clock: Callable[[], float] = time.time
    issued: list[str] = field(default_factory=list)
    revoked: set[str] = field(default_factory=set)
    assertions: list[str] = field(default_factory=list)
    claims: list[dict[str, Any]] = field(default_factory=list)

    def token(self, request: Request, base: str) -> Response:
        form = request.form()
        if form.get("grant_type") != JWT_BEARER:
            return self._error("unsupported_grant_type", "Invalid grant_type")
        assertion = form.get("assertion", "")
        self.assertions.append(assertion)
        try:
            header_part, claims_part, signature_part = assertion.split(".")
            header = json.loads(_unb64(header_part))
            claims = json.loads(_unb64(claims_part))
            signature = _unb64(signature_part)
        except ValueError:
            return self._error("invalid_grant", "Invalid JWT")
        if header.get("alg") != "RS256" or header.get("kid") != self.account.key_id:
            return self._error("invalid_grant", "Invalid JWT Signature.")
        try:
            self.account.key.public_key().verify(
                signature,
                f"{header_part}.{claims_part}".encode(),
                padding.PKCS1v15(),
                hashes.SHA256(),
            )
        except InvalidSignature:
            return self._error("invalid_grant", "Invalid JWT Signature.")
        self.claims.append(claims)
        if claims.get("iss") != self.account.client_email:
            return self._error("invalid_grant", "Invalid issuer")
        if claims.get("aud") != f"{base}{TOKEN_PATH}":
            return self._error("invalid_grant", "Invalid JWT audience")
        if claims.get("sub") != self.subject:
            return self._error("invalid_grant", "Invalid email or User ID")
        scopes = str(claims.get("scope", "")).split(" ")
        if not scopes or not set(scopes) <= set(self.delegated):
            return self._error(
                "unauthorized_client",
                "Client is unauthorized to retrieve access tokens using this method, or "
                "client not authorized for any of the scopes requested.",
            )
        now = self.clock()
        iat, exp = claims.get("iat"), claims.get("exp")
        if (
            not isinstance(iat, int)
            or not isinstance(exp, int)
            or exp - iat > 3600
            or exp <= now
            or iat > now + 60
        ):
            return self._error(
                "invalid_grant",
                "Invalid JWT: Token must be a short-lived token (60 minutes) and in a "
                "reasonable timeframe. Check your iat and exp values in the JWT claim.",
            )
        token = "ya29." + secrets.token_urlsafe(48)
        self.issued.append(token)
        return Response.of_json(
            {"access_token": token, "expires_in": self.lifetime_s, "token_type": "Bearer"}
        )

    def allows(self, request: Request) -> bool:
        header = request.headers.get("authorization", "")
        token = header.removeprefix("Bearer ")
        return header.startswith("Bearer ") and token in self.issued and token not in self.revoked

    @staticmethod
    def _error(code: str, description: str) -> Response:
        status = 401 if code == "unauthorized_client" else 400
        return Response.of_json({"error": code, "error_description": description}, status)


@dataclass
class DirectoryApi:
    """The Admin SDK Directory API's users.list, and the token endpoint beside it."""

    people: list[Person] = field(default_factory=sample_people)
    tokens: GoogleTokenServer = field(default_factory=GoogleTokenServer)
    page_size: int = 10  # Google allows maxResults up to 500; the fake pages at 10
    revoke_after_page: int | None = None  # revoke the token in use after serving this page
    forbidden: bool = False  # answer 403, as when the subject is no admin
    pages_served: int = 0
    page_tokens: list[str] = field(default_factory=list)

    def __call__(self, request: Request, base: str) -> Response:
        if request.path == TOKEN_PATH and request.method == "POST":
            return self.tokens.token(request, base)
        if request.path != USERS_PATH or request.method != "GET":
            return _google_error(404, "Not Found", "NOT_FOUND")
        if not self.tokens.allows(request):
            return _google_error(
                401,
                "Request had invalid authentication credentials. Expected OAuth 2 access "
                "token, login cookie or other valid authentication credential.",
                "UNAUTHENTICATED",
            )
        if self.forbidden:
            return _google_error(403, "Not Authorized to access this resource/api", "")
        if not request.query.get("customer") and not request.query.get("domain"):
            return _google_error(400, "Bad Request", "INVALID_ARGUMENT")
        page_token = request.query.get("pageToken", "")
        self.page_tokens.append(page_token)
        start = int(_unb64(page_token).decode()) if page_token else 0
        size = min(int(request.query.get("maxResults", "100")), self.page_size)
        by_id = {p.id: p for p in self.people}
        chunk = self.people[start : start + size]
        body: dict[str, Any] = {
            "kind": "admin#directory#users",
            "etag": '"' + secrets.token_hex(8) + '"',
            "users": [self.user(p, by_id) for p in chunk],
        }
        if start + size < len(self.people):
            body["nextPageToken"] = base64.urlsafe_b64encode(str(start + size).encode()).decode()
        self.pages_served += 1
        if self.revoke_after_page == self.pages_served:
            self.tokens.revoked.add(request.headers["authorization"].removeprefix("Bearer "))
        return Response.of_json(body)

    @staticmethod
    def user(p: Person, by_id: dict[str, Person]) -> dict[str, Any]:
        given, _, family = p.name.partition(" ")
        user: dict[str, Any] = {
            "kind": "admin#directory#user",
            "id": str(100000000000000000000 + int("".join(c for c in p.id if c.isdigit()))),
            "primaryEmail": p.email,
            "name": {"givenName": given, "familyName": family, "fullName": p.name},
            "isAdmin": False,
            "suspended": not p.active,
            "archived": False,
            "orgUnitPath": f"/{p.department}",
            "externalIds": [{"value": p.id, "type": "organization"}],
            "organizations": [
                {"title": "Staff", "primary": True, "customType": "", "department": p.department}
            ],
        }
        manager = by_id.get(p.manager_id)
        if manager is not None:
            user["relations"] = [{"value": manager.email, "type": "manager"}]
        return user


def _google_error(status: int, message: str, reason: str) -> Response:
    return Response.of_json(
        {"error": {"code": status, "message": message, "status": reason}}, status
    )
