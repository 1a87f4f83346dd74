"""The one owner of the log's cap per kind: the first N at their level, the rest at debug
(built only when debug is on), one `log.capped` summary when any went to debug."""

from __future__ import annotations

import io
import json

import pytest

from hrsync import logcap, logs


def run(level: str, cap: int, count: int) -> tuple[list[dict[str, object]], int]:
    stream = io.StringIO()
    logs.configure("json", level, stream)
    built = 0

    def fields(i: int) -> dict[str, object]:
        nonlocal built
        built += 1
        return {"i": i}

    with logcap.capped(logs.get_logger("t"), "plan.change", cap=cap) as emitter:
        for i in range(count):
            emitter.emit(fields, i, "warning")
    events = [json.loads(line) for line in stream.getvalue().splitlines()]
    return events, built


@pytest.mark.parametrize(
    ("level", "cap", "count", "warnings", "debugs", "summary", "built"),
    [
        ("info", 3, 2, 2, 0, False, 2),
        ("info", 3, 3, 3, 0, False, 3),
        ("info", 3, 10, 3, 0, True, 3),  # past the cap: not even built
        ("info", 0, 4, 0, 0, True, 0),
        ("debug", 3, 10, 3, 7, True, 10),  # at debug nothing is lost
        # The summary of capped warnings is a warning: at --log-level warning it is the
        # only word that more were left out.
        ("warning", 3, 10, 3, 0, True, 3),
    ],
)
def test_the_cap(
    level: str, cap: int, count: int, warnings: int, debugs: int, summary: bool, built: int
) -> None:
    events, made = run(level, cap, count)
    changes = [e for e in events if e["event"] == "plan.change"]
    assert [e["level"] for e in changes] == ["warning"] * warnings + ["debug"] * debugs
    assert [e["i"] for e in changes] == list(range(warnings + debugs))
    capped = [e for e in events if e["event"] == "log.capped"]
    if summary:
        (one,) = capped
        assert one["level"] == "warning" and one["kind"] == "plan.change"
        assert (one["total"], one["logged"], one["at_debug"]) == (count, cap, count - cap)
        assert one["see"] == "hrsync plan --format json"
    else:
        assert capped == []
    assert made == built


def test_the_process_cap_is_the_setting() -> None:
    before = logcap.current_cap()
    try:
        logcap.set_cap(7)
        assert logcap.Capped(logs.get_logger("t"), "x").cap == 7
        logcap.set_cap(-1)
        assert logcap.current_cap() == 0
    finally:
        logcap.set_cap(before)


def test_the_summary_of_capped_info_events_is_info() -> None:
    stream = io.StringIO()
    logs.configure("json", "info", stream)
    with logcap.capped(logs.get_logger("t"), "plan.change", cap=1) as emitter:
        for i in range(3):
            emitter.emit(lambda i: {"i": i}, i)
    events = [json.loads(line) for line in stream.getvalue().splitlines()]
    (one,) = [e for e in events if e["event"] == "log.capped"]
    assert one["level"] == "info"
