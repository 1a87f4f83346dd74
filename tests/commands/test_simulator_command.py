"""`hrsync simulator`: serves on a port; the printed token reads teams; a rename applies."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest

from hrsync.simulator.scenario import _DEFAULT
from tests.simulating import seed_args

pytestmark = pytest.mark.slow


def test_simulator_command_serves_and_applies_a_rename(tmp_path: Path) -> None:
    scenario = tmp_path / "scenario.json"
    scenario.write_text(json.dumps({**_DEFAULT, "import_delay_s": 0.3}))
    env = {k: v for k, v in os.environ.items() if not k.startswith("HRSYNC_")}
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "hrsync",
            "simulator",
            "--scenario",
            str(scenario),
            "--port",
            "0",
            *seed_args(),
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )
    try:
        assert proc.stdout is not None
        printed = dict(
            line.removeprefix("export ").strip().split("=", 1)
            for line in (proc.stdout.readline(), proc.stdout.readline())
        )
        base, token = printed["HRSYNC_DX__BASE_URL"], printed["HRSYNC_DX_TOKEN"]
        auth = {"Authorization": f"Bearer {token}"}
        teams = httpx.get(f"{base}/teams.list", headers=auth).json()["teams"]
        assert {t["name"] for t in teams} == {"Engineering", "Platform", "Apps", "Design Guild"}

        rows = [
            {
                "name": "Engineering",
                "reference_id": "eng-001",
                "team_lead_email": "ada@acme.example",
                "parent_team_reference_id": None,
                "parent_team_name": None,
                "contributors": ["grace@acme.example"],
            },
            {
                "name": "Platform Engineering",
                "reference_id": "eng-002",
                "team_lead_email": "grace@acme.example",
                "parent_team_reference_id": "eng-001",
                "parent_team_name": "Engineering",
                "contributors": ["barbara@acme.example"],
            },
        ]
        accepted = httpx.post(
            f"{base}/orgfiles.teamHierarchy.process", headers=auth, json={"teams": rows}
        ).json()
        assert accepted["ok"] is True
        names: set[str] = set()
        deadline = time.monotonic() + 10  # the import applies after 0.3 s
        while time.monotonic() < deadline:
            time.sleep(0.05)
            names = {
                t["name"] for t in httpx.get(f"{base}/teams.list", headers=auth).json()["teams"]
            }
            if "Platform Engineering" in names:
                break
        assert names == {"Engineering", "Platform Engineering"}
        # Audit events may trail the import a little (the seed decides how much).
        renames: list[dict[str, object]] = []
        while time.monotonic() < deadline and not renames:
            audit = httpx.get(f"{base}/teams.auditTrail", headers=auth).json()
            assert "ok" not in audit
            renames = [e for e in audit["events"] if e["action"] == "change_name"]
            time.sleep(0.05)
        assert renames and renames[0]["metadata"] == {
            "from": "Platform",
            "to": "Platform Engineering",
        }
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=10) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


def run_simulator(*args: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("HRSYNC_")}
    return subprocess.run(
        [sys.executable, "-m", "hrsync", "simulator", *args, "--port", "0", *seed_args()],
        env=env,
        capture_output=True,
        text=True,
        timeout=30,
    )


@pytest.mark.parametrize(
    ("args", "needle"),
    [
        (["--in-dx", "0.9"], "--in-dx needs --rehearse CONFIG or --users-from EXPORT"),
        (["--in-dx", "0"], "expected a share above 0 and at most 1, got 0"),
        (["--in-dx", "1.5"], "expected a share above 0 and at most 1, got 1.5"),
        (["--scenario", "s.json", "--rehearse", "c.toml"], "not allowed with argument"),
        (["--users-from", "p.csv", "--rehearse", "c.toml"], "not allowed with argument"),
    ],
)
def test_rehearsal_options_that_do_not_fit_are_usage_errors(args: list[str], needle: str) -> None:
    result = run_simulator(*args)
    assert result.returncode == 2
    assert needle in result.stderr
    assert result.stdout == ""


def test_the_default_account_says_it_is_another_company_s_and_how_to_rehearse_your_own() -> None:
    # Its users and teams are a made-up company's: a sync of your export against it would
    # archive them and name leads it does not know.
    env = {k: v for k, v in os.environ.items() if not k.startswith("HRSYNC_")}
    proc = subprocess.Popen(
        [sys.executable, "-m", "hrsync", "simulator", "--port", "0", *seed_args()],
        stdout=subprocess.PIPE,
        text=True,
        env=env,
    )
    try:
        assert proc.stdout is not None
        lines = [proc.stdout.readline() for _ in range(4)]
        assert any("made-up company" in line and "--rehearse CONFIG" in line for line in lines)
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=10) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
