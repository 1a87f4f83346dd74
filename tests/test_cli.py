"""The command line: registered commands, config errors as exit 2, no token leaks."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from hrsync.cli import build_parser

COMMANDS = ["run", "sync", "plan", "history", "check", "healthcheck", "simulator", "demo", "db"]


def hrsync(
    *args: str, env: dict[str, str] | None = None, cwd: Path | None = None
) -> subprocess.CompletedProcess[str]:
    base = {k: v for k, v in os.environ.items() if not k.startswith("HRSYNC_")}
    return subprocess.run(
        [sys.executable, "-m", "hrsync", *args],
        env={**base, **(env or {})},
        capture_output=True,
        text=True,
        cwd=cwd,
        timeout=60,
    )


def test_every_command_has_help() -> None:
    parser = build_parser()
    for command in COMMANDS:
        with pytest.raises(SystemExit) as info:
            parser.parse_args([command, "--help"])
        assert info.value.code == 0


CONFIG = """
[dx]
base_url = "https://api.example.test"
[source]
path = "people.csv"
[state]
database_url = "sqlite:///{db}"
"""


@pytest.mark.parametrize(
    ("extra", "env", "needle"),
    [
        (
            "[sync]\nmax_archives = 3\n",
            {"HRSYNC_DX_TOKEN": "t0k3n-abcdef"},
            "sync.max_archives is not a known key; did you mean sync.max_archive?",
        ),
        ("", {}, "dx token is missing"),
        (
            "[sync]\nmax_archive_fraction = 1.5\n",
            {"HRSYNC_DX_TOKEN": "t0k3n-abcdef"},
            "sync.max_archive_fraction must be between 0 and 1, got 1.5",
        ),
        ("[dx.x]\n", {"HRSYNC_DX_TOKEN": "t0k3n-abcdef"}, "dx.x is not a known key"),
    ],
)
def test_config_problems_exit_2_with_one_line(
    tmp_path: Path, extra: str, env: dict[str, str], needle: str
) -> None:
    cfg = tmp_path / "c.toml"
    cfg.write_text(CONFIG.format(db=tmp_path / "s.db") + extra)
    result = hrsync("--config", str(cfg), "check", env=env)
    assert result.returncode == 2
    err = result.stderr.strip().splitlines()
    assert len(err) == 1 and needle in err[0], result.stderr


def test_token_in_toml_exit_2_and_never_echoed(tmp_path: Path) -> None:
    secret = "tok-written-in-toml-123456"
    cfg = tmp_path / "c.toml"
    cfg.write_text(CONFIG.format(db=tmp_path / "s.db").replace("[dx]", f'[dx]\ntoken = "{secret}"'))
    result = hrsync("--config", str(cfg), "db", "upgrade", env={"HRSYNC_DX_TOKEN": "x" * 10})
    assert result.returncode == 2
    assert "dx.token must not be written in the config file" in result.stderr
    assert secret not in result.stdout + result.stderr


def test_known_token_appears_nowhere(tmp_path: Path) -> None:
    token = "known-token-5f2a9c1e7b"
    cfg = tmp_path / "c.toml"
    cfg.write_text(CONFIG.format(db=tmp_path / "s.db") + '[log]\nlevel = "debug"\n')
    result = hrsync("--config", str(cfg), "db", "upgrade", env={"HRSYNC_DX_TOKEN": token})
    assert result.returncode == 0, result.stderr
    assert token not in result.stdout + result.stderr
    db = (tmp_path / "s.db").read_bytes()
    assert token.encode() not in db


def test_usage_error_is_exit_2() -> None:
    result = hrsync("sync", "--allow-archive", "-3")
    assert result.returncode == 2
