"""Config checks of `[source.google_service_account]` (issue 22): each problem names its
key, and a value that may be the key file's path or the key itself is never echoed."""

from __future__ import annotations

from pathlib import Path

import pytest

from hrsync.config.loading import ConfigError, load_settings

BASE = '[dx]\nbase_url = "https://api.getdx.com"\n'
TOKEN = {"HRSYNC_DX_TOKEN": "tok-1234567890"}
URL = '[source]\nurl = "https://admin.googleapis.com/admin/directory/v1/users"\n'
SCOPE = "https://www.googleapis.com/auth/admin.directory.user.readonly"
GOOD = (
    '[source.google_service_account]\nkey_file_env = "GOOGLE_APPLICATION_CREDENTIALS"\n'
    f'subject = "admin@example.com"\nscopes = ["{SCOPE}"]\n'
)


def load(tmp_path: Path, text: str, env: dict[str, str] | None = None) -> list[str]:
    path = tmp_path / "hrsync.toml"
    path.write_text(BASE + text, encoding="utf-8")
    try:
        load_settings(path, {**TOKEN, **(env or {})})
    except ConfigError as exc:
        return exc.problems
    return []


def test_the_documented_keys_load(tmp_path: Path) -> None:
    path = tmp_path / "hrsync.toml"
    path.write_text(BASE + URL + GOOD, encoding="utf-8")
    google = load_settings(path, TOKEN).source.google_service_account
    assert google.key_file_env == "GOOGLE_APPLICATION_CREDENTIALS"
    assert google.subject == "admin@example.com"
    assert google.scopes == (SCOPE,)


def test_scopes_from_the_environment_are_comma_separated(tmp_path: Path) -> None:
    path = tmp_path / "hrsync.toml"
    path.write_text(BASE + URL + GOOD, encoding="utf-8")
    env = {**TOKEN, "HRSYNC_SOURCE__GOOGLE_SERVICE_ACCOUNT__SCOPES": f"{SCOPE}, openid"}
    assert load_settings(path, env).source.google_service_account.scopes == (SCOPE, "openid")


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (
            URL + '[source.google_service_account]\nsubject = "admin@example.com"\n',
            "source.google_service_account.key_file_env is required when "
            "[source.google_service_account] is used",
        ),
        (
            URL + GOOD.replace(f'scopes = ["{SCOPE}"]\n', ""),
            "source.google_service_account.scopes must list at least one OAuth2 scope",
        ),
        (
            URL + GOOD.replace(f'["{SCOPE}"]', f'["{SCOPE} openid"]'),
            "source.google_service_account.scopes must hold one scope per item",
        ),
        (
            URL + GOOD.replace('"admin@example.com"', '"admin"'),
            "source.google_service_account.subject must be the e-mail address",
        ),
        (
            URL + GOOD + '[source.oauth2]\ntoken_url = "https://t/token"\n'
            'client_id_env = "I"\nclient_secret_env = "S"\n',
            "[source.google_service_account] and [source.oauth2] are both set; choose one",
        ),
        (
            URL + 'auth_header_env = "A"\n' + GOOD,
            "[source.google_service_account] sends its own Authorization header",
        ),
        (
            URL + GOOD + '[source.headers]\nAuthorization = "A"\n',
            "[source.google_service_account] sends its own Authorization header: drop it",
        ),
        (
            '[source]\npath = "people.csv"\n' + GOOD,
            "source.google_service_account.key_file_env is only used with source.url",
        ),
        (URL + GOOD.replace("subject", "subjct"), "did you mean source.google_service_account"),
    ],
)
def test_each_problem_names_its_key(tmp_path: Path, text: str, expected: str) -> None:
    problems = load(tmp_path, text)
    assert any(expected in p for p in problems), problems


@pytest.mark.parametrize(
    "value", ["/var/run/secrets/google/key.json", '{"type": "service_account"}']
)
def test_a_path_or_the_key_written_in_key_file_env_is_refused_and_not_echoed(
    tmp_path: Path, value: str
) -> None:
    text = URL + GOOD.replace('"GOOGLE_APPLICATION_CREDENTIALS"', repr(value))
    problems = load(tmp_path, text)
    assert any(
        "source.google_service_account.key_file_env must name an environment variable" in p
        for p in problems
    ), problems
    assert all(value not in p for p in problems)
