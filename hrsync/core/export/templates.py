"""Templates over HR columns: ``{Column}`` placeholders with ``|filter`` chains (pure).

The one template engine of hrsync: `[source.fields]`, `mapping.team_name` and the
`[attributes]` table use it. A setting value is a template when it holds a brace
(`is_template`); else it is a plain column name. A template is str.format-style text: literal
text, ``{{``/``}}`` for literal braces, and named placeholders ``{Name}`` or
``{Name|filter|filter}``; no positional placeholders, format specs or conversions.
A placeholder may fall back: ``{Preferred First Name || Legal First Name}`` is the first
of its columns that is not blank on the row, each with its own filters
(``{Nickname|upper || First Name}``).
Filters apply left to right to the placeholder's value:

``lower``, ``upper``
    the case of every letter.
``strip``
    surrounding whitespace removed.
``ascii``
    accents dropped (``Tomás`` -> ``Tomas``), any other non-ASCII character removed.
``nospace``
    every whitespace character removed.
``first``, ``last``
    the first or last word (words split on whitespace); empty for an empty value.
``initial``
    the first character of the first word.

The rendered text has its whitespace runs collapsed to one space and is trimmed, so a
missing value leaves no double space behind.
"""

from __future__ import annotations

import difflib
import string
import unicodedata
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass
from itertools import repeat

from hrsync.core.listing import capped
from hrsync.core.text import collapse_whitespace, collapse_whitespace_each

# The filters run once per row and placeholder (100,000s of times): each takes the
# cheapest path for the common case (ASCII text, a split at one end only).


def _ascii(value: str) -> str:
    if value.isascii():
        return value
    decomposed = unicodedata.normalize("NFKD", value)
    return decomposed.encode("ascii", "ignore").decode("ascii")


def _first(value: str) -> str:
    words = value.split(None, 1)
    return words[0] if words else ""


def _last(value: str) -> str:
    words = value.rsplit(None, 1)
    return words[-1] if words else ""


def _nospace(value: str) -> str:
    return "".join(value.split())


def _initial(value: str) -> str:
    return _first(value)[:1]


def _natural(value: str) -> str:
    """`Schmidt, Anna` as `Anna Schmidt`: a name many HR lists write last name first. Any
    other value (no comma, two, or a side empty: `Smith, Jr., John`) is left as it is."""
    last, comma, first = value.partition(",")
    if not comma or "," in first or not last.strip() or not first.strip():
        return value
    words = first.split()
    if _suffix(words[0]):
        return value  # "John Smith, Jr.": in reading order already
    suffix = [words.pop()] if len(words) > 1 and _suffix(words[-1]) else []
    return " ".join([*words, last.strip(), *suffix])


# What follows a name rather than being part of it ("Smith, John Jr." is John Smith Jr.).
_SUFFIXES = frozenset({"jr", "sr", "ii", "iii", "iv", "phd", "md", "esq"})


def _suffix(word: str) -> bool:
    return word.replace(".", "").casefold() in _SUFFIXES


FILTERS: Mapping[str, Callable[[str], str]] = {
    "lower": str.lower,
    "upper": str.upper,
    "strip": str.strip,
    "ascii": _ascii,
    "nospace": _nospace,
    "first": _first,
    "last": _last,
    "initial": _initial,
    "natural": _natural,
}


# The same filters over a whole column at once (`Template.on_columns`): a comprehension that
# skips the common case in C costs a third of a Python call per value. Each equals
# ``[FILTERS[name](v) for v in values]`` (tests/core/test_export_fields.py holds them to it).
# A filter that changes no value returns the column itself (no filter changes its input).
ColumnFilter = Callable[[Sequence[str]], Sequence[str]]


def _column_ascii(values: Sequence[str]) -> Sequence[str]:
    if "".join(values).isascii():
        return values
    return [v if v.isascii() else _ascii(v) for v in values]


def _column_nospace(values: Sequence[str]) -> Sequence[str]:
    # Every whitespace character but the space is unprintable: one C test over the whole
    # column spares a test per value when none holds any.
    joined = "".join(values)
    if " " not in joined and joined.isprintable():
        return values
    return [v if " " not in v and v.isprintable() else "".join(v.split()) for v in values]


COLUMN_FILTERS: Mapping[str, ColumnFilter] = {
    "lower": lambda values: list(map(str.lower, values)),
    "upper": lambda values: list(map(str.upper, values)),
    "strip": lambda values: list(map(str.strip, values)),
    "ascii": _column_ascii,
    "nospace": _column_nospace,
    "first": lambda values: [w[0] if (w := v.split(None, 1)) else "" for v in values],
    "last": lambda values: [w[-1] if (w := v.rsplit(None, 1)) else "" for v in values],
    "initial": lambda values: [w[0][:1] if (w := v.split(None, 1)) else "" for v in values],
    "natural": lambda values: list(map(_natural, values)) if "," in "".join(values) else values,
}


# Filters whose every value is one word or empty (no whitespace), and filters that keep a
# value so (no case mapping yields whitespace: tests/core/test_templates.py checks every
# character). `ascii` keeps it only where it changes nothing (its ASCII shortcut).
_WORD_FILTERS = frozenset({"first", "last", "initial", "nospace"})
_KEEP_WORDS = frozenset({"lower", "upper", "strip"})
_WORD_IDENTITIES = frozenset({"nospace", "strip"})  # filters that change no word
# Filters after which a lower-cased value stays lower case (`ascii` may not: U+1D2C, a
# modifier letter with no case of its own, decomposes to "A").
_KEEP_LOWER = frozenset({"first", "last", "initial", "nospace", "strip"})


def _lower_cased_last(filters: Sequence[str]) -> bool:
    """Whether a chain of filters leaves every value lower case."""
    lowered = False
    for name in filters:
        lowered = name == "lower" or (lowered and name in _KEEP_LOWER)
    return lowered


class TemplateError(ValueError):
    """The text is not a template at all (unbalanced braces)."""


@dataclass(frozen=True, slots=True)
class Placeholder:
    name: str  # the column or built-in it reads
    filters: tuple[str, ...]
    written: str  # as it appears between the braces, for messages
    spec: str = ""
    conversion: str | None = None
    # `{A || B}`: read when this placeholder's own value is blank on a row, in order.
    otherwise: tuple[Placeholder, ...] = ()

    @property
    def choices(self) -> tuple[Placeholder, ...]:
        """This placeholder and each it falls back to, in order."""
        return (self, *self.otherwise)


def _placeholder(field: str, spec: str | None, conversion: str | None) -> Placeholder:
    first, *rest = field.split("||")
    if rest:
        # Each choice stripped: `{A || B}` reads as written, spaces around the bars.
        later = tuple(_placeholder(choice.strip(), None, None) for choice in rest)
        head = _placeholder(first.strip(), spec, conversion)
        return Placeholder(head.name, head.filters, field, head.spec, conversion, later)
    name, *filters = field.split("|")
    if filters:
        name = name.strip()
    return Placeholder(name, tuple(f.strip() for f in filters), field, spec or "", conversion)


def _filled(value_of: Callable[[str], str], placeholder: Placeholder) -> str:
    """The placeholder's value on one row: its first choice that is not blank."""
    value = ""
    for choice in placeholder.choices:
        value = value_of(choice.name)
        for name in choice.filters:
            value = FILTERS[name](value)
        if value.strip():
            return value
    return value


class Template:
    """A parsed template; `render` fills it from a lookup of names to values."""

    __slots__ = ("_collapsed_around_words", "_parts", "lower_case", "placeholders", "text")

    def __init__(self, text: str) -> None:
        self.text = text
        try:
            parsed = list(string.Formatter().parse(text))
        except ValueError as exc:
            raise TemplateError(str(exc)) from None
        self._parts: list[tuple[str, Placeholder | None]] = [
            (literal, None if field is None else _placeholder(field, spec, conversion))
            for literal, field, spec, conversion in parsed
        ]
        self.placeholders = tuple(p for _, p in self._parts if p is not None)
        # Every row's text is lower case (`str.lower` changes none of it): each placeholder
        # is lower-cased last (as far as case goes), and each literal is lower case. A
        # lower-cased character lower-cases to itself, so the text does as a whole
        # (tests/core/test_templates.py checks every character).
        self.lower_case = all(
            _lower_cased_last(c.filters) for p in self.placeholders for c in p.choices
        ) and all(literal == literal.lower() for literal, _ in self._parts)
        # Whether the text, each placeholder filled with a word, is collapsed already.
        shape = "".join(literal + ("" if p is None else "x") for literal, p in self._parts)
        self._collapsed_around_words = collapse_whitespace(shape) == shape

    @property
    def names(self) -> tuple[str, ...]:
        """Every name the template reads, once each, in order of first use."""
        return tuple(dict.fromkeys(c.name for p in self.placeholders for c in p.choices))

    def render(self, value_of: Callable[[str], str], *, blank_if_empty: bool = False) -> str:
        """The text with each placeholder filled; with `blank_if_empty`, "" when every
        placeholder is empty (see `on_columns`)."""
        out: list[str] = []
        filled = False
        for literal, placeholder in self._parts:
            out.append(literal)
            if placeholder is not None:
                value = _filled(value_of, placeholder)
                out.append(value)
                filled = filled or bool(value)
        if blank_if_empty and not filled:
            return ""
        return collapse_whitespace("".join(out))

    def on_columns(
        self,
        column: Callable[[str], Sequence[str]],
        rows: int,
        *,
        blank_if_empty: bool = False,
        memo: dict[tuple[str, ...], Sequence[str]] | None = None,
        words: Callable[[str], bool] | None = None,
    ) -> Sequence[str]:
        """The template rendered for `rows` rows at once; `column(name)` gives a name's value
        on every row, in order. Equals `render` row by row, at a fraction of its cost: each
        filter runs over a whole column and str.format over all of them.

        `blank_if_empty`: "" on a row whose every placeholder is empty. A field of a person
        built from columns is absent when its columns are: the top person's
        ``{Mgr First}.{Mgr Last}@example.com`` is no manager, not ``.@example.com``.

        `memo`: filtered columns by name and filters, shared by the templates over one
        export (``{Full Name|last}`` in both the name and the e-mail is filtered once).

        `words(name)`: whether a column is known to hold no whitespace on any row (an id
        column, say); a template of such words needs no whitespace pass.
        """
        memo = {} if memo is None else memo
        if not self.placeholders:
            return [self.render(str, blank_if_empty=blank_if_empty)] * rows
        values: list[Sequence[str]] = []
        all_words = True  # every placeholder's value is known to hold no whitespace
        for placeholder in self.placeholders:
            filtered, word = _filtered(placeholder, column, memo, words)
            for choice in placeholder.otherwise:
                later, later_word = _filtered(choice, column, memo, words)
                filtered = [v if v.strip() else w for v, w in zip(filtered, later, strict=True)]
                word = word and later_word
            all_words = all_words and word
            values.append(filtered)
        # Each row's pieces joined, literals included: cheaper than str.format per row.
        filling = iter(values)
        pieces: list[Iterable[str]] = []
        for literal, part in self._parts:
            if literal:
                pieces.append(repeat(literal, rows))
            if part is not None:
                pieces.append(next(filling))
        out: Sequence[str] = list(map("".join, zip(*pieces, strict=True)))
        # Words, none empty, between literals that read collapsed: the text is collapsed.
        if not (all_words and self._collapsed_around_words and all(map(all, values))):
            out = collapse_whitespace_each(out)
        # A column with a value on every row fills every row: nothing to blank (the usual
        # case, tested in C, before the per-row test).
        if blank_if_empty and not any(map(all, values)):
            filled = (
                values[0] if len(values) == 1 else list(map("".join, zip(*values, strict=True)))
            )
            out = [text if any_value else "" for text, any_value in zip(out, filled, strict=True)]
        return out


def _filtered(
    placeholder: Placeholder,
    column: Callable[[str], Sequence[str]],
    memo: dict[tuple[str, ...], Sequence[str]],
    words: Callable[[str], bool] | None,
) -> tuple[Sequence[str], bool]:
    """One choice of a placeholder over every row, its filters applied (memoised), and
    whether its every value is known to hold no whitespace."""
    key: tuple[str, ...] = (placeholder.name,)
    filtered = memo.get(key)
    if filtered is None:
        filtered = memo[key] = column(placeholder.name)
    word = words is not None and words(placeholder.name)
    for name in placeholder.filters:
        key = (*key, name)
        held = memo.get(key)
        if held is None:
            # Words keep `nospace` and `strip` from changing anything.
            unchanged = word and name in _WORD_IDENTITIES
            held = memo[key] = filtered if unchanged else COLUMN_FILTERS[name](filtered)
        word = name in _WORD_FILTERS or (word and (name in _KEEP_WORDS or held is filtered))
        filtered = held
    return filtered, word


def is_template(text: str) -> bool:
    """A setting value with braces is a template; one without is a plain column name."""
    return "{" in text or "}" in text


def template_names(text: str) -> tuple[str, ...]:
    """The names `text` reads; () when it does not parse (its validation reports that)."""
    try:
        return Template(text).names
    except TemplateError:
        return ()


def check_template(
    text: str,
    columns: Collection[str],
    *,
    where: str,
    builtins: Sequence[str] = (),
    example: str = "{Column}",
) -> list[str]:
    """Problems with `text` as a template over `columns` (and `builtins`); [] when usable.

    `where` names the setting in every message (e.g. ``mapping.team_name '{x}'``).
    """
    if not text.strip():
        return [f'{where} is empty; use e.g. "{example}"']
    try:
        template = Template(text)
    except TemplateError as exc:
        return [f"{where} is not a valid template ({exc}); write literal braces as {{{{ }}}}"]
    problems: list[str] = []
    if not template.placeholders:
        problems.append(
            f"{where} has no placeholder, so every value would be the same; use e.g. {example}"
        )
    known = set(builtins) | set(columns)
    for placeholder in (c for p in template.placeholders for c in p.choices):
        field = placeholder.written
        if placeholder.name == "" or placeholder.name.isdigit():
            problems.append(
                f"{where} has a positional placeholder {{{field}}}; name a field such as {example}"
            )
            continue
        if placeholder.spec or placeholder.conversion:
            problems.append(f"{where}: placeholder {{{field}}} takes no format spec or conversion")
        for name in placeholder.filters:
            if name not in FILTERS:
                close = difflib.get_close_matches(name, list(FILTERS), n=1, cutoff=0.6)
                hint = f"; did you mean {close[0]}?" if close else ""
                problems.append(
                    f"{where}: placeholder {{{field}}} uses the filter {name!r}, which is not "
                    f"one of {', '.join(FILTERS)}{hint}"
                )
        if placeholder.name not in known:
            close = difflib.get_close_matches(placeholder.name, sorted(known), n=1, cutoff=0.6)
            hint = f"; did you mean {{{close[0]}}}?" if close else ""
            what = (
                f"neither a built-in placeholder ({', '.join(builtins)}) nor a column"
                if builtins
                else "not a column"
            )
            problems.append(
                f"{where} uses {{{placeholder.name}}}, which is {what} of the export "
                f"({capped(sorted(columns))}){hint}"
            )
    return problems
