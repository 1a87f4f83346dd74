"""Secrets written where the config expects something else (issue 27, finding 4).

Every `*_env` key holds the NAME of an environment variable: a value pasted in its place
(the header, the password, the URL) is refused with a message naming the key, and never
echoed. A URL's user-info (`user:password@`) never reaches a config error either.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from hrsync.config.loading import ConfigError, load_settings
from hrsync.config.userinfo import hide_userinfo
from hrsync.core.settings import Settings

SECRET = "Bearer sk_live_XYZ0123456789abcdef"
PASSWORD = "s3cretPassw0rd"
TOKEN = {"HRSYNC_DX_TOKEN": "tok-1234567890"}
BASE = """
[dx]
base_url = "https://api.example.test"

[source]
url = "https://hr.example.test/people.csv"
"""


def env_keys(cls: type = Settings, prefix: str = "") -> list[str]:
    """Every `*_env` key of the settings, dotted, found by walking the dataclasses: a key
    added later is covered without touching this test."""
    found: list[str] = []
    for f in dataclasses.fields(cls):
        default = f.default_factory() if f.default_factory is not dataclasses.MISSING else None
        if dataclasses.is_dataclass(default):
            found.extend(env_keys(type(default), f"{prefix}{f.name}."))
        elif f.name.endswith("_env"):
            found.append(f"{prefix}{f.name}")
    return found


ENV_KEYS = env_keys()


def test_the_walk_finds_every_env_key_the_settings_have() -> None:
    assert set(ENV_KEYS) >= {
        "source.username_env",
        "source.password_env",
        "source.oauth2.client_id_env",
        "source.oauth2.client_secret_env",
        "source.google_service_account.key_file_env",
        "notify.webhook_url_env",
    }


def problems(tmp_path: Path, text: str, env: dict[str, str] | None = None) -> list[str]:
    path = tmp_path / "hrsync.toml"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(ConfigError) as info:
        load_settings(path, {**TOKEN, **(env or {})})
    # What a person sees: the one line the CLI prints carries every problem too.
    assert info.value.problems and str(info.value)
    return [*info.value.problems, str(info.value)]


def in_file(key: str, value: str) -> str:
    section, _, name = key.rpartition(".")
    if section == "source":
        return BASE.replace("[source]\n", f"[source]\n{name} = {value}\n")
    return f"{BASE}\n[{section}]\n{name} = {value}\n"


def as_variable(key: str) -> str:
    return "HRSYNC_" + key.upper().replace(".", "__")


@pytest.mark.parametrize("origin", ["file", "environment"])
@pytest.mark.parametrize("key", ENV_KEYS)
def test_a_value_in_an_env_key_is_refused_naming_the_key_and_never_shown(
    tmp_path: Path, key: str, origin: str
) -> None:
    if origin == "file":
        found = problems(tmp_path, in_file(key, f'"{SECRET}"'))
    else:
        found = problems(tmp_path, BASE, {as_variable(key): SECRET})
    assert any(
        p.startswith(f"{key} must name an environment variable")
        and "looks like a value rather than a name" in p
        for p in found
    ), found
    assert all("sk_live" not in p for p in found), found


@pytest.mark.parametrize("key", ENV_KEYS)
def test_an_env_key_of_the_wrong_type_is_not_echoed_either(tmp_path: Path, key: str) -> None:
    found = problems(tmp_path, in_file(key, f'["{SECRET}"]'))
    assert any(p.startswith(f"{key} must be a string") for p in found), found
    assert all("sk_live" not in p for p in found), found


def test_a_key_file_variable_without_source_url_is_not_echoed(tmp_path: Path) -> None:
    # "only used with source.url, got …": a value that is not a name is not shown there.
    text = (
        '[dx]\nbase_url = "https://api.example.test"\n[source]\npath = "people.csv"\n'
        f'[source.google_service_account]\nkey_file_env = "{SECRET}"\nscopes = ["s"]\n'
    )
    found = problems(tmp_path, text)
    assert any("key_file_env is only used with source.url" in p for p in found), found
    assert all("sk_live" not in p for p in found), found


def test_a_variable_name_is_still_accepted_and_shown_where_it_helps(tmp_path: Path) -> None:
    path = tmp_path / "hrsync.toml"
    path.write_text(in_file("source.username_env", '"HR_API_USER"'), encoding="utf-8")
    assert load_settings(path, TOKEN).source.username_env == "HR_API_USER"


# ------------------------------------------------------------------- URLs' user-info


@pytest.mark.parametrize(
    ("text", "env"),
    [
        # A scheme the key does not take: the message quotes the URL.
        (BASE.replace("https://api.example.test", f"ftp://dxuser:{PASSWORD}@dx.test"), {}),
        (BASE.replace("https://hr.example", f"htp://hruser:{PASSWORD}@hr.example"), {}),
        (BASE.replace("https://hr.example", f"hruser:{PASSWORD}@hr.example"), {}),
        # The user name alone may be the credential (an API key as basic auth's user).
        (BASE.replace("https://hr.example", f"htp://{PASSWORD}@hr.example"), {}),
        (BASE, {"HRSYNC_DX__BASE_URL": f"ftp://dxuser:{PASSWORD}@dx.test"}),
        (
            BASE + f'[source.oauth2]\ntoken_url = "htp://id:{PASSWORD}@login.test/token"\n'
            'client_id_env = "ID"\nclient_secret_env = "SECRET"\n',
            {},
        ),
        # token_url set without source.url: "only used with source.url, got …".
        (
            BASE.replace('url = "https://hr.example.test/people.csv"', 'path = "people.csv"')
            + f'[source.oauth2]\ntoken_url = "https://id:{PASSWORD}@login.test/token"\n',
            {},
        ),
        (BASE, {"HRSYNC_STATE__DATABASE_URL": f"hr:{PASSWORD}@db.test/hrsync"}),
        (BASE, {"HRSYNC_STATE__DATABASE_URL": f"postgresql+nodriver://hr:{PASSWORD}@db/hrsync"}),
        (BASE, {"HRSYNC_STATE__DATABASE_URL": f"://hr:{PASSWORD}@nowhere"}),
    ],
)
def test_a_url_in_a_config_error_is_shown_without_its_user_info(
    tmp_path: Path, text: str, env: dict[str, str]
) -> None:
    found = problems(tmp_path, text, env)
    assert all(PASSWORD not in p for p in found), found
    assert all("dxuser" not in p and "hruser" not in p for p in found), found


@pytest.mark.parametrize(
    ("text", "shown"),
    [
        ("got 'ftp://u:pw@host/x'", "got 'ftp://***@host/x'"),
        ("got 'ftp://apikey@host/x'", "got 'ftp://***@host/x'"),
        ("got 'u:pw@host/x'", "got '***@host/x'"),
        # The store's own redaction keeps the database role, its password already hidden.
        ("'postgresql+psycopg://hr:***@db/x' needs", "'postgresql+psycopg://hr:***@db/x' needs"),
        # No user-info: nothing changes, an e-mail address in a value neither.
        ("got 'https://hr.example.test/x?manager=a@b.test'", None),
        ("sync.notify_email must be an address, got 'ops@@example.com'", None),
        ("no URL here", None),
    ],
)
def test_hide_userinfo(text: str, shown: str | None) -> None:
    assert hide_userinfo(text) == (text if shown is None else shown)


@pytest.mark.parametrize(
    ("url", "hidden"),
    [
        ("https://user:pa/ss@host/x", ("user", "pa/ss")),  # a "/" in the password, unencoded
        ("https://user:p@ss@host/x", ("user", "p@ss")),  # an "@" in the password, unencoded
        ("postgresql://hr:pa:ss@db/hrsync", ("pa:ss",)),
    ],
)
def test_hide_userinfo_of_a_known_url_hides_all_of_it(url: str, hidden: tuple[str, ...]) -> None:
    shown = hide_userinfo(f"source.url must be …, got {url!r}", urls=[url])
    assert all(part not in shown for part in hidden), shown


# A secret without a space or a dash has the shape of a variable's name in general: only
# names written the conventional way (upper case, digits, underscores) are taken as names.
NAME_LIKE_SECRETS = [
    "ghp_16C7e42F292c6912E7710c838347Ae178B4a",
    "sk_live_51HxYzAbCdEf0123456789",
    "CorrectHorseBatteryStaple",
]


@pytest.mark.parametrize("secret", NAME_LIKE_SECRETS)
@pytest.mark.parametrize("origin", ["file", "environment"])
@pytest.mark.parametrize("key", ENV_KEYS)
def test_a_secret_shaped_like_a_name_is_refused_and_never_shown(
    tmp_path: Path, key: str, origin: str, secret: str
) -> None:
    if origin == "file":
        found = problems(tmp_path, in_file(key, f'"{secret}"'))
    else:
        found = problems(tmp_path, BASE, {as_variable(key): secret})
    assert any(
        p.startswith(f"{key} must name an environment variable")
        and "upper case letters, digits and underscores" in p
        for p in found
    ), found
    assert all(secret not in p for p in found), found


@pytest.mark.parametrize("secret", NAME_LIKE_SECRETS)
def test_a_header_value_shaped_like_a_name_is_refused_and_never_shown(
    tmp_path: Path, secret: str
) -> None:
    found = problems(tmp_path, BASE + f'[source.headers]\nX-Api-Key = "{secret}"\n')
    assert any(
        p.startswith("source.headers.X-Api-Key must name an environment variable")
        and "upper case letters, digits and underscores" in p
        for p in found
    ), found
    assert all(secret not in p for p in found), found


@pytest.mark.parametrize(
    "url",
    [
        "https://hruser:Pw@AtOnlySECRET@hr.example.test/x",
        "ftp://dxuser:Pw@At@OnlySECRET@dx.test",
        "postgresql+psycopg://hr:Pw@AtOnlySECRET@db/x",
        "hr:Pw@AtOnlySECRET@db.test/hrsync",
    ],
)
def test_hide_userinfo_hides_a_password_with_unencoded_at_signs_whole(url: str) -> None:
    # Found in the text alone (no list of the config's URLs): every "@" of the user-info.
    shown = hide_userinfo(f"got {url!r}")
    assert "SECRET" not in shown and "Pw" not in shown, shown


@pytest.mark.parametrize(
    ("key", "url"),
    [
        ("HRSYNC_DX__BASE_URL", "ftp://dxuser:Pw@AtOnlySECRET@dx.test"),
        ("HRSYNC_SOURCE__URL", "htp://hruser:Pw@AtOnlySECRET@hr.example.test/x"),
        ("HRSYNC_STATE__DATABASE_URL", "postgresql+nodriver://hr:Pw@AtOnlySECRET@db/hrsync"),
        ("HRSYNC_STATE__DATABASE_URL", "hr:Pw@AtOnlySECRET@db.test/hrsync"),
    ],
)
def test_a_url_password_with_unencoded_at_signs_is_hidden_whole(
    tmp_path: Path, key: str, url: str
) -> None:
    found = problems(tmp_path, BASE, {key: url})
    assert all("SECRET" not in p and "Pw@" not in p for p in found), found


def test_hide_userinfo_of_a_known_url_with_a_slash_and_at_signs_hides_all_of_it() -> None:
    url = "postgresql://hr:Pw@At/SlashSECRET@db/hrsync"
    shown = hide_userinfo(f"got {url!r}", urls=[url])
    assert "SECRET" not in shown and "Pw" not in shown, shown
