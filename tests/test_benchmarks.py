"""The benchmarks still run (their figures are read by people, never asserted here).

A benchmark broken by a change to the code it measures fails silently until someone
needs its figures; these run each at a size too small to measure anything.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.parametrize(
    ("script", "args", "shows"),
    [
        # Its last line: the union (issue 26), after the joins', the templates' and the
        # pipeline's.
        ("bench_pipeline.py", ["--sizes", "400", "--repeat", "1"], "[[source.union]]"),
        ("bench_mapping.py", ["400"], "people"),
        (
            "bench_large_export.py",
            ["--people", "300", "--init-rows", "300", "--plan-rounds", "1"],
            "init --from",
        ),
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


def test_the_pipeline_benchmark_times_each_step_it_names(tmp_path: Path) -> None:
    export = tmp_path / "org.csv"
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    benchmarks = ROOT / "benchmarks"
    for args in (
        [str(benchmarks / "generator.py"), "300", "--seed", "7", "--out", str(export)],
        [str(benchmarks / "bench_pipeline.py"), "--child", "steps", str(export)],
    ):
        done = subprocess.run(
            [sys.executable, *args], capture_output=True, text=True, env=env, timeout=120
        )
        assert done.returncode == 0, done.stderr[-2000:]
    figures = json.loads(done.stdout)
    # Every step it wraps was called: one the pipeline no longer calls (or one renamed,
    # which the wrapping itself refuses) shows here.
    assert set(figures["steps"]) == set(figures["wrapped"])
    assert len(figures["wrapped"]) >= 16
    assert set(figures["faults"]) == set(figures["steps"])


def test_the_churn_benchmark_runs_two_days_and_writes_well_formed_figures(
    tmp_path: Path,
) -> None:
    out = tmp_path / "churn.json"
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    done = subprocess.run(
        [
            sys.executable,
            str(ROOT / "benchmarks" / "bench_churn.py"),
            *("--days", "2", "--people", "60", "--verify-timeout", "3", "--json", str(out)),
        ],
        capture_output=True,
        text=True,
        env=env,
        timeout=180,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert "wrong-team person-days" in done.stdout
    figures = json.loads(out.read_text())
    assert figures["days"] == 2
    assert [d["day"] for d in figures["daily"]] == [1, 2]
    assert 0.0 <= figures["ok_share"] <= 1.0
    assert sum(figures["outcomes"].values()) == 2
    for key in (
        "wrong_person_days",
        "wrong_applied",
        "leaver_days_in_teams",
        "in_no_team_person_days",
    ):
        assert isinstance(figures[key], int) and figures[key] >= 0
    assert figures["counted_person_days"] > 0
    assert figures["cpu_floor_s"] > 0
    assert 0 < figures["cpu_median_s"] <= figures["cpu_max_s"]
    assert figures["changes"]["hire"] >= 2
    assert all(isinstance(n, int) for n in figures["messages"].values())
