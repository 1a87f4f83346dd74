"""The config `hrsync init` writes (pure): a `Proposal` as commented TOML.

Every guess is written with its evidence as a comment above it, and what could not be
decided as a value starting with ``TODO``, which `load_settings` refuses naming the key
(hrsync.config.todos). `[source.fields]` sets every field hrsync's defaults would
otherwise fill with a column name the export may lack (``manager_id``), blank when there
is none, so the file says everything the run reads.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import PurePath

from hrsync.core.settings import SourceSettings
from hrsync.core.starter.guess_fields import FIELD_ORDER, Proposal, RecordsGuess, Todo
from hrsync.core.text import TODO_PREFIX, plural

# Where `hrsync simulator` listens by default: the config rehearses first.
SIMULATOR_URL = "http://127.0.0.1:8765"
_CONTROL = re.compile(r"[\x00-\x08\x0a-\x1f\x7f]")


@dataclass(frozen=True)
class StarterSource:
    """The export as the config names it: `path` relative to the config's folder."""

    path: str
    shown: str  # as the user wrote it, for the heading
    format: str  # "csv" or "json"
    records: RecordsGuess | None = None
    encoding: str = SourceSettings.encoding  # written only when not the default


def toml_string(text: str) -> str:
    """A TOML basic string. JSON's string escapes are all TOML's too (\\" \\\\ \\n \\uXXXX);
    JSON leaves DEL as it is, which TOML wants escaped."""
    return json.dumps(text, ensure_ascii=False).replace("\x7f", "\\u007f")


def todo_value(todo: Todo) -> str:
    """The value written for a key left to a person: short, no braces (a brace would make
    it a template, refused for its shape before it is refused as a TODO)."""
    return f"{TODO_PREFIX}: " + todo.key.rsplit(".", 1)[-1].replace("_", " ") + " (see above)"


def _comment(text: str, indent: str = "") -> list[str]:
    """`text` as comment lines of at most about 88 characters. A control character (a
    column name may hold one) cannot stand in a TOML comment: it is written escaped."""
    text = _CONTROL.sub(lambda m: f"\\u{ord(m.group()):04x}", text)
    words = " ".join(text.split()).split(" ")
    lines: list[str] = []
    line = ""
    for word in words:
        if line and len(indent) + 2 + len(line) + 1 + len(word) > 88:
            lines.append(f"{indent}# {line}")
            line = word
        else:
            line = f"{line} {word}" if line else word
    if line:
        lines.append(f"{indent}# {line}")
    return lines


def render(proposal: Proposal, source: StarterSource) -> str:
    """The whole config file for `proposal` over `source`."""
    out: list[str] = []
    todos = {todo.key: todo for todo in proposal.todos}
    read = f"its {plural(proposal.records, 'record')}"
    if proposal.sampled_from:
        read = (
            f"a sample of {proposal.records:,} of its {proposal.sampled_from:,} records (the "
            f"first {proposal.records // 2:,} and a spread of the rest)"
        )
    out += _comment(
        f"Written by `hrsync init --from {source.shown}` from {read}. Each guess says why "
        "it was made above it: check them against your export, then run `hrsync check`."
    )
    if todos:
        out += _comment(
            f"{plural(len(todos), 'value')} starting with TODO could not be decided: hrsync "
            "refuses this file until each is replaced."
        )
    for note in proposal.notes:
        out += _comment(f"Note: {note}")
    out += ["", "[dx]"]
    out += _comment(
        "The bundled simulator (`hrsync simulator --rehearse` with this file), to rehearse "
        "a sync; `hrsync check` makes sure the simulator is what answers here. For your DX "
        "account, its Web API URL, e.g. https://api.getdx.com (or set HRSYNC_DX__BASE_URL). "
        "The token is never written here: set HRSYNC_DX_TOKEN, or token_file to a file "
        "holding it."
    )
    out += [f"base_url = {toml_string(SIMULATOR_URL)}", "", "[source]"]
    absolute = PurePath(source.path).is_absolute()
    out += _comment(
        "The export (outside this file's folder: move them together and make it relative)."
        if absolute
        else "The export, relative to this file's folder."
    )
    out.append(f"path = {toml_string(source.path)}")
    if source.encoding != SourceSettings.encoding:
        out.append(f"encoding = {toml_string(source.encoding)}")
    if source.format == "json" and source.records is not None:
        out += _comment(f"Where the people are: {source.records.evidence}.")
        out.append(f"records_path = {toml_string(source.records.path)}")
    out += ["", "[source.fields]"]
    guesses = {guess.key: guess for guess in proposal.fields}
    for name in FIELD_ORDER:
        key = f"source.fields.{name}"
        todo = todos.get(key)
        guess = guesses.get(key)
        if todo is not None:
            out += _comment(f"{TODO_PREFIX}: {todo.why}")
            out.append(f"{name} = {toml_string(todo_value(todo))}")
        elif guess is not None:
            # A blank manager column is written so hrsync's default ("manager_id") is
            # not read from an export that has no such column.
            blank = (
                f"{name}: blank, not read (see the TODO above)"
                if "source.fields.manager_id" in todos
                else f"{name}: blank, not read (the manager is given by one column)"
            )
            out += _comment(guess.evidence or blank)
            out.append(f"{name} = {toml_string(guess.value)}")
    out += _filter(proposal, todos)
    out += ["", "[mapping]"]
    out += _comment(proposal.strategy.evidence)
    out.append(f"strategy = {toml_string(proposal.strategy.value)}")
    out += _comment(
        'Teams are named after their lead ("Ada Okafor\'s team")'
        + (
            '; team_name = "{department}" names them after the lead\'s department'
            if proposal.field("department")
            else ""
        )
        + "."
    )
    out.append(f"team_name = {toml_string(_TEAM_NAME)}")
    out += ["", "[sync]"]
    out += _comment("DX e-mails this address when an import ends (optional):")
    out.append('# notify_email = "people-ops@example.com"')
    out += ["", "[state]"]
    out += _comment("The state store (reference_ids, runs), beside this file.")
    out.append(f"database_url = {toml_string('sqlite:///hrsync.db')}")
    return "\n".join(out) + "\n"


_TEAM_NAME = "{lead_name}'s team"


def _filter(proposal: Proposal, todos: dict[str, Todo]) -> list[str]:
    out: list[str] = []
    todo = todos.get("filter.active_status")
    if proposal.active_status is None and todo is None:
        if not proposal.field("status"):
            out += ["", "[filter]"]
            out += _comment("No status column: everyone in the export is kept.")
            out.append("active_status = []")
        return out
    out += ["", "[filter]"]
    if todo is not None:
        out += _comment(f"{TODO_PREFIX}: {todo.why}")
        out.append(f"active_status = [{toml_string(todo_value(todo))}]")
        return out
    assert proposal.active_status is not None
    out += _comment(proposal.active_status.evidence)
    out.append(f"active_status = {_toml_list(proposal.kept_statuses)}")
    return out


def _toml_list(values: Sequence[str]) -> str:
    return "[" + ", ".join(toml_string(v) for v in values) + "]"
