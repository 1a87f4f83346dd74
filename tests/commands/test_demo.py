"""`hrsync demo` tells its story, needs no token, and leaves nothing behind."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow


def run_demo(cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("HRSYNC_")}
    return subprocess.run(
        [sys.executable, "-m", "hrsync", "demo", *args],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_demo_shows_create_reorg_audit_match_and_refusal(tmp_path: Path) -> None:
    result = run_demo(tmp_path)
    assert result.returncode == 0, result.stdout + result.stderr
    out = result.stdout
    assert "Plan: 13 to create" in out
    assert "Sync: applied (exit 0)." in out
    assert '~ rename "Developer Experience" -> "Developer Productivity"' in out
    assert '> move "Growth"' in out
    assert "audit trail: change_name on 'Developer Experience' matches the planned rename" in out
    assert "audit trail: change_manager on 'Machine Learning' matches" in out
    assert "Refused: nothing was sent to DX." in out
    assert "process calls sent: 0" in out
    assert "4. User attributes: Location from an Office column" in out
    assert "Sync: attributes applied: 39 users.attributes.update calls" in out
    assert "-> attributes applied: 1 call, for " in out
    assert list(tmp_path.iterdir()) == [], "the demo left files behind"


def test_demo_keep(tmp_path: Path) -> None:
    keep = tmp_path / "kept"
    result = run_demo(tmp_path, "--keep", str(keep))
    assert result.returncode == 0, result.stderr
    assert {p.name for p in keep.iterdir()} >= {"hrsync.toml", "state.db", "demo.log"}
    assert '"event": "sync.finished"' in (keep / "demo.log").read_text()
