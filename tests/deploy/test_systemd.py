"""deploy/systemd/hrsync.service: `systemd-analyze verify` finds nothing to say about it,
`systemd-analyze security` rates it well exposed at most "OK", it is hardened as the docs
promise, and its environment names real config keys.

No systemd runs as PID 1 here (nor in CI's container), so both run offline on a root of
their own: the unit installed in it, the stock targets beside it, and a stand-in for the
hrsync executable (verify checks that ExecStart's program exists).
"""

from __future__ import annotations

import configparser
import shutil
import subprocess
from pathlib import Path

import pytest

from hrsync.config.loading import load_settings
from hrsync.core import defaults
from tests.deploy.tools import DEPLOY, require_tool

UNIT = DEPLOY / "systemd" / "hrsync.service"
STOCK_UNITS = Path("/usr/lib/systemd/system")
# `systemd-analyze security` scores exposure from 0 (none) to 10; up to 2.0 reads "OK".
MAX_EXPOSURE = 2.0


def directives(text: str) -> dict[str, list[str]]:
    """[Section] Key -> every value it is given (systemd allows a key more than once)."""
    found: dict[str, list[str]] = {}
    section = ""
    for raw in text.splitlines():
        line = raw.strip()
        if not line or line.startswith(("#", ";")):
            continue
        if line.startswith("["):
            section = line.strip("[]")
            continue
        key, _, value = line.partition("=")
        found.setdefault(f"{section}.{key.strip()}", []).append(value.strip())
    return found


def one(unit: dict[str, list[str]], key: str) -> str:
    values = unit.get(key, [])
    assert len(values) == 1, f"{key}: {values}"
    return values[0]


def offline_root(tmp_path: Path, unit_text: str) -> Path:
    root = tmp_path / "root"
    (root / "etc/systemd/system").mkdir(parents=True)
    (root / "etc/systemd/system/hrsync.service").write_text(unit_text, encoding="utf-8")
    stock = root / STOCK_UNITS.relative_to("/")
    stock.mkdir(parents=True)
    for target in STOCK_UNITS.glob("*.target"):
        shutil.copy(target, stock / target.name)
    exec_start = one(directives(unit_text), "Service.ExecStart").split()[0]
    program = root / exec_start.lstrip("/")
    program.parent.mkdir(parents=True, exist_ok=True)
    program.write_text("#!/bin/sh\n", encoding="utf-8")
    program.chmod(0o755)
    return root


def analyze(tmp_path: Path, unit_text: str, *args: str) -> subprocess.CompletedProcess[str]:
    tool = require_tool("systemd-analyze", "systemd")
    root = offline_root(tmp_path, unit_text)
    return subprocess.run(
        [tool, *args, f"--root={root}", "hrsync.service"],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


def verify(tmp_path: Path, unit_text: str) -> str:
    """Everything `systemd-analyze verify` says; it reports unknown keys and bad values
    as warnings with exit 0, so anything said is a finding."""
    done = analyze(tmp_path, unit_text, "verify", "--man=no", "--generators=no")
    return f"{done.stdout}{done.stderr}".strip() + ("" if done.returncode == 0 else " (failed)")


def test_systemd_analyze_verify_finds_nothing(tmp_path: Path) -> None:
    assert verify(tmp_path, UNIT.read_text(encoding="utf-8")) == ""


@pytest.mark.parametrize(
    ("change", "said"),
    [
        pytest.param(("ProtectSystem=strict", "ProtectSystem=stricter"), "stricter", id="value"),
        pytest.param(("DynamicUser=yes", "DynamicUsers=yes"), "DynamicUsers", id="key"),
        pytest.param(("ExecStart=/opt/", "ExecStart=opt/"), "fatal error", id="relative"),
    ],
)
def test_verify_tells_a_broken_unit(tmp_path: Path, change: tuple[str, str], said: str) -> None:
    text = UNIT.read_text(encoding="utf-8")
    assert change[0] in text
    assert said in verify(tmp_path, text.replace(change[0], change[1], 1))


def test_systemd_analyze_security_rates_it_ok(tmp_path: Path) -> None:
    done = analyze(
        tmp_path,
        UNIT.read_text(encoding="utf-8"),
        "security",
        "--offline=yes",
        f"--threshold={round(MAX_EXPOSURE * 10)}",
    )
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr


def test_it_is_hardened_as_documented() -> None:
    unit = directives(UNIT.read_text(encoding="utf-8"))
    for key, value in {
        "Service.DynamicUser": "yes",
        "Service.ProtectSystem": "strict",
        "Service.StateDirectory": "hrsync",
        "Service.NoNewPrivileges": "yes",
        "Service.PrivateTmp": "yes",
        "Service.ProtectHome": "yes",
        "Service.Restart": "on-failure",
        "Service.LoadCredential": "dx-token:/etc/hrsync/dx-token",
        "Service.ExecStart": "/opt/hrsync/bin/hrsync run",
    }.items():
        assert one(unit, key) == value, key
    assert "HRSYNC_DX__TOKEN_FILE=%d/dx-token" in unit["Service.Environment"]
    assert float(one(unit, "Service.TimeoutStopSec")) > defaults.SHUTDOWN_GRACE_S


def test_its_environment_names_config_keys_and_keeps_the_store_in_the_state_directory(
    tmp_path: Path,
) -> None:
    unit = directives(UNIT.read_text(encoding="utf-8"))
    env = dict(value.split("=", 1) for value in unit["Service.Environment"])
    state = Path("/var/lib") / one(unit, "Service.StateDirectory")
    assert env["HRSYNC_STATE__DATABASE_URL"] == f"sqlite:///{state}/hrsync.db"
    assert one(unit, "Service.WorkingDirectory") == str(state)
    # As the service would load it: the config file, the credential (%d: its directory).
    config = tmp_path / "hrsync.toml"
    config.write_text(
        '[dx]\nbase_url = "https://api.getdx.com"\n[source]\npath = "people.csv"\n',
        encoding="utf-8",
    )
    credentials = tmp_path / "credentials"
    credentials.mkdir()
    (credentials / "dx-token").write_text("token\n", encoding="utf-8")
    loaded = {
        name: value.replace("%d", str(credentials)).replace(str(state), str(tmp_path))
        for name, value in env.items()
    }
    loaded["HRSYNC_CONFIG"] = str(config)
    settings = load_settings(None, loaded)
    assert settings.token is not None
    assert settings.daemon.listen == env["HRSYNC_DAEMON__LISTEN"]


def test_the_unit_parses_as_ini() -> None:
    # systemd's format is close enough to INI that a repeated key is the only difference;
    # strict=False reads it, and it must have the three sections.
    parser = configparser.ConfigParser(strict=False, interpolation=None)
    parser.optionxform = str  # type: ignore[assignment,method-assign]
    parser.read_string(UNIT.read_text(encoding="utf-8"))
    assert parser.sections() == ["Unit", "Service", "Install"]
    assert parser["Install"]["WantedBy"] == "multi-user.target"
