"""A joined table is a source like `[source]`: the rules issue 27 drew for the source hold
for each `[[source.join]]` table too (the join and those rules were built side by side)."""

from __future__ import annotations

from pathlib import Path

import pytest

from hrsync.config.loading import ConfigError, load_settings

SECRET = "sk_live_0123456789abcdef"
BASE = """
[dx]
base_url = "https://api.getdx.com"
[source]
path = "people.csv"
[[source.join]]
name = "departments"
on = {{ department_id = "id" }}
{extra}
"""


def problems(tmp_path: Path, extra: str) -> list[str]:
    cfg = tmp_path / "c.toml"
    cfg.write_text(BASE.format(extra=extra))
    with pytest.raises(ConfigError) as caught:
        load_settings(cfg, {}, require_token=False)
    return caught.value.problems


def test_credentials_over_plain_http_to_another_host_are_refused(tmp_path: Path) -> None:
    said = problems(
        tmp_path, 'url = "http://hr.example.com/d"\nheaders = { Authorization = "HR_AUTH" }'
    )
    assert any(
        "source.join[departments].url" in p and "hr.example.com" in p and "allow_insecure_http" in p
        for p in said
    ), said


def test_a_credential_pasted_into_an_env_key_is_refused_unseen(tmp_path: Path) -> None:
    said = problems(
        tmp_path,
        f'url = "https://hr.example.com/d"\nheaders = {{ Authorization = "Bearer {SECRET}" }}',
    )
    assert any("source.join[departments].headers.Authorization" in p for p in said), said
    assert SECRET not in "\n".join(said)


def test_a_url_s_user_info_is_not_shown_in_an_error(tmp_path: Path) -> None:
    said = problems(tmp_path, f'url = "ftp://hr:{SECRET}@hr.example.com/d"')
    assert any("source.join[departments].url" in p for p in said), said
    assert SECRET not in "\n".join(said)


@pytest.mark.parametrize("value", ["nan", "inf", "-1.0"])
def test_a_number_is_checked_for_what_it_is(tmp_path: Path, value: str) -> None:
    said = problems(tmp_path, f'path = "d.csv"\ntimeout_s = {value}')
    assert any(
        "join[departments].timeout_s" in p and ("finite" in p or "greater than 0" in p)
        for p in said
    ), said
