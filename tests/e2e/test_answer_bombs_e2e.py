"""Issue 27's done-when figure: a run fed a 2 KB HR answer that decodes to 2 GiB keeps its
peak memory under 200 MB, is refused and sends nothing. `hrsync sync` runs as a child
process; its peak resident size comes from the kernel when it is reaped (wait4), by a
small process that starts it (see `_MEASURER`)."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.e2e.conftest import TOKEN, Run, Workspace, parse_events
from tests.fakes import FakeServer, Request, Response, serve
from tests.fakes.bombs import GIB, MIB, decoded_size, gzip_gzip_of_zeros, gzip_of_zeros

pytestmark = pytest.mark.slow

PEAK_LIMIT = 200 * 1000 * 1000


@pytest.fixture(scope="module")
def bombs() -> dict[str, bytes]:
    return {"double": gzip_gzip_of_zeros(2 * GIB), "single": gzip_of_zeros(2 * GIB)}


@pytest.fixture
def hr(bombs: dict[str, bytes]) -> Iterator[FakeServer]:
    def answer(request: Request, base: str) -> Response:
        kind = request.path.strip("/").removesuffix(".csv")
        coding = "gzip, gzip" if kind == "double" else "gzip"
        return Response(200, bombs[kind], {"Content-Type": "text/csv", "Content-Encoding": coding})

    with serve(answer) as server:
        yield server


# Linux keeps a process's peak across exec, starting from the peak of the process that
# exec'd: a child of the test's worker (100s of MiB after many tests) would count the
# worker's size. So a small process starts `hrsync sync` and reports its child's peak.
_MEASURER = (
    "import os, subprocess, sys\n"
    "child = subprocess.Popen(sys.argv[2:])\n"
    "_, status, usage = os.wait4(child.pid, 0)\n"
    "child.returncode = -1\n"
    "open(sys.argv[1], 'w').write(str(usage.ru_maxrss))\n"
    "sys.exit(os.waitstatus_to_exitcode(status))\n"
)


def sync_measured(ws: Workspace, env: dict[str, str]) -> tuple[Run, int]:
    """`hrsync sync` in a child process: what it said, and its peak resident bytes."""
    base = {k: v for k, v in os.environ.items() if not k.startswith("HRSYNC_")}
    out, err = ws.root / "stdout.txt", ws.root / "stderr.txt"
    peak = ws.root / "peak-kib.txt"
    command = [sys.executable, "-m", "hrsync", "--config", str(ws.config), "sync"]
    with out.open("wb") as stdout, err.open("wb") as stderr:
        measured = subprocess.run(
            [sys.executable, "-c", _MEASURER, str(peak), *command],
            env={**base, "HRSYNC_DX_TOKEN": TOKEN, **env},
            stdin=subprocess.DEVNULL,
            stdout=stdout,
            stderr=stderr,
            cwd=ws.root,
            check=False,
            timeout=120,
        )
    said = out.read_text(encoding="utf-8") + "\n" + err.read_text(encoding="utf-8")
    ws.outputs.append(said)
    run = Run(measured.returncode, said, "", parse_events(said))
    return run, int(peak.read_text(encoding="utf-8")) * 1024  # Linux counts KiB


def source_url(ws: Workspace, url: str) -> None:
    text = ws.config.read_text(encoding="utf-8")
    ws.config.write_text(text.replace(f'path = "{ws.export}"', f'url = "{url}"'), "utf-8")


def test_the_bombs_are_what_they_claim(bombs: dict[str, bytes]) -> None:
    assert len(bombs["double"]) < 2200
    assert decoded_size(bombs["double"], 2) == 2 * GIB
    assert len(bombs["single"]) < 2.1 * MIB


def test_a_2_kb_answer_decoding_to_2_gib_is_refused_under_200_mb(
    workspace: Workspace, hr: FakeServer, tmp_path: Path
) -> None:
    source_url(workspace, f"{hr.base_url}/double.csv")
    run, peak = sync_measured(workspace, {"HRSYNC_SOURCE__MAX_BYTES": str(10 * 1000 * 1000)})
    assert peak < PEAK_LIMIT, f"hrsync sync peaked at {peak / MIB:.0f} MiB"
    assert run.code == 4, run.stdout[-3000:]
    reason = run.finished["reason"]
    assert f"{hr.base_url}/double.csv" in reason
    assert "more than one content-coding (Content-Encoding: gzip, gzip)" in reason
    assert workspace.process_requests() == []


def test_a_2_mb_gzip_answer_decoding_to_2_gib_stops_at_max_bytes_under_200_mb(
    workspace: Workspace, hr: FakeServer
) -> None:
    source_url(workspace, f"{hr.base_url}/single.csv")
    run, peak = sync_measured(workspace, {"HRSYNC_SOURCE__MAX_BYTES": str(10 * 1000 * 1000)})
    assert peak < PEAK_LIMIT, f"hrsync sync peaked at {peak / MIB:.0f} MiB"
    assert run.code == 4, run.stdout[-3000:]
    reason = run.finished["reason"]
    assert f"{hr.base_url}/single.csv sent more than 10,000,000 bytes (decoded)" in reason
    assert "source.max_bytes" in reason
    assert workspace.process_requests() == []
