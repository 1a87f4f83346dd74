"""What a one-shot `hrsync plan` spends besides its own work (issue 12): no garbage
collection over the org it built, and no module it has no use for (Alembic only when the
store needs a migration)."""

from __future__ import annotations

import json
import os
import subprocess
import sys

from tests.e2e.conftest import TOKEN, Workspace

# Imports first (their collections are not the run's), then counts every collection
# during the run and the plan's output (`_run_once`, `_plan` in hrsync/commands/sync.py
# on the stack): the org's objects are alive then, so a collection finds nothing to free
# and only walks them. The collector's return after it, over what is left, is not counted.
PROBE = """
import gc, json, sys
import hrsync.commands.sync
from hrsync.cli import main
COMMAND = hrsync.commands.sync.__file__
seen = []

def in_command():
    frame = sys._getframe(1)
    while frame is not None:
        code = frame.f_code
        if code.co_filename == COMMAND and code.co_name in ("_run_once", "_plan"):
            return True
        frame = frame.f_back
    return False

gc.callbacks.append(
    lambda phase, info: phase == "stop" and in_command() and seen.append(info["generation"])
)
code = main(sys.argv[1:])
# Frozen: the libraries' objects, loaded for the process's lifetime, out of every later
# collection's walk.
frozen = gc.get_freeze_count() > 0
# What a plan of a file export has no use for: migrations, the daemon and its scheduler
# (the default `sync.schedule` is checked without it), metrics, the fake DX, the other
# database's dialect, SQLAlchemy's ORM (the store is Core), the HTTP source's fetching,
# paging and OAuth2 with its crypto, and the JSON parser (the export is CSV).
HTTP_SOURCE = tuple(
    f"hrsync.sources.{name}"
    for name in ("http_fetch", "pages", "pagination", "oauth2", "google_jwt")
)
unneeded = sorted(
    name
    for name in sys.modules
    if name.split(".")[0]
    in ("alembic", "prometheus_client", "psycopg", "apscheduler", "cryptography", "ijson")
    or name.startswith(("hrsync.simulator", "hrsync.daemon", *HTTP_SOURCE))
    or name.startswith(("sqlalchemy.dialects.postgresql", "sqlalchemy.orm"))
)
sys.stderr.write(json.dumps({"probe": seen, "unneeded": unneeded, "frozen": frozen}) + "\\n")
sys.exit(code)
"""


def probe(ws: Workspace, *args: str) -> dict[str, object]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("HRSYNC_")}
    proc = subprocess.run(
        [sys.executable, "-c", PROBE, "--config", str(ws.config), *args],
        env={**env, "HRSYNC_DX_TOKEN": TOKEN},
        capture_output=True,
        text=True,
        timeout=60,
        cwd=ws.root,
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    last = [line for line in proc.stderr.splitlines() if line.startswith('{"probe"')]
    assert last, proc.stderr[-2000:]
    found: dict[str, object] = json.loads(last[-1])
    return found


def test_a_plan_runs_no_garbage_collection_and_imports_nothing_it_does_not_use(
    workspace: Workspace,
) -> None:
    assert workspace.hrsync("plan").code == 0  # creates the store: Alembic, once
    for args in (("plan",), ("plan", "--format", "json"), ("sync", "--dry-run")):
        found = probe(workspace, *args)
        assert found == {"probe": [], "unneeded": [], "frozen": True}, args
