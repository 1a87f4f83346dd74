"""`daemon.listen` checked at load time: what binds later passes, the rest is refused
naming the key, the value and the expected form (issue 27)."""

from __future__ import annotations

from pathlib import Path

import pytest

from hrsync.config.loading import ConfigError, load_settings

MINIMAL = """
[dx]
base_url = "https://api.example.test"

[source]
path = "people.csv"
"""
ENV = {"HRSYNC_DX_TOKEN": "tok-1234567890"}


def load(tmp_path: Path, listen: str) -> list[str]:
    path = tmp_path / "hrsync.toml"
    path.write_text(MINIMAL, encoding="utf-8")
    try:
        settings = load_settings(path, {**ENV, "HRSYNC_DAEMON__LISTEN": listen})
    except ConfigError as exc:
        return exc.problems
    assert settings.daemon.listen == listen
    return []


@pytest.mark.parametrize(
    "listen", ["0.0.0.0:9464", "127.0.0.1:0", "[::]:9464", "[::1]:0", "localhost:9464", ""]
)
def test_a_listen_address_that_binds_is_accepted(tmp_path: Path, listen: str) -> None:
    assert load(tmp_path, listen) == []


@pytest.mark.parametrize(
    ("listen", "why"),
    [
        ("evil host:80", "spaces"),
        ("::1:9464", "brackets"),
        ("[nonsense]:9464", "not an IPv6 address"),
        ("0.0.0.0:70000", "0 to 65535"),
        ("0.0.0.0", "no port"),
        ("bad_host!:80", "not a host name"),
    ],
)
def test_a_listen_address_that_cannot_bind_is_refused_naming_key_value_and_form(
    tmp_path: Path, listen: str, why: str
) -> None:
    (problem,) = load(tmp_path, listen)
    assert problem.startswith('daemon.listen must be "HOST:PORT"')
    assert "[::]:9464" in problem  # the expected form, IPv6 included
    assert repr(listen) in problem and why in problem
