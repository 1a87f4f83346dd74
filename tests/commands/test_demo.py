"""`hrsync demo` tells its story, needs no token, and leaves nothing behind."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.simulating import seed_args, simulator_seed

pytestmark = pytest.mark.slow


def run_demo(cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("HRSYNC_")}
    return subprocess.run(
        [sys.executable, "-m", "hrsync", "demo", *seed_args(), *args],
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
    seed = simulator_seed()
    assert f"Simulator seed {seed}: " in out and f"(replay: hrsync demo --seed {seed})" in out
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
    # Its folder is gone: no printed command may point into it (issue 24, item 7).
    assert "hrsync --config" not in out
    assert "hrsync demo --keep DIR" in out


def test_demo_keep(tmp_path: Path) -> None:
    keep = tmp_path / "kept"
    result = run_demo(tmp_path, "--keep", str(keep))
    assert result.returncode == 0, result.stderr
    assert {p.name for p in keep.iterdir()} >= {"hrsync.toml", "state.db", "demo.log"}
    assert '"event": "sync.finished"' in (keep / "demo.log").read_text()


def test_the_kept_demo_goes_on_with_the_printed_commands(tmp_path: Path) -> None:
    """With --keep, the printed commands run: the kept folder holds DX as the demo left
    it and the token, and the kept config points at the simulator the printed line
    starts (issue 24, item 7)."""
    keep = tmp_path / "kept"
    out = run_demo(tmp_path, "--keep", str(keep)).stdout
    (start,) = [line.strip() for line in out.splitlines() if "hrsync simulator --scenario" in line]
    assert start == f"hrsync simulator --scenario {keep / 'scenario.json'} --port 8765"
    commands = [
        line.partition("hrsync --config ")[2].split()
        for line in out.splitlines()
        if "hrsync --config " in line
    ]
    assert commands, out
    # The printed port may be taken on a test machine: serve on a free one and point the
    # kept config at it from the environment, as an operator whose 8765 is taken would.
    env = {k: v for k, v in os.environ.items() if not k.startswith("HRSYNC_")}
    sim = subprocess.Popen(
        [sys.executable, "-m", "hrsync", *start.split()[1:-1], "0"],
        stdout=subprocess.PIPE,
        text=True,
        env=env,
    )
    try:
        assert sim.stdout is not None
        base_url = sim.stdout.readline().strip().partition("=")[2]

        def plan() -> subprocess.CompletedProcess[str]:
            return subprocess.run(
                [sys.executable, "-m", "hrsync", "--config", str(keep / "hrsync.toml"), "plan"],
                env={**env, "HRSYNC_DX__BASE_URL": base_url},
                capture_output=True,
                text=True,
                timeout=60,
            )

        # DX as the demo left it: the kept store finds nothing to change, and no team
        # looks edited by hand since (DX started again keeps when each team changed).
        first = plan()
        assert first.returncode == 0, first.stderr[-2000:]
        assert first.stdout.startswith("No changes: DX matches the export"), first.stdout
        for config, *args in commands:
            assert config == str(keep / "hrsync.toml")
            ran = subprocess.run(
                [sys.executable, "-m", "hrsync", "--config", config, *args],
                env={**env, "HRSYNC_DX__BASE_URL": base_url},
                capture_output=True,
                text=True,
                timeout=60,
            )
            assert ran.returncode == 0, (args, ran.stdout[-2000:], ran.stderr[-2000:])
        # The printed commands sent the demo's last export again: nothing is left to do.
        last = plan()
        assert last.returncode == 0, last.stderr[-2000:]
        assert last.stdout.startswith("No changes: DX matches the export"), last.stdout
        sim.terminate()
        assert sim.wait(timeout=10) == 0
    finally:
        if sim.poll() is None:
            sim.kill()
            sim.wait()
