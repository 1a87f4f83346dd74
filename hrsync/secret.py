"""A wrapper that keeps a secret out of reprs, logs and tracebacks."""

from __future__ import annotations

from typing import Final, NoReturn


class Secret:
    """Holds a secret string; only ``reveal()`` gives the value back."""

    __slots__ = ("_value",)
    _MASK: Final = "***"

    def __init__(self, value: str) -> None:
        self._value = value

    def reveal(self) -> str:
        return self._value

    def __repr__(self) -> str:
        return f"Secret({self._MASK!r})"

    __str__ = __repr__

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Secret) and other._value == self._value

    def __hash__(self) -> int:
        return hash(self._value)

    def __reduce__(self) -> NoReturn:
        raise TypeError("a Secret cannot be pickled")
