"""Keys of earlier releases: still read for one release, each with one line naming the
new way; a value that still means something is carried over, the rest is ignored;
never an error."""

from __future__ import annotations

from pathlib import Path

import pytest
from structlog.testing import capture_logs

from hrsync.commands.readiness import deprecation_checks
from hrsync.commands.startup import warn_deprecated
from hrsync.config.deprecated import DEPRECATED, Deprecated
from hrsync.config.loading import ConfigError, Settings, load_settings

TOKEN = {"HRSYNC_DX_TOKEN": "tok-1234567890"}
BASE = '[dx]\nbase_url = "https://api.example.test"\n[source]\nurl = "https://hr.example.test/p"\n'

# A value each old key was commonly written with, as TOML under its table.
WRITTEN: dict[str, str] = {
    "dx.max_requests_per_minute": "500",
    "dx.max_response_bytes": "1000000",
    "source.allow_insecure_http": "true",
    "notify.allow_insecure_http": "true",
    "source.auth_header_env": '"HR_AUTH"',
    "source.method": '"POST"',
    "source.pagination.page_param": '"p"',
    "source.pagination.page_size_param": '"per_page"',
    "sync.on_person_problem": '"refuse"',
    "sync.min_join_fraction": "0.95",
    "sync.healthcheck_max_age_s": "600.0",
    "sync.quarantine_alert_s": "3600.0",
    "sync.recheck_not_in_dx_hours": "12.0",
    "sync.not_in_dx_alert_days": "7.0",
    "sync.lead_left_alert_days": "5.0",
    "sync.approval_ttl_hours": "24.0",
    "sync.shutdown_grace_s": "10.0",
    "attributes.enabled": "true",
    "mapping.lead_not_in_dx": '"reject"',
    "notify.preview_refused": "false",
    "log.events_per_kind": "10",
}


def load(tmp_path: Path, text: str, env: dict[str, str] | None = None) -> Settings:
    path = tmp_path / "hrsync.toml"
    path.write_text(text, encoding="utf-8")
    return load_settings(path, {**TOKEN, **(env or {})}, require_source=False)


def written(key: str, value: str) -> str:
    """BASE with `key = value` in its table (tables after [source] as their own)."""
    table, name = key.rsplit(".", 1)
    if table in ("dx", "source"):
        return BASE.replace(f"[{table}]\n", f"[{table}]\n{name} = {value}\n")
    return BASE + f"[{table}]\n{name} = {value}\n"


def test_every_deprecated_key_has_a_written_example() -> None:
    assert set(WRITTEN) == {old.key for old in DEPRECATED}


@pytest.mark.parametrize("old", DEPRECATED, ids=lambda old: old.key)
def test_a_deprecated_key_loads_with_one_line_naming_the_new_way(
    tmp_path: Path, old: Deprecated
) -> None:
    key = old.key
    settings = load(tmp_path, written(key, WRITTEN[key]))
    (line,) = settings.deprecations
    assert line.startswith(f"{key} is no longer a key (")
    assert line.endswith(old.instead)


@pytest.mark.parametrize("old", DEPRECATED, ids=lambda old: old.key)
def test_an_environment_override_of_a_deprecated_key_is_named_by_its_variable(
    tmp_path: Path, old: Deprecated
) -> None:
    key = old.key
    variable = "HRSYNC_" + key.upper().replace(".", "__")
    text = WRITTEN[key].strip('"')
    settings = load(tmp_path, BASE, {variable: text})
    (line,) = settings.deprecations
    assert line.startswith(f"{variable} ({key}) is no longer a key")


def test_one_allow_insecure_http_key_for_every_url(tmp_path: Path) -> None:
    plain = BASE.replace("https://hr.", "http://hr.")
    plain += '[source.headers]\nAuthorization = "HR_AUTH"\n'
    with pytest.raises(ConfigError, match=r"set dx\.allow_insecure_http = true"):
        load(tmp_path, plain)
    old = plain.replace("[source]\n", "[source]\nallow_insecure_http = true\n")
    settings = load(tmp_path, old)
    assert settings.dx.allow_insecure_http and settings.source.allow_insecure_http
    assert settings.notify.allow_insecure_http
    assert "set dx.allow_insecure_http = true" in settings.deprecations[0]
    new = plain.replace("[dx]\n", "[dx]\nallow_insecure_http = true\n")
    assert load(tmp_path, new).deprecations == ()


def test_a_written_dx_allow_insecure_http_wins_over_an_old_key(tmp_path: Path) -> None:
    text = BASE.replace("[dx]\n", "[dx]\nallow_insecure_http = false\n")
    settings = load(tmp_path, text + "[notify]\nallow_insecure_http = true\n")
    assert settings.notify.allow_insecure_http is False
    assert len(settings.deprecations) == 1


def test_an_old_auth_header_env_becomes_the_authorization_header(tmp_path: Path) -> None:
    settings = load(tmp_path, written("source.auth_header_env", '"HR_AUTH"'))
    assert settings.source.headers == {"Authorization": "HR_AUTH"}
    # A header written for it already wins: the old key adds nothing.
    both = BASE + 'auth_header_env = "OLD"\n[source.headers]\nauthorization = "NEW"\n'
    assert load(tmp_path, both).source.headers == {"authorization": "NEW"}


def test_an_old_key_of_a_join_is_read_and_named_there(tmp_path: Path) -> None:
    text = BASE + (
        '[[source.join]]\nname = "departments"\nurl = "https://hr.example.test/d"\n'
        'on = { DEPARTMENT_ID = "DEPARTMENT_ID" }\nauth_header_env = "HR_AUTH"\n'
    )
    settings = load(tmp_path, text)
    assert settings.source.join[0].table.headers == {"Authorization": "HR_AUTH"}
    assert settings.deprecations[0].startswith(
        "source.join[departments].auth_header_env is no longer a key"
    )


def test_an_old_post_method_without_a_body_posts_an_empty_object(tmp_path: Path) -> None:
    settings = load(tmp_path, written("source.method", '"POST"'))
    assert settings.source.body == "{}" and settings.source.method == "POST"
    assert load(tmp_path, written("source.method", '"GET"')).source.method == "GET"


def test_old_page_parameter_names_are_the_page_styles_parameters(tmp_path: Path) -> None:
    text = BASE + (
        '[source.pagination]\nstyle = "page"\npage_param = "p"\npage_size_param = "per_page"\n'
    )
    paging = load(tmp_path, text).source.pagination
    assert (paging.offset_param, paging.limit_param) == ("p", "per_page")
    # With another style they meant nothing: ignored, not moved to the offset's names.
    other = text.replace('"page"\n', '"offset"\n', 1)
    paging = load(tmp_path, other).source.pagination
    assert (paging.offset_param, paging.limit_param) == ("", "")


def test_refusing_on_a_persons_problem_is_max_held_0(tmp_path: Path) -> None:
    assert load(tmp_path, written("sync.on_person_problem", '"refuse"')).sync.max_held == 0
    assert load(tmp_path, written("sync.on_person_problem", '"hold"')).sync.max_held == 25


def test_attributes_enabled_false_turns_the_step_off(tmp_path: Path) -> None:
    text = BASE + '[attributes]\n"Location" = "{Office}"\nenabled = false\n'
    settings = load(tmp_path, text)
    assert not settings.attributes.active
    on = load(tmp_path, text.replace("false", "true"))
    assert on.attributes.active and on.attributes.entries == {"Location": "{Office}"}


def test_a_derived_key_is_ignored_not_an_error(tmp_path: Path) -> None:
    settings = load(tmp_path, written("sync.healthcheck_max_age_s", "600.0"))
    assert settings.sync.healthcheck_max_age_s == 120.0  # four heartbeats of 30 s


def test_the_lines_are_a_warning_at_start_and_in_check(tmp_path: Path) -> None:
    settings = load(tmp_path, written("log.events_per_kind", "10"))
    with capture_logs() as logs:
        warn_deprecated(settings)
    assert [(e["event"], e["log_level"]) for e in logs] == [("config.deprecated", "warning")]
    assert logs[0]["detail"] == settings.deprecations[0]
    (check,) = deprecation_checks(settings)
    assert check.ok and check.warning and check.detail == settings.deprecations[0]


def test_unknown_keys_are_still_errors(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"sync\.max_archives is not a known key"):
        load(tmp_path, BASE + "[sync]\nmax_archives = 3\n")
