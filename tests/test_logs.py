"""Logging: JSON lines, stdlib loggers through the same renderer, run_id, redaction."""

from __future__ import annotations

import io
import json
import logging
import re

import structlog

from hrsync import logs
from hrsync.secret import Secret


def capture(fmt: logs.Format = "json") -> io.StringIO:
    stream = io.StringIO()
    logs.configure(fmt, "debug", stream)
    return stream


def lines(stream: io.StringIO) -> list[dict[str, object]]:
    return [json.loads(line) for line in stream.getvalue().splitlines() if line.strip()]


def test_json_lines_with_timestamp_level_event() -> None:
    out = capture()
    logs.get_logger("t").info("sync.started", teams=3)
    (line,) = lines(out)
    assert line["event"] == "sync.started" and line["level"] == "info" and line["teams"] == 3
    assert str(line["timestamp"]).endswith("Z")


def test_stdlib_loggers_use_the_same_renderer_and_httpx_is_quiet() -> None:
    out = capture()
    logging.getLogger("apscheduler.scheduler").info("Scheduler started")
    logging.getLogger("httpx").info("HTTP Request: GET https://x/teams.list")
    parsed = lines(out)
    # A library's text is the message; its event is a stable code named for its logger.
    assert [(p["event"], p["message"]) for p in parsed] == [
        ("apscheduler.scheduler.log", "Scheduler started")
    ]
    assert parsed[0]["logger"] == "apscheduler.scheduler"


PLATFORM_FIELDS = ("timestamp", "level", "severity", "logger", "event", "message")


def test_every_line_has_the_fields_log_platforms_read() -> None:
    out = capture()
    log = logs.get_logger("hrsync.sync.story")
    log.debug("plan.members", team="Platform")
    log.info("sync.finished", outcome="in_sync", exit_code=0, counts={})
    log.warning("sync.held", total=2, see="hrsync plan")
    log.error("sync.crashed", error="boom")
    log.critical("not.documented")
    logging.getLogger("alembic.runtime.migration").warning("Will assume\ntransactional DDL.")
    parsed = lines(out)
    for line in parsed:
        missing = [f for f in PLATFORM_FIELDS if not line.get(f)]
        assert missing == [], line
        assert "\n" not in str(line["message"])
    assert [p["severity"] for p in parsed] == [
        "DEBUG",
        "INFO",
        "WARNING",
        "ERROR",
        "CRITICAL",
        "WARNING",
    ]
    assert [p["logger"] for p in parsed] == ["hrsync.sync.story"] * 5 + [
        "alembic.runtime.migration"
    ]
    assert parsed[1]["message"] == "sync in_sync: DX already matches"
    assert parsed[5]["event"] == "alembic.runtime.migration.log"
    assert parsed[5]["message"] == "Will assume transactional DDL."
    # The line starts with what a person reads first, whatever the event's own fields.
    assert list(parsed[1])[:6] == list(PLATFORM_FIELDS)


def test_exception_lines_keep_their_sentence_and_their_traceback() -> None:
    out = capture()
    try:
        raise ValueError("bad value")
    except ValueError:
        logs.get_logger("t").exception("sync.crashed", error="bad value")
    (line,) = lines(out)
    assert line["message"] == "the run crashed: bad value"
    assert line["severity"] == "ERROR" and "exception" in line


def test_a_secret_never_reaches_the_message() -> None:
    secret = "msg-secret-token-5150"
    logs.register_secret(secret)
    out = capture()
    log = logs.get_logger("t")
    log.error("sync.crashed", error=f"refused with {secret}")  # the sentence quotes `error`
    log.info("export.problem", detail=f"Authorization: Bearer {secret}x")
    log.info("not.documented", detail=secret)  # the fallback quotes `detail`
    log.info("source.oauth2_token", expires_in_s=3600, token_url=f"https://{secret}/t")
    logging.getLogger("somelib").warning("token %s", secret)
    parsed = lines(out)
    assert all(secret not in str(p["message"]) for p in parsed)
    assert parsed[0]["message"] == f"the run crashed: refused with {logs.REDACTED}"
    assert secret not in out.getvalue()


def test_a_message_a_caller_gives_is_kept_on_one_line() -> None:
    out = capture()
    logs.get_logger("t").info("x", message="first\nsecond")
    (line,) = lines(out)
    assert line["message"] == "first second"


def test_run_id_bound_and_cleared() -> None:
    out = capture()
    log = logs.get_logger("t")
    with logs.run_context("run-1"):
        log.info("inside")
    log.info("outside")
    inside, outside = lines(out)
    assert inside["run_id"] == "run-1"
    assert "run_id" not in outside


def test_run_context_clears_what_an_earlier_run_left() -> None:
    out = capture()
    structlog.contextvars.bind_contextvars(run_id="stale", leftover=1)
    with logs.run_context("fresh"):
        logs.get_logger("t").info("x")
    (line,) = lines(out)
    assert line["run_id"] == "fresh" and "leftover" not in line


def test_secrets_are_masked_everywhere() -> None:
    secret = "s3cr3t-token-value-42"
    logs.register_secret(Secret(secret))
    out = capture()
    log = logs.get_logger("t")
    log.info("a", token=secret, headers={"Authorization": f"Bearer {secret}"})
    log.info("b", message=f"failed with {secret} inside", obj=Secret(secret))
    logging.getLogger("httpx").warning("Bearer %s", secret)
    try:
        raise RuntimeError(f"boom {secret}")
    except RuntimeError:
        log.exception("c")
    text = out.getvalue()
    assert secret not in text
    assert text.count(logs.REDACTED) >= 5


def test_exceptions_render_without_local_variables() -> None:
    out = capture()
    hidden = "local-variable-value"  # noqa: F841 - the point is that it is not rendered
    try:
        raise ValueError("x")
    except ValueError:
        logs.get_logger("t").exception("failed")
    assert "local-variable-value" not in out.getvalue()
    assert "ValueError" in out.getvalue()


def test_console_format_is_readable() -> None:
    out = capture("console")
    logs.get_logger("t").info("sync.started", teams=3)
    assert "sync.started" in out.getvalue() and "teams=3" in out.getvalue()
    assert not out.getvalue().lstrip().startswith("{")


# Characters a terminal acts on rather than shows (hrsync.terminal).
STEERING = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]")


def test_console_lines_show_escape_sequences_instead_of_sending_them() -> None:
    # A team named in DX's web app, a next-page link an HR API wrote: values from outside.
    out = capture("console")
    logs.get_logger("t").warning(
        "plan.change\x1b[2J",
        team="Eng \x1b[2J\x1b[H\u202eevil",
        url="https://hr.example.test/\x1b]8;;https://x.test\x07next",
        note="ok\rFAILED\x9b",
    )
    text = out.getvalue()
    assert not STEERING.search(text), repr(text)
    # Shown, whether the renderer quotes a value (repr) or not (this module).
    assert "Eng \\x1b[2J\\x1b[H\\u202eevil" in text and "ok\\rFAILED\\x9b" in text
    assert "plan.change\\x1b[2J" in text and "/\\x1b]8;;https://x.test\\x07next" in text


def test_console_tracebacks_show_escape_sequences_too() -> None:
    out = capture("console")
    try:
        raise ValueError("next page at https://hr.example.test/\x1b[2J\x07")
    except ValueError:
        logs.get_logger("t").exception("failed")
    text = out.getvalue()
    assert "ValueError" in text and "\n" in text.strip()  # a traceback keeps its lines
    assert not STEERING.search(text), repr(text)


def test_json_lines_hold_no_raw_control_character_and_the_same_values() -> None:
    out = capture("json")
    team = "a\x7fb\u202ec\x1b[2J\x9b"
    logs.get_logger("t").info("x", team=team)
    assert not STEERING.search(out.getvalue())
    (line,) = lines(out)
    assert line["team"] == team


def test_console_shows_the_sentence_after_the_code_once() -> None:
    out = capture("console")
    logs.get_logger("hrsync.sync.story").info("sync.held", total=2, see="hrsync plan")
    logging.getLogger("apscheduler.scheduler").info("Scheduler started")
    held, scheduler = out.getvalue().splitlines()
    # The code first (what operators grep), then the sentence; not the JSON-only fields.
    assert "sync.held" in held
    assert held.index("sync.held") < held.index("2 people held for a problem in their own row")
    assert "total=2" in held
    for noise in ("severity=", "message=", "logger="):
        assert noise not in held
    assert "apscheduler.scheduler.log" in scheduler and "Scheduler started" in scheduler


def test_scrub_masks_registered_secrets_and_bearer_values() -> None:
    logs.register_secret("another-secret-value-77")
    text = logs.scrub("failed: another-secret-value-77 / Authorization: Bearer abc.def")
    assert "another-secret-value-77" not in text and "abc.def" not in text
    assert text.count(logs.REDACTED) == 2


def test_a_registered_secret_is_masked_where_a_library_quotes_it_escaped() -> None:
    # An HTTP library refusing a header value of two lines quotes it as bytes, its line
    # break written `\n`: the value as registered is not in that text.
    secret = "two-line-secret-41\n# the next line"
    logs.register_secret(secret)
    text = logs.scrub(f"Illegal header value {secret.encode()!r}")
    assert "two-line-secret-41" not in text and "the next line" not in text, text


def test_console_tracebacks_are_scrubbed_too() -> None:
    secret = "console-secret-token-31"
    logs.register_secret(secret)
    out = capture("console")
    try:
        raise RuntimeError(f"boom {secret}")
    except RuntimeError:
        logs.get_logger("t").exception("failed")
        logging.getLogger("apscheduler.executors").error("job failed", exc_info=True)
    text = out.getvalue()
    assert "RuntimeError" in text and secret not in text


def test_a_registered_secret_is_scrubbed_in_every_position() -> None:
    # The cheap path (an `in` check, the regular expression only after a "bearer"
    # prefilter) must not let any placement through.
    secret = "pos-secret-Value-9x"
    logs.register_secret(secret)
    logs.register_secret(secret + "-longer")  # one secret inside another: masked whole
    out = capture()
    log = logs.get_logger("t")
    places: list[object] = [
        secret,
        f"{secret} at the start",
        f"at the end {secret}",
        f"in{secret}the middle",
        f"twice {secret} and {secret}",
        f"{secret}-longer",
        f"BEARER {secret}",
        f"bEaReR {secret}",
        [secret, {"deep": [f"x{secret}y"]}],
        (secret,),
        {"nested": {"list": [{"k": secret}]}},
    ]
    for i, value in enumerate(places):
        log.info("place", i=i, value=value)
    log.info(f"event {secret}")
    log.info("key", **{f"field_{i}": secret for i in range(3)})
    logging.getLogger("somelib").warning("%s and %s", secret, "x")
    text = out.getvalue()
    assert secret not in text and "Value-9x" not in text
    assert len(lines(out)) == len(places) + 3
    assert logs.scrub(f"-{secret}-") == f"-{logs.REDACTED}-"


def test_bearer_values_are_masked_whatever_their_case() -> None:
    for word in ("Bearer", "bearer", "BEARER", "BeArEr"):
        assert logs.scrub(f"Authorization: {word} abc.def-ghi") == (
            f"Authorization: {word} {logs.REDACTED}"
        )
    assert logs.scrub("nothing to hide here") == "nothing to hide here"


def test_short_lived_secrets_are_masked_and_only_the_newest_kept() -> None:
    tokens = [f"ya29.short-lived-token-{n:04d}" for n in range(logs.SHORT_LIVED_KEPT + 5)]
    for token in tokens:
        logs.register_short_lived_secret(token)
    newest = tokens[-logs.SHORT_LIVED_KEPT :]
    assert all(logs.scrub(f"got {t}") == f"got {logs.REDACTED}" for t in newest)
    assert logs.scrub(tokens[0]) == tokens[0]  # forgotten: a daemon's list does not grow
    logs.register_secret(tokens[1])  # a lasting secret stays, whatever rotates past it
    for n in range(logs.SHORT_LIVED_KEPT):
        logs.register_short_lived_secret(f"ya29.another-short-lived-{n:04d}")
    assert logs.scrub(tokens[1]) == logs.REDACTED


def test_a_library_s_extra_fields_are_scrubbed_too() -> None:
    secret = "extra-secret-value-64"
    logs.register_secret(secret)
    out = capture()
    logging.getLogger("somelib").warning(
        "calling", extra={"password": "plain-password-1", "url": f"https://x/?k={secret}"}
    )
    (line,) = lines(out)
    assert line["password"] == logs.REDACTED and line["url"] == f"https://x/?k={logs.REDACTED}"
