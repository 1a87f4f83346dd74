"""`[[source.join]]` in the config (issue 26): a join's table is described by the same
keys as `[source]`, and every problem names the join and the key."""

from __future__ import annotations

from pathlib import Path

import pytest

from hrsync.config.loading import ConfigError, Settings, load_settings

BASE = '[dx]\nbase_url = "https://api.getdx.com"\n[source]\npath = "people.csv"\n'
TOKEN = {"HRSYNC_DX_TOKEN": "tok-1234567890"}
JOIN = (
    '[[source.join]]\nname = "departments"\npath = "departments.csv"\n'
    'on = { DEPARTMENT_ID = "DEPARTMENT_ID" }\n'
)


def load(tmp_path: Path, text: str, env: dict[str, str] | None = None) -> Settings:
    path = tmp_path / "hrsync.toml"
    path.write_text(BASE + text, encoding="utf-8")
    return load_settings(path, {**TOKEN, **(env or {})})


def problems(tmp_path: Path, text: str, env: dict[str, str] | None = None) -> list[str]:
    try:
        load(tmp_path, text, env)
    except ConfigError as exc:
        return exc.problems
    return []


def test_a_join_reads_its_table_with_the_source_keys(tmp_path: Path) -> None:
    settings = load(
        tmp_path,
        JOIN
        + 'match = "optional"\ndelimiter = ";"\nnull_values = ["(none)"]\nmax_bytes = 1000\n'
        + '[[source.join]]\nname = "okta"\nurl = "https://acme.okta.com/api/v1/users"\n'
        + 'on = { email = "profile.email" }\nheaders = { Authorization = "OKTA_AUTH" }\n'
        + '[source.join.pagination]\nstyle = "link_header"\n',
    )
    departments, okta = settings.source.join
    assert departments.name == "departments" and departments.match == "optional"
    assert (departments.left, departments.right) == ("DEPARTMENT_ID", "DEPARTMENT_ID")
    # A relative path is the config file's neighbour, as source.path is.
    assert departments.table.path == tmp_path / "departments.csv"
    assert departments.table.delimiter == ";" and departments.table.max_bytes == 1000
    assert departments.table.null_values == ("(none)",)
    assert okta.match == "one"  # the default
    assert okta.table.url == "https://acme.okta.com/api/v1/users"
    assert okta.table.pagination.style == "link_header"
    assert okta.table.headers == {"Authorization": "OKTA_AUTH"}


def test_no_join_is_no_join(tmp_path: Path) -> None:
    assert load(tmp_path, "").source.join == ()


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (
            '[[source.join]]\npath = "d.csv"\non = { A = "B" }\n',
            'source.join[1].name must name the join (e.g. "departments")',
        ),
        (
            '[[source.join]]\nname = "dep.t"\npath = "d.csv"\non = { A = "B" }\n',
            "source.join[1].name must be a word of letters, digits, _ and -",
        ),
        (JOIN + JOIN, 'source.join[departments] is declared twice: each name = "…" once'),
        (
            '[[source.join]]\nname = "departments"\npath = "d.csv"\n',
            "source.join[departments].on must be one key, e.g. on = { DEPARTMENT_ID = ",
        ),
        (
            '[[source.join]]\nname = "d"\npath = "d.csv"\non = { A = "B", C = "D" }\n',
            "source.join[d].on must be one key",
        ),
        (
            '[[source.join]]\nname = "d"\npath = "d.csv"\non = { A = "" }\n',
            "source.join[d].on must be one key",
        ),
        (JOIN + 'match = "many"\n', "source.join[departments].match must be one of 'one', "),
        (JOIN + 'colums = "x"\n', "source.join[departments].colums is not a known key"),
        (JOIN + '[source.join.fields]\nname = "x"\n', "source.join[departments].fields is not"),
        (
            '[[source.join]]\nname = "d"\non = { A = "B" }\n',
            "source.join[d].path or source.join[d].url is required",
        ),
        (JOIN + 'url = "https://x"\n', "source.join[departments].path and "),
        (
            '[[source.join]]\nname = "d"\nurl = "ftp://x"\non = { A = "B" }\n',
            "source.join[d].url must start with http:// or https://",
        ),
        (
            JOIN + '[source.join.pagination]\nstyle = "odata"\n',
            "source.join[departments].pagination.style is only used with "
            "source.join[departments].url",
        ),
        (JOIN + 'delimiter = ";;"\n', "source.join[departments].delimiter must be a single"),
        (JOIN + "max_bytes = 0\n", "source.join[departments].max_bytes must be at least 1"),
        (JOIN + 'encoding = "nope"\n', "source.join[departments].encoding must be a known"),
        ('join = "x"\n', "source.join must be [[source.join]] tables"),
        (
            '[[source.join]]\nname = "a"\npath = "a.csv"\non = { "b.X" = "Y" }\n'
            '[[source.join]]\nname = "b"\npath = "b.csv"\non = { K = "K" }\n',
            "source.join[a].on names 'b.X', a column of the join 'b', declared after it",
        ),
        (
            '[[source.join]]\nname = "okta"\npath = "o.csv"\non = { email = "mail" }\n'
            '[source.fields]\nemail = "{okta.mail}"\n',
            "source.join[okta].on joins on the e-mail, which source.fields.email builds from "
            "the join itself",
        ),
    ],
)
def test_join_problems_name_the_join_and_key(tmp_path: Path, text: str, expected: str) -> None:
    found = problems(tmp_path, text)
    assert any(expected in p for p in found), found


def test_a_join_cannot_come_from_the_environment(tmp_path: Path) -> None:
    found = problems(tmp_path, "", {"HRSYNC_SOURCE__JOIN": "departments"})
    assert any("HRSYNC_SOURCE__JOIN" in p and "[[source.join]]" in p for p in found), found


def test_a_joins_credentials_are_names_of_variables_never_shown(tmp_path: Path) -> None:
    secret = "SSWS 00secretvalue"
    found = problems(
        tmp_path,
        '[[source.join]]\nname = "okta"\nurl = "https://acme.okta.com/api/v1/users"\n'
        f'on = {{ email = "profile.email" }}\n[source.join.headers]\nAuthorization = "{secret}"\n',
    )
    assert any("source.join[okta].headers.Authorization must name" in p for p in found), found
    assert not any(secret in p for p in found)
