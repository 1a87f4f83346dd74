"""JSON exports: a list of records at the top level or under `source.records_path`.

Nested values are reached by dotted paths (``Manager.ID``). Values become strings:

- text stays as it is; whole numbers lose any ``.0`` (``1042.0`` → ``"1042"``), other numbers
  use Python's shortest form; ``true``/``false`` stay spelled that way; ``null`` → ``""``.
- an object contributes its keys under ``prefix.key``.
- a list of one item reads as that item, so Workday's ``"Worker_Group": [{"ID": "x"}]`` gives
  ``Worker_Group.ID = "x"``.
- a longer list gives each item under ``prefix.N`` (``Worker_Group.0.ID``, from 0), and every
  sub-path also holds the different non-empty values of all items joined with ``"; "``
  (``Worker_Group.ID = "x; y"``), so filters can match any of them; the row records such a
  column as `Several` (a field reading it holds that person). An empty list is ``""``.
- a path that picks from a list (``relations[type=manager].value``, hrsync.core.export.json_paths)
  is read as its own column, named as written, when the export lists its plain path.
- a value that is no text where other records give text at the same path (an object or a
  list of objects where an e-mail is written, a number or ``true`` among e-mails) is
  marked on its row as `Several` with a `kind` (``"an object"``), so a field reading it
  names what it found instead of an empty or odd value. Whether a number or a boolean is
  wrong is the field's to say (an employee id may well be a number).

A file is parsed record by record (ijson, its C backend): each record is flattened as it
is parsed and only its flattened values are held, of the columns the run reads when told
(`keep`), so a 170 MB export never sits in memory as text nor as a parsed document. Any
export the streaming pass cannot read (broken, cut, of the wrong shape, empty) is read
again the whole-document way, which names what is wrong: the messages are one code's.
A paged HTTP source (`pages`) parses one page at a time and builds one Export over all
their records.
"""

from __future__ import annotations

import difflib
import json
import random
import re
from collections.abc import Callable, Iterable, Iterator, Mapping
from typing import Any

from hrsync.core.export.json_paths import JsonPath, has_pick, parse_path, read_path, scalar_text
from hrsync.core.export.rows import RowTable, RowValues, Several, SourceRow
from hrsync.core.export.templates import is_template, template_names
from hrsync.core.listing import capped
from hrsync.core.settings import SourceSettings
from hrsync.sources.base import Export, Payload, SourceError, decode

LIST_SEPARATOR = "; "
MAX_SHAPES = 1000


def open_json(
    payload: Payload,
    *,
    encoding: str,
    records_path: str,
    picks: Iterable[str] = (),
    keep: Iterable[str] | None = None,
    sample: int | None = None,
) -> Export:
    """The export in `payload`; `keep`: the only columns its rows need hold (None: all;
    its columns are listed all the same); `sample`: at most this many rows held, a sample
    of the records (`Records`; `Export.sampled_from` tells when it is one)."""
    name = payload.name
    streamed = _streamed(payload, encoding, records_path, tuple(picks), keep, sample)
    if streamed is not None:
        return streamed
    document = parse_json(payload, encoding)
    records, where = find_records(name, document, records_path)
    locate: Callable[[int], str] = lambda position: f"{name} {where}[{position}]"  # noqa: E731
    return records_export(name, records, locate, picks=picks)


class _TooDeep(Exception):
    """The text may nest deeper than the streaming pass reads (see `_Utf8Reader`)."""


_BRACKETS = re.compile(r"[\[\]{}]")
# ijson names each value by its whole path, so a value N levels deep costs N-long names
# at every level: 100,000 nested lists would take gigabytes. No HR export nests this deep,
# and json (the whole-document reader) refuses much less (Python's recursion limit).
_MAX_STREAMED_DEPTH = 200


class _Utf8Reader:
    """Decoded text (`decode`, which counts the bytes against source.max_bytes and names a
    bad byte) as the UTF-8 bytes ijson reads."""

    def __init__(self, chunks: Iterator[str]) -> None:
        self._chunks = chunks
        self._left = b""
        self._depth = 0  # brackets opened and not closed, those inside text counted too

    def read(self, size: int = -1) -> bytes:
        # Never more than `size`: ijson's C backend drops what its buffer cannot take.
        if not self._left:
            for chunk in self._chunks:
                if chunk:
                    self._nesting(chunk)
                    self._left = chunk.encode("utf-8", "surrogatepass")
                    break
        if size < 0 or len(self._left) <= size:
            piece, self._left = self._left, b""
        else:
            piece, self._left = self._left[:size], self._left[size:]
        return piece

    def _nesting(self, chunk: str) -> None:
        """Raise `_TooDeep` before ijson sees text nesting past `_MAX_STREAMED_DEPTH` (a
        bracket inside a value may count: the whole-document reader then reads it)."""
        depth = self._depth
        for bracket in _BRACKETS.findall(chunk):
            if bracket in "[{":
                depth += 1
                if depth > _MAX_STREAMED_DEPTH:
                    raise _TooDeep
            else:
                depth -= 1
        self._depth = depth


def _streamed(
    payload: Payload,
    encoding: str,
    records_path: str,
    picks: tuple[str, ...],
    keep: Iterable[str] | None,
    sample: int | None = None,
) -> Export | None:
    """The export read record by record, or None when the streaming pass cannot read it
    (the whole-document reader then says why)."""
    name = payload.name
    where = records_path
    prefix = f"{records_path}.item" if records_path else "item"
    held = Records(picks, keep, sample=sample)
    import ijson  # its C backend: only a run that reads JSON loads it

    try:
        records = ijson.items(_Utf8Reader(decode(payload, encoding)), prefix, use_float=True)
        for record in records:
            if not held.add(record):
                return None
    except (ijson.JSONError, ValueError, RecursionError, OverflowError, _TooDeep):
        return None
    if not held.count:
        return None  # the whole-document reader says what it found instead
    locate: Callable[[int], str] = lambda position: f"{name} {where}[{position}]"  # noqa: E731
    return held.export(name, locate)


class Records:
    """Records read one at a time (a file's, or every page's of an HTTP source), each
    flattened as it comes and only its values held, those of `keep` when given: the
    rows `records_export` would give for the same records, without holding the records.

    A value that is no text where another record has text at the same path is marked on
    its row (as `records_export` marks it) once every record is read: until then each
    record's values of another kind than text wait, as their short JSON, by path.

    `sample`: hold at most this many records (`hrsync init` guessing from a large file):
    the first half of them, then a spread of the rest (a seeded reservoir, so the same
    file gives the same sample); every record's columns are listed all the same.
    """

    def __init__(
        self,
        picks: Iterable[str] = (),
        keep: Iterable[str] | None = None,
        *,
        sample: int | None = None,
    ) -> None:
        self.kept = None if keep is None else frozenset(keep)
        self.paths: list[JsonPath] = []
        for text in picks:
            try:
                self.paths.append(parse_path(text))
            except ValueError:
                continue  # refused with the config; read as a plain name (a missing column)
        # Each path with a value in some record: True once a record has text there.
        self.columns: dict[str, bool] = {}
        self._numbers: dict[str, None] = {}  # paths holding a number or boolean in some record
        self._objects: dict[str, None] = {}  # paths holding an object in some record
        self.count = 0  # records read
        self._sample = sample
        self._shapes: dict[tuple[str, ...], dict[str, int]] = {}
        self._held: list[tuple[Mapping[str, str], dict[str, Several] | None]] = []
        self._positions: list[int] = []  # of each record held, when sampling
        # By path, the records (by position) holding a value of another kind than text
        # there, and its mark.
        self._marks: dict[str, list[tuple[int, Several]]] = {}
        self._random = random.Random(0)

    @property
    def sampled(self) -> bool:
        """Whether the records held are a sample of those read."""
        return len(self._held) < self.count

    def add(self, record: Any) -> bool:
        """Read `record`, holding its values unless sampled out; False (nothing held) when
        it is not an object."""
        if not isinstance(record, dict):
            return False
        _collect_paths(record, "", self.columns, self._numbers, self._objects)
        position = self.count
        self.count += 1
        slot = self._slot(position)
        if slot is None:
            return True
        values: dict[str, str] = {}
        several: dict[str, Several] = {}
        flatten(record, "", values, several)
        for path in self.paths:
            values[path.text], found = read_path(record, path)
            if found is not None:
                several[path.text] = found
        kept = self.kept
        if kept is not None:
            values = {k: v for k, v in values.items() if k in kept}
            several = {k: v for k, v in several.items() if k in kept}
        _marks(record, "", position, kept, self._marks)
        row = (_interned(values, self._shapes), several or None)
        if slot == len(self._held):
            self._held.append(row)
            if self._sample is not None:
                self._positions.append(position)
        else:
            self._held[slot] = row
            self._positions[slot] = position
        return True

    def _slot(self, position: int) -> int | None:
        """Where record `position` is held (a new place, or the place of one it replaces
        in the sample), or None: sampled out."""
        size = self._sample
        if size is None or position < size:
            return position
        first = size // 2
        # Algorithm R over the records after the first half: each is held with the same
        # chance, size - first places among position - first + 1 records.
        pick = self._random.randrange(position - first + 1)
        return first + pick if pick < size - first else None

    def take(self, record: Any, locate: Callable[[int], str]) -> None:
        """Hold `record`'s values, or refuse a record that is not an object, naming it by
        `locate` (its position among all records)."""
        if not self.add(record):
            raise SourceError(
                f"{locate(self.count)} is {_kind(record)}, expected an object with one "
                f"person's fields"
            )

    def truncate(self, count: int) -> None:
        """Forget the records after the first `count` (a page read again whole; never
        when sampling)."""
        del self._held[count:]
        self.count = min(self.count, count)
        for path, marks in self._marks.items():
            self._marks[path] = [mark for mark in marks if mark[0] < count]

    def export(self, name: str, locate: Callable[[int], str], *, pages: int = 1) -> Export:
        """The Export of the records held; `locate(i)` names record i in messages."""
        held = self._held
        positions = self._positions if self._sample is not None else range(len(held))
        slots = {position: slot for slot, position in enumerate(positions)}
        # Paths where one record's value is of another kind than text the others give:
        # each such value is marked on its row (usually none).
        for suspect in {p for p in (*self._numbers, *self._objects) if self.columns.get(p)}:
            for position, mark in self._marks.get(suspect, ()):
                slot = slots.get(position)
                if slot is None:
                    continue  # replaced in the sample
                values, several = held[slot]
                held[slot] = (values, {**(several or {}), suspect: mark})
        self._marks.clear()
        order = sorted(range(len(held)), key=positions.__getitem__)
        columns: dict[str, None] = dict.fromkeys(self.columns)
        # A pick is a column only when the export has its plain path (as `records_export`).
        unknown = [path.text for path in self.paths if path.plain not in columns]
        for path in self.paths:
            if path.plain in columns:
                columns[path.text] = None
        kept = self.kept

        def rows() -> Iterator[SourceRow]:
            for slot in order:
                values, several = held[slot]
                if unknown:
                    values = {k: v for k, v in values.items() if k not in unknown}
                location = locate(positions[slot])
                if several:
                    yield SourceRow(location, values, several)
                else:
                    yield SourceRow(location, values)

        # The table of the columns held only: a column no row holds would be a blank cell
        # in every row (records of different shapes are read into one table).
        held_columns = tuple(c for c in columns if kept is None or c in kept)

        def table() -> RowTable:
            return RowTable.of_rows(rows(), held_columns)

        return Export(
            name=name,
            columns=tuple(columns),
            format="json",
            _rows=rows,
            _table=table,
            pages=pages,
            sampled_from=self.count if self.sampled else 0,
        )


def _marks(
    value: Any,
    prefix: str,
    position: int,
    kept: frozenset[str] | None,
    out: dict[str, list[tuple[int, Several]]],
) -> None:
    """Into `out`, each path of `value` (as `flatten` walks it with every path suspect)
    whose value is no text, with the mark `flatten` would write there."""
    if isinstance(value, dict):
        for key, item in value.items():
            if type(item) is str:
                continue
            path = f"{prefix}.{key}" if prefix else key
            _marks(item, path, position, kept, out)
            if kept is None or path in kept:
                kind = _not_text(item)
                if kind is not None:
                    out.setdefault(path, []).append(
                        (position, Several((_shown_json(item),), "", kind))
                    )
    elif isinstance(value, list) and len(value) == 1:
        _marks(value[0], prefix, position, kept, out)


def picked_paths(settings: SourceSettings, also: Iterable[str] = ()) -> tuple[str, ...]:
    """The paths that pick from a list among the columns `[source.fields]` names (a
    template's too) and `also` (other columns the config reads)."""
    named: list[str] = []
    for value in vars(settings.fields).values():
        named.extend(template_names(value) if is_template(value) else (value,))
    for listed in settings.first_of.values():
        named.extend(listed)
    named.extend(also)
    return tuple(dict.fromkeys(name for name in named if has_pick(name)))


def parse_json(payload: Payload, encoding: str) -> Any:
    """The payload's JSON document, or a `SourceError` naming where it is broken."""
    name = payload.name
    text = "".join(decode(payload, encoding))
    if not text.strip():
        raise SourceError(f"{name} is empty: expected a JSON list of people")
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise SourceError(
            f"{name} is not valid JSON: {exc.msg} at line {exc.lineno} column {exc.colno}"
        ) from None
    except RecursionError:
        raise SourceError(f"{name} nests its values too deeply to be an HR export") from None
    except ValueError:
        # Not a JSONDecodeError: Python reads no whole number of more than 4,300 digits.
        raise SourceError(_too_long_number(name, text)) from None


_MAX_DIGITS = 4300  # Python's limit on reading a whole number from text
_LONG_DIGITS = re.compile(rf"\d{{{_MAX_DIGITS + 1},}}")


def _too_long_number(name: str, text: str) -> str:
    found = _LONG_DIGITS.search(text)
    if found is None:
        return f"{name} holds a number too long to read"
    line = text.count("\n", 0, found.start()) + 1
    column = found.start() - text.rfind("\n", 0, found.start())
    return (
        f"{name} has a number of {len(found.group()):,} digits at line {line} column "
        f"{column}: too long for any HR value (at most {_MAX_DIGITS:,} digits are read)"
    )


def records_export(
    name: str,
    records: list[Any],
    locate: Callable[[int], str],
    *,
    pages: int = 1,
    picks: Iterable[str] = (),
) -> Export:
    """An Export over parsed records; `locate(i)` names record i in messages. `picks`:
    paths that pick from a list, each read as a column (when the export has its plain
    path); their syntax is checked with the config (`parse_path`)."""
    # Each path with a value in some record: True once a record has text there.
    columns: dict[str, bool] = {}
    others: dict[str, None] = {}  # paths holding a number or boolean in some record
    objects: dict[str, None] = {}  # paths holding an object in some record
    for index, record in enumerate(records):
        if not isinstance(record, dict):
            raise SourceError(
                f"{locate(index)} is {_kind(record)}, expected an object with one person's fields"
            )
        _collect_paths(record, "", columns, others, objects)
    # Paths where one record's value is of another kind than text the others give: each
    # such value is marked on its row (usually none, and then nothing is looked at).
    suspect = frozenset(p for p in (*others, *objects) if columns.get(p))
    paths: list[JsonPath] = []
    for text in picks:
        try:
            path = parse_path(text)
        except ValueError:
            continue  # refused with the config; read as a plain name (a missing column)
        if path.plain in columns:
            paths.append(path)
            columns[text] = True

    def rows() -> Iterator[SourceRow]:
        # Records of one shape (the same keys in the same order, as exports usually are)
        # share one column index, so no per-row dict holds the keys.
        shapes: dict[tuple[str, ...], dict[str, int]] = {}
        for position, record in enumerate(records):
            values: dict[str, str] = {}
            several: dict[str, Several] = {}
            flatten(record, "", values, several, suspect)
            for path in paths:
                values[path.text], found = read_path(record, path)
                if found is not None:
                    several[path.text] = found
            location = locate(position)
            read = _interned(values, shapes)
            yield SourceRow(location, read, several) if several else SourceRow(location, read)

    return Export(name=name, columns=tuple(columns), format="json", _rows=rows, pages=pages)


def flatten(
    value: Any,
    prefix: str,
    out: dict[str, str],
    several: dict[str, Several] | None = None,
    suspect: frozenset[str] = frozenset(),
) -> None:
    """Write every leaf of `value` into `out` under its dotted path (see the module doc),
    and into `several` each path whose list items give different values, and each path of
    `suspect` whose value is not text (marked with its `kind`)."""
    if isinstance(value, dict):
        for key, item in value.items():
            path = f"{prefix}.{key}" if prefix else key
            if type(item) is str:  # the common case, without a call
                out[path] = item
            else:
                flatten(item, path, out, several, suspect)
                if path in suspect and several is not None:
                    kind = _not_text(item)
                    if kind is not None:
                        several[path] = Several((_shown_json(item),), "", kind)
    elif isinstance(value, list):
        if len(value) == 1:
            flatten(value[0], prefix, out, several, suspect)
            return
        if not value:
            out[prefix] = ""
            return
        merged: dict[str, dict[str, None]] = {}
        for position, item in enumerate(value):
            inner: dict[str, str] = {}
            inner_several: dict[str, Several] = {}
            flatten(item, "", inner, inner_several)
            for path, text in inner.items():
                out[_join(prefix, str(position), path)] = text
                texts = merged.setdefault(path, {})
                if path in inner_several:
                    texts.update(dict.fromkeys(inner_several[path].values))
                elif text:
                    texts[text] = None
        for path, texts in merged.items():
            column = _join(prefix, path)
            out[column] = LIST_SEPARATOR.join(texts)
            if several is not None and len(texts) > 1:
                several[column] = Several(tuple(texts), _join(f"{prefix}[0]", path))
    else:
        out[prefix] = scalar_text(value)


def _join(*parts: str) -> str:
    return ".".join(part for part in parts if part)


def _collect_paths(
    value: Any,
    prefix: str,
    out: dict[str, bool],
    others: dict[str, None],
    objects: dict[str, None],
) -> None:
    """The dotted paths `flatten` would produce, without the per-item ``.N`` ones, each
    True when it holds text; into `others` the paths holding a number or a boolean, into
    `objects` those holding an object."""
    if isinstance(value, dict):
        if prefix:
            objects[prefix] = None
        for key, item in value.items():
            path = f"{prefix}.{key}" if prefix else key
            kind = type(item)
            if kind is str:
                out[path] = True
            elif kind is int or kind is float or kind is bool:  # without a call
                out.setdefault(path, False)
                others[path] = None
            else:
                _collect_paths(item, path, out, others, objects)
    elif isinstance(value, list) and value:
        for item in value:
            _collect_paths(item, prefix, out, others, objects)
    elif prefix:
        if isinstance(value, str):
            out[prefix] = True
        else:
            out.setdefault(prefix, False)
            if isinstance(value, bool | int | float):
                others[prefix] = None


def _not_text(value: Any) -> str | None:
    """What a value is when it is no text (``"an object"``), or None: text, null, an empty
    list, or a list of text (read as its value or values)."""
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int | float):
        return "a number"
    if isinstance(value, dict):
        return "an object"
    if isinstance(value, list):
        if len(value) == 1:
            return _not_text(value[0])
        if any(isinstance(item, dict | list) for item in value):
            return "a list"
    return None


def _shown_json(value: Any, limit: int = 80) -> str:
    """A value as its JSON, cut for a message."""
    text = json.dumps(value, ensure_ascii=False, separators=(", ", ": "))
    return text if len(text) <= limit else text[: limit - 1] + "…"


def find_records(
    name: str, document: Any, records_path: str, *, allow_empty: bool = False
) -> tuple[list[Any], str]:
    """The list at `records_path` (the top level when empty) and how to name it.

    An empty list is refused unless `allow_empty` (a later page of a paged source).
    """
    if not records_path:
        if isinstance(document, list):
            return _non_empty(name, document, "the top level", allow_empty), ""
        hint = ""
        if isinstance(document, dict):
            lists = [k for k, v in document.items() if isinstance(v, list)]
            if lists:
                hint = f"; set source.records_path to the key holding the people, e.g. {lists[0]!r}"
        raise SourceError(
            f"{name}: the top level is {_kind(document)}, expected a list of people{hint}"
        )
    node = document
    walked: list[str] = []
    for key in records_path.split("."):
        here = ".".join(walked) or "the top level"
        if not isinstance(node, dict):
            raise SourceError(
                f"{name}: source.records_path {records_path!r} cannot be followed: {here} is "
                f"{_kind(node)}, not an object"
            )
        if key not in node:
            keys = [str(k) for k in node]
            close = difflib.get_close_matches(key, keys, n=1, cutoff=0.6)
            suggestion = f"; did you mean {close[0]!r}?" if close else ""
            raise SourceError(
                f"{name}: source.records_path {records_path!r} not found: {here} has no key "
                f"{key!r} (keys: {capped(keys)}){suggestion}"
            )
        node = node[key]
        walked.append(key)
    if not isinstance(node, list):
        raise SourceError(
            f"{name}: {records_path} is {_kind(node)}, expected a list of people "
            f"(source.records_path)"
        )
    return _non_empty(name, node, records_path, allow_empty), records_path


def _non_empty(name: str, records: list[Any], where: str, allow_empty: bool) -> list[Any]:
    if not records and not allow_empty:
        raise SourceError(f"{name} has no people: the list at {where} is empty")
    return records


def _kind(value: Any) -> str:
    if isinstance(value, dict):
        return "an object"
    if isinstance(value, list):
        return "a list"
    if isinstance(value, str):
        return "a string"
    if value is None:
        return "null"
    return f"a {type(value).__name__}"


def _interned(
    values: dict[str, str], shapes: dict[tuple[str, ...], dict[str, int]]
) -> Mapping[str, str]:
    """A record's values as a row sharing its key index with every record of the same
    keys (up to MAX_SHAPES shapes), so many records cost one dict of keys, not many."""
    keys = tuple(values)
    index = shapes.get(keys)
    if index is None and len(shapes) < MAX_SHAPES:
        index = shapes[keys] = {key: i for i, key in enumerate(keys)}
    return values if index is None else RowValues(index, tuple(values.values()))
