"""Every number of the settings is checked for what it is: finite, within its key's
range, bounded above; the message names the key, the value (cut short) and what was
expected, and a number too long to read is a message, not a traceback.

The keys are found by walking the settings' dataclasses, so a numeric key added later is
covered by these tests without a line here.
"""

from __future__ import annotations

import dataclasses
import math
import types
import typing
from pathlib import Path

import pytest

from hrsync.config.loading import ConfigError, load_settings
from hrsync.config.numbers import number_range
from hrsync.core.settings import Settings

MINIMAL = """
[dx]
base_url = "https://api.example.test"

[source]
path = "people.csv"
"""

TOKEN_ENV = {"HRSYNC_DX_TOKEN": "tok-1234567890"}


def numeric_keys(cls: type = Settings, prefix: str = "") -> list[tuple[str, type, object]]:
    """(dotted key, int or float, default) for every number the settings hold."""
    found: list[tuple[str, type, object]] = []
    hints = typing.get_type_hints(cls)
    for field in dataclasses.fields(cls):
        hint = hints[field.name]
        if typing.get_origin(hint) in (types.UnionType, typing.Union):
            hint = next(a for a in typing.get_args(hint) if a is not type(None))
        default = (
            field.default_factory()
            if field.default_factory is not dataclasses.MISSING
            else field.default
        )
        if dataclasses.is_dataclass(hint):
            found.extend(numeric_keys(typing.cast(type, hint), f"{prefix}{field.name}."))
        elif hint in (int, float):
            found.append((f"{prefix}{field.name}", hint, default))
    return found


KEYS = numeric_keys()
FLOATS = [key for key, kind, _ in KEYS if kind is float]
NAMES = [key for key, _, _ in KEYS]


def toml_with(key: str, literal: str) -> str:
    """MINIMAL with `key = literal` in its table."""
    section, _, name = key.rpartition(".")
    text = MINIMAL
    header = f"[{section}]\n"
    if header in text:
        return text.replace(header, f"{header}{name} = {literal}\n")
    return f"{text}\n{header}{name} = {literal}\n"


def env_name(key: str) -> str:
    return "HRSYNC_" + key.upper().replace(".", "__")


def problems(tmp_path: Path, text: str, env: dict[str, str] | None = None) -> list[str]:
    path = tmp_path / "hrsync.toml"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(ConfigError) as info:
        load_settings(path, {**TOKEN_ENV, **(env or {})})
    return info.value.problems


def about(key: str, found: list[str]) -> str:
    (problem,) = [p for p in found if p.startswith(f"{key} ")]
    return problem


def test_the_walk_finds_every_kind_of_number() -> None:
    for key in (
        "dx.timeout_s",
        "source.timeout_s",
        "source.max_bytes",
        "source.pagination.max_pages",
        "attributes.max_change_fraction",
        "sync.heartbeat_s",
        "sync.retro_window_days",
        "sync.pre_snapshot_hours",
        "notify.repeat_s",
        "state.keep_days",
    ):
        assert key in NAMES
    assert len(KEYS) >= 20


@pytest.mark.parametrize(("key", "kind", "default"), KEYS, ids=NAMES)
def test_each_default_lies_in_its_range(key: str, kind: type, default: object) -> None:
    assert isinstance(default, kind)
    assert number_range(key).holds(typing.cast(float, default)), (key, default)


@pytest.mark.parametrize("key", NAMES)
def test_every_number_has_a_finite_upper_bound(key: str) -> None:
    span = number_range(key)
    assert math.isfinite(span.high) and span.high <= 10**12
    assert span.low >= 0


@pytest.mark.parametrize("key", FLOATS)
@pytest.mark.parametrize("literal", ["nan", "inf", "-inf", "+nan"])
def test_not_a_number_and_infinity_in_the_file_are_refused(
    tmp_path: Path, key: str, literal: str
) -> None:
    problem = about(key, problems(tmp_path, toml_with(key, literal)))
    assert "must be a finite number" in problem
    assert problem.endswith(f"got {float(literal)!r}")


@pytest.mark.parametrize("key", FLOATS)
@pytest.mark.parametrize("text", ["nan", "NaN", "inf", "-Infinity", "1e400", "9" * 400])
def test_not_a_number_and_infinity_from_the_environment_are_refused(
    tmp_path: Path, key: str, text: str
) -> None:
    problem = about(key, problems(tmp_path, MINIMAL, {env_name(key): text}))
    assert "must be a finite number" in problem or "at most" in problem, problem
    assert problem.endswith(f"(from {env_name(key)})")
    assert len(problem) < 300


@pytest.mark.parametrize("key", NAMES)
def test_a_negative_number_is_refused(tmp_path: Path, key: str) -> None:
    problem = about(key, problems(tmp_path, toml_with(key, "-1")))
    assert problem.endswith("got -1")
    assert " must be " in problem


@pytest.mark.parametrize("key", NAMES)
def test_a_number_over_the_upper_bound_is_refused(tmp_path: Path, key: str) -> None:
    literal = str(int(number_range(key).high) + 1)
    problem = about(key, problems(tmp_path, toml_with(key, literal)))
    assert "at most" in problem or " or " in problem or "between" in problem, problem
    assert problem.endswith(f"got {literal}")


@pytest.mark.parametrize("key", NAMES)
def test_thousands_of_digits_from_the_environment_are_a_short_message(
    tmp_path: Path, key: str
) -> None:
    # int() refuses more than 4,300 digits with a ValueError of its own.
    problem = about(key, problems(tmp_path, MINIMAL, {env_name(key): "9" * 5000}))
    assert problem.startswith(f"{key} must be ")
    assert "(5,000 characters)" in problem
    assert len(problem) < 300


def test_thousands_of_digits_in_the_file_name_the_file_and_line(tmp_path: Path) -> None:
    # tomllib itself raises a plain ValueError for such a number: it was a traceback.
    text = MINIMAL + "\n[sync]\nmax_archive = " + "9" * 5000 + "\n"
    (problem,) = problems(tmp_path, text)
    assert problem.startswith(f"config file {tmp_path / 'hrsync.toml'} line 9: ")
    assert "5,000 digits" in problem
    assert len(problem) < 300


def test_a_source_body_with_thousands_of_digits_is_a_message(tmp_path: Path) -> None:
    # json.loads raises a plain ValueError for such a number, not JSONDecodeError.
    text = (
        '[dx]\nbase_url = "https://api.example.test"\n\n[source]\n'
        'url = "https://hr.example.test/people"\nmethod = "POST"\n'
        'body = \'{"n": ' + "9" * 5000 + "}'\n"
    )
    (problem,) = problems(tmp_path, text)
    assert problem.startswith("source.body must be JSON text, got a number of 5,000 digits")
    assert len(problem) < 300


@pytest.mark.parametrize(
    ("key", "literal", "expected"),
    [
        ("sync.max_archive_fraction", "1.5", "must be between 0 and 1, got 1.5"),
        ("attributes.max_change_fraction", "-0.1", "must be between 0 and 1, got -0.1"),
        ("sync.quarantine_after", "0", "must be at least 1, got 0"),
        ("source.pagination.first_page", "2", "must be 0 or 1, got 2"),
        ("source.pagination.page_size", "0", "must be at least 1, got 0"),
        ("source.max_bytes", "0", "must be at least 1, got 0"),
        ("source.timeout_s", "0", "must be greater than 0, got 0"),
        ("source.timeout_s", "-2.5", "must be greater than 0, got -2.5"),
        ("dx.timeout_s", "1e9", "must be at most 31,622,400 (366 days), got 1000000000.0"),
        ("sync.pre_snapshot_hours", "9000", "must be at most 8,784 (366 days), got 9000"),
        ("sync.retro_window_days", "400", "must be at most 366, got 400"),
        (
            "sync.max_archive",
            "10000000000000",
            "must be at most 1,000,000,000,000, got 10000000000000",
        ),
        ("sync.max_resends", "-1", "must be 0 or more, got -1"),
        (
            "sync.heartbeat_s",
            "nan",
            "must be a finite number greater than 0 and at most 31,622,400 (366 days), got nan",
        ),
    ],
)
def test_each_kind_of_range_is_told(tmp_path: Path, key: str, literal: str, expected: str) -> None:
    assert about(key, problems(tmp_path, toml_with(key, literal))) == f"{key} {expected}"


@pytest.mark.parametrize(
    ("key", "literal"),
    [
        ("sync.retro_window_days", "0"),
        ("sync.max_archive", "0"),
        ("sync.max_archive_fraction", "1"),
        ("dx.timeout_s", "31622400"),
        ("source.max_bytes", "10_000_000_000"),
    ],
)
def test_the_edges_of_a_range_are_accepted(tmp_path: Path, key: str, literal: str) -> None:
    path = tmp_path / "hrsync.toml"
    path.write_text(toml_with(key, literal), encoding="utf-8")
    load_settings(path, TOKEN_ENV)


@pytest.mark.parametrize(
    ("text", "shown"),
    [("-1", "-1"), (" -1 ", "-1"), ("1e400", "1e400"), ("nan", "nan"), ("9" * 70, "9" * 60)],
)
def test_a_number_from_the_environment_is_shown_as_written(
    tmp_path: Path, text: str, shown: str
) -> None:
    problem = about(
        "sync.verify_timeout_s",
        problems(tmp_path, MINIMAL, {env_name("sync.verify_timeout_s"): text}),
    )
    assert f", got {shown}" in problem
    assert problem.endswith("(from HRSYNC_SYNC__VERIFY_TIMEOUT_S)")


def test_a_refused_number_leaves_no_second_message(tmp_path: Path) -> None:
    # NaN compares false with everything: the heartbeat-versus-healthcheck rule said
    # nothing of it before, and must not repeat the refusal now.
    text = toml_with("sync.heartbeat_s", "nan")
    assert [p for p in problems(tmp_path, text) if "heartbeat_s" in p] == [
        "sync.heartbeat_s must be a finite number greater than 0 and at most 31,622,400 "
        "(366 days), got nan"
    ]


def test_a_long_wrong_value_is_cut_in_the_message(tmp_path: Path) -> None:
    found = problems(tmp_path, MINIMAL, {"HRSYNC_SYNC__MAX_ARCHIVE": "x" * 5000})
    problem = about("sync.max_archive", found)
    assert problem.startswith("sync.max_archive must be a whole number, got 'xxx")
    assert problem.endswith("… (5,000 characters) (from HRSYNC_SYNC__MAX_ARCHIVE)")
    assert len(problem) < 200
