"""Only text reaches a terminal: every character that would steer it (an escape sequence,
a bell, a carriage return, a bidi override) is shown as a visible escape instead."""

from __future__ import annotations

import json
import re
import unicodedata
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from hrsync.terminal import escape_controls

BIDI = "\u061c\u200e\u200f\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069"


def steers(char: str) -> bool:
    """A character a terminal may act on rather than show: every control but newline
    and tab (C0, DEL, C1), Unicode's bidi controls, and its line and paragraph separators
    (some viewers break a line there)."""
    return (
        (unicodedata.category(char) == "Cc" and char not in "\n\t")
        or char in BIDI
        or char in "\u2028\u2029"
    )


def unescape(text: str) -> str:
    return re.sub(
        r"\\x([0-9a-f]{2})|\\u([0-9a-f]{4})",
        lambda m: chr(int(m.group(1) or m.group(2), 16)),
        text,
    )


@pytest.mark.parametrize(
    ("text", "shown"),
    [
        ("Eng \x1b[2J\x1b[H", "Eng \\x1b[2J\\x1b[H"),  # clears the screen
        ("\x1b[31mred\x1b[0m", "\\x1b[31mred\\x1b[0m"),  # colours
        (
            # OSC 8: a hyperlink whose text hides where it goes
            "\x1b]8;;https://evil.test\x1b\\click\x1b]8;;\x1b\\",
            "\\x1b]8;;https://evil.test\\x1b\\click\\x1b]8;;\\x1b\\",
        ),
        ("\x1b]0;new title\x07", "\\x1b]0;new title\\x07"),  # the window's title, BEL
        ("ring\x07", "ring\\x07"),
        ("ok\rFAILED", "ok\\x0dFAILED"),  # a carriage return overwrites the line
        ("back\x08space", "back\\x08space"),
        ("nul\x00", "nul\\x00"),
        ("del\x7f", "del\\u007f"),
        ("csi\x9b2J", "csi\\u009b2J"),  # C1's one-character CSI
        ("team \u202eevil\u202c", "team \\u202eevil\\u202c"),  # right-to-left override
        ("\u2066isolate\u2069 \u200emark", "\\u2066isolate\\u2069 \\u200emark"),
        ("line one\nline two\tcolumn", "line one\nline two\tcolumn"),  # kept: layout
        ("Chloé Dubois, 李雷, Ωmega, emoji 🙂", "Chloé Dubois, 李雷, Ωmega, emoji 🙂"),
        ("", ""),
    ],
)
def test_each_control_is_shown_not_acted_on(text: str, shown: str) -> None:
    assert escape_controls(text) == shown


@given(st.text())
def test_no_character_that_steers_a_terminal_is_left(text: str) -> None:
    assert not any(steers(char) for char in escape_controls(text))


@given(st.text())
def test_text_without_such_characters_is_left_as_it_is(text: str) -> None:
    plain = "".join(char for char in text if not steers(char))
    assert escape_controls(plain) == plain


@given(st.text().filter(lambda text: "\\" not in text))
def test_escaping_can_be_read_back(text: str) -> None:
    # Two texts never read the same, but for one that already spells an escape: a
    # backslash is not doubled, so a repr() quoted in a message stays readable.
    assert unescape(escape_controls(text)) == text


@given(st.text())
def test_escaping_twice_is_escaping_once(text: str) -> None:
    once = escape_controls(text)
    assert escape_controls(once) == once


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(), inner, max_size=4),
    max_leaves=12,
)


@given(json_values)
def test_a_json_document_stays_the_same_document(value: Any) -> None:
    # `--format json` is written with ensure_ascii=False: DEL, C1 and bidi controls stay
    # raw in json.dumps' text, and their \\uXXXX form is JSON's own.
    text = json.dumps(value, indent=2, ensure_ascii=False)
    assert json.loads(escape_controls(text)) == value


# ------------------------------------------------------------ one line per field

from hrsync.terminal import one_line  # noqa: E402

LINE_BREAKS = "\n\r\v\f\x1c\x1d\x1e\x85\u2028\u2029"


@given(st.text())
def test_one_line_leaves_a_value_on_one_line_and_nothing_steering(text: str) -> None:
    shown = one_line(text)
    assert len(shown.splitlines()) <= 1, shown
    assert not any(steers(c) or c in LINE_BREAKS for c in shown), shown


@pytest.mark.parametrize(
    ("text", "shown"),
    [
        ("Gone\nPlan deadbeef: run: curl x | sh", "Gone\\nPlan deadbeef: run: curl x | sh"),
        ("a\r\nb", "a\\r\\nb"),
        ("a\u2028b\u2029c\x85d", "a\\u2028b\\u2029c\\u0085d"),
        ("tab\tstays", "tab\tstays"),
    ],
)
def test_one_line_escapes_every_line_break(text: str, shown: str) -> None:
    assert one_line(text) == shown


def test_line_separators_are_escaped_in_any_terminal_text() -> None:
    # Not a layout a report makes: some viewers break a line there.
    assert escape_controls("a\u2028b\u2029c") == "a\\u2028b\\u2029c"
