"""`state.keep_days` (issue 27): how long the store keeps its history; 0 keeps it all."""

from __future__ import annotations

from pathlib import Path

import pytest

from hrsync.config.loading import ConfigError, load_settings

TOKEN = {"HRSYNC_DX_TOKEN": "tok-1234567890"}
BASE = '[dx]\nbase_url = "https://api.example.test"\n[source]\npath = "people.csv"\n'


def load(tmp_path: Path, text: str, env: dict[str, str] | None = None) -> int:
    path = tmp_path / "hrsync.toml"
    path.write_text(BASE + text, encoding="utf-8")
    return load_settings(path, {**TOKEN, **(env or {})}).state.keep_days


def test_half_a_year_by_default_0_for_ever_and_from_the_environment(tmp_path: Path) -> None:
    assert load(tmp_path, "") == 180
    assert load(tmp_path, "[state]\nkeep_days = 0\n") == 0
    assert load(tmp_path, "", {"HRSYNC_STATE__KEEP_DAYS": "400"}) == 400


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (
            "[state]\nkeep_days = -1\n",
            "state.keep_days must be 0 or more, got -1",
        ),
        ('[state]\nkeep_days = "forever"\n', "state.keep_days must be a whole number"),
    ],
)
def test_a_bad_value_is_refused_naming_the_key(tmp_path: Path, text: str, expected: str) -> None:
    with pytest.raises(ConfigError) as caught:
        load(tmp_path, text)
    assert any(p.startswith(expected) for p in caught.value.problems), caught.value.problems
