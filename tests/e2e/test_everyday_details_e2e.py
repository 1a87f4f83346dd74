"""Details an operator meets every day (printed commands pasted back, a config path
with spaces, DX naming a bad address, a lost store): `hrsync` as a subprocess, DX simulated."""

from __future__ import annotations

import dataclasses
import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from hrsync.config.loading import load_settings
from hrsync.outcome import Outcome
from hrsync.store.repo import Store
from hrsync.sync.results import SyncRequest
from hrsync.sync.story import run_sync
from tests.e2e.conftest import TOKEN, Run, Workspace, parse_events, read_rows

pytestmark = pytest.mark.slow

HRSYNC = Path(sys.executable).with_name("hrsync")


def run_argv(
    ws: Workspace, argv: list[str], *, cwd: Path, env: dict[str, str] | None = None
) -> Run:
    """Run a command line exactly as a person would paste it (no --config added)."""
    assert argv[0] == "hrsync", argv
    base = {k: v for k, v in os.environ.items() if not k.startswith("HRSYNC_")}
    proc = subprocess.run(
        [str(HRSYNC), *argv[1:]],
        env={**base, "HRSYNC_DX_TOKEN": TOKEN, **(env or {})},
        capture_output=True,
        text=True,
        timeout=60,
        cwd=cwd,
    )
    ws.outputs.append(proc.stdout + proc.stderr)
    return Run(proc.returncode, proc.stdout, proc.stderr, parse_events(proc.stdout + proc.stderr))


def printed_command(text: str, prefix: str) -> list[str]:
    report = "\n".join(line for line in text.splitlines() if not line.startswith("{"))
    match = re.search(rf"{re.escape(prefix)}\s*(hrsync .+)$", report, re.MULTILINE)
    assert match, f"no line with {prefix!r} in:\n{text[-2000:]}"
    return shlex.split(match.group(1))


# ------------------------------------------------ item 15: the approval command


def test_printed_approval_and_preview_commands_work_when_pasted(workspace: Workspace) -> None:
    assert workspace.hrsync("sync").code == 0
    workspace.use_export("sample-org-reorg.csv")
    guard = {"HRSYNC_SYNC__MAX_ARCHIVE": "0"}
    # A relative --config, as a person types it in the folder that holds it.
    refused = run_argv(
        workspace, ["hrsync", "--config", "hrsync.toml", "sync"], cwd=workspace.root, env=guard
    )
    assert refused.code == 4, refused.stderr[-2000:]
    approve = printed_command(refused.stdout, "apply it once with:")
    preview = printed_command(refused.stdout, "preview it with:")
    assert approve == ["hrsync", "--config", "hrsync.toml", "sync", "--allow-archive", "1"]
    plan_id = refused.finished["plan_id"]
    # Exactly the refused plan, by its id: not the export as it is when pasted.
    assert preview == ["hrsync", "--config", "hrsync.toml", "sync", "--preview", plan_id]
    assert refused.named("sync.refused")[0]["override"] == shlex.join(approve)
    assert len(workspace.process_requests()) == 1

    previewed = run_argv(workspace, preview, cwd=workspace.root, env=guard)
    assert previewed.code == 0, previewed.stderr[-2000:]
    assert f"Preview of plan {plan_id}: https://" in previewed.stdout
    assert previewed.named("sync.preview")[0]["preview_url"]
    assert len(workspace.process_requests()) == 1  # a preview applies nothing

    applied = run_argv(workspace, approve, cwd=workspace.root, env=guard)
    assert applied.code == 0, applied.stderr[-2000:]
    assert applied.finished["outcome"] == "applied"
    assert applied.finished["counts"]["archive"] == 1
    assert len(workspace.process_requests()) == 2


def test_a_config_path_with_spaces_is_quoted_in_the_printed_command(
    workspace: Workspace,
) -> None:
    spaced = workspace.root / "my configs" / "hr sync.toml"
    spaced.parent.mkdir()
    spaced.write_text(workspace.config.read_text())
    guard = {"HRSYNC_SYNC__MAX_ARCHIVE": "0"}
    assert run_argv(workspace, ["hrsync", "--config", str(spaced), "sync"], cwd=Path("/")).code == 0
    workspace.use_export("sample-org-reorg.csv")
    refused = run_argv(
        workspace, ["hrsync", "--config", str(spaced), "sync"], cwd=Path("/"), env=guard
    )
    assert refused.code == 4
    approve = printed_command(refused.stdout, "apply it once with:")
    assert approve[:3] == ["hrsync", "--config", str(spaced)]
    assert run_argv(workspace, approve, cwd=Path("/"), env=guard).code == 0


# ------------------------------------------------ item 16: invalid_email


def test_dx_invalid_email_names_the_setting_and_the_address(workspace: Workspace) -> None:
    # DX may be stricter than our rule: stand in for that with an address our config
    # check would have refused, set past it.
    loaded = load_settings(workspace.config, {"HRSYNC_DX_TOKEN": TOKEN})
    settings = dataclasses.replace(
        loaded, sync=dataclasses.replace(loaded.sync, notify_email="ops at acme")
    )
    store = Store.open(settings.state.database_url)
    try:
        result = run_sync(settings, SyncRequest(), store=store)
    finally:
        store.close()
    assert result.outcome is Outcome.REJECTED
    assert result.reason is not None
    assert result.reason.startswith("DX refused sync.notify_email 'ops at acme': ")
    assert "invalid_email" in result.reason
    assert result.reason.splitlines()[0] == result.report.splitlines()[-1]


# ------------------------------------------------ item 13: a lost store and renames


def test_a_lost_store_adopts_renamed_teams_by_reference_id(workspace: Workspace) -> None:
    first = workspace.hrsync("sync")
    assert first.code == 0, first.stderr[-2000:]
    before = workspace.dx_teams()
    # The store is lost...
    for path in workspace.root.glob("state.db*"):
        path.unlink()
    # ...and meanwhile HR renamed two departments, so their teams' names change.
    renames = {"Platform": "Platform Engineering", "Data Platform": "Data Foundations"}
    rows = read_rows("sample-org.csv")
    for row in rows:
        row["Department"] = renames.get(row["Department"], row["Department"])
    workspace.write_export(rows)

    second = workspace.hrsync("sync")
    assert second.code == 0, second.stdout[-3000:]
    assert second.finished["outcome"] == "applied"
    counts = second.finished["counts"]
    assert (counts["rename"], counts["create"], counts["archive"]) == (2, 0, 0), counts
    hows = {e["key"]: e["how"] for e in second.named("identity.decision")}
    assert set(hows.values()) == {"adopted_reference"}
    after = workspace.dx_teams()
    for old, new in renames.items():
        # The same DX team, renamed in place: its history stays with it.
        assert after[new]["id"] == before[old]["id"]
        assert after[new]["reference_id"] == before[old]["reference_id"]
        assert old not in after
    assert workspace.sim.dx.archived_teams() == []
