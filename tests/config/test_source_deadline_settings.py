"""`source.deadline_s`: a finite number of seconds above 0, 300 by default (issue 27)."""

from __future__ import annotations

from pathlib import Path

import pytest

from hrsync.config.loading import ConfigError, load_settings

MINIMAL = """
[dx]
base_url = "https://api.example.test"

[source]
url = "https://hr.example.test/people.csv"
"""
ENV = {"HRSYNC_DX_TOKEN": "tok-1234567890"}


def config(tmp_path: Path) -> Path:
    path = tmp_path / "hrsync.toml"
    path.write_text(MINIMAL, encoding="utf-8")
    return path


def test_the_default_is_five_minutes_and_the_environment_sets_it(tmp_path: Path) -> None:
    assert load_settings(config(tmp_path), ENV).source.deadline_s == 300
    env = {**ENV, "HRSYNC_SOURCE__DEADLINE_S": "42.5"}
    assert load_settings(config(tmp_path), env).source.deadline_s == 42.5


@pytest.mark.parametrize("value", ["0", "-1", "inf", "nan"])
def test_a_deadline_that_is_no_deadline_is_refused(tmp_path: Path, value: str) -> None:
    with pytest.raises(ConfigError) as info:
        load_settings(config(tmp_path), {**ENV, "HRSYNC_SOURCE__DEADLINE_S": value})
    (problem,) = info.value.problems
    assert problem.startswith("source.deadline_s must be")
    assert "greater than 0" in problem and value in problem
