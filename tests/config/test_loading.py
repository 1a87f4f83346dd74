"""Configuration: loading, environment overrides, validation messages."""

from __future__ import annotations

from pathlib import Path

import pytest

from hrsync.config.loading import ConfigError, load_settings
from hrsync.core.people.emails import is_valid_email, normalise_email

MINIMAL = """
[dx]
base_url = "https://api.example.test"

[source]
path = "people.csv"
"""

TOKEN_ENV = {"HRSYNC_DX_TOKEN": "tok-1234567890"}


def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "hrsync.toml"
    path.write_text(text, encoding="utf-8")
    return path


def problems_of(path: Path, env: dict[str, str]) -> list[str]:
    with pytest.raises(ConfigError) as info:
        load_settings(path, env)
    return info.value.problems


def test_defaults_match_design(tmp_path: Path) -> None:
    s = load_settings(write(tmp_path, MINIMAL), TOKEN_ENV)
    assert s.dx.timeout_s == 30
    assert s.sync.schedule == "0 6 * * *"
    assert s.sync.timezone == "UTC"
    assert s.sync.max_archive == 10
    assert s.sync.max_archive_fraction == 0.2
    assert s.sync.min_people_fraction == 0.8
    assert s.sync.retro_window_days == 21
    assert s.sync.verify_timeout_s == 600
    assert s.sync.quarantine_after == 5
    assert s.mapping.strategy == "manager"
    assert s.mapping.min_team_size == 0
    assert s.filter.active_status == ("Active",)
    # A relative SQLite path sits beside the config file, like every other path.
    assert s.state.database_url == f"sqlite:///{tmp_path / 'hrsync.db'}"
    assert s.log.format == "auto"
    assert s.log.level == "info"
    assert s.token is not None and s.token.reveal() == "tok-1234567890"
    # Relative paths are resolved against the config file's folder.
    assert s.source.path == tmp_path / "people.csv"


def test_numbers_from_the_file_and_the_environment(tmp_path: Path) -> None:
    path = write(tmp_path, MINIMAL + "\n[sync]\nverify_timeout_s = 300\nmax_resends = 4\n")
    s = load_settings(path, {**TOKEN_ENV, "HRSYNC_DX__TIMEOUT_S": " 2.5 "})
    assert (s.sync.verify_timeout_s, type(s.sync.verify_timeout_s)) == (300.0, float)
    assert (s.sync.max_resends, type(s.sync.max_resends)) == (4, int)
    assert s.dx.timeout_s == 2.5


def test_env_overrides_any_key(tmp_path: Path) -> None:
    env = {
        **TOKEN_ENV,
        "HRSYNC_DX__BASE_URL": "https://other.example.test",
        "HRSYNC_SYNC__MAX_ARCHIVE": "25",
        "HRSYNC_SYNC__MAX_ARCHIVE_FRACTION": "0.5",
        "HRSYNC_FILTER__ACTIVE_STATUS": "Active, Leave",
        "HRSYNC_SOURCE__FIELDS__EMAIL": "Work Email",
        "HRSYNC_SYNC__NOTIFY_EMAIL": "ops@example.test",
    }
    s = load_settings(write(tmp_path, MINIMAL), env)
    assert s.dx.base_url == "https://other.example.test"
    assert s.sync.max_archive == 25
    assert s.sync.max_archive_fraction == 0.5
    assert s.filter.active_status == ("Active", "Leave")
    assert s.source.fields.email == "Work Email"
    assert s.sync.notify_email == "ops@example.test"


def test_config_path_from_environment(tmp_path: Path) -> None:
    path = write(tmp_path, MINIMAL)
    s = load_settings(None, {**TOKEN_ENV, "HRSYNC_CONFIG": str(path)})
    assert s.config_path == path


def test_token_from_file(tmp_path: Path) -> None:
    (tmp_path / "token").write_text("file-token-abcdef\n")
    path = write(tmp_path, MINIMAL.replace("[dx]", '[dx]\ntoken_file = "token"'))
    s = load_settings(path, {})
    assert s.token is not None and s.token.reveal() == "file-token-abcdef"
    assert "file-token" not in repr(s)


@pytest.mark.parametrize(
    ("text", "env", "expected"),
    [
        (
            MINIMAL + "\n[sync]\nmax_archive_fraction = 1.5\n",
            TOKEN_ENV,
            "sync.max_archive_fraction must be between 0 and 1, got 1.5",
        ),
        (
            MINIMAL + "\n[sync]\nmax_archives = 3\n",
            TOKEN_ENV,
            "sync.max_archives is not a known key; did you mean sync.max_archive?",
        ),
        (
            MINIMAL + '\n[sync]\nmax_archive = "ten"\n',
            TOKEN_ENV,
            "sync.max_archive must be a whole number, got 'ten'",
        ),
        (
            MINIMAL,
            {**TOKEN_ENV, "HRSYNC_SYNC__MAX_ARCHIVE": "many"},
            "sync.max_archive must be a whole number, got 'many' (from HRSYNC_SYNC__MAX_ARCHIVE)",
        ),
        (
            MINIMAL + "\n[sync]\nmax_archive = 3.0\n",
            TOKEN_ENV,
            "sync.max_archive must be a whole number, got 3.0",
        ),
        (
            MINIMAL + "\n[sync]\nmax_archive = true\n",
            TOKEN_ENV,
            "sync.max_archive must be a whole number, got True",
        ),
        (
            MINIMAL + "\n[sync]\nverify_timeout_s = true\n",
            TOKEN_ENV,
            "sync.verify_timeout_s must be a number, got True",
        ),
        (
            MINIMAL,
            {**TOKEN_ENV, "HRSYNC_SYNC__VERIFY_TIMEOUT_S": "soon"},
            "sync.verify_timeout_s must be a number, got 'soon' (from HRSYNC_SYNC__VERIFY_",
        ),
        (
            MINIMAL + '\n[sync]\ntimezone = "Mars/Olympus"\n',
            TOKEN_ENV,
            "sync.timezone must be an IANA time zone",
        ),
        (
            MINIMAL + '\n[sync]\nschedule = "every day"\n',
            TOKEN_ENV,
            "sync.schedule must be a cron expression (5 fields, or 6 with seconds first)",
        ),
        (
            MINIMAL + "\n[sync]\npre_snapshot_hours = 0\n",
            TOKEN_ENV,
            "sync.pre_snapshot_hours must be greater than 0, got 0",
        ),
        (
            MINIMAL + '\n[mapping]\nstrategy = "teams"\n',
            TOKEN_ENV,
            "mapping.strategy must be one of 'manager', 'department', got 'teams'",
        ),
        (MINIMAL, {}, "dx token is missing: set $HRSYNC_DX_TOKEN or dx.token_file"),
        (
            MINIMAL.replace('base_url = "https://api.example.test"', ""),
            TOKEN_ENV,
            "dx.base_url is required",
        ),
        (
            '[dx]\nbase_url = "https://api.example.test"\n',
            TOKEN_ENV,
            "source.path or source.url is required",
        ),
        (
            MINIMAL + '\n[sourse]\npath = "x"\n',
            TOKEN_ENV,
            "sourse is not a known key; did you mean source?",
        ),
    ],
)
def test_each_problem_names_key_value_and_expectation(
    tmp_path: Path, text: str, env: dict[str, str], expected: str
) -> None:
    problems = problems_of(write(tmp_path, text), env)
    assert any(expected in p for p in problems), problems


def test_every_problem_reported_at_once(tmp_path: Path) -> None:
    text = (
        MINIMAL
        + "\n[sync]\nmax_archive_fraction = 1.5\nmin_people_fraction = -1\nmax_archives = 3\n"
    )
    problems = problems_of(write(tmp_path, text), {})
    assert len(problems) == 4, problems


def test_token_in_toml_is_refused_and_not_echoed(tmp_path: Path) -> None:
    secret = "tok-in-the-file-9876543210"
    text = MINIMAL.replace("[dx]", f'[dx]\ntoken = "{secret}"')
    problems = problems_of(write(tmp_path, text), TOKEN_ENV)
    assert any(
        p.startswith("dx.token must not be written in the config file") and "HRSYNC_DX_TOKEN" in p
        for p in problems
    ), problems
    assert all(secret not in p for p in problems)


@pytest.mark.parametrize("section", ["notify", "attributes", "source.oauth2"])
def test_a_secret_written_in_place_of_a_table_is_refused_and_not_echoed(
    tmp_path: Path, section: str
) -> None:
    secret = "https://hooks.slack.test/services/T0/B0/s3cr3t-webhook-path"
    head, _, key = section.rpartition(".")
    text = (
        MINIMAL.replace("[source]", "[source]\n" + f'{key} = "{secret}"')
        if head
        else (f'{key} = "{secret}"\n' + MINIMAL)
    )
    problems = problems_of(write(tmp_path, text), TOKEN_ENV)
    assert f"{section} must be a table, got a string" in problems, problems
    assert all("s3cr3t" not in p for p in problems), problems


def test_a_webhook_url_written_where_its_variable_belongs_is_refused_and_not_echoed(
    tmp_path: Path,
) -> None:
    # The likely mistake: the URL itself (a secret) in place of the variable's name.
    secret = "https://hooks.slack.test/services/T0/B0/s3cr3t-webhook-path"
    text = MINIMAL + f'\n[notify]\nwebhook_url_env = "{secret}"\n'
    problems = problems_of(write(tmp_path, text), TOKEN_ENV)
    assert any(
        p.startswith("notify.webhook_url_env must name an environment variable") for p in problems
    ), problems
    assert all(secret not in p and "s3cr3t" not in p for p in problems), problems


def test_missing_file_is_a_config_error(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="does not exist"):
        load_settings(tmp_path / "nope.toml", TOKEN_ENV)


def test_broken_toml_is_a_config_error(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="is not valid TOML"):
        load_settings(write(tmp_path, "[dx\n"), TOKEN_ENV)


def test_example_config_documents_every_key_and_loads() -> None:
    import dataclasses

    from hrsync.config.loading import Settings
    from hrsync.core.settings import is_key

    example = Path(__file__).resolve().parents[2] / "config" / "hrsync.example.toml"
    text = example.read_text(encoding="utf-8")
    s = load_settings(example, TOKEN_ENV)
    assert s.dx.base_url.startswith("https://")

    def keys(cls: type, prefix: str) -> list[str]:
        out = []
        for f in dataclasses.fields(cls):
            # Set by the loader, never written: the token, the path, [source.fields] lists.
            if not is_key(f.metadata):
                continue
            if dataclasses.is_dataclass(f.type) or f.name in ("fields",):
                continue
            out.append(f.name)
        return out

    for section in dataclasses.fields(Settings):
        if not is_key(section.metadata):
            continue
        cls = type(getattr(s, section.name))
        for key in keys(cls, section.name):
            if key == "entries":  # [attributes] holds them beside its reserved keys
                assert "[attributes]" in text
                continue
            if key == "join":  # [[source.join]] tables, commented out: no table to join
                assert "# [[source.join]]" in text
                continue
            if key == "union":  # [[source.union]] tables, commented out: no second export
                assert "# [[source.union]]" in text
                for own in ("name", "id_prefix", "attach_root_to"):
                    assert f"# {own} = " in text, f"source.union.{own} is not documented"
                continue
            if key in ("include", "exclude", "headers"):
                assert f"[{section.name}.{key}]" in text
                continue
            if key in ("pagination", "oauth2", "google_service_account"):
                assert f"[source.{key}]" in text
                for sub in dataclasses.fields(type(getattr(s.source, key))):
                    if not is_key(sub.metadata):
                        continue
                    assert f"{sub.name} =" in text, f"source.{key}.{sub.name} is not documented"
                continue
            assert f"{key} =" in text, f"{section.name}.{key} is not documented"
    for f in dataclasses.fields(type(s.source.fields)):
        assert f"{f.name} =" in text, f"source.fields.{f.name} is not documented"


@pytest.mark.parametrize(
    ("url", "expected"),
    [
        ("sqlite:///state/hrsync.db", "sqlite:///{base}/state/hrsync.db"),
        ("sqlite:////var/lib/hrsync.db", "sqlite:////var/lib/hrsync.db"),
        ("sqlite://", "sqlite://"),
        ("sqlite:///:memory:", "sqlite:///:memory:"),
    ],
)
def test_sqlite_paths_are_anchored_to_the_config_file(
    tmp_path: Path, url: str, expected: str
) -> None:
    path = write(tmp_path, MINIMAL + f'\n[state]\ndatabase_url = "{url}"\n')
    s = load_settings(path, TOKEN_ENV)
    assert s.state.database_url == expected.format(base=tmp_path)


def test_single_underscore_override_is_called_out(tmp_path: Path) -> None:
    problems = problems_of(
        write(tmp_path, MINIMAL), {**TOKEN_ENV, "HRSYNC_SYNC_SCHEDULE": "0 7 * * *"}
    )
    assert problems == [
        "environment variable HRSYNC_SYNC_SCHEDULE is not used: section and key are "
        "separated by two underscores, e.g. HRSYNC_SYNC__SCHEDULE"
    ]


def test_the_healthcheck_tolerates_four_heartbeats(tmp_path: Path) -> None:
    text = MINIMAL + "\n[sync]\nheartbeat_s = 300\n"
    settings = load_settings(write(tmp_path, text), TOKEN_ENV)
    assert settings.sync.healthcheck_max_age_s == 1200


# ------------------------------------------------ sync.notify_email (issue 9, item 16)


@pytest.mark.parametrize(
    "address",
    [
        "hr..ops@acme.test",  # consecutive dots
        ".hr@acme.test",  # leading dot in the local part
        "hr.@acme.test",  # trailing dot in the local part
        "hr ops@acme.test",
        "hr@acme",  # a domain of one label
        "hr@-acme.test",
        "hr@acme..test",
        "hr@@acme.test",
        "ops at acme",
        "",
    ],
)
def test_notify_email_follows_the_exports_address_rule(tmp_path: Path, address: str) -> None:
    path = write(tmp_path, MINIMAL + f'\n[sync]\nnotify_email = "{address}"\n')
    assert problems_of(path, TOKEN_ENV) == [
        f"sync.notify_email must be an e-mail address like name@example.com, got {address!r}"
    ]


@pytest.mark.parametrize(
    "address", ["hr.ops@acme.test", "People-Ops+hrsync@Acme.Example.com", "a@b.co"]
)
def test_notify_email_accepts_what_the_export_accepts(tmp_path: Path, address: str) -> None:
    path = write(tmp_path, MINIMAL + f'\n[sync]\nnotify_email = "{address}"\n')
    assert load_settings(path, TOKEN_ENV).sync.notify_email == address
    assert is_valid_email(normalise_email(address))


# ------------------------------------------------ lists in messages are capped


def test_many_problems_make_one_capped_line(tmp_path: Path) -> None:
    extra = "".join(f"\nunknown_{i:02} = 1" for i in range(30))
    path = write(tmp_path, MINIMAL.replace("[dx]", "[dx]" + extra, 1))
    with pytest.raises(ConfigError) as info:
        load_settings(path, TOKEN_ENV)
    assert len(info.value.problems) == 30  # every one kept for whoever reads them all
    text = str(info.value)
    assert text.count("is not a known key") == 20
    assert text.endswith(" and 10 more")


# ---------------------------------------------------------------- [attributes]


def test_attributes_table_holds_entries_beside_its_reserved_keys(tmp_path: Path) -> None:
    text = MINIMAL + (
        '\n[attributes]\n"Location" = "{Office}"\n"Level" = "Job Level"\n'
        '"Cost center" = "{Cost Center|strip}"\nclear_empty = true\nmax_change_fraction = 0.5\n'
    )
    s = load_settings(write(tmp_path, text), TOKEN_ENV)
    assert dict(s.attributes.entries) == {
        "Location": "{Office}",
        "Level": "Job Level",
        "Cost center": "{Cost Center|strip}",
    }
    assert s.attributes.clear_empty is True
    assert s.attributes.max_change_fraction == 0.5
    assert s.attributes.with_hierarchy_only is False
    assert s.attributes.active  # on: the table maps attributes


def test_attributes_are_on_exactly_when_the_table_maps_one(tmp_path: Path) -> None:
    s = load_settings(write(tmp_path, MINIMAL), TOKEN_ENV)
    assert not s.attributes.active and s.attributes.max_change_fraction == 0.3
    text = MINIMAL + '\n[attributes]\n"Location" = "{Office}"\n'
    assert load_settings(write(tmp_path, text), TOKEN_ENV).attributes.active
    # Switched off by taking the entries out: the reserved keys alone map nothing.
    text = MINIMAL + '\n[attributes]\n# "Location" = "{Office}"\nclear_empty = true\n'
    assert not load_settings(write(tmp_path, text), TOKEN_ENV).attributes.active


@pytest.mark.parametrize(
    ("table", "env", "fragment"),
    [
        ('"Location" = ""', {}, "attributes.Location must be an HR column name or a template"),
        ('"Location" = 3', {}, "attributes.Location must be an HR column name or a template"),
        ('"Location" = "{Office|uper}"', {}, "did you mean upper?"),
        ('"Location" = "{Office"', {}, "attributes.Location '{Office' is not a valid template"),
        ("max_change_fraction = 1.5", {}, "attributes.max_change_fraction must be between 0 and 1"),
        ("clear_empty = 1", {}, "attributes.clear_empty must be true or false"),
        (
            '"Location" = "{Office}"',
            {"HRSYNC_ATTRIBUTES__LEVEL": "Job Level"},
            "HRSYNC_ATTRIBUTES__LEVEL cannot add the attribute 'level'",
        ),
    ],
)
def test_attributes_problems_name_the_key(
    tmp_path: Path, table: str, env: dict[str, str], fragment: str
) -> None:
    path = write(tmp_path, MINIMAL + "\n[attributes]\n" + table + "\n")
    problems = problems_of(path, {**TOKEN_ENV, **env})
    assert any(fragment in p for p in problems), problems


JSON_SOURCE = """
[dx]
base_url = "https://api.example.test"

[source]
path = "users.json"
records_path = "users"

[source.fields]
employee_id = "externalIds[type=organization].value"
email = "primaryEmail"
name = "name.fullName"
manager_id = ""
"""


def test_a_path_that_picks_from_a_list_loads(tmp_path: Path) -> None:
    text = JSON_SOURCE + 'manager_email = "relations[type=manager].value"\n'
    settings = load_settings(write(tmp_path, text), TOKEN_ENV)
    assert settings.source.fields.manager_email == "relations[type=manager].value"


@pytest.mark.parametrize(
    ("line", "said"),
    [
        ('manager_email = "relations[type=manager.value"', "never closed"),
        ('manager_email = "relations[type=].value"', "write [key=value] or [key]"),
        (
            'department = "{organizations[].department} team"\nmanager_email = "m"',
            "empty pick",
        ),
    ],
)
def test_a_bad_list_pick_is_a_config_error_naming_the_key(
    tmp_path: Path, line: str, said: str
) -> None:
    (problem,) = problems_of(write(tmp_path, JSON_SOURCE + line + "\n"), TOKEN_ENV)
    key = line.split(" = ")[0]
    assert problem.startswith(f"source.fields.{key} ")
    assert said in problem and "relations[type=manager].value" in problem


def test_a_csv_column_with_brackets_is_a_name(tmp_path: Path) -> None:
    text = MINIMAL + '[source.fields]\nmanager_id = "Manager [ID"\n'
    assert load_settings(write(tmp_path, text), TOKEN_ENV).source.fields.manager_id == "Manager [ID"


MANAGER_PICK = 'manager_email = "relations[type=manager].value"'


# A pick is checked wherever the config names a column, not only in [source.fields]: a
# malformed one elsewhere read nothing at run time (a team name, an attribute or a filter
# over an empty column) instead of being refused with the config.
@pytest.mark.parametrize(
    ("section", "said"),
    [
        (
            '[mapping]\nteam_name = "{positions[type=].org} team"',
            "mapping.team_name '{positions[type=].org} team' has 'positions[type=]': "
            "write [key=value] or [key]",
        ),
        (
            '[attributes]\nOrg = "positions[0.org"',
            "attributes.Org 'positions[0.org' has a '[' that is never closed",
        ),
        (
            '[attributes]\nOrg = "{positions[].org|upper}"',
            "attributes.Org '{positions[].org|upper}' has an empty pick in 'positions[]'",
        ),
        (
            '[filter.include]\n"positions[type=].org" = ["Eng*"]',
            "filter.include 'positions[type=].org' has 'positions[type=]'",
        ),
        (
            '[filter.exclude]\n"emails[primary" = ["x@example.com"]',
            "filter.exclude 'emails[primary' has a '[' that is never closed",
        ),
    ],
)
def test_a_bad_list_pick_beyond_the_fields_is_a_config_error_naming_the_key(
    tmp_path: Path, section: str, said: str
) -> None:
    text = JSON_SOURCE + f"{MANAGER_PICK}\n{section}\n"
    (problem,) = problems_of(write(tmp_path, text), TOKEN_ENV)
    assert problem.startswith(said), problem
    assert "relations[type=manager].value" in problem  # the examples


def test_list_picks_beyond_the_fields_load(tmp_path: Path) -> None:
    text = (
        JSON_SOURCE
        + MANAGER_PICK
        + (
            '\n[mapping]\nteam_name = "{organizations[primary].department}"\n'
            '[attributes]\nOrg = "{organizations[0].name}"\nPhone = "phones[type=work].value"\n'
            '[filter.exclude]\n"externalIds[type=custom].value" = ["B9*"]\n'
        )
    )
    settings = load_settings(write(tmp_path, text), TOKEN_ENV)
    assert settings.filter.exclude == {"externalIds[type=custom].value": ("B9*",)}


def test_a_csv_filter_key_with_brackets_is_a_name(tmp_path: Path) -> None:
    text = MINIMAL + '[filter.exclude]\n"Team [old" = ["x"]\n'
    assert load_settings(write(tmp_path, text), TOKEN_ENV).filter.exclude == {"Team [old": ("x",)}


# ------------------------------------------- where the config file is found


@pytest.mark.parametrize(
    ("given", "env", "in_folder", "expected"),
    [
        ("a.toml", {"HRSYNC_CONFIG": "b.toml"}, True, ("a.toml", "--config")),
        (None, {"HRSYNC_CONFIG": "b.toml"}, True, ("b.toml", "$HRSYNC_CONFIG")),
        (None, {"HRSYNC_CONFIG": ""}, True, (None, "")),  # empty: variables alone
        (None, {}, True, ("hrsync.toml", "the current folder")),
        (None, {}, False, (None, "")),
    ],
)
def test_the_config_file_is_the_flag_then_the_variable_then_the_current_folders(
    tmp_path: Path,
    given: str | None,
    env: dict[str, str],
    in_folder: bool,
    expected: tuple[str | None, str],
) -> None:
    from hrsync.config.loading import config_file

    if in_folder:
        (tmp_path / "hrsync.toml").write_text("")
    found = config_file(None if given is None else Path(given), env, tmp_path)
    path, how = expected
    if path is None:
        assert found.path is None
    else:
        assert found.path is not None
        assert found.path.name == path
    assert found.how == how


def test_a_config_in_the_current_folder_is_loaded(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "hrsync.toml").write_text('[dx]\nbase_url = "https://api.example.test"\n')
    monkeypatch.chdir(tmp_path)
    settings = load_settings(None, {}, require_token=False, require_source=False)
    assert settings.dx.base_url == "https://api.example.test"
    assert settings.config_path == Path("hrsync.toml")


@pytest.mark.parametrize(
    ("given", "env", "repeated"),
    [
        (None, {}, None),  # ./hrsync.toml: the command typed here finds it again
        ("hrsync.toml", {}, "hrsync.toml"),  # --config as given
        (None, {"HRSYNC_CONFIG": "hrsync.toml"}, "hrsync.toml"),
    ],
)
def test_a_printed_command_repeats_the_config_only_when_the_person_named_it(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    given: str | None,
    env: dict[str, str],
    repeated: str | None,
) -> None:
    (tmp_path / "hrsync.toml").write_text('[dx]\nbase_url = "https://api.example.test"\n')
    monkeypatch.chdir(tmp_path)
    path = None if given is None else Path(given)
    settings = load_settings(path, env, require_token=False, require_source=False)
    assert settings.config_path == Path("hrsync.toml")
    assert settings.command_config == (None if repeated is None else Path(repeated))


@pytest.mark.parametrize(
    ("token", "said"),
    [
        # `export HRSYNC_DX_TOKEN="$(cat a-file-of-two-lines)"`, or a copy that took the
        # line after it: an HTTP header cannot hold a line break.
        ("tok-first-line-123456\n# second line", "holds a line break"),
        ("tok-with\tcontrol-123456", "holds a control character"),
        ("tok-with space-123456", "holds a space"),
        ("Bearer tok-pasted-whole-123456", "starts with 'Bearer '"),
    ],
)
def test_a_token_that_cannot_be_one_header_value_is_refused_and_not_echoed(
    tmp_path: Path, token: str, said: str
) -> None:
    problems = problems_of(write(tmp_path, MINIMAL), {"HRSYNC_DX_TOKEN": token})
    assert any("$HRSYNC_DX_TOKEN" in p and said in p for p in problems), problems
    assert all("123456" not in p for p in problems), problems
    (tmp_path / "token").write_text(token + "\n")
    text = MINIMAL.replace("[dx]", '[dx]\ntoken_file = "token"')
    problems = problems_of(write(tmp_path, text), {})
    assert any("dx.token_file" in p and said in p for p in problems), problems
    assert all("123456" not in p for p in problems), problems
