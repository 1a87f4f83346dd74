"""Secrets where hrsync expects a variable's name, or in a URL's user-info, through the real
commands (issue 27, finding 4): `check`, `sync` and the daemon (`run`, with a webhook
receiver) refuse or run, and the secret is in none of stdout, stderr, the log, the
webhook's bodies, the store's files or any text column of its tables."""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from hrsync.cli import main
from tests.config.test_secret_values import NAME_LIKE_SECRETS, env_keys
from tests.e2e.conftest import TOKEN, Run, Workspace, parse_events
from tests.e2e.test_monitoring_e2e import receiver, wait_for
from tests.fakes import Request, Response, serve

pytestmark = pytest.mark.slow

# The part after the space has no shape the log's redaction knows: only not echoing the
# value keeps it out.
SECRET = "Bearer sk_live_XYZ0123456789 hunter2horse"
FRAGMENTS = ("sk_live_XYZ", "hunter2horse")
KEYS = [*env_keys(), "source.headers.X-Api-Key"]
# What each key needs beside it for the config to be otherwise complete.
CONTEXT = {
    "source.oauth2": '[source.oauth2]\ntoken_url = "{hr}/token"\nclient_id_env = "ID"\n'
    'client_secret_env = "SECRET"\n',
    "source.google_service_account": '[source.google_service_account]\nkey_file_env = "KEY"\n'
    'scopes = ["https://www.googleapis.com/auth/admin.directory.user.readonly"]\n',
    "source.headers": "[source.headers]\n",
}


def with_secret(ws: Workspace, key: str, hr: str, secret: str = SECRET) -> None:
    """The workspace's config reading the export from `hr`, a webhook named by
    TEST_HOOK_URL, and SECRET written in place of the variable's name at `key`."""
    text = ws.config.read_text().replace(f'path = "{ws.export}"', f'url = "{hr}/people.csv"')
    section, _, name = key.rpartition(".")
    line = f'{name} = "{secret}"\n'
    if section == "source":
        text = text.replace("[source]\n", f"[source]\n{line}")
    else:
        table = CONTEXT.get(section, f"[{section}]\n").format(hr=hr)
        # The key set twice in one table would be a TOML error, not the case at hand.
        kept = [ln for ln in table.splitlines(keepends=True) if not ln.startswith(f"{name} =")]
        text += "\n" + "".join(kept) + line
    if key != "notify.webhook_url_env":
        text += '\n[notify]\nwebhook_url_env = "TEST_HOOK_URL"\n'
    ws.config.write_text(text)


def export_server(request: Request, base: str) -> Response:
    if request.path == "/people.csv":
        return Response(200, Path(os.environ.get("HR_EXPORT", "")).read_bytes())
    return Response(404)


def daemon(ws: Workspace, env: dict[str, str], log: Path) -> subprocess.Popen[bytes]:
    base = {k: v for k, v in os.environ.items() if not k.startswith("HRSYNC_")}
    with log.open("w") as out:
        return subprocess.Popen(
            [sys.executable, "-m", "hrsync", "--config", str(ws.config), "run"],
            env={**base, "HRSYNC_DX_TOKEN": TOKEN, **env},
            stdout=out,
            stderr=subprocess.STDOUT,
            cwd=ws.root,
        )


def store_texts(ws: Workspace) -> list[str]:
    """Every text value of every table of the store (none when it was never created)."""
    if not ws.db.exists():
        return []
    texts: list[str] = []
    with sqlite3.connect(f"file:{ws.db}?mode=ro", uri=True) as db:
        tables = [r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type='table'")]
        for table in tables:
            for row in db.execute(f'SELECT * FROM "{table}"'):
                texts.extend(value for value in row if isinstance(value, str))
    return texts


def assert_nowhere(
    ws: Workspace, outputs: list[str], bodies: list[object], fragments: tuple[str, ...] = FRAGMENTS
) -> None:
    files = [p.read_bytes() for p in ws.root.glob("state.db*")]
    for fragment in fragments:
        assert all(fragment not in text for text in outputs), fragment
        assert all(fragment not in repr(body) for body in bodies), fragment
        assert all(fragment.encode() not in data for data in files), fragment
        assert all(fragment not in text for text in store_texts(ws)), fragment


def only_this_run(workspace: Workspace, monkeypatch: pytest.MonkeyPatch) -> None:
    """This process's environment as a run of the workspace sees it (in-process runs):
    no HRSYNC_ variable of the caller's, the export served, the DX token set."""
    for name in [n for n in os.environ if n.startswith("HRSYNC_")]:
        monkeypatch.delenv(name)
    monkeypatch.setenv("HR_EXPORT", str(workspace.export))
    monkeypatch.setenv("HRSYNC_DX_TOKEN", TOKEN)


@pytest.mark.parametrize("key", KEYS)
def test_a_value_pasted_into_a_variable_setting_stops_every_command_unechoed(
    workspace: Workspace,
    key: str,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    # In this process (hrsync.cli.main), for speed: the subprocess test below runs the
    # key of the report the same way as a person would.
    only_this_run(workspace, monkeypatch)
    with serve(export_server) as hr, receiver() as (hook_url, posts):
        with_secret(workspace, key, hr.base_url)
        monkeypatch.setenv("TEST_HOOK_URL", hook_url)
        outputs = []
        for command in ("check", "sync", "run"):
            code = main(["--config", str(workspace.config), command])
            out, err = capsys.readouterr()
            outputs.append(out + err)
            assert code == 2, out + err
            assert key in err and "looks like a value rather than a name" in err, err
    assert posts == []
    assert_nowhere(workspace, outputs, posts)


@pytest.mark.parametrize("secret", NAME_LIKE_SECRETS)
@pytest.mark.parametrize(
    "key", ["source.headers.Authorization", "source.password_env", "source.headers.X-Api-Key"]
)
def test_a_secret_shaped_like_a_name_stops_every_command_unechoed(
    workspace: Workspace,
    key: str,
    secret: str,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    # Such a value was taken for a variable's name, and "$<secret> is not set" was
    # printed, stored as the run's reason, logged and sent to the webhook.
    only_this_run(workspace, monkeypatch)
    with serve(export_server) as hr, receiver() as (hook_url, posts):
        with_secret(workspace, key, hr.base_url, secret)
        monkeypatch.setenv("TEST_HOOK_URL", hook_url)
        outputs = []
        for command in ("check", "status", "sync", "run"):
            code = main(["--config", str(workspace.config), command])
            out, err = capsys.readouterr()
            outputs.append(out + err)
            assert code == 2, out + err
            assert key in err and "upper case letters, digits and underscores" in err, err
    assert posts == []
    assert_nowhere(workspace, outputs, posts, (secret,))


def test_a_value_pasted_as_the_authorization_header_stops_check_sync_and_run_unechoed(
    workspace: Workspace,
) -> None:
    key = "source.headers.Authorization"
    os.environ["HR_EXPORT"] = str(workspace.export)
    with serve(export_server) as hr, receiver() as (hook_url, posts):
        with_secret(workspace, key, hr.base_url)
        env = {"TEST_HOOK_URL": hook_url, "HRSYNC_SYNC__SCHEDULE": "* * * * * *"}
        runs: list[Run] = [workspace.hrsync(command, env=env) for command in ("check", "sync")]
        log = workspace.root / "daemon.log"
        proc = daemon(workspace, env, log)
        try:
            code = proc.wait(timeout=30)
        finally:
            if proc.poll() is None:
                proc.kill()
        daemon_output = log.read_text()
    for run in runs:
        assert run.code == 2, run.stdout + run.stderr
        assert key in run.stderr and "looks like a value rather than a name" in run.stderr
    assert code == 2, daemon_output
    assert key in daemon_output
    assert posts == []
    assert_nowhere(workspace, [*workspace.outputs, daemon_output], posts)


PASSWORD = "hunter2horse-in-the-url"


def refusing_server(request: Request, base: str) -> Response:
    return Response(401, b"unauthorized")


def test_a_password_in_the_source_url_reaches_no_reason_log_webhook_or_store(
    workspace: Workspace,
) -> None:
    # The config is valid: the run happens, the HR API refuses the credentials, and the
    # refusal is stored, logged, printed and sent to the webhook, each without them.
    with serve(refusing_server) as hr, receiver() as (hook_url, posts):
        url = hr.base_url.replace("http://", f"http://hruser:{PASSWORD}@") + "/people.csv"
        text = workspace.config.read_text()
        text = text.replace(f'path = "{workspace.export}"', f'url = "{url}"')
        workspace.config.write_text(text + '\n[notify]\nwebhook_url_env = "TEST_HOOK_URL"\n')
        env = {"TEST_HOOK_URL": hook_url, "HRSYNC_SYNC__SCHEDULE": "*/2 * * * * *"}
        check = workspace.hrsync("check", env=env)
        sync = workspace.hrsync("sync", env=env)
        log = workspace.root / "daemon.log"
        proc = daemon(workspace, env, log)
        try:
            wait_for(lambda: len(posts) >= 1, "the refused notification")
            proc.send_signal(signal.SIGTERM)
            assert proc.wait(timeout=15) == 0
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
        daemon_output = log.read_text()
    assert check.code == 1 and "refused the credentials" in check.stdout, check.stdout
    assert sync.code == 4 and sync.finished["outcome"] == "refused"
    assert "refused the credentials" in sync.finished["reason"]
    assert posts[0]["event"] == "refused"
    finished = [e for e in parse_events(daemon_output) if e["event"] == "sync.finished"]
    assert finished and all(e["outcome"] == "refused" for e in finished)
    outputs = [*workspace.outputs, daemon_output]
    for fragment in (PASSWORD, "hruser"):
        assert all(fragment not in text for text in outputs), fragment
        assert all(fragment not in repr(body) for body in posts), fragment
        assert all(fragment not in text for text in store_texts(workspace)), fragment


# A value that took the line after it (`$(cat file)` of a two-line file, a paste): no HTTP
# header can hold it. The HTTP library's complaint quotes the header escaped (`\n`), which
# no masking of the value itself finds, so it reached the summary and the stored reason.
TWO_LINES = "tok-first-line-0123456789\n# the second line"


@pytest.mark.parametrize("where", ["HRSYNC_DX_TOKEN", "source.headers.X-Api-Key"])
def test_a_secret_of_two_lines_stops_the_run_unechoed(
    workspace: Workspace,
    where: str,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    only_this_run(workspace, monkeypatch)
    with serve(export_server) as hr:
        if where == "HRSYNC_DX_TOKEN":
            monkeypatch.setenv("HRSYNC_DX_TOKEN", TWO_LINES)
        else:
            with_secret(workspace, where, hr.base_url, "HR_API_KEY")
            monkeypatch.setenv("HR_API_KEY", TWO_LINES)
        outputs = []
        for command in ("check", "sync"):
            code = main(["--config", str(workspace.config), command])
            out, err = capsys.readouterr()
            outputs.append(out + err)
            assert code in (1, 2, 4), out + err
            assert "line break" in out + err, out + err
    assert_nowhere(workspace, outputs, [], ("0123456789",))
