"""A Google service account's access token: the OAuth2 JWT-bearer grant (RFC 7523), as
Google's token endpoint takes it (`[source.google_service_account]`).

The service account's key file (the JSON the Google Cloud console downloads: `type`,
`client_email`, `private_key`, `private_key_id`, `token_uri`) is read from the path held
by the environment variable that `key_file_env` names; a Kubernetes secret mounted as a
file is the usual way to put it there. Each token is asked for with a new assertion: a
JWT signed with the key (RS256) whose claims are `iss` (the service account), `scope`,
`aud` (the token URI), `iat`, `exp` (an hour later, Google's maximum) and, for
domain-wide delegation, `sub` (the user the service account acts as).

`oauth2.TokenSource` keeps and renews the token as it does for client credentials. The
key, the key file's text, every assertion and every token are registered with the log
scrubbing (`hrsync.logs`) and never put into a message.
"""

from __future__ import annotations

import base64
import json
import re
import time
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from cryptography.exceptions import UnsupportedAlgorithm
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import padding, rsa

from hrsync import logs
from hrsync.config.plain_http import IN_CLEAR, plain_http_host, refusal
from hrsync.config.small_files import SmallFileError, read_small_file
from hrsync.core.settings import GoogleServiceAccountSettings
from hrsync.secret import is_variable_name, not_a_name
from hrsync.sources.base import SourceError

GOOGLE_TOKEN_URI = "https://oauth2.googleapis.com/token"
JWT_BEARER_GRANT = "urn:ietf:params:oauth:grant-type:jwt-bearer"
# Google refuses an assertion that lives longer than an hour.
ASSERTION_LIFETIME_S = 3600
# A key file is about 2.4 KB; anything much larger is not one.
MAX_KEY_FILE_BYTES = 64 * 1024
KEY_FILE_ENV = "source.google_service_account.key_file_env"
_WORD = re.compile(r"^[A-Za-z0-9_.-]{1,64}$")
# A PEM line long enough to be worth masking on its own (a traceback may quote one).
_MIN_MASKED_LINE = 16
_DELEGATION_CODES = frozenset({"unauthorized_client", "access_denied", "invalid_scope"})


class JwtBearer:
    """The JWT-bearer grant for one service account: a new signed assertion per token."""

    def __init__(
        self,
        settings: GoogleServiceAccountSettings,
        environ: Mapping[str, str],
        *,
        clock: Callable[[], float] = time.time,
        allow_insecure_http: bool = False,
    ) -> None:
        self._settings = settings
        self._clock = clock
        variable = settings.key_file_env
        if not is_variable_name(variable):
            raise SourceError(f"cannot fetch a Google access token: {not_a_name(KEY_FILE_ENV)}")
        self._where = f"${variable} (named by {KEY_FILE_ENV})"
        key = _read_key_file(environ.get(variable, "").strip(), self._where)
        host = plain_http_host(key.token_uri)
        if host and not allow_insecure_http:
            # The signed assertion is a credential for an hour: the rule of
            # source.oauth2.token_url, for the URL the key file names instead.
            raise SourceError(
                refusal(
                    f"token_uri in the service account key file {self._where}",
                    host,
                    f": the signed assertion {IN_CLEAR}",
                    "dx.allow_insecure_http",
                )
            )
        self._masked = key.masked
        self.client_email = key.client_email
        self.token_url = key.token_uri
        self.setting = f"token_uri in the service account key file {self._where}"
        self._key = key.private_key
        self._key_id = key.private_key_id
        self._assertion = ""

    @property
    def secrets(self) -> list[str]:
        return [*self._masked, self._assertion] if self._assertion else list(self._masked)

    def claims(self) -> dict[str, Any]:
        """The assertion's claims, as of now."""
        now = int(self._clock())
        claims: dict[str, Any] = {
            "iss": self.client_email,
            "scope": " ".join(self._settings.scopes),
            "aud": self.token_url,
            "iat": now,
            "exp": now + ASSERTION_LIFETIME_S,
        }
        if self._settings.subject:
            claims["sub"] = self._settings.subject
        return claims

    def form(self) -> dict[str, str]:
        header = {"alg": "RS256", "typ": "JWT"}
        if self._key_id:
            header["kid"] = self._key_id
        signing_input = f"{_b64_json(header)}.{_b64_json(self.claims())}"
        signature = self._key.sign(signing_input.encode(), padding.PKCS1v15(), hashes.SHA256())
        self._assertion = f"{signing_input}.{_b64(signature)}"
        logs.register_short_lived_secret(self._assertion)
        return {"grant_type": JWT_BEARER_GRANT, "assertion": self._assertion}

    def refused(self, status: int, code: str) -> str:
        s = self._settings
        shown_code = f" {code}" if code else ""
        scopes = ", ".join(s.scopes)
        if code in _DELEGATION_CODES:
            return (
                f"refused the service account {self.client_email} (HTTP {status}{shown_code}): "
                f"in the Google Admin console (Security > Access and data control > API "
                f"controls > Domain-wide delegation), allow the service account's client id "
                f"the scopes in source.google_service_account.scopes ({scopes})"
            )
        subject = f" ({s.subject})" if s.subject else ""
        return (
            f"refused the service account {self.client_email} (HTTP {status}{shown_code}): "
            f"check that the key in the file named by {self._where} is still one of its "
            f"keys, that source.google_service_account.subject{subject} is a user of the "
            f"domain, and that this machine's clock is right"
        )

    def unauthorized_hint(self) -> str:
        return (
            f"check what the service account {self.client_email} may read: its domain-wide "
            f"delegation for source.google_service_account.scopes and the admin role of "
            f"source.google_service_account.subject"
        )


class _Key:
    def __init__(
        self,
        client_email: str,
        private_key: rsa.RSAPrivateKey,
        private_key_id: str,
        token_uri: str,
        masked: list[str],
    ) -> None:
        self.client_email = client_email
        self.private_key = private_key
        self.private_key_id = private_key_id
        self.token_uri = token_uri
        self.masked = masked


def _read_key_file(path_text: str, where: str) -> _Key:
    if not path_text:
        raise SourceError(
            f"cannot fetch a Google access token: {where} is not set; it holds the path of "
            f"the service account's key file"
        )
    if path_text.lstrip().startswith("{") or "PRIVATE KEY" in path_text:
        logs.register_secret(path_text)
        _mask(path_text)
        raise SourceError(
            f"{where} holds the key itself: it must hold the path of the service account's "
            f"key file (e.g. a Kubernetes secret mounted as a file), not its contents"
        )
    path = Path(path_text)
    try:
        data = read_small_file(path, MAX_KEY_FILE_BYTES)
    except SmallFileError as exc:
        # Over the cap, or a FIFO or a device, which would block or never end.
        raise SourceError(f"the service account key file {path} ({where}) {exc}") from None
    except OSError as exc:
        raise SourceError(
            f"cannot read the service account key file {path} ({where}): "
            f"{exc.strerror or type(exc).__name__}"
        ) from None
    text = data.decode("utf-8", errors="replace")
    masked = [text.strip()]  # the whole file here; its key line by line below
    logs.register_secret(masked[0])
    shown = f"the service account key file {path} ({where})"
    try:
        document = json.loads(text)
    except (ValueError, RecursionError):
        raise SourceError(
            f"{shown} is not JSON: expected the key file the Google Cloud console downloads "
            f"(IAM > Service accounts > Keys > Add key > JSON)"
        ) from None
    if not isinstance(document, dict):
        raise SourceError(f"{shown} is not a JSON object: expected a service account key")
    kind = document.get("type")
    if kind != "service_account":
        named = repr(kind) if isinstance(kind, str) and _WORD.match(kind) else "no such type"
        raise SourceError(
            f'{shown} is not a service account key ("type": "service_account"), got {named}'
        )
    client_email = _text(document, "client_email", shown)
    pem = _text(document, "private_key", shown)
    masked.extend(_mask(pem))
    key_id = document.get("private_key_id")
    token_uri = document.get("token_uri") or GOOGLE_TOKEN_URI
    if not isinstance(token_uri, str) or not re.match(r"^https?://", token_uri):
        raise SourceError(f"{shown}: token_uri must be an http(s) URL")
    try:
        private_key = serialization.load_pem_private_key(pem.encode(), password=None)
    except (ValueError, TypeError, UnsupportedAlgorithm):
        raise SourceError(
            f"{shown}: private_key is not an unencrypted private key in PEM form"
        ) from None
    if not isinstance(private_key, rsa.RSAPrivateKey):
        raise SourceError(f"{shown}: private_key is not an RSA key (Google signs with RS256)")
    return _Key(
        client_email,
        private_key,
        key_id if isinstance(key_id, str) else "",
        token_uri,
        masked,
    )


def _text(document: Mapping[str, Any], key: str, shown: str) -> str:
    value = document.get(key)
    if not isinstance(value, str) or not value.strip():
        raise SourceError(f"{shown} has no {key}: expected a service account key")
    return value.strip()


def _mask(text: str) -> list[str]:
    """Register a PEM key whole and line by line with the log scrubbing (a message may
    quote one line); the values, to hide from messages as well."""
    lines = text.replace("\\n", "\n").splitlines()
    values = [text.strip(), *(line.strip() for line in lines)]
    unique = [value for value in dict.fromkeys(values) if len(value) >= _MIN_MASKED_LINE]
    for value in unique:
        logs.register_secret(value)
    return unique


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


def _b64_json(value: Mapping[str, Any]) -> str:
    return _b64(json.dumps(value, separators=(",", ":")).encode())
