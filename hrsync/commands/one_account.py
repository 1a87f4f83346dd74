"""On a terminal, the report is the one account: what a command's report shows is not
also printed as log lines.

A person who runs `hrsync plan` at a terminal reads the report; the same held person as
two log lines of 400 characters above it tells them nothing more. So, at the default log
level on a terminal (no `-v`, `--log-level` or `--log-format`), the log's handler is this
one: an event a report can carry is held until the command ends, then printed, short,
only if what the command printed does not show it; any other warning or error is printed
at once, short (its sentence on one line: no fields, so no `detail=` repeating it and no
URL a field held).
Nothing at warning or above is lost; `-v` shows the log itself.

What the command printed is what went through `hrsync.commands.output` (the report, the
summary, `--out FILE`'s text).
"""

from __future__ import annotations

import logging
import re
from collections import Counter
from collections.abc import Callable, Iterable, Mapping
from typing import Any, TextIO

from hrsync.terminal import escape_controls, one_line

Event = Mapping[str, Any]


_MORE = re.compile(r" \(and \d+ more\)$")


def _problem(reason: object) -> str:
    """What a report quotes of a run's reason: its first problem, without the heading
    the reason puts before it ("export invalid: …") or the count after it."""
    text = str(reason or "")
    return _MORE.sub("", text.partition(": ")[2] or text)


def _detail(event: Event) -> Iterable[object]:
    return (event.get("detail"),)


_FIRST_OF_MANY = re.compile(r"^(?:warning: )?\d+ rows, first at ")


def _located(event: Event) -> Iterable[object]:
    """An export problem where it is: told for many rows as "N rows, first at WHERE: what",
    which the report shows by its row of the first ("WHERE: what", with a value or more
    after it), as a held person's or a grouped problem's line."""
    detail = str(event.get("detail") or "")
    where, _, what = _FIRST_OF_MANY.sub("", detail).partition(": ")
    return (where, what) if what else (detail,)


def _person(event: Event) -> Iterable[object]:
    # Who and which row: `sync`'s summary names the first held person so, and points to
    # `plan` for why; a report lists each with why.
    return (event.get("name") or event.get("person"), event.get("location"))


# Each event a report can carry, and the words that show it did: the event counts as
# shown when every one of them is in what the command printed. A count's event is shown
# by its section's heading word.
_SHOWN_BY: dict[str, Callable[[Event], Iterable[object]]] = {
    "export.warning": _detail,
    "export.problem": _located,
    "source.unreadable": _detail,
    "source.note": _detail,
    "sync.held": lambda _: ("held",),
    "sync.person_held": _person,
    "mapping.people_in_no_team": lambda _: ("in no team",),
    "mapping.person_in_no_team": _person,
    "mapping.lead_left": lambda e: (e.get("lead_name"), e.get("lead")),
    "mapping.lead_without_reports": _detail,
    "sync.deferred": lambda e: (e.get("detail") or e.get("kind"),),
    "sync.refused": lambda e: (e.get("reason"),),
    "sync.refused.would_archive": lambda e: (e.get("team"),),
    "sync.finished": lambda e: (_problem(e.get("reason")),),
}
# A count's event, and the event told for each one it counts.
_COUNTED = {
    "sync.held": "sync.person_held",
    "mapping.people_in_no_team": "mapping.person_in_no_team",
}
# Said by the command line itself, in one line, right after it is logged.
_TOLD_ELSEWHERE = frozenset({"hrsync.crashed"})


class OneAccount(logging.Handler):
    """The log handler of a command at a terminal: warnings and errors, short, and only
    those its report does not show."""

    def __init__(self, stream: TextIO) -> None:
        super().__init__(logging.WARNING)
        self.stream = stream
        self.held: list[tuple[str, Event]] = []
        self.printed: list[str] = []
        self.settled = False

    def emit(self, record: logging.LogRecord) -> None:
        try:
            event: Event = record.msg if isinstance(record.msg, dict) else {}
            code = str(event.get("event", ""))
            level = record.levelname.lower()
            if code in _TOLD_ELSEWHERE:
                return
            if code in _SHOWN_BY and not self.settled:
                self.held.append((level, event))
                return
            if event:
                self._tell(level, _sentence(event))
            else:  # a library's line: not through the structlog chain, so scrubbed here
                from hrsync.logs import scrub

                self._tell(level, scrub(record.getMessage()))
        except Exception:
            self.handleError(record)

    def note(self, text: str) -> None:
        """`text` was printed for the person (a report, a summary)."""
        self.printed.append(text)

    def settle(self) -> None:
        """At the end: each held event the printed text does not show, short."""
        held, self.held = self.held, []
        self.settled = True
        printed = "\n".join(self.printed).lower()
        untold = [(level, event) for level, event in held if not _shown(event, printed)]
        told = Counter(str(event["event"]) for _, event in untold)
        for level, event in untold:
            each = _COUNTED.get(str(event["event"]))
            if each is not None and told[each] == event.get("total"):
                continue  # every one it counts is told below: the count adds nothing
            self._tell(level, _sentence(event))

    def _tell(self, level: str, message: str) -> None:
        text = one_line(message)
        # "export warning: …" names its level already.
        if level not in text.partition(":")[0].lower():
            text = f"{level}: {text}"
        self.stream.write(escape_controls(f"hrsync: {text}") + "\n")
        self.stream.flush()


def _shown(event: Event, printed: str) -> bool:
    words = [str(w).lower() for w in _SHOWN_BY[str(event["event"])](event) if w]
    return bool(words) and all(w in printed for w in words)


def _sentence(event: Event) -> str:
    """The event's sentence, with its detail whole: a log line's sentence stops at a
    length a log viewer shows, but here it is the only account of the warning."""
    message = str(event.get("message") or event.get("event", ""))
    detail = event.get("detail")
    if message.endswith("…") and isinstance(detail, str) and len(detail) > 20:
        start = message.find(detail[:20])
        if start >= 0:
            return message[:start] + detail
    return message


_current: OneAccount | None = None


def start(stream: TextIO) -> OneAccount:
    """The handler for this command's log, remembered for `note` and `settle`."""
    global _current
    _current = OneAccount(stream)
    return _current


def active() -> bool:
    """This command's log is the one account's: only its short lines reach the terminal."""
    return _current is not None


def note(text: str) -> None:
    """`text` was printed for the person: a held event it shows is not told again."""
    if _current is not None:
        _current.note(text)


def settle() -> None:
    """The command ended: what its report did not show, short (once)."""
    global _current
    account, _current = _current, None
    if account is not None:
        account.settle()
