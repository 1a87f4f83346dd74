"""Config checks of the HTTP source keys (issue 13): each problem names its key."""

from __future__ import annotations

from pathlib import Path

import pytest

from hrsync.config.loading import ConfigError, load_settings

BASE = '[dx]\nbase_url = "https://api.getdx.com"\n'
TOKEN = {"HRSYNC_DX_TOKEN": "tok-1234567890"}


def load(tmp_path: Path, text: str, env: dict[str, str] | None = None) -> list[str]:
    path = tmp_path / "hrsync.toml"
    path.write_text(BASE + text, encoding="utf-8")
    try:
        load_settings(path, {**TOKEN, **(env or {})})
    except ConfigError as exc:
        return exc.problems
    return []


URL = '[source]\nurl = "https://hr.example.com/api"\n'


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (URL + '[source.pagination]\nstyle = "pages"\n', "source.pagination.style must be one of"),
        (URL + '[source.pagination]\nstyle = "cursor"\n', "source.pagination.next_cursor_path"),
        (URL + "[source.pagination]\nmax_pages = 0\n", "source.pagination.max_pages must be at"),
        (URL + "[source.pagination]\npage_size = 0\n", "source.pagination.page_size must be at"),
        (URL + 'body = "{oops"\n', "source.body must be JSON text"),
        (
            URL + "body = '[1]'\n[source.pagination]\nstyle = \"offset\"\n",
            "source.body must be a JSON object",
        ),
        (URL + '[source.headers]\nAuthorization = "SSWS 00abc"\n', "source.headers.Authorization"),
        (URL + '[source.headers]\n"Bad Header" = "X"\n', "'Bad Header' is not a valid HTTP"),
        (URL + '[source.oauth2]\nclient_id_env = "ID"\n', "source.oauth2.token_url is required"),
        (
            URL + '[source.oauth2]\ntoken_url = "https://t/token"\nclient_id_env = "ID"\n',
            "source.oauth2.client_secret_env must name an environment variable",
        ),
        (
            URL + 'auth_header_env = "A"\n[source.oauth2]\ntoken_url = "https://t/token"\n'
            'client_id_env = "I"\nclient_secret_env = "S"\n',
            "source.oauth2 sends its own Authorization header",
        ),
        ('[source]\npath = "x.csv"\n[source.pagination]\nstyle = "odata"\n', "only used with"),
        (URL + "retries = -1\n", "source.retries must be 0 or more"),
    ],
)
def test_http_source_problems_name_the_key(tmp_path: Path, text: str, expected: str) -> None:
    problems = load(tmp_path, text)
    assert any(expected in p for p in problems), problems


def test_a_header_value_in_the_file_is_not_echoed_back(tmp_path: Path) -> None:
    problems = load(tmp_path, URL + '[source.headers]\nAuthorization = "SSWS 00abc secret"\n')
    assert problems and all("00abc" not in p for p in problems)


@pytest.mark.parametrize(
    ("text", "env"),
    [
        (URL + 'headers = "Authorization: SSWS 00abc secret"\n', {}),
        (URL + '[source.headers]\nAuthorization = ["SSWS 00abc secret"]\n', {}),
        (URL, {"HRSYNC_SOURCE__HEADERS": "Authorization: SSWS 00abc secret"}),
    ],
)
def test_headers_in_the_wrong_shape_are_refused_without_their_value(
    tmp_path: Path, text: str, env: dict[str, str]
) -> None:
    # Written in place of a table of variable names, the value is most likely the header.
    problems = load(tmp_path, text, env)
    assert any(p.startswith("source.headers must be a table of header name") for p in problems)
    assert all("00abc" not in p for p in problems), problems


def test_a_full_http_source_loads(tmp_path: Path) -> None:
    recipe = Path(__file__).resolve().parents[2] / "config" / "recipes" / "hibob.toml"
    path = tmp_path / "hrsync.toml"
    path.write_text(BASE + recipe.read_text(encoding="utf-8"), encoding="utf-8")
    settings = load_settings(path, TOKEN)
    assert settings.source.method == "POST"
    assert settings.source.headers == {"Authorization": "HIBOB_AUTH"}
    assert settings.source.pagination.style == "none"  # HiBob's search does not page


def test_a_client_secret_written_in_place_of_its_variable_is_not_echoed(tmp_path: Path) -> None:
    text = (
        URL + '[source.oauth2]\ntoken_url = "https://t/token"\nclient_id_env = "ID"\n'
        'client_secret_env = "s3cr3t~value.with-dots"\n'
    )
    problems = load(tmp_path, text)
    assert any("source.oauth2.client_secret_env must name" in p for p in problems)
    assert all("s3cr3t" not in p for p in problems)


def test_a_header_can_come_from_the_environment(tmp_path: Path) -> None:
    path = tmp_path / "hrsync.toml"
    path.write_text(BASE + URL, encoding="utf-8")
    env = {**TOKEN, "HRSYNC_SOURCE__HEADERS__X_API_KEY": "HR_KEY"}
    assert load_settings(path, env).source.headers == {"x_api_key": "HR_KEY"}


PAGING = URL + "[source.pagination]\n"


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (PAGING + 'style = "next_url"\n', "source.pagination.next_url_path must name where"),
        (PAGING + 'style = "page"\nfirst_page = 2\n', "first_page must be 0 or 1, got 2"),
        (
            PAGING + 'next_url_path = "links.next"\n',
            'source.pagination.next_url_path is only used with style = "next_url"',
        ),
        (
            URL + "body = '[1]'\n[source.pagination]\nstyle = \"scim\"\n",
            "source.body must be a JSON object",
        ),
    ],
)
def test_the_paging_styles_keys_are_checked(tmp_path: Path, text: str, expected: str) -> None:
    problems = load(tmp_path, text)
    assert any(expected in p for p in problems), problems


@pytest.mark.parametrize(
    "text",
    [
        'style = "next_url"\nnext_url_path = "links.next"\n',
        'style = "page"\noffset_param = "page"\nfirst_page = 0\nlimit_param = "per_page"\n',
        'style = "scim"\npage_size = 10\n',
    ],
)
def test_each_paging_style_loads(tmp_path: Path, text: str) -> None:
    assert load(tmp_path, PAGING + text) == []
