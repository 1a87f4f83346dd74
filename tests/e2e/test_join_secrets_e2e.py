"""The secrets of a `[[source.join]]` table read over HTTP stay out of every output (issue
26): OAuth2 client credentials (the client secret from a variable, the token from a local
token endpoint), a bearer token from a variable, and a user name and password written in
a loopback URL. Real `sync`, `check`, `plan` and `explain` against a local fake and the
DX simulator, and the daemon with a webhook, through the happy path and the failures
(the token endpoint refusing, the table answering 500, then 401); then each secret and
each token is looked for in stdout, stderr, the JSON log, the webhook's bodies, the
store's files and every text column of its tables."""

from __future__ import annotations

import signal
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from tests.e2e.conftest import Run, Workspace, parse_events
from tests.e2e.test_joins_e2e import FIXTURES, LEADS, oracle  # noqa: F401 (the fixture)
from tests.e2e.test_monitoring_e2e import receiver, wait_for
from tests.e2e.test_secrets_e2e import daemon, store_texts
from tests.fakes import Request, Response, serve
from tests.fakes.hr_apis import OAuth2Server, basic

pytestmark = pytest.mark.slow

BEARER = "dept-bearer-7f3a9c2e51"
USER, PASSWORD = "dept-reader", "pw-9d8c7b6a5f-loopback"
WRONG_SECRET = "cs-wrong-4e5f6a7b8c9d"


@dataclass
class DepartmentsApi:
    """DEPARTMENTS.csv over HTTP behind one kind of credentials; `answer` forces a status."""

    auth: str  # "oauth2", "bearer" or "password"
    oauth: OAuth2Server = field(default_factory=lambda: OAuth2Server(client_id="dept-client"))
    answer: int | None = None
    body: bytes = field(default_factory=lambda: (FIXTURES / "DEPARTMENTS.csv").read_bytes())

    def __call__(self, request: Request, base: str) -> Response:
        if request.path == "/oauth2/token" and request.method == "POST":
            return self.oauth.token(request)
        if request.path != "/hr/departments.csv":
            return Response(404)
        if self.answer is not None:
            # Retry-After: 0 keeps the reader's retries of a 5xx out of the test's time.
            return Response.of_json({"error": "forced"}, self.answer, {"Retry-After": "0"})
        if not self.allows(request):
            return Response.of_json({"error": "unauthorized"}, 401)
        return Response(200, self.body, {"Content-Type": "text/csv"})

    def allows(self, request: Request) -> bool:
        if self.auth == "oauth2":
            return self.oauth.allows(request)
        header = request.headers.get("authorization")
        wanted = f"Bearer {BEARER}" if self.auth == "bearer" else basic(USER, PASSWORD)
        return header == wanted


def join_table(auth: str, base: str) -> str:
    """The join's keys in place of the recipe's `path`, for one kind of credentials."""
    url = f"{base}/hr/departments.csv"
    if auth == "oauth2":
        return (
            f'url = "{url}"\noauth2 = {{ token_url = "{base}/oauth2/token", '
            'client_id_env = "DEPT_CLIENT_ID", client_secret_env = "DEPT_CLIENT_SECRET" }'
        )
    if auth == "bearer":
        return f'url = "{url}"\nheaders = {{ Authorization = "DEPT_AUTH" }}'
    return 'url = "{}"'.format(url.replace("http://", f"http://{USER}:{PASSWORD}@"))


@dataclass
class Setup:
    ws: Workspace
    api: DepartmentsApi
    env: dict[str, str]
    posts: list[dict[str, object]]

    def run(self, *args: str, **env: str) -> Run:
        return self.ws.hrsync(*args, env={**self.env, **env})

    def secrets(self) -> list[str]:
        return [
            self.api.oauth.client_secret,
            *self.api.oauth.issued,
            WRONG_SECRET,
            BEARER,
            PASSWORD,
            USER,  # not a secret by itself, but the URL's user-info is shown as ***
        ]


@pytest.fixture(params=["oauth2", "bearer", "password"])
def setup(oracle: Workspace, request: pytest.FixtureRequest) -> Iterator[Setup]:  # noqa: F811
    api = DepartmentsApi(request.param)
    with serve(api) as server, receiver() as (hook_url, posts):
        text = oracle.config.read_text(encoding="utf-8")
        text = text.replace('path = "DEPARTMENTS.csv"', join_table(api.auth, server.base_url))
        # Kimberely Grant (178) matches no department: held, her problem naming the table.
        text = text.replace('match = "optional"', 'match = "one"')
        oracle.config.write_text(
            text + '\n[notify]\nwebhook_url_env = "TEST_HOOK_URL"\n', encoding="utf-8"
        )
        env = {
            "TEST_HOOK_URL": hook_url,
            "DEPT_CLIENT_ID": api.oauth.client_id,
            "DEPT_CLIENT_SECRET": api.oauth.client_secret,
            "DEPT_AUTH": f"Bearer {BEARER}",
        }
        yield Setup(oracle, api, env, posts)


def events(posts: list[dict[str, object]]) -> set[object]:
    return {post.get("event") for post in posts}


def assert_nowhere(setup: Setup, outputs: list[str]) -> None:
    ws = setup.ws
    files = [p.read_bytes() for p in ws.root.glob("state.db*")]
    texts = store_texts(ws)
    assert files and texts
    assert setup.api.auth != "oauth2" or setup.api.oauth.issued
    for secret in setup.secrets():
        assert all(secret not in text for text in outputs), secret
        assert all(secret not in repr(body) for body in setup.posts), secret
        assert all(secret.encode() not in data for data in files), secret
        assert all(secret not in text for text in texts), secret


def test_a_joined_tables_credentials_reach_no_output_log_webhook_or_store(
    setup: Setup,
) -> None:
    ws, api = setup.ws, setup.api
    synced = setup.run("sync")
    assert synced.finished["outcome"] == "applied", synced.stdout[-3000:] + synced.stderr[-3000:]
    assert {n: t["manager_id"] != "" for n, t in ws.dx_teams().items()} == dict.fromkeys(
        LEADS, True
    )
    (read,) = synced.named("join.read")
    assert read["source"].endswith("/hr/departments.csv") and read["matched"] == 106
    check = setup.run("check")
    assert check.code == 0 and "[WARN] join departments: " in check.stdout, check.stdout
    plan = setup.run("plan", "--format", "json")
    assert plan.code == 0, plan.stderr[-2000:]
    explained = setup.run("explain", "122")
    assert "departments.DEPARTMENT_NAME = 'Shipping'" in explained.stdout, explained.stdout

    if api.auth == "oauth2":
        # The token endpoint refuses the client secret.
        refused = setup.run("sync", DEPT_CLIENT_SECRET=WRONG_SECRET)
        assert refused.code == 4, refused.stdout[-2000:] + refused.stderr[-2000:]
        reason = refused.finished["reason"]
        assert "join 'departments'" in reason, reason
        assert "source.join[departments].oauth2" in reason, reason
        told = setup.run("check", DEPT_CLIENT_SECRET=WRONG_SECRET)
        assert told.code == 1 and "join 'departments'" in told.stdout, told.stdout
    elif api.auth == "bearer":
        refused = setup.run("sync", DEPT_AUTH=f"Bearer {WRONG_SECRET}")
        assert refused.code == 4, refused.stdout[-2000:] + refused.stderr[-2000:]
        reason = refused.finished["reason"]
        assert "join 'departments'" in reason, reason
        assert "source.join[departments].headers" in reason, reason

    api.answer = 500
    failed = setup.run("sync")
    assert failed.code == 1, failed.stdout[-2000:] + failed.stderr[-2000:]
    assert failed.finished["outcome"] == "failed"
    assert "join 'departments'" in failed.finished["reason"], failed.finished["reason"]
    assert setup.run("explain", "122").code == 1
    api.answer = 401
    for command in ("sync", "check", "plan"):
        refused = setup.run(command)
        assert refused.code in (1, 4), refused.stdout[-2000:] + refused.stderr[-2000:]
        assert "join 'departments'" in refused.stdout + refused.stderr

    # The daemon, with its webhook: the held person and the refusal told, without the
    # credentials.
    log = ws.root / "daemon.log"
    proc = daemon(ws, {**setup.env, "HRSYNC_SYNC__SCHEDULE": "*/2 * * * * *"}, log)
    try:
        wait_for(lambda: {"held", "refused"} <= events(setup.posts), "the notifications")
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=15) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    daemon_output = Path(log).read_text()
    (held,) = [post for post in setup.posts if post["event"] == "held"]
    assert "must match a row of " in repr(held) and "/hr/departments.csv" in repr(held)
    refusal = next(post for post in setup.posts if post["event"] == "refused")
    assert "join 'departments'" in repr(refusal)
    finished = [e for e in parse_events(daemon_output) if e["event"] == "sync.finished"]
    assert finished and all(e["outcome"] == "refused" for e in finished)
    assert_nowhere(setup, [*ws.outputs, daemon_output])
