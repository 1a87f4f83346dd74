"""One JSON answer of an HTTP source read record by record: its records into `Records`
(flattened as they are parsed, only the columns the run reads held), and the rest of
the answer, its records list left empty, kept as a document for what looks at the answer
around its records (the next page, a total, the signs that it is one page of more:
`hrsync.sources.pagination`, `hrsync.core.export.page_signs`, which never look into the records).

The records list streamed is the one at `source.records_path`, or, when it is not set,
where `pagination.default_records_path` finds it (a list at the top level, OData's ``d``,
``d.results``, or ``value`` once the answer has shown it is OData). A 170 MB answer is
then never held as text nor as one parsed document. An answer this pass cannot read
(broken, nested past what it reads, a record that is no object) is read whole by the
caller, whose messages name what is wrong.
"""

from __future__ import annotations

import functools
import itertools
import operator
from dataclasses import dataclass
from typing import Any

from hrsync.sources.base import Payload, decode
from hrsync.sources.json_reader import Records, _TooDeep, _Utf8Reader

# Where the records may be when source.records_path is not set (default_records_path).
_UNSET_PLACES = ((), ("d",), ("d", "results"))


@dataclass(frozen=True)
class PageRead:
    """One answer: `document` without its records (the list streamed left empty), the
    path of the list streamed (None: none was), how many records it held, the first."""

    document: Any
    streamed: str | None
    records: int
    first: Any = None


def read_page(
    payload: Payload,
    encoding: str,
    records_path: str | None,
    into: Records,
    *,
    odata: bool = False,
) -> PageRead | None:
    """Stream `payload`'s records into `into`; None, with `into` as it was, when this pass
    cannot read the answer. `records_path` None: not configured (see the module doc;
    `odata`: the source's paging style is OData)."""
    import ijson  # its C backend: only a run that reads JSON loads it

    before = into.count
    skeleton = _Skeleton(records_path, odata)
    first: Any = None
    try:
        events = ijson.parse(_Utf8Reader(decode(payload, encoding)), use_float=True)
        for prefix, event, value in events:
            if not skeleton.event(event, value):
                continue
            # The records list opens: its items are built in C, one at a time, from the
            # events up to the list's own end (no event inside it has the list's prefix).
            end = (prefix, "end_array", None)
            inside = itertools.takewhile(functools.partial(operator.ne, end), events)
            for record in ijson.items(inside, f"{prefix}.item" if prefix else "item"):
                if first is None:
                    first = record
                if not into.add(record):
                    into.truncate(before)
                    return None  # the whole-document reading names it
            skeleton.event("end_array", None)
    except (ijson.JSONError, ValueError, RecursionError, OverflowError, _TooDeep):
        into.truncate(before)
        return None
    return PageRead(skeleton.root, skeleton.streamed, into.count - before, first)


class _Skeleton:
    """The answer built from its parse events but for the items of its records list,
    which `event` tells the caller to stream when that list opens."""

    def __init__(self, records_path: str | None, odata: bool) -> None:
        # The configured path as keys (the top level: none); None: not configured.
        self.wanted = None if records_path is None else tuple(filter(None, records_path.split(".")))
        self.odata = odata
        self.root: Any = None
        self.streamed: str | None = None
        self._stack: list[Any] = []
        self._paths: list[tuple[Any, ...]] = []  # the path to each container open
        self._key: Any = None  # the key of the value coming in the object open now
        self._odata_said = False  # a top-level "@odata." key came by
        self._d_said = False  # a top-level "d" key came by

    def event(self, event: str, value: Any) -> bool:
        """Build the answer by one event; True when it opens the records list."""
        if event == "map_key":
            self._key = value
            if len(self._stack) == 1:
                self._odata_said = self._odata_said or value.startswith("@odata.")
                self._d_said = self._d_said or value == "d"
        elif event in ("end_map", "end_array"):
            self._stack.pop()
            self._paths.pop()
        elif event in ("start_map", "start_array"):
            container: Any = {} if event == "start_map" else []
            if not self._stack:
                path: tuple[Any, ...] = ()
            elif isinstance(self._stack[-1], list):
                path = (*self._paths[-1], None)  # a list's item: no records path is in it
            else:
                path = (*self._paths[-1], self._key)
            self._put(container)
            self._stack.append(container)
            self._paths.append(path)
            return event == "start_array" and self._is_records(path)
        else:
            self._put(value)
        return False

    def _put(self, value: Any) -> None:
        if not self._stack:
            self.root = value
        elif isinstance(self._stack[-1], list):
            self._stack[-1].append(value)
        else:
            self._stack[-1][self._key] = value

    def _is_records(self, path: tuple[Any, ...]) -> bool:
        if self.streamed is not None:
            return False  # a second list at that path (a repeated key) is built whole
        if self.wanted is not None:
            found = path == self.wanted
        elif path == ("value",):
            # OData v4's list, once the answer has said it is OData (and has no "d");
            # else it is built whole and the caller finds it there.
            found = (self.odata or self._odata_said) and not self._d_said
        else:
            found = path in _UNSET_PLACES
        if found:
            self.streamed = ".".join(path)
        return found


# A list's items kept whole: page signs look at the first 50 links of a list beside the
# records (`page_signs`), and guessing where the records are needs only each list's
# length and whether its items are objects.
OUTLINE_ITEMS = 50
_SHARED: dict[str, Any] = {}  # every object item past the first few: one empty object
_OPEN = frozenset({"start_map", "start_array"})
_CLOSE = frozenset({"end_map", "end_array"})


def outline(payload: Payload, encoding: str) -> Any | None:
    """`payload`'s JSON document with each list's items past its first `OUTLINE_ITEMS`
    that are objects left empty (one shared empty object): the lists of records keep
    their lengths and kind, the rest of the answer is whole, and a 170 MB export is
    never held. None when this pass cannot read it (the whole-document reader says why).
    """
    import ijson  # its C backend: only a run that reads JSON loads it

    root: Any = None
    stack: list[Any] = []
    key: Any = None
    try:
        events = ijson.basic_parse(_Utf8Reader(decode(payload, encoding)), use_float=True)
        for event, value in events:
            if event == "map_key":
                key = value
                continue
            if event in _CLOSE:
                stack.pop()
                continue
            inside = stack[-1] if stack else None
            if event == "start_map" and type(inside) is list and len(inside) >= OUTLINE_ITEMS:
                inside.append(_SHARED)
                depth = 1
                for skipped, _ in events:  # the object's events, read past
                    if skipped in _OPEN:
                        depth += 1
                    elif skipped in _CLOSE:
                        depth -= 1
                        if not depth:
                            break
                continue
            node: Any = {} if event == "start_map" else [] if event == "start_array" else value
            if inside is None:
                root = node
            elif type(inside) is list:
                inside.append(node)
            else:
                inside[key] = node
            if event in _OPEN:
                stack.append(node)
    except (ijson.JSONError, ValueError, RecursionError, OverflowError, _TooDeep):
        return None
    return root
