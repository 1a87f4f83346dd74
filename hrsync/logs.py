"""structlog setup: JSON lines or console rendering, redaction, run_id binding.

Standard-library loggers (APScheduler, httpx, alembic) go through the same
renderer, so one process writes one format. Secrets registered with
`register_secret` are masked in every rendered line, whatever field or
exception text they hide in. A console line shows control characters as escapes
(`hrsync.terminal`); a JSON line's encoding escapes them.

Every line carries what log platforms read (docs/reference/log-events.md, Format):
`timestamp`, `level`, `severity` (Google Cloud's spelling), `logger` (the module),
`event` (the stable code) and `message` (one sentence for a person, from
`hrsync.log_messages`). A library's line has its text as `message` and
`<logger>.log` as `event`.
"""

from __future__ import annotations

import functools
import io
import logging
import re
import sys
import threading
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any, Literal, TextIO

import structlog
from structlog.types import EventDict, Processor, WrappedLogger

from hrsync.log_messages import message_for, one_line
from hrsync.secret import Secret
from hrsync.terminal import escape_controls

REDACTED = "[REDACTED]"
_SENSITIVE_KEYS = re.compile(r"(token|secret|password|authorization|api_key)", re.IGNORECASE)
_BEARER = re.compile(r"(Bearer\s+)[A-Za-z0-9._~+/=-]+", re.IGNORECASE)

# Read without the lock on every string: a tuple swapped whole, never changed in place.
_secrets: tuple[str, ...] = ()
_secrets_lock = threading.Lock()
_lasting: frozenset[str] = frozenset()
# Values soon replaced (access tokens, signed assertions), newest last: only the newest
# SHORT_LIVED_KEPT stay masked, so a daemon renewing a token every hour for months does
# not check every line against thousands of dead ones.
_short_lived: tuple[str, ...] = ()
SHORT_LIVED_KEPT = 32


def register_secret(secret: Secret | str) -> None:
    """Mask this value wherever it would appear in a log line."""
    global _lasting
    value = secret.reveal() if isinstance(secret, Secret) else secret
    if len(value) >= 4:  # masking tiny strings would garble ordinary text
        forms = _forms(value)
        with _secrets_lock:
            if not forms <= _lasting:
                _lasting = _lasting | forms
                _publish()


def register_short_lived_secret(value: str) -> None:
    """Mask a value that is soon replaced (an access token, a signed assertion) wherever it
    would appear in a log line; the oldest of them are forgotten past `SHORT_LIVED_KEPT`."""
    global _short_lived
    if len(value) >= 4:
        with _secrets_lock:
            if value not in _short_lived:
                _short_lived = (*_short_lived, *_forms(value))[-SHORT_LIVED_KEPT:]
                _publish()


def _forms(value: str) -> set[str]:
    """`value`, and as a library quoting it writes it: escaped where it is not printable
    (`b'…\\n…'`)."""
    return {value, value.encode("unicode_escape").decode("ascii")}


def _publish() -> None:
    global _secrets
    # Longest first: a secret containing another is masked whole.
    _secrets = tuple(sorted(_lasting | set(_short_lived), key=len, reverse=True))


def scrub(text: str) -> str:
    """`text` with bearer tokens and registered secrets masked, for plain prints."""
    return _scrub_text(text)


def _scrub_text(text: str) -> str:
    # Cheap checks first: the regular expression runs only on a string that could hold
    # a bearer value, and `in` finds a registered secret without one. A 50,000-person
    # run logs many short strings, almost none of them secret.
    if "bearer" in text.lower():
        text = _BEARER.sub(r"\1" + REDACTED, text)
    for value in _secrets:
        if value in text:
            text = text.replace(value, REDACTED)
    return text


@functools.lru_cache(maxsize=4096)
def _sensitive_key(key: str) -> bool:
    # Keys repeat (the same few dozen field names): each is judged once.
    return _SENSITIVE_KEYS.search(key) is not None


def _scrub(value: Any) -> Any:
    if isinstance(value, str):
        return _scrub_text(value)
    if isinstance(value, Secret):
        return REDACTED
    if isinstance(value, dict):
        return {
            k: REDACTED if isinstance(k, str) and _sensitive_key(k) else _scrub(v)
            for k, v in value.items()
        }
    if isinstance(value, list | tuple):
        return [_scrub(v) for v in value]
    return value


def redact(_: WrappedLogger, __: str, event_dict: EventDict) -> EventDict:
    """Processor: mask sensitive keys, bearer tokens and registered secrets."""
    for key in list(event_dict):
        if _sensitive_key(key) and key not in ("token_kind", "auth_token_type"):
            event_dict[key] = REDACTED
        else:
            event_dict[key] = _scrub(event_dict[key])
    return event_dict


def _final_scrub(_: WrappedLogger, __: str, event_dict: EventDict) -> EventDict:
    # Runs after exception formatting: a traceback (text, or structured for JSON)
    # may quote the secret in an exception message.
    for key in ("exception", "stack"):
        if key in event_dict:
            event_dict[key] = _scrub(event_dict[key])
    return event_dict


def _scrubbed_traceback(sio: TextIO, exc_info: Any) -> None:
    # The console renderer formats exceptions itself, after every processor: the
    # traceback text is scrubbed here, as _final_scrub does for JSON.
    buffer = io.StringIO()
    structlog.dev.plain_traceback(buffer, exc_info)
    sio.write(_scrub_text(buffer.getvalue()))


def _drop_color_message(_: WrappedLogger, __: str, event_dict: EventDict) -> EventDict:
    event_dict.pop("color_message", None)
    return event_dict


def _as_text(render: Processor) -> Processor:
    """`render`, its line with every character that would steer a terminal shown as an
    escape: a console line quotes team names from DX and URLs from HR as they are."""

    def rendered(logger: WrappedLogger, name: str, event_dict: EventDict) -> Any:
        line = render(logger, name, event_dict)
        return escape_controls(line) if isinstance(line, str) else line

    return rendered


# Google Cloud Logging's LogSeverity names; Datadog and Elastic read either spelling.
_SEVERITY = {
    "debug": "DEBUG",
    "info": "INFO",
    "warning": "WARNING",
    "error": "ERROR",
    "critical": "CRITICAL",
}
# A line starts with what a person or a platform reads first; the event's fields follow.
_FIRST_FIELDS = ("timestamp", "level", "severity", "logger", "event", "message")


def _add_severity(_: WrappedLogger, __: str, event_dict: EventDict) -> EventDict:
    level = str(event_dict.get("level", ""))
    event_dict["severity"] = _SEVERITY.get(level, level.upper() or "DEFAULT")
    return event_dict


def _foreign_event(_: WrappedLogger, __: str, event_dict: EventDict) -> EventDict:
    # A library's line: its text is the message, a code named for its logger the event,
    # so `event` stays a code that alerts and facets can match.
    event_dict["message"] = str(event_dict.get("event", ""))
    event_dict["event"] = f"{event_dict.get('logger', 'unknown')}.log"
    return event_dict


def _add_message(_: WrappedLogger, __: str, event_dict: EventDict) -> EventDict:
    # After `redact`: the sentence is made from fields already scrubbed, and scrubbed
    # again (a value cut short could no longer match a registered secret whole).
    given = event_dict.get("message")
    if isinstance(given, str):
        text = one_line(given) or str(event_dict.get("event", ""))
    else:
        text = message_for(str(event_dict.get("event", "")), event_dict)
    event_dict["message"] = _scrub_text(text)
    first = {key: event_dict[key] for key in _FIRST_FIELDS if key in event_dict}
    return first | {k: v for k, v in event_dict.items() if k not in first}


def _console_event(_: WrappedLogger, __: str, event_dict: EventDict) -> EventDict:
    # A terminal shows the code (what operators grep) then the sentence, once; the
    # platform-only fields would repeat what the line already says.
    code = str(event_dict.get("event", ""))
    message = event_dict.pop("message", "")
    event_dict.pop("severity", None)
    event_dict.pop("logger", None)
    event_dict["event"] = f"{code:<28} {message}" if message and message != code else code
    return event_dict


Format = Literal["auto", "json", "console"]


def configure(
    fmt: Format = "auto",
    level: str = "info",
    stream: TextIO | None = None,
    handler: logging.Handler | None = None,
) -> None:
    """Configure structlog and the standard library to write to `stream`, or through
    `handler`, which gets each record with its event already scrubbed and worded."""
    out = stream if stream is not None else sys.stdout
    use_console = fmt == "console" or (fmt == "auto" and out.isatty())
    stamps: list[Processor] = [
        structlog.contextvars.merge_contextvars,
        structlog.stdlib.add_log_level,
        _add_severity,
        structlog.stdlib.add_logger_name,
        structlog.processors.TimeStamper(fmt="iso", utc=True),
    ]
    shared: list[Processor] = [*stamps, redact, _add_message]
    # A library's record: its extras are fields like any other, scrubbed with them.
    foreign: list[Processor] = [
        *stamps,
        structlog.stdlib.ExtraAdder(),
        _drop_color_message,
        _foreign_event,
        redact,
        _add_message,
    ]
    renderer: Processor
    if use_console:
        renderer = _as_text(
            structlog.dev.ConsoleRenderer(colors=False, exception_formatter=_scrubbed_traceback)
        )
    else:
        # json.dumps' ASCII output escapes every control and bidi character already.
        renderer = structlog.processors.JSONRenderer()
    # Tracebacks without local variables: locals may hold the token or HR data.
    exc_processors: list[Processor] = (
        []
        if use_console
        else [
            structlog.processors.ExceptionRenderer(
                structlog.tracebacks.ExceptionDictTransformer(show_locals=False)
            )
        ]
    )
    numeric_level = logging.getLevelName(level.upper())
    if not isinstance(numeric_level, int):
        numeric_level = logging.INFO

    structlog.configure(
        processors=[
            structlog.stdlib.filter_by_level,
            *shared,
            structlog.stdlib.ProcessorFormatter.wrap_for_formatter,
        ],
        logger_factory=structlog.stdlib.LoggerFactory(),
        wrapper_class=structlog.stdlib.BoundLogger,
        cache_logger_on_first_use=False,
    )
    formatter = structlog.stdlib.ProcessorFormatter(
        foreign_pre_chain=foreign,
        processors=[
            structlog.stdlib.ProcessorFormatter.remove_processors_meta,
            *exc_processors,
            _final_scrub,
            *([_console_event] if use_console else []),
            renderer,
        ],
    )
    if handler is None:
        handler = logging.StreamHandler(out)
    handler.setFormatter(formatter)
    root = logging.getLogger()
    for old in list(root.handlers):
        root.removeHandler(old)
    root.addHandler(handler)
    root.setLevel(numeric_level)
    # httpx and httpcore log full URLs and headers at INFO/DEBUG.
    for noisy in ("httpx", "httpcore"):
        logging.getLogger(noisy).setLevel(logging.WARNING)
    logging.getLogger("alembic").setLevel(max(numeric_level, logging.WARNING))
    logging.getLogger("apscheduler").setLevel(max(numeric_level, logging.INFO))


def new_run_id() -> str:
    return uuid.uuid4().hex[:12]


@contextmanager
def run_context(run_id: str, **extra: Any) -> Iterator[str]:
    """Bind `run_id` for every log line of one run; clear what an earlier run left."""
    structlog.contextvars.clear_contextvars()
    structlog.contextvars.bind_contextvars(run_id=run_id, **extra)
    try:
        yield run_id
    finally:
        structlog.contextvars.clear_contextvars()


def get_logger(name: str) -> structlog.stdlib.BoundLogger:
    logger: structlog.stdlib.BoundLogger = structlog.get_logger(name)
    return logger


__all__ = [
    "REDACTED",
    "configure",
    "get_logger",
    "new_run_id",
    "redact",
    "register_secret",
    "register_short_lived_secret",
    "run_context",
    "scrub",
]
