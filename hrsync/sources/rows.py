"""What a reader yields (pure): one row of an export, its values, and the limits on them.

CONTRACT (shared by the readers and `hrsync.core.people`; change only with care):
- `SourceRow` is where the row came from and its values by column name.
- `RowValues` is the compact form the readers use: one tuple per row, one shared index.
- `EXTRA_VALUES` is the key for cells beyond the header's width; `MAX_FIELD_CHARS` the
  longest value hrsync accepts.

The core imports this module, so it imports nothing that does I/O (the package's
`__init__` neither): `tests/test_architecture.py` keeps it so.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import TypeVar, overload

# Key under which a reader puts the cells beyond the header's width, joined by the delimiter.
# No real column can have this name: header names are never empty.
EXTRA_VALUES = ""

# The longest value hrsync accepts, in characters. No name, e-mail, id or department comes
# near it; a value past it is a document, binary data or a quote never closed.
MAX_FIELD_CHARS = 64 * 1024

_T = TypeVar("_T")


@dataclass(frozen=True, slots=True)
class SourceRow:
    """One record of an export, as read. `location` is for messages:
    ``people.csv line 12`` or ``report.json Report_Entry[3]``."""

    location: str
    values: Mapping[str, str]


class RowValues(Mapping[str, str]):
    """The values of one CSV row, keyed by column through an index shared by every row.

    A dict per row would repeat the keys 100,000 times; a tuple and a shared index do not.
    `cells` holds exactly one value per column of `index`, in the index's order.
    """

    __slots__ = ("cells", "index")

    def __init__(self, index: Mapping[str, int], cells: tuple[str, ...]) -> None:
        self.index = index
        self.cells = cells

    def __getitem__(self, key: str) -> str:
        return self.cells[self.index[key]]

    @overload
    def get(self, key: str, /) -> str | None: ...
    @overload
    def get(self, key: str, /, default: str | _T) -> str | _T: ...
    def get(self, key: str, /, default: object = None) -> object:
        # Mapping.get would go through __getitem__ and KeyError; this is the hot path.
        position = self.index.get(key)
        return default if position is None else self.cells[position]

    def __iter__(self) -> Iterator[str]:
        return iter(self.index)

    def __len__(self) -> int:
        return len(self.index)

    def __repr__(self) -> str:
        return f"RowValues({dict(self)!r})"

    def stripped(self) -> RowValues:
        return RowValues(self.index, tuple(map(str.strip, self.cells)))
