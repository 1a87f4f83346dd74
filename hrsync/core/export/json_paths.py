"""How a `[source.fields]` path picks one value out of a JSON record's lists (pure).

A path is dotted keys (``Manager.ID``). A key may pick one item of the list it holds:

- ``positions[0].manager_id``: by position, from 0 (``[-1]`` is the last);
- ``relations[type=manager].value``: the first item whose ``type`` reads ``manager``
  (values read as text: ``true``, ``1042``; compared exactly);
- ``emails[primary].address``: the first item whose ``primary`` is true, short for
  ``[primary=true]``.

A key that holds an object, not a list, reads as a list of that one object. A pick that
matches no item reads as empty, as a missing field does. A path whose list is not picked
gives every item's value: several different values are a problem of that person's row
(`Several`), never one value made up of them.

`parse_path` checks the syntax once per path (cached); `read_path` reads a record.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

from hrsync.core.export.rows import Several

EXAMPLES = "positions[0].manager_id, relations[type=manager].value or emails[primary].address"


class PathError(ValueError):
    """A path whose list pick cannot be read; the message says why, with examples."""


@dataclass(frozen=True, slots=True)
class Pick:
    """Which item of a list: `index`, else the first whose `key` reads `equals`."""

    index: int | None = None
    key: str = ""
    equals: str = "true"

    def choose(self, items: list[Any]) -> Any | None:
        if self.index is not None:
            if -len(items) <= self.index < len(items):
                return items[self.index]
            return None
        for item in items:
            if (
                isinstance(item, dict)
                and self.key in item
                and scalar_text(item[self.key]).strip() == self.equals
            ):
                return item
        return None


@dataclass(frozen=True, slots=True)
class Step:
    key: str
    pick: Pick | None = None
    written: str = field(default="", compare=False)  # as written, for hints


@dataclass(frozen=True, slots=True)
class JsonPath:
    text: str
    steps: tuple[Step, ...]

    @property
    def plain(self) -> str:
        """The path without its picks: the column the export lists (``relations.value``)."""
        return ".".join(step.key for step in self.steps)


def has_pick(text: str) -> bool:
    """Whether a path picks from a list (holds a ``[``); otherwise it is a plain column."""
    return "[" in text or "]" in text


_INDEX = re.compile(r"-?[0-9]+")


@lru_cache(maxsize=1024)
def parse_path(text: str) -> JsonPath:
    """The path `text`, or `PathError` saying what is wrong with it."""
    steps: list[Step] = []
    for written in _split(text):
        if "[" not in written and "]" not in written:
            if not written.strip():
                raise PathError(f"has an empty key between dots; e.g. {EXAMPLES}")
            steps.append(Step(written, None, written))
            continue
        opened = written.find("[")
        if opened <= 0 or not written.endswith("]") or written.count("[") != 1:
            raise PathError(
                f"has {written!r}: a pick is one [...] right after a key, then a dot or the "
                f"end; e.g. {EXAMPLES}"
            )
        key, inside = written[:opened], written[opened + 1 : -1].strip()
        steps.append(Step(key, _pick(written, inside), written))
    return JsonPath(text, tuple(steps))


def _pick(written: str, inside: str) -> Pick:
    if not inside:
        raise PathError(f"has an empty pick in {written!r}; e.g. {EXAMPLES}")
    if _INDEX.fullmatch(inside):
        return Pick(index=int(inside))
    key, eq, value = inside.partition("=")
    key, value = key.strip(), value.strip()
    if not key or (eq and not value):
        raise PathError(f"has {written!r}: write [key=value] or [key]; e.g. {EXAMPLES}")
    return Pick(key=key, equals=value if eq else "true")


def _split(text: str) -> list[str]:
    """The path's steps: split at the dots outside brackets (a picked value may hold one)."""
    parts: list[str] = []
    current: list[str] = []
    depth = 0
    for char in text:
        if char == "." and depth == 0:
            parts.append("".join(current))
            current = []
            continue
        if char == "[":
            depth += 1
        elif char == "]":
            depth -= 1
            if depth < 0:
                raise PathError(f"has a ']' with no '[' before it; e.g. {EXAMPLES}")
        current.append(char)
    if depth:
        raise PathError(f"has a '[' that is never closed; e.g. {EXAMPLES}")
    parts.append("".join(current))
    return parts


def read_path(record: Any, path: JsonPath) -> tuple[str, Several | None]:
    """The value `path` gives in `record`: its text, "" when none; with several different
    values, their text joined by ``"; "`` and the `Several` saying so."""
    found: list[str] = []
    spread: list[int] = []  # the steps where a list with more than one item was spread
    _walk(record, path.steps, 0, found, spread)
    values = tuple(dict.fromkeys(v for v in found if v))
    if len(values) <= 1:
        return (values[0] if values else ""), None
    at = spread[0] if spread else len(path.steps) - 1
    written = [step.written for step in path.steps]
    written[at] = f"{path.steps[at].key}[0]"
    return "; ".join(values), Several(values, ".".join(written))


def _walk(node: Any, steps: tuple[Step, ...], i: int, found: list[str], spread: list[int]) -> None:
    if isinstance(node, list):
        if len(node) > 1 and i:
            spread.append(i - 1)
        for item in node:
            _walk(item, steps, i, found, spread)
        return
    if i == len(steps):
        if not isinstance(node, dict):
            found.append(scalar_text(node))
        return
    if not isinstance(node, dict) or steps[i].key not in node:
        return
    child = node[steps[i].key]
    pick = steps[i].pick
    if pick is not None:
        child = pick.choose(child if isinstance(child, list) else [child])
        if child is None:
            return
    _walk(child, steps, i + 1, found, spread)


def scalar_text(value: Any) -> str:
    """A JSON value as text: ``null`` is "", ``true``/``false`` as spelled, whole numbers
    without ``.0``."""
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)
