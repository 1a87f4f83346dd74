"""The benchmarks still run (their figures are read by people, never asserted here).

A benchmark broken by a change to the code it measures fails silently until someone
needs its figures; these run each at a size too small to measure anything.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.parametrize(
    ("script", "args", "shows"),
    [
        ("bench_pipeline.py", ["--sizes", "400", "--repeat", "1"], "with a name and an e-mail"),
        ("bench_mapping.py", ["400"], "people"),
    ],
)
def test_a_benchmark_runs_at_a_small_size(script: str, args: list[str], shows: str) -> None:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    done = subprocess.run(
        [sys.executable, str(ROOT / "benchmarks" / script), *args],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert shows in done.stdout
