"""Loading the settings: the TOML file, HRSYNC_* environment variables, the DX token,
each key parsed to its type (`hrsync.core.settings`), then `crosschecks` across keys.

Every problem found is collected, so an operator fixes a config in one pass
instead of one error per restart. Each message names the key, the value and
what was expected.
"""

from __future__ import annotations

import dataclasses
import difflib
import os
import re
import tomllib
import types
import typing
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from hrsync.config.crosschecks import cross_checks
from hrsync.config.deprecated import take_deprecated
from hrsync.config.numbers import number_problem
from hrsync.config.second_table_checks import second_table_checks, table_name
from hrsync.config.small_files import (
    MAX_CONFIG_FILE_BYTES,
    MAX_TOKEN_FILE_BYTES,
    SmallFileError,
    read_small_file,
)
from hrsync.config.todos import todo_problems
from hrsync.config.userinfo import hide_userinfo
from hrsync.core.export.templates import check_template, is_template, template_names
from hrsync.core.listing import capped
from hrsync.core.people.precedence import first_of_column
from hrsync.core.people.second_tables import JOIN, UNION, Kind
from hrsync.core.settings import (
    AttributeSettings,
    DxSettings,
    FieldSettings,
    FilterSettings,
    GoogleServiceAccountSettings,
    JoinSettings,
    LogSettings,
    MappingSettings,
    OAuth2Settings,
    PaginationSettings,
    Settings,
    SourceSettings,
    StateSettings,
    SyncSettings,
    UnionSettings,
    is_key,
)
from hrsync.core.text import shown_value
from hrsync.secret import Secret, token_problem
from hrsync.store.url import anchor_sqlite

__all__ = [
    "CONFIG_ENV",
    "DEFAULT_CONFIG",
    "ENV_PREFIX",
    "TOKEN_ENV",
    "AttributeSettings",
    "ConfigError",
    "ConfigFile",
    "DxSettings",
    "FieldSettings",
    "FilterSettings",
    "GoogleServiceAccountSettings",
    "JoinSettings",
    "LogSettings",
    "MappingSettings",
    "OAuth2Settings",
    "PaginationSettings",
    "Settings",
    "SourceSettings",
    "StateSettings",
    "SyncSettings",
    "UnionSettings",
    "config_file",
    "load_settings",
]

ENV_PREFIX = "HRSYNC_"
TOKEN_ENV = "HRSYNC_DX_TOKEN"
CONFIG_ENV = "HRSYNC_CONFIG"
# The file `hrsync init` writes: found in the current folder when nothing else names one.
DEFAULT_CONFIG = "hrsync.toml"
_TOKEN_KEYS = {"token", "api_token", "dx_token", "access_token", "bearer_token"}


class ConfigError(Exception):
    """The configuration cannot be used. The message lists every problem."""

    def __init__(self, problems: list[str]) -> None:
        self.problems = problems
        # One line, however many problems: the first 20, then how many more.
        super().__init__(capped(problems, sep="; "))


# ---------------------------------------------------------------- loading


FOUND_HERE = "the current folder"


@dataclass(frozen=True)
class ConfigFile:
    """Which config file a command reads, and how it was chosen (for the line naming it)."""

    path: Path | None
    how: str  # "--config", "$HRSYNC_CONFIG", "the current folder", or "" for none


def config_file(given: Path | None, env: Mapping[str, str], cwd: Path | None = None) -> ConfigFile:
    """--config, else $HRSYNC_CONFIG, else ./hrsync.toml when it exists, else none."""
    if given is not None:
        return ConfigFile(given, "--config")
    if CONFIG_ENV in env:
        # Set but empty: no file at all, the HRSYNC_… variables alone (a container).
        named = env[CONFIG_ENV]
        return ConfigFile(Path(named), "$" + CONFIG_ENV) if named else ConfigFile(None, "")
    here = (cwd or Path.cwd()) / DEFAULT_CONFIG
    if here.is_file():
        # Relative when found here, so messages and suggested commands read as typed.
        return ConfigFile(Path(DEFAULT_CONFIG) if cwd is None else here, FOUND_HERE)
    return ConfigFile(None, "")


def load_settings(
    path: Path | None,
    environ: Mapping[str, str] | None = None,
    *,
    require_token: bool = True,
    require_source: bool = True,
    require_dx: bool = True,
) -> Settings:
    """Read the TOML file, apply environment overrides, validate everything."""
    env = os.environ if environ is None else environ
    found = config_file(path, env)
    path = found.path
    raw: dict[str, Any] = {}
    problems: list[str] = []
    if path is not None:
        try:
            raw = tomllib.loads(
                read_small_file(path, MAX_CONFIG_FILE_BYTES).decode("utf-8", errors="replace")
            )
        except FileNotFoundError:
            raise ConfigError([f"config file {path} does not exist"]) from None
        except SmallFileError as exc:
            raise ConfigError([f"config file {path} {exc}"]) from None
        except tomllib.TOMLDecodeError as exc:
            raise ConfigError([f"config file {path} is not valid TOML: {exc}"]) from None
        except ValueError:
            # tomllib turns digits into an int, which Python refuses past 4,300 digits.
            raise ConfigError([_too_long_number(path)]) from None
    problems.extend(_refuse_token_in_file(raw, path))
    _apply_env_overrides(raw, env, problems)
    # Before anything reads a key: an old key is carried over or ignored, with a line.
    deprecations = take_deprecated(raw)
    # After the overrides: a TODO replaced through the environment is replaced.
    problems.extend(todo_problems(raw, path))
    base = path.parent if path is not None else Path.cwd()
    settings = _build(Settings, raw, "", problems, base)
    assert isinstance(settings, Settings)
    token = _read_token(settings, env, problems, require_token)
    settings = dataclasses.replace(
        _insecure_http_everywhere(settings),
        token=token,
        config_path=path,
        command_config=None if found.how == FOUND_HERE else path,
        state=dataclasses.replace(
            settings.state, database_url=anchor_sqlite(settings.state.database_url, base)
        ),
        deprecations=tuple(deprecations),
    )
    problems.extend(cross_checks(settings, require_source=require_source, require_dx=require_dx))
    problems.extend(second_table_checks(settings))
    problems = [hide_userinfo(p, _urls(settings)) for p in problems]
    if problems and path is None:
        # Keys may all come from HRSYNC_… variables (a container); with none set, the
        # missing file is the one problem worth naming.
        told = [k for k in env if k.startswith(ENV_PREFIX) and k not in (TOKEN_ENV, CONFIG_ENV)]
        where = (
            f"pass --config PATH, set ${CONFIG_ENV}, or run where {DEFAULT_CONFIG} is"
            " (`hrsync init` writes one)"
        )
        if not told:
            raise ConfigError([f"no config file: {where}"])
        problems.insert(0, f"no config file ({where}), and the HRSYNC_… variables leave")
    if problems:
        raise ConfigError(problems)
    return settings


def _insecure_http_everywhere(settings: Settings) -> Settings:
    """`dx.allow_insecure_http` is one decision for every URL: the export's, each join's
    and union's table's, the webhook's."""
    allow = settings.dx.allow_insecure_http
    src = settings.source

    def table(source: SourceSettings) -> SourceSettings:
        return dataclasses.replace(source, allow_insecure_http=allow)

    source = dataclasses.replace(
        table(src),
        join=tuple(dataclasses.replace(j, table=table(j.table)) for j in src.join),
        union=tuple(dataclasses.replace(u, table=table(u.table)) for u in src.union),
    )
    notify = dataclasses.replace(settings.notify, allow_insecure_http=allow)
    return dataclasses.replace(settings, source=source, notify=notify)


def _urls(settings: Settings) -> list[str]:
    """The URLs the settings hold: a problem quoting one shows it without its user-info."""
    src = settings.source
    urls = [settings.dx.base_url, src.url, src.oauth2.token_url, settings.state.database_url]
    urls.extend(u for union in src.union for u in (union.table.url, union.table.oauth2.token_url))
    return [url for url in urls if url]


def _refuse_token_in_file(raw: Mapping[str, Any], path: Path | None) -> list[str]:
    found: list[str] = []

    def walk(node: Mapping[str, Any], prefix: str) -> None:
        for key, value in node.items():
            dotted = f"{prefix}{key}"
            if isinstance(value, dict):
                walk(value, dotted + ".")
            elif key.lower() in _TOKEN_KEYS:
                found.append(
                    f"{dotted} must not be written in the config file {path}: "
                    f"put the DX token in ${TOKEN_ENV} or in a file named by dx.token_file"
                )

    walk(raw, "")
    # Remove them so the secret never travels further (not even into an error).
    for problem in found:
        dotted = problem.split(" ", 1)[0]
        node: Any = raw
        parts = dotted.split(".")
        for part in parts[:-1]:
            node = node[part]
        node.pop(parts[-1], None)
    return found


def _apply_env_overrides(raw: dict[str, Any], env: Mapping[str, str], problems: list[str]) -> None:
    sections = {f.name for f in dataclasses.fields(Settings) if is_key(f.metadata)}
    for name, value in sorted(env.items()):
        if not name.startswith(ENV_PREFIX):
            continue
        if "__" not in name:
            head = name[len(ENV_PREFIX) :].lower()
            section = head.split("_", 1)[0]
            if section in sections and name not in (TOKEN_ENV, CONFIG_ENV):
                problems.append(
                    f"environment variable {name} is not used: section and key are "
                    f"separated by two underscores, e.g. HRSYNC_{section.upper()}__"
                    f"{head.split('_', 1)[1].upper() if '_' in head else 'KEY'}"
                )
            continue
        parts = [p.lower() for p in name[len(ENV_PREFIX) :].split("__")]
        if any(not p for p in parts):
            problems.append(f"environment variable {name} is not of the form HRSYNC_SECTION__KEY")
            continue
        if parts[-1] in _TOKEN_KEYS:
            problems.append(f"{name} cannot carry the DX token: use ${TOKEN_ENV} or dx.token_file")
            continue
        node = raw
        for part in parts[:-1]:
            child = node.setdefault(part, {})
            if not isinstance(child, dict):
                problems.append(f"{name}: {'.'.join(parts[:-1])} is not a section")
                break
            node = child
        else:
            node[parts[-1]] = _EnvValue(value, name)


@dataclass(frozen=True)
class _EnvValue:
    """A string from the environment, parsed according to the field's type."""

    text: str
    origin: str


def _build(cls: type, raw: Any, prefix: str, problems: list[str], base: Path) -> Any:
    if not isinstance(raw, dict):
        problems.append(f"{prefix.rstrip('.') or 'config'} must be a table, got {_kind(raw)}")
        raw = {}
    hints = typing.get_type_hints(cls)
    fields = {f.name: f for f in dataclasses.fields(cls) if is_key(f.metadata)}
    values: dict[str, Any] = {}
    for key, value in raw.items():
        dotted = f"{prefix}{key}"
        if key not in fields:
            problems.append(_unknown_key(dotted, key, list(fields)))
            continue
        hint = hints[key]
        if hint is FieldSettings and isinstance(value, dict):
            value, first_of = _precedence_lists(value, dotted + ".", problems)
            if first_of:
                values["first_of"] = first_of
        if hint is AttributeSettings:
            values[key] = _build_attributes(value, dotted + ".", problems, base)
            continue
        if hint == tuple[JoinSettings, ...]:
            values[key] = _build_joins(value, dotted, problems, base)
            continue
        if hint == tuple[UnionSettings, ...]:
            values[key] = _build_unions(value, dotted, problems, base)
            continue
        if dataclasses.is_dataclass(hint):
            values[key] = _build(typing.cast(type, hint), value, dotted + ".", problems, base)
            continue
        origin = f" (from {value.origin})" if isinstance(value, _EnvValue) else ""
        try:
            parsed = _coerce(value, hint, base)
        except _BadValue as exc:
            shown = value.text if isinstance(value, _EnvValue) else value
            origin = f" (from {value.origin})" if isinstance(value, _EnvValue) else ""
            # An `*_env` key holds a variable's name: what else is written there may be
            # the secret itself.
            secret = exc.secret or key.endswith("_env")
            got = "a value not shown here" if secret else shown_value(shown, SHOWN_CHARS)
            problems.append(f"{dotted} must be {exc.expected}, got {got}{origin}")
            continue
        expected = None
        if _is_number(hint) and parsed is not None:
            expected = number_problem(dotted, parsed)
        if expected is not None:
            # Left out, as a value of the wrong type is: the checks across keys then meet
            # the default, not a NaN they cannot compare.
            problems.append(f"{dotted} must be {expected}, got {_number_written(value)}{origin}")
            continue
        values[key] = parsed
    return cls(**values)


def _precedence_lists(
    raw: dict[str, Any], prefix: str, problems: list[str]
) -> tuple[dict[str, Any], dict[str, tuple[str, ...]]]:
    """`[source.fields]` with each list of columns (the first non-empty wins) replaced by
    the column it makes (hrsync.core.people.precedence), and the lists by field."""
    plain: dict[str, Any] = {}
    lists: dict[str, tuple[str, ...]] = {}
    for key, value in raw.items():
        if not isinstance(value, list):
            plain[key] = value
            continue
        names = tuple(v.strip() for v in value if isinstance(v, str))
        if not names or len(names) != len(value) or not all(names):
            problems.append(
                f"{prefix}{key} must be a column, a template, or a list of columns (the first "
                f'non-empty wins, e.g. ["entra.mail", "Work_Email"]), got '
                f"{_list_written(value)}"
            )
            continue
        templates = [name for name in names if is_template(name)]
        if templates:
            problems.append(
                f"{prefix}{key} lists columns, not templates: {templates[0]!r}; make the "
                "template a column of its own with a join, or write the field as one template"
            )
            continue
        if len(set(names)) != len(names):
            problems.append(f"{prefix}{key} names a column twice: {list(names)!r}")
            continue
        lists[key] = names
        plain[key] = first_of_column(names)
    return plain, lists


def _list_written(value: list[Any]) -> str:
    """A list that is no list of columns, described without its values."""
    if not value:
        return "an empty list"
    blank = sum(1 for v in value if isinstance(v, str) and not v.strip())
    other = sum(1 for v in value if not isinstance(v, str))
    what = ([f"{blank} empty"] if blank else []) + ([f"{other} not text"] if other else [])
    return f"a list of {len(value)} with {' and '.join(what)}"


# The longest value a configuration message quotes whole: a key holds a few words, and
# one holding thousands of characters is wrong for that alone.
SHOWN_CHARS = 60


def _number_written(value: Any) -> str:
    """A number as the file or the variable wrote it (a variable's without quotes)."""
    if not isinstance(value, _EnvValue):
        return repr(value)
    text = value.text.strip()
    if len(text) <= SHOWN_CHARS:
        return text
    return f"{text[:SHOWN_CHARS]}… ({len(text):,} characters)"


def _is_number(hint: Any) -> bool:
    if typing.get_origin(hint) in (types.UnionType, typing.Union):
        return any(_is_number(arg) for arg in typing.get_args(hint))
    return hint is int or hint is float


def _too_long_number(path: Path) -> str:
    """The message for a TOML number too long to read, naming its line: tomllib's own
    error says neither where nor which key."""
    text = path.read_text(encoding="utf-8", errors="replace")
    for number, line in enumerate(text.splitlines(), start=1):
        digits = max((len(run) for run in _DIGIT_RUN.findall(line)), default=0)
        if digits > _MAX_DIGITS:
            return (
                f"config file {path} line {number}: a number of {digits:,} digits; no key "
                f"takes a number that long"
            )
    return f"config file {path} holds a number too long to read"


_MAX_DIGITS = 4300  # Python's limit on reading a whole number from text
_DIGIT_RUN = re.compile(r"\d[\d_]*")


ATTRIBUTE_KEYS = frozenset(
    f.name for f in dataclasses.fields(AttributeSettings) if is_key(f.metadata)
)


def _build_attributes(raw: Any, prefix: str, problems: list[str], base: Path) -> AttributeSettings:
    """`[attributes]`: the reserved keys are settings, every other key a DX attribute."""
    if not isinstance(raw, dict):
        problems.append(f"{prefix.rstrip('.')} must be a table, got {_kind(raw)}")
        return AttributeSettings()
    reserved = {key: value for key, value in raw.items() if key in ATTRIBUTE_KEYS}
    settings = _build(AttributeSettings, reserved, prefix, problems, base)
    assert isinstance(settings, AttributeSettings)
    entries: dict[str, str] = {}
    for name, value in raw.items():
        if name in ATTRIBUTE_KEYS:
            continue
        where = f"{prefix}{name}"
        if isinstance(value, _EnvValue):
            # Environment names are folded to lower case; DX attribute names are not.
            problems.append(
                f"{value.origin} cannot add the attribute {name!r}: attribute entries come "
                f"from the config file only (the environment may set "
                f"{', '.join(f'{prefix}{k}' for k in sorted(ATTRIBUTE_KEYS))})"
            )
            continue
        if not name.strip():
            problems.append(f"{prefix.rstrip('.')} has an attribute with an empty name")
            continue
        if not isinstance(value, str) or not value.strip():
            problems.append(
                f'{where} must be an HR column name or a template such as "{{Office}}", '
                f"got {value!r}"
            )
            continue
        if is_template(value):
            # The export's columns are checked when it is read; here only the template's shape.
            problems.extend(
                check_template(value, template_names(value), where=f"{where} {value!r}")
            )
        entries[name] = value
    return dataclasses.replace(settings, entries=entries)


# A join's own keys; every other key of a `[[source.join]]` table is a `[source]` key
# describing how its table is read, but for those about people.
JOIN_KEYS = ("name", "on", "match")
_NOT_FOR_JOINS = ("fields", "unknown_manager", "join")


def _build_joins(
    raw: Any, dotted: str, problems: list[str], base: Path
) -> tuple[JoinSettings, ...]:
    """`[[source.join]]`: a list of tables, each a join's keys and its table's."""
    tables = _array_of_tables(raw, dotted, problems)
    return tuple(_build_join(item, at, problems, base) for at, item in enumerate(tables, 1))


def _array_of_tables(raw: Any, dotted: str, problems: list[str]) -> list[dict[str, Any]]:
    """`[[source.join]]`, `[[source.union]]`: the tables written, or none with a problem
    when the key holds something else (an environment variable cannot write tables)."""
    if isinstance(raw, _EnvValue):
        problems.append(
            f"{raw.origin} cannot set {dotted}: write [[{dotted}]] tables in the config file"
        )
        return []
    if not isinstance(raw, list) or not all(isinstance(item, dict) for item in raw):
        problems.append(f"{dotted} must be [[{dotted}]] tables, got {_kind(raw)}")
        return []
    return raw


def _table_name(
    kind: Kind, raw: dict[str, Any], position: int, problems: list[str]
) -> tuple[str, str]:
    """A join's or union's name ("" without a usable one), and how messages name it."""
    name = raw.get("name", "")
    text, where, wrong = table_name(
        kind, name.text if isinstance(name, _EnvValue) else name, position
    )
    problems.extend(wrong)
    return text, where


def _build_join(
    raw: dict[str, Any], position: int, problems: list[str], base: Path
) -> JoinSettings:
    text, where = _table_name(JOIN, raw, position, problems)
    on = raw.get("on")
    pairs = on.items() if isinstance(on, dict) else ()
    entries = {k: v.text if isinstance(v, _EnvValue) else v for k, v in pairs}
    if len(entries) != 1 or not all(
        isinstance(v, str) and v.strip() and k.strip() for k, v in entries.items()
    ):
        shown = repr(entries) if isinstance(on, dict) else _kind(on) if on is not None else "none"
        problems.append(
            f'{where}.on must be one key, e.g. on = {{ DEPARTMENT_ID = "DEPARTMENT_ID" }} (the '
            f"people's column, or email or employee_id = the table's column), got {shown}"
        )
        entries = {}
    match = raw.get("match", "one")
    try:
        match = _coerce(match, typing.get_type_hints(JoinSettings)["match"], base)
    except _BadValue as exc:
        shown_match = match.text if isinstance(match, _EnvValue) else match
        problems.append(f"{where}.match must be {exc.expected}, got {shown_match!r}")
        match = "one"
    rest: dict[str, Any] = {}
    for key, value in raw.items():
        if key in JOIN_KEYS:
            continue
        if key in _NOT_FOR_JOINS:
            problems.append(
                f"{where}.{key} is not a known key of a join: a join brings its table's "
                "columns, [source.fields] and [filter] read them as {name.COLUMN}"
            )
            continue
        rest[key] = value
    table = _build(SourceSettings, rest, where + ".", problems, base)
    return JoinSettings(
        name=text,
        on={k.strip(): str(v).strip() for k, v in entries.items()},
        match=match,
        table=table,
    )


# A union's own keys; every other key of a `[[source.union]]` table is a `[source]` key
# describing how its export is read (its `fields` among them), but for these.
UNION_KEYS = ("name", "id_prefix", "attach_root_to")
_NOT_FOR_UNIONS = {
    "join": "a union's export is read as it is: join tables to the primary [source]",
    "union": "[[source.union]] tables are declared once, beside [source], not inside another",
    "unknown_manager": "the primary export's source.unknown_manager applies to every person",
}

_UNION_TABLE_KEYS = [
    f.name
    for f in dataclasses.fields(SourceSettings)
    if f.name not in _NOT_FOR_UNIONS and is_key(f.metadata)
]


def _build_unions(
    raw: Any, dotted: str, problems: list[str], base: Path
) -> tuple[UnionSettings, ...]:
    """`[[source.union]]`: a list of tables, each a union's keys and its export's."""
    tables = _array_of_tables(raw, dotted, problems)
    return tuple(_build_union(item, at, problems, base) for at, item in enumerate(tables, 1))


def _build_union(
    raw: dict[str, Any], position: int, problems: list[str], base: Path
) -> UnionSettings:
    text, where = _table_name(UNION, raw, position, problems)
    strings: dict[str, str | None] = {"id_prefix": None, "attach_root_to": ""}
    for key, expected in (
        ("id_prefix", 'a string such as "acq:" (the prefix of this source\'s employee ids)'),
        ("attach_root_to", 'a string: an employee id of the primary export, bare (e.g. "E1001")'),
    ):
        if key not in raw:
            continue
        value = raw[key]
        value = value.text if isinstance(value, _EnvValue) else value
        if not isinstance(value, str):
            problems.append(f"{where}.{key} must be {expected}, got {_kind(value)}")
            continue
        strings[key] = value.strip()
    rest: dict[str, Any] = {}
    for key, value in raw.items():
        if key in UNION_KEYS:
            continue
        if key in _NOT_FOR_UNIONS:
            problems.append(f"{where}.{key} is not allowed in a union: {_NOT_FOR_UNIONS[key]}")
            continue
        if key not in _UNION_TABLE_KEYS:
            known = [*UNION_KEYS, *_UNION_TABLE_KEYS]
            problems.append(_unknown_key(f"{where}.{key}", key, known))
            continue
        rest[key] = value
    table = _build(SourceSettings, rest, where + ".", problems, base)
    return UnionSettings(
        name=text,
        id_prefix=strings["id_prefix"],
        attach_root_to=strings["attach_root_to"] or "",
        table=table,
    )


def _unknown_key(dotted: str, key: str, known: list[str]) -> str:
    close = difflib.get_close_matches(key, known, n=1, cutoff=0.6)
    section = dotted.rsplit(".", 1)[0] if "." in dotted else ""
    if close:
        suggestion = f"{section}.{close[0]}" if section else close[0]
        return f"{dotted} is not a known key; did you mean {suggestion}?"
    where = f"in [{section}]" if section else "at the top level"
    return f"{dotted} is not a known key; known keys {where}: {capped(sorted(known))}"


def _kind(value: Any) -> str:
    """What was written where a table belongs, without the value: a section's key written
    as a plain value (`notify = "https://hooks…"`) may well be a secret."""
    if isinstance(value, str | _EnvValue):
        return "a string"
    if isinstance(value, bool):
        return "true or false"
    if isinstance(value, int | float):
        return "a number"
    if isinstance(value, list):
        return "a list"
    return f"a {type(value).__name__}"


class _BadValue(Exception):
    def __init__(self, expected: str, *, secret: bool = False) -> None:
        self.expected = expected
        self.secret = secret  # the value may be a credential: never echo it


def _coerce(value: Any, hint: Any, base: Path) -> Any:
    origin = typing.get_origin(hint)
    args = typing.get_args(hint)
    if origin in (types.UnionType, typing.Union):
        non_none = [a for a in args if a is not type(None)]
        if isinstance(value, _EnvValue) and value.text == "":
            return None
        return _coerce(value, non_none[0], base)
    if origin is Literal:
        text = value.text if isinstance(value, _EnvValue) else value
        if text in args:
            return text
        # `level = "INFO"` is what people write: the words are the same in any case.
        folded = [a for a in args if isinstance(a, str) and isinstance(text, str)]
        folded = [a for a in folded if a.lower() == text.strip().lower()]
        if len(folded) == 1:
            return folded[0]
        raise _BadValue("one of " + ", ".join(repr(a) for a in args if a))
    if hint is bool:
        if isinstance(value, _EnvValue):
            lowered = value.text.strip().lower()
            if lowered in ("1", "true", "yes", "on"):
                return True
            if lowered in ("0", "false", "no", "off"):
                return False
        elif isinstance(value, bool):
            return value
        raise _BadValue("true or false")
    if hint is int or hint is float:
        # TOML's 3 is a fine float; its 3.0 is no whole number; true is neither.
        accepted, expected = (int, "a whole number") if hint is int else (int | float, "a number")
        if isinstance(value, _EnvValue):
            text = value.text.strip()
            if len(text) > _MAX_DIGITS:  # int() itself would refuse it, with its own words
                raise _BadValue(expected)
            try:
                return hint(text)
            except ValueError:
                raise _BadValue(expected) from None
        if isinstance(value, bool) or not isinstance(value, accepted):
            raise _BadValue(expected)
        return hint(value)
    if hint is str:
        if isinstance(value, _EnvValue):
            return value.text
        if not isinstance(value, str):
            raise _BadValue("a string")
        return value
    if hint is Path:
        text = _coerce(value, str, base)
        path = Path(text).expanduser()
        return path if path.is_absolute() else base / path
    if origin is tuple:
        items = _as_list(value)
        return tuple(_coerce(item, args[0], base) for item in items)
    if origin is Mapping and args[1] is str:
        # source.headers: header name -> name of an environment variable. What is written
        # in another shape is most likely the header itself, credentials and all.
        expected = "a table of header name = environment variable name"
        if isinstance(value, _EnvValue) or not isinstance(value, dict):
            raise _BadValue(expected, secret=True)
        # HRSYNC_SOURCE__HEADERS__<NAME> arrives as an _EnvValue inside the table.
        entries = {k: v.text if isinstance(v, _EnvValue) else v for k, v in value.items()}
        if not all(isinstance(item, str) for item in entries.values()):
            raise _BadValue(expected, secret=True)
        return {str(k): item for k, item in entries.items()}
    if origin is Mapping:
        if isinstance(value, _EnvValue) or not isinstance(value, dict):
            raise _BadValue("a table of field = [patterns]")
        return {str(k): tuple(str(v) for v in _as_list(item)) for k, item in value.items()}
    raise _BadValue(f"a value of type {hint}")


def _as_list(value: Any) -> list[Any]:
    if isinstance(value, _EnvValue):
        return [part.strip() for part in value.text.split(",") if part.strip()]
    if isinstance(value, str):
        return [value]
    if not isinstance(value, list):
        raise _BadValue("a list")
    return value


def _read_token(
    settings: Settings, env: Mapping[str, str], problems: list[str], required: bool
) -> Secret | None:
    text = env.get(TOKEN_ENV, "").strip()
    if not text and settings.dx.token_file is not None:
        try:
            data = read_small_file(settings.dx.token_file, MAX_TOKEN_FILE_BYTES)
            text = data.decode("utf-8", errors="replace").strip()
        except SmallFileError as exc:
            problems.append(f"dx.token_file {str(settings.dx.token_file)!r} {exc}")
            return None
        except OSError as exc:
            problems.append(
                f"dx.token_file must name a readable file, got {str(settings.dx.token_file)!r} "
                f"({exc.strerror})"
            )
            return None
        if not text:
            problems.append(f"dx.token_file {str(settings.dx.token_file)!r} is empty")
            return None
    if not text:
        if required:
            problems.append(
                f"dx token is missing: set ${TOKEN_ENV} or dx.token_file to a file holding it"
            )
        return None
    problem = token_problem(text)
    if problem is not None:
        where = (
            f"${TOKEN_ENV}"
            if env.get(TOKEN_ENV, "").strip()
            else (f"dx.token_file {str(settings.dx.token_file)!r}")
        )
        problems.append(f"{where} {problem} (the value is not shown)")
        return None
    return Secret(text)
