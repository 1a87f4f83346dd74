"""Text bound for a person's terminal: what would steer the terminal is shown instead.

Reports, `status`, `history`, messages and the console log carry values hrsync does not
control: team names made in DX's web app, URLs an HR API wrote, what a server answered.
An escape sequence among them would act rather than show (ESC [ 2J clears the screen,
OSC 8 hides where a link goes, a carriage return overwrites the line, a bidi override
reverses what follows), so every such character is written as a visible escape:

- C0 controls but newline and tab (the layout of a report) as ``\\x1b``;
- DEL and C1 controls as ``\\u009b``, and Unicode's bidi controls as ``\\u202e``;
- the line and paragraph separators (U+2028, U+2029), which some viewers break a line at.

`one_line` is for one field (a team name from DX, a value from HR): its newlines too are
escaped, so a name holding "\\nPlan …: run: curl …" cannot forge a line of a report, a
log or a webhook's text. Each line a report or a notice is built from goes through it.

The ``\\uXXXX`` form is also JSON's, and json.dumps leaves no C0 control raw, so a JSON
document passed through here is still the same document. A backslash is not doubled: a
repr() quoted in a message stays readable, at the cost that text already spelling
``\\x1b`` reads the same as an escaped ESC.
"""

from __future__ import annotations

import re

_STEERS = re.compile(
    "[\x00-\x08\x0b-\x1f"  # C0 but tab (09) and newline (0a)
    "\x7f-\x9f"  # DEL and C1
    "\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069"  # bidi marks, embeddings, isolates
    "\u2028\u2029]"  # line and paragraph separators
)
# What also ends a line (str.splitlines' list: newline and the rest escape_controls takes).
_BREAKS = re.compile(f"[\n{_STEERS.pattern[1:-1]}]")
_NAMED = {"\n": "\\n", "\r": "\\r"}


def _visible(match: re.Match[str]) -> str:
    code = ord(match.group())
    return f"\\x{code:02x}" if code < 0x20 else f"\\u{code:04x}"


def _visible_break(match: re.Match[str]) -> str:
    return _NAMED.get(match.group()) or _visible(match)


def one_line(text: str) -> str:
    """`text`, one field, on one line: newlines and carriage returns as ``\\n`` and
    ``\\r``, every other line break and steering character as `escape_controls` writes it."""
    return _BREAKS.sub(_visible_break, text)


def escape_controls(text: str) -> str:
    """`text` with every character that would steer a terminal written as an escape."""
    return _STEERS.sub(_visible, text)
