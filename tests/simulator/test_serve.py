"""`serve`: the operator's foreground simulator, reachable with the token it prints."""

from __future__ import annotations

import io
import json
import os
import signal
import subprocess
import sys
import threading
from pathlib import Path

import httpx
import pytest

from hrsync.simulator.serve import serve
from tests.simulating import simulator_seed

REPO_ROOT = Path(__file__).resolve().parents[2]


def exports(lines: list[str]) -> dict[str, str]:
    found: dict[str, str] = {}
    for line in lines:
        if line.startswith("export "):
            name, _, value = line.removeprefix("export ").partition("=")
            found[name] = value
    return found


@pytest.mark.slow
def test_serve_as_a_process_answers_with_the_printed_token() -> None:
    env = {**os.environ, "PYTHONPATH": str(REPO_ROOT)}
    process = subprocess.Popen(
        [sys.executable, "-m", "hrsync.simulator.serve", "--port", "0"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
        cwd=REPO_ROOT,
    )
    try:
        assert process.stdout is not None
        lines = [process.stdout.readline().strip() for _ in range(2)]
        values = exports(lines)
        assert lines[0].startswith("export HRSYNC_DX__BASE_URL=http://127.0.0.1:")
        base_url, token = values["HRSYNC_DX__BASE_URL"], values["HRSYNC_DX_TOKEN"]
        reply = httpx.get(
            f"{base_url}/teams.list", headers={"Authorization": f"Bearer {token}"}, timeout=5
        )
        names = {team["name"] for team in reply.json()["teams"]}
        assert names == {"Engineering", "Platform", "Apps", "Design Guild"}
        process.send_signal(signal.SIGTERM)
        assert process.wait(timeout=10) == 0
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()


def test_serve_in_a_thread_with_a_scenario_file(tmp_path: Path) -> None:
    scenario = {
        "account_name": "Thread Co",
        "app_url": "https://t.example",
        "users": [{"name": "L", "email": "l@t.example"}],
        "tokens": [
            {"value": "t-token", "kind": "account_web_api_token", "scopes": ["snapshots:read"]}
        ],
        "teams": [{"name": "Only", "reference_id": "o", "lead_email": "l@t.example"}],
    }
    path = tmp_path / "s.json"
    path.write_text(json.dumps(scenario), encoding="utf-8")
    out = io.StringIO()
    stop = threading.Event()
    result: list[int] = []
    worker = threading.Thread(
        target=lambda: result.append(serve(path, port=0, out=out, stop=stop, seed=simulator_seed()))
    )
    worker.start()
    try:
        for _ in range(100):
            if "HRSYNC_DX_TOKEN" in out.getvalue():
                break
            stop.wait(0.02)
        values = exports(out.getvalue().splitlines())
        assert values["HRSYNC_DX_TOKEN"] == "t-token"
        reply = httpx.get(
            f"{values['HRSYNC_DX__BASE_URL']}/teams.list",
            headers={"Authorization": "Bearer t-token"},
        )
        assert [team["name"] for team in reply.json()["teams"]] == ["Only"]
    finally:
        stop.set()
        worker.join(timeout=5)
    assert result == [0]


def test_serve_refuses_a_bad_scenario(tmp_path: Path) -> None:
    path = tmp_path / "bad.json"
    path.write_text("{}", encoding="utf-8")
    err = io.StringIO()
    assert serve(path, port=0, out=io.StringIO(), err=err) == 2
    assert "bad.json: account_name" in err.getvalue()


def test_serve_refuses_a_scenario_without_tokens_naming_the_file_and_what_to_add(
    tmp_path: Path,
) -> None:
    # Served, it would answer every call invalid_auth and print no token to use.
    path = tmp_path / "no-tokens.json"
    path.write_text(
        json.dumps(
            {
                "account_name": "Tokenless Co",
                "app_url": "https://t.example",
                "users": [{"name": "L", "email": "l@t.example"}],
            }
        ),
        encoding="utf-8",
    )
    out, err = io.StringIO(), io.StringIO()
    assert serve(path, port=0, out=out, err=err) == 2
    message = err.getvalue()
    assert f"{path}: tokens:" in message
    assert "invalid_auth" in message
    assert '"kind": "account_web_api_token"' in message
    assert '"snapshots:admin"' in message
    assert out.getvalue() == ""


def test_a_port_in_use_names_port_0() -> None:
    import socket

    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        err = io.StringIO()
        assert serve(None, port=port, out=io.StringIO(), err=err) == 2
    message = err.getvalue()
    assert f"cannot listen on 127.0.0.1:{port}: Address already in use" in message
    assert "--port 0" in message
