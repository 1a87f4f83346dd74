"""Command lines a person can paste, with the same `--config` as the run that prints them (pure)."""

from __future__ import annotations

import shlex
from pathlib import Path


def hrsync_command(config_path: Path | str | None, *args: str) -> str:
    """A command line a person can paste: the same `--config` as this run, quoted."""
    head = ["hrsync"] if config_path is None else ["hrsync", "--config", str(config_path)]
    return shlex.join([*head, *args])


def approve_command(plan_id: str, config_path: Path | str | None) -> str:
    """`hrsync approve PLAN_ID` with the same `--config` as this run."""
    return hrsync_command(config_path, "approve", plan_id)
