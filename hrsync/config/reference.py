"""The configuration's three documents, generated from the settings (`hrsync.core.settings`),
where each key's description lives once:

- `docs/reference/configuration.md`: the prose of `configuration.template.md` beside this
  file, each ``{{ keys TABLE }}`` line replaced by that table's keys (key, type, default,
  what it decides);
- `config/hrsync.example.toml`: every key with its default (or an example value),
  described in comments;
- `config/hrsync.schema.json`: a JSON Schema of the file, for editors (Taplo, Even Better
  TOML) to complete and check keys as they are typed.

`python -m hrsync.config.reference` writes them; `--check` only says which differ
(tests/config/test_reference.py runs it, so a key changed without them fails).
"""

from __future__ import annotations

import dataclasses
import json
import re
import sys
import textwrap
import types
import typing
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any, Literal

from hrsync.config.deprecated import DEPRECATED
from hrsync.config.numbers import number_range
from hrsync.core.settings import (
    AttributeSettings,
    FieldSettings,
    JoinSettings,
    Settings,
    SourceSettings,
    UnionSettings,
    is_key,
)

ROOT = Path(__file__).resolve().parents[2]
TEMPLATE = Path(__file__).with_name("configuration.template.md")
REFERENCE = Path("docs/reference/configuration.md")
EXAMPLE = Path("config/hrsync.example.toml")
SCHEMA = Path("config/hrsync.schema.json")
COMMAND = "python -m hrsync.config.reference"

# The keys of `[source]` a join's table does not take (the people's), and a union's.
NOT_FOR_JOINS = ("fields", "unknown_manager", "join", "union")
NOT_FOR_UNIONS = ("unknown_manager", "join", "union")
_MARKER = re.compile(r"^\{\{ keys ([a-z0-9_.]+) \}\}$", re.MULTILINE)
_LINK = re.compile(r"\[([^\]]+)\]\([^)]+\)")


# ---------------------------------------------------------------- the settings' keys


@dataclasses.dataclass(frozen=True)
class Key:
    """One key of the file: where it is, its type, default and description."""

    table: str  # "sync", "source.pagination", "source.join"
    name: str
    hint: Any
    default: Any
    doc: str
    example: Any
    commented: bool
    shown: str

    @property
    def dotted(self) -> str:
        return f"{self.table}.{self.name}"

    @property
    def is_table(self) -> bool:
        """A table of names the user chooses (`[source.headers]`), not a value."""
        return typing.get_origin(self.hint) is Mapping


def keys_of(cls: type, table: str) -> list[Key]:
    """The keys a table writes (not its sub-tables), in the settings' order."""
    hints = typing.get_type_hints(cls)
    found = []
    for f in dataclasses.fields(cls):
        hint = hints[f.name]
        if not is_key(f.metadata) or _sub_table(hint) is not None:
            continue
        default: Any = f.default
        if default is dataclasses.MISSING:
            default = typing.cast(Any, f.default_factory)()
        meta = f.metadata
        found.append(
            Key(
                table,
                f.name,
                hint,
                default,
                meta["doc"],
                meta["example"],
                meta["commented"],
                meta["shown"],
            )
        )
    return found


def _sub_table(hint: Any) -> type | None:
    """The settings class a field holds as a table (or a list of tables), if any."""
    if dataclasses.is_dataclass(hint):
        return typing.cast(type, hint)
    args = typing.get_args(hint)
    if typing.get_origin(hint) is tuple and args and dataclasses.is_dataclass(args[0]):
        return typing.cast(type, args[0])
    return None


def tables() -> Iterator[tuple[str, type]]:
    """Every table of keys, in the order the documents show them."""
    for section in dataclasses.fields(Settings):
        if not is_key(section.metadata):
            continue
        cls = typing.cast(type, typing.get_type_hints(Settings)[section.name])
        yield section.name, cls
        if cls is SourceSettings:
            for name in ("pagination", "oauth2", "google_service_account", "fields"):
                yield (
                    f"source.{name}",
                    typing.cast(type, typing.get_type_hints(SourceSettings)[name]),
                )
            yield "source.join", JoinSettings
            yield "source.union", UnionSettings


def all_keys() -> list[Key]:
    return [key for table, cls in tables() for key in keys_of(cls, table)]


def counted_keys() -> list[Key]:
    """The keys a user decides, as the reference counts them: not the tables of names
    they fill in (`[source.headers]`, `[filter.include]` …)."""
    return [key for key in all_keys() if not key.is_table]


# ---------------------------------------------------------------- values


def toml_value(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return repr(value)
    if isinstance(value, str | Path):
        return json.dumps(str(value), ensure_ascii=False)
    if isinstance(value, tuple | list):
        return "[" + ", ".join(toml_value(v) for v in value) + "]"
    if isinstance(value, Mapping):
        return "{ " + ", ".join(f"{k} = {toml_value(v)}" for k, v in value.items()) + " }"
    raise TypeError(f"no TOML for {value!r}")


def type_text(hint: Any) -> str:
    origin = typing.get_origin(hint)
    args = typing.get_args(hint)
    if origin in (types.UnionType, typing.Union):
        return type_text(next(a for a in args if a is not type(None)))
    if origin is Literal:
        return "one of " + ", ".join(f'`"{a}"`' for a in args if a)
    if origin is tuple:
        return "list of strings"
    if origin is Mapping:
        return "table"
    return {str: "string", Path: "path", int: "whole number", float: "number", bool: "boolean"}[
        hint
    ]


def default_text(key: Key) -> str:
    if key.shown:
        return key.shown
    if key.default is None:
        return "unset"
    return f"`{toml_value(key.default)}`"


def plain(doc: str) -> str:
    """A description without Markdown links (for comments and the schema)."""
    return _LINK.sub(r"\1", doc)


# ---------------------------------------------------------------- the reference page


def reference_page(template: str) -> str:
    by_table: dict[str, list[Key]] = {}
    for key in all_keys():
        by_table.setdefault(key.table, []).append(key)

    def table(match: re.Match[str]) -> str:
        rows = ["| key | type | default | what it decides |", "|---|---|---|---|"]
        for key in by_table[match.group(1)]:
            doc = key.doc.replace("|", "\\|")
            rows.append(f"| `{key.name}` | {type_text(key.hint)} | {default_text(key)} | {doc} |")
        return "\n".join(rows)

    body = _MARKER.sub(table, template)
    marked = set(_MARKER.findall(template))
    missing = [t for t in by_table if t not in marked]
    if missing:
        raise ValueError(f"{TEMPLATE.name} shows no table for {', '.join(missing)}")
    note = (
        f"<!-- Generated by `{COMMAND}` from hrsync/core/settings.py and "
        f"hrsync/config/{TEMPLATE.name}: edit those, not this page. -->\n"
    )
    return note + body


def deprecated_table() -> str:
    rows = ["| key | now |", "|---|---|"]
    rows.extend(f"| `{old.key}` | {old.instead} |" for old in DEPRECATED)
    return "\n".join(rows)


# ---------------------------------------------------------------- the example file

_EXAMPLE_HEAD = f"""\
#:schema ./hrsync.schema.json
# hrsync configuration: every key, with its default (or an example value).
# Generated by `{COMMAND}` from the settings;
# docs/reference/configuration.md says the same with links. The #:schema line above
# lets an editor with TOML support (Taplo, Even Better TOML) complete and check keys.
# Any key can be overridden by an environment variable HRSYNC_<SECTION>__<KEY>,
# e.g. HRSYNC_DX__BASE_URL or HRSYNC_SYNC__MAX_ARCHIVE. Lists: comma separated.
# The DX token never goes in this file: set $HRSYNC_DX_TOKEN or dx.token_file.
"""

# What a table of names holds, shown commented out under its header.
_EXAMPLE_ENTRIES = {
    "source.headers": [
        '# Authorization = "OKTA_API_AUTH"   # $OKTA_API_AUTH holds "SSWS 00abc..."'
    ],
    "filter.include": ['# department = ["Engineering*", "Product*"]'],
    "filter.exclude": ['# employee_type = ["Contractor"]'],
}
_EXAMPLE_ATTRIBUTES = [
    "# DX user attribute = HR column, or a template over columns; the step is on when one",
    "# is mapped.",
    '# "Location" = "{Office}"',
    '# "Level" = "Job Level"',
]
_EXAMPLE_JOIN = {"name": "departments", "path": "departments.csv"}
_EXAMPLE_UNION = {"name": "acq", "path": "acquired.json"}


def _comment(text: str, indent: str = "") -> list[str]:
    return textwrap.wrap(
        plain(text), width=88, initial_indent=f"{indent}# ", subsequent_indent=f"{indent}# "
    )


def _key_lines(key: Key, *, commented: bool = False) -> list[str]:
    value = key.example if key.example is not None else key.default
    lines = _comment(key.doc)
    if value is None:
        return lines
    line = f"{key.name} = {toml_value(value)}"
    lines.append(f"# {line}" if commented or key.commented else line)
    return lines


def example_file() -> str:
    out = [_EXAMPLE_HEAD]
    for table, cls in tables():
        keys = keys_of(cls, table)
        if table in ("source.join", "source.union"):
            out.append(_block_example(table, keys))
            continue
        lines = [f"[{table}]"]
        if cls.__doc__ and table != "source.fields":
            lines = _comment(cls.__doc__.split("\n\n")[0].replace("\n", " ").strip()) + lines
        if cls is AttributeSettings:
            lines.extend(_EXAMPLE_ATTRIBUTES)
        if cls is FieldSettings:
            lines = [
                *_comment(
                    "The export's column for each field (CSV header or JSON dotted path), a "
                    'template over columns ("{First} {Last}"), or a list of columns, the '
                    'first non-empty wins (email = ["entra.mail", "Work Email"]). The values '
                    "below fit config/sample-org.csv; an empty string: no such column."
                ),
                *lines,
            ]
        tables_of_names = []
        for key in keys:
            if key.is_table:
                tables_of_names.append(key)
                continue
            lines.extend(_key_lines(key))
        out.append("\n".join(lines) + "\n")
        for key in tables_of_names:
            entries = _EXAMPLE_ENTRIES[key.dotted]
            out.append("\n".join([*_comment(key.doc), f"[{key.dotted}]", *entries]) + "\n")
    return "\n".join(out)


def _block_example(table: str, keys: list[Key]) -> str:
    """`[[source.join]]`, `[[source.union]]`: commented out (none by default)."""
    example = _EXAMPLE_JOIN if table == "source.join" else _EXAMPLE_UNION
    lines = [f"# [[{table}]]"]
    for key in keys:
        lines.extend(_comment(key.doc))
        value: Any = example.get(key.name)
        if key.name == "on":
            value = {"DEPARTMENT_ID": "DEPARTMENT_ID"}
        if value is None:
            value = key.default if key.default is not None else f"{_EXAMPLE_UNION['name']}:"
        lines.append(f"# {key.name} = {toml_value(value)}")
    where = "table" if table == "source.join" else "export"
    lines.extend(
        _comment(
            f"path = … or url = …: the {where} is read with the [source] keys above"
            + (" (not fields)" if table == "source.join" else "; its own [source.union.fields]")
        )
    )
    lines.append(f"# path = {toml_value(example['path'])}")
    return "\n".join(lines) + "\n"


# ---------------------------------------------------------------- the JSON Schema


def _value_schema(key: Key) -> dict[str, Any]:
    hint = key.hint
    origin = typing.get_origin(hint)
    args = typing.get_args(hint)
    if origin in (types.UnionType, typing.Union):
        hint = next(a for a in args if a is not type(None))
        origin, args = typing.get_origin(hint), typing.get_args(hint)
    schema: dict[str, Any]
    if origin is Literal:
        schema = {"type": "string", "enum": list(args)}
    elif origin is tuple:
        schema = {"type": "array", "items": {"type": "string"}}
    elif origin is Mapping:
        item: dict[str, Any] = {"type": "string"}
        if args[1] is not str:
            item = {"anyOf": [item, {"type": "array", "items": {"type": "string"}}]}
        schema = {"type": "object", "additionalProperties": item}
    elif hint is bool:
        schema = {"type": "boolean"}
    elif hint is int or hint is float:
        schema = {"type": "integer" if hint is int else "number"}
        span = number_range(key.dotted)
        if span.choice:
            schema["enum"] = [int(span.low), int(span.high)]
        else:
            low = "exclusiveMinimum" if span.above_low else "minimum"
            schema[low] = _number(span.low)
            schema["maximum"] = _number(span.high)
    else:
        schema = {"type": "string"}
    if key.table == "source.fields":
        schema = {"anyOf": [schema, {"type": "array", "items": {"type": "string"}}]}
    schema["description"] = plain(key.doc)
    if key.default is not None and not key.shown:
        schema["default"] = list(key.default) if isinstance(key.default, tuple) else key.default
        if isinstance(key.default, Mapping):
            schema["default"] = dict(key.default)
    return schema


def _number(value: float) -> int | float:
    return int(value) if float(value).is_integer() else value


def _object(table: str, cls: type, *, drop: tuple[str, ...] = ()) -> dict[str, Any]:
    props: dict[str, Any] = {}
    for key in keys_of(cls, table):
        if key.name not in drop:
            props[key.name] = _value_schema(key)
    hints = typing.get_type_hints(cls)
    for f in dataclasses.fields(cls):
        sub = _sub_table(hints[f.name])
        if not is_key(f.metadata) or sub is None or f.name in drop:
            continue
        inner = _object(f"{table}.{f.name}", sub)
        if typing.get_origin(hints[f.name]) is tuple:
            inner = {"type": "array", "items": _block(f.name)}
        inner["description"] = plain(f.metadata["doc"])
        props[f.name] = inner
    for old in DEPRECATED:
        parent, _, name = old.key.rpartition(".")
        if parent == table:
            props[name] = {"deprecated": True, "description": f"No longer a key: {old.instead}"}
    schema: dict[str, Any] = {"type": "object", "properties": props}
    if cls is AttributeSettings:
        schema["additionalProperties"] = {
            "type": "string",
            "description": "a DX user attribute = an HR column, or a template over columns",
        }
    else:
        schema["additionalProperties"] = False
    return schema


def _block(name: str) -> dict[str, Any]:
    """A `[[source.join]]` or `[[source.union]]` table: its own keys and its table's."""
    own, drop = (JoinSettings, NOT_FOR_JOINS) if name == "join" else (UnionSettings, NOT_FOR_UNIONS)
    schema = _object("source", SourceSettings, drop=drop)
    for key in keys_of(own, f"source.{name}"):
        schema["properties"][key.name] = _value_schema(key)
    schema["required"] = ["name", "on"] if name == "join" else ["name"]
    return schema


def json_schema() -> str:
    schema: dict[str, Any] = {
        "$schema": "http://json-schema.org/draft-07/schema#",
        "$id": "https://hrsync.invalid/hrsync.schema.json",
        "title": "hrsync configuration",
        "description": f"Generated by `{COMMAND}` from the settings.",
        "type": "object",
        "additionalProperties": False,
        "properties": {},
    }
    for section in dataclasses.fields(Settings):
        if not is_key(section.metadata):
            continue
        cls = typing.cast(type, typing.get_type_hints(Settings)[section.name])
        schema["properties"][section.name] = _object(section.name, cls)
    return json.dumps(schema, indent=2, ensure_ascii=False) + "\n"


# ---------------------------------------------------------------- writing


def documents(root: Path = ROOT) -> dict[Path, str]:
    template = TEMPLATE.read_text(encoding="utf-8")
    template = template.replace("{{ deprecated keys }}", deprecated_table())
    return {
        REFERENCE: reference_page(template),
        EXAMPLE: example_file(),
        SCHEMA: json_schema(),
    }


def stale(root: Path = ROOT) -> list[Path]:
    """The documents whose committed text differs from what the settings make."""
    out = []
    for path, text in documents(root).items():
        target = root / path
        if not target.is_file() or target.read_text(encoding="utf-8") != text:
            out.append(path)
    return out


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if args == ["--check"]:
        differ = stale()
        for path in differ:
            print(f"{path} is not what the settings make: run `{COMMAND}`", file=sys.stderr)
        return 1 if differ else 0
    if args:
        print(f"usage: {COMMAND} [--check]", file=sys.stderr)
        return 2
    for path, text in documents().items():
        (ROOT / path).write_text(text, encoding="utf-8")
        print(f"wrote {path}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
