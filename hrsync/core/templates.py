"""Templates over HR columns: ``{Column}`` placeholders with ``|filter`` chains (pure).

The one template engine of hrsync: `[source.fields]`, `mapping.team_name` and the
`[attributes]` table use it. A setting value is a template when it holds a brace
(`is_template`); else it is a plain column name. A template is str.format-style text: literal
text, ``{{``/``}}`` for literal braces, and named placeholders ``{Name}`` or
``{Name|filter|filter}``; no positional placeholders, format specs or conversions.
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
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass

from hrsync.core.listing import capped

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


FILTERS: Mapping[str, Callable[[str], str]] = {
    "lower": str.lower,
    "upper": str.upper,
    "strip": str.strip,
    "ascii": _ascii,
    "nospace": _nospace,
    "first": _first,
    "last": _last,
    "initial": _initial,
}


def _chain(funcs: Sequence[Callable[[str], str]]) -> Callable[[str], str]:
    """One callable for a placeholder's filters, left to right."""
    if not funcs:
        return str  # a cell is already a str: this returns it as is
    if len(funcs) == 1:
        return funcs[0]
    # Nested calls in one frame: a loop over the filters cost twice as much per row.
    if len(funcs) == 2:
        f1, f2 = funcs
        return lambda value: f2(f1(value))
    if len(funcs) == 3:
        f1, f2, f3 = funcs
        return lambda value: f3(f2(f1(value)))
    if len(funcs) == 4:
        f1, f2, f3, f4 = funcs
        return lambda value: f4(f3(f2(f1(value))))
    head, rest = _chain(funcs[:4]), _chain(funcs[4:])
    return lambda value: rest(head(value))


class TemplateError(ValueError):
    """The text is not a template at all (unbalanced braces)."""


@dataclass(frozen=True, slots=True)
class Placeholder:
    name: str  # the column or built-in it reads
    filters: tuple[str, ...]
    written: str  # as it appears between the braces, for messages
    spec: str = ""
    conversion: str | None = None


def _placeholder(field: str, spec: str | None, conversion: str | None) -> Placeholder:
    name, *filters = field.split("|")
    if filters:
        name = name.strip()
    return Placeholder(name, tuple(f.strip() for f in filters), field, spec or "", conversion)


class Template:
    """A parsed template; `render` fills it from a lookup of names to values."""

    __slots__ = ("_parts", "placeholders", "text")

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

    @property
    def names(self) -> tuple[str, ...]:
        """Every name the template reads, once each, in order of first use."""
        return tuple(dict.fromkeys(p.name for p in self.placeholders))

    def render(self, value_of: Callable[[str], str], *, blank_if_empty: bool = False) -> str:
        """The text with each placeholder filled; with `blank_if_empty`, "" when every
        placeholder is empty (see `on_cells`)."""
        out: list[str] = []
        filled = False
        for literal, placeholder in self._parts:
            out.append(literal)
            if placeholder is not None:
                value = value_of(placeholder.name)
                for name in placeholder.filters:
                    value = FILTERS[name](value)
                out.append(value)
                filled = filled or bool(value)
        if blank_if_empty and not filled:
            return ""
        return " ".join("".join(out).split())

    def on_cells(
        self, index: Mapping[str, int], *, blank_if_empty: bool = False
    ) -> Callable[[Sequence[str]], str]:
        """A renderer over rows as cells in `index`'s order, compiled once per index.

        A name `index` lacks reads position ``len(index)``: the caller appends one blank
        cell when `missing(index)` is not empty. Per row this costs one tuple index and
        one filter chain per placeholder and one str.format, no lookup by name.

        `blank_if_empty`: "" when every placeholder is empty. A field of a person built
        from columns is absent when its columns are: the top person's
        ``{Mgr First}.{Mgr Last}@example.com`` is no manager, not ``.@example.com``.
        """
        blank = len(index)
        # The literal text with "{}" for each placeholder, braces doubled back.
        pattern = "".join(
            literal.replace("{", "{{").replace("}", "}}") + ("" if p is None else "{}")
            for literal, p in self._parts
        )
        chains = tuple(
            (index.get(p.name, blank), _chain(tuple(FILTERS[f] for f in p.filters)))
            for p in self.placeholders
        )
        fill = pattern.format

        def tidy(text: str) -> str:
            # Most rendered values hold single spaces only; split-join only when needed.
            if "  " in text or text != text.strip() or not text.isprintable():
                return " ".join(text.split())
            return text

        # One or two placeholders (the usual name and e-mail templates) without the list
        # and any(): per row that was a third of the renderer's time.
        if len(chains) == 1:
            ((p1, f1),) = chains

            def render_one(cells: Sequence[str]) -> str:
                a = f1(cells[p1])
                if blank_if_empty and not a:
                    return ""
                return tidy(fill(a))

            return render_one
        if len(chains) == 2:
            (p1, f1), (p2, f2) = chains

            def render_two(cells: Sequence[str]) -> str:
                a = f1(cells[p1])
                b = f2(cells[p2])
                if blank_if_empty and not (a or b):
                    return ""
                return tidy(fill(a, b))

            return render_two

        def render(cells: Sequence[str]) -> str:
            values = [chain(cells[position]) for position, chain in chains]
            if blank_if_empty and not any(values):
                return ""
            return tidy(fill(*values))

        return render

    def missing(self, columns: Collection[str]) -> tuple[str, ...]:
        """The names this template reads that are not among `columns`, in order."""
        return tuple(name for name in self.names if name not in columns)


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
    for placeholder in template.placeholders:
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
