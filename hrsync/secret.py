"""A wrapper that keeps a secret out of reprs, logs and tracebacks; and how a message
names an environment variable holding one."""

from __future__ import annotations

import re
from typing import Final, NoReturn

# Only the conventional shape: a token such as `ghp_16C7…`, `sk_live_…` or a passphrase
# such as `CorrectHorseBatteryStaple` is a valid name in general, and taking it for one
# would echo it in "$… is not set". Upper case keeps every real name we know of.
_VARIABLE_NAME = re.compile(r"^[A-Z_][A-Z0-9_]*$")
NAME_FORM = "upper case letters, digits and underscores"


def is_variable_name(text: str) -> bool:
    """Whether `text` is an environment variable's name written the conventional way. What
    else a setting naming a variable holds is most likely the secret itself, pasted in its
    place."""
    return bool(_VARIABLE_NAME.fullmatch(text))


def not_a_name(key: str) -> str:
    """What to say of a setting `key` that holds something other than a variable's name,
    without repeating it."""
    return (
        f"{key} must name an environment variable ({NAME_FORM}); what it holds looks "
        "like a value rather than a name (not shown here)"
    )


def line_break_problem(value: str) -> str | None:
    """ "holds a line break" when `value` does (it took the line after it: `$(cat file)` of
    a two-line file, a paste), else None. For a credential sent encoded (basic auth, a
    form body), which may hold any other character."""
    return "holds a line break" if "\n" in value or "\r" in value else None


def header_value_problem(value: str) -> str | None:
    """What keeps `value` from being sent as an HTTP header's value as it is, said without
    it; None when nothing does. The HTTP library's complaint would quote the value."""
    problem = line_break_problem(value)
    if problem is None and not value.isascii():
        problem = "holds a character outside ASCII"
    if problem is None and any((c < " " and c != "\t") or c == "\x7f" for c in value):
        problem = "holds a control character"  # a tab is allowed in a header value
    return problem


def token_problem(value: str) -> str | None:
    """What keeps `value` from being a bearer token (one word of printable ASCII), said
    without it; None when nothing does."""
    if value[:7].lower() == "bearer ":
        return "starts with 'Bearer ': set the token alone (hrsync adds the word)"
    problem = header_value_problem(value)
    if problem is None and "\t" in value:
        problem = "holds a control character"
    if problem is None and " " in value:
        problem = "holds a space"
    return f"{problem}: a token is one word" if problem else None


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
