"""The `message` of each log event: every code the package emits has a sentence, every
call site carries the fields its sentence reads, and a sentence is one short line
whatever the fields hold."""

from __future__ import annotations

import ast
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from hrsync.log_messages import LIST_SHOWN, MAX_MESSAGE, MESSAGES, message_for, render, short

PACKAGE = Path(__file__).resolve().parent.parent / "hrsync"
LEVELS = frozenset({"debug", "info", "warning", "error", "critical", "exception"})


@dataclass(frozen=True)
class CallSite:
    code: str
    where: str
    # The field names the call passes; None when some come from a `**mapping`.
    fields: frozenset[str] | None


def _literals(node: ast.expr) -> list[str]:
    """The codes a first argument can be: a string, or either string of `a if c else b`."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return [node.value]
    if isinstance(node, ast.IfExp):
        return _literals(node.body) + _literals(node.orelse)
    return []


def _fields(keywords: list[ast.keyword]) -> frozenset[str] | None:
    if any(k.arg is None for k in keywords):
        return None
    return frozenset(k.arg for k in keywords if k.arg is not None)


def _is_log_call(func: ast.expr) -> bool:
    # log.info(...), logs.get_logger(x).info(...), getattr(log, level)(...)
    if isinstance(func, ast.Attribute):
        return func.attr in LEVELS
    return (
        isinstance(func, ast.Call)
        and isinstance(func.func, ast.Name)
        and (func.func.id == "getattr")
    )


def _capped_code(node: ast.expr) -> str | None:
    """The code of `capped(log, "code")` / `Capped(log, "code")` / `log_each(log, "code", …)`."""
    if not isinstance(node, ast.Call) or len(node.args) < 2:
        return None
    name = getattr(node.func, "id", None) or getattr(node.func, "attr", None)
    if name not in ("capped", "Capped", "log_each"):
        return None
    codes = _literals(node.args[1])
    return codes[0] if codes else None


def _emitted_fields(fields: ast.expr | None) -> frozenset[str] | None:
    """The keys of `lambda x: {...}` given to `emit` or `log_each`; None when not a plain
    dict."""
    if not isinstance(fields, ast.Lambda):
        return None
    body = fields.body
    if not isinstance(body, ast.Dict) or any(k is None for k in body.keys):
        return None
    keys = [k.value for k in body.keys if isinstance(k, ast.Constant)]
    return frozenset(str(k) for k in keys) if len(keys) == len(body.keys) else None


def call_sites() -> list[CallSite]:
    """Every log call of the package whose event code is a literal, found in its AST."""
    sites: list[CallSite] = []
    for path in sorted(PACKAGE.rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        where = str(path.relative_to(PACKAGE.parent))
        emitters: dict[str, str] = {}  # a Capped's variable name → its code
        for node in ast.walk(tree):
            if isinstance(node, ast.withitem) and isinstance(node.optional_vars, ast.Name):
                code = _capped_code(node.context_expr)
                if code is not None:
                    emitters[node.optional_vars.id] = code
            if isinstance(node, ast.Assign) and len(node.targets) == 1:
                target, code = node.targets[0], _capped_code(node.value)
                if isinstance(target, ast.Name) and code is not None:
                    emitters[target.id] = code
        for node in ast.walk(tree):
            if not isinstance(node, ast.Call):
                continue
            code = _capped_code(node)
            if code is not None:  # its events come through `emit`, below
                sites.append(CallSite(code, f"{where}:{node.lineno}", None))
                if getattr(node.func, "id", None) == "log_each" and len(node.args) > 3:
                    fields = _emitted_fields(node.args[3])
                    sites.append(CallSite(code, f"{where}:{node.lineno}", fields))
            if _is_log_call(node.func) and node.args:
                for code in _literals(node.args[0]):
                    sites.append(CallSite(code, f"{where}:{node.lineno}", _fields(node.keywords)))
        for node in ast.walk(tree):
            if (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Attribute)
                and node.func.attr == "emit"
                and isinstance(node.func.value, ast.Name)
                and node.func.value.id in emitters
            ):
                code = emitters[node.func.value.id]
                fields = _emitted_fields(node.args[0] if node.args else None)
                sites.append(CallSite(code, f"{where}:{node.lineno}", fields))
    return sites


SITES = call_sites()
CODES = sorted({s.code for s in SITES})


def test_the_walk_finds_the_package_s_events() -> None:
    # A walk that found nothing would pass every test below.
    assert len(CODES) > 100
    assert {"sync.finished", "plan.change", "log.capped", "db.upgraded", "db.up_to_date"} <= set(
        CODES
    )


def test_every_event_code_has_a_message_and_every_message_an_event() -> None:
    assert [c for c in CODES if c not in MESSAGES] == []
    assert sorted(set(MESSAGES) - set(CODES)) == []


@pytest.mark.parametrize(
    "site", [s for s in SITES if s.fields is not None], ids=lambda s: f"{s.code}@{s.where}"
)
def test_every_call_site_carries_the_fields_its_message_reads(site: CallSite) -> None:
    assert site.fields is not None
    # `log.capped`'s fields are named in logcap, not at the call.
    text, missing = render(site.code, dict.fromkeys(site.fields, "x"))
    assert missing == set(), f"{site.where}: {site.code} lacks {sorted(missing)} for {text!r}"


def test_no_call_site_sets_message_itself() -> None:
    # `message` is the sentence of the table; DX's own words go in `dx_message`.
    found = [s.where for s in SITES if s.fields is not None and "message" in s.fields]
    assert found == []


@pytest.mark.parametrize("code", sorted(MESSAGES))
def test_every_message_formats_without_fields(code: str) -> None:
    text = message_for(code, {})
    assert text and "\n" not in text and len(text) <= MAX_MESSAGE


EVENT = {
    "outcome": "applied",
    "exit_code": 0,
    "counts": {"create": 1, "rename": 1, "move": 0, "lead_change": 2, "archive": 1},
    "run_id": "d9d6e3e49129",
}


@pytest.mark.parametrize(
    ("code", "fields", "expected"),
    [
        (
            "sync.finished",
            EVENT,
            "sync applied: 1 created, 1 renamed, 2 lead changes, 1 archived (run d9d6e3e49129)",
        ),
        (
            "sync.finished",
            {"outcome": "in_sync", "counts": {}, "run_id": "abc"},
            "sync in_sync: DX already matches (run abc)",
        ),
        (
            "sync.finished",
            {"outcome": "planned", "dry_run": True, "counts": {"create": 3}},
            "dry run planned: 3 to create",
        ),
        (
            "sync.finished",
            {"outcome": "planned", "dry_run": True, "counts": {"lead_change": 1, "archive": 2}},
            "dry run planned: 1 lead change, 2 to archive",
        ),
        (
            "sync.finished",
            {"outcome": "refused", "reason": "would archive 6 teams (max 5)\nsecond line"},
            "sync refused: would archive 6 teams (max 5)…",
        ),
        (
            "sync.finished",
            {"outcome": "deferred", "resume_at": "2026-11-22T08:00:00+00:00", "reason": "window"},
            "sync deferred until 2026-11-22T08:00:00+00:00: window",
        ),
        (
            "sync.refused",
            {"plan_id": "3f9c2a11", "reason": "would archive 6 teams", "guards": ["archive"]},
            "sync refused plan 3f9c2a11: would archive 6 teams",
        ),
        (
            "sync.refused",
            {"plan_id": "3f9c2a11", "guards": ["archive_count", "shrink"]},
            "sync refused plan 3f9c2a11: guards archive_count, shrink",
        ),
        (
            "sync.not_in_dx",
            {"count": 5, "people": ["a@x.com", "b@x.com", "c@x.com", "d@x.com", "e@x.com"]},
            "5 people sent, not counted by DX yet: a@x.com, b@x.com, c@x.com and 2 more",
        ),
        (
            "daemon.run_skipped",
            {"trigger": "schedule", "reason": "run_in_progress"},
            "schedule run skipped: a run is still going",
        ),
        ("plan.ready", {"create": 2, "unchanged": 7}, "plan ready: 2 to create, 7 unchanged"),
        ("sync.started", {"dry_run": True, "run_id": "r1"}, "dry run started (run r1)"),
        ("not.a.code", {"detail": "what went on\nmore"}, "not.a.code: what went on…"),
        ("not.a.code", {"teams": 3}, "not.a.code"),
        ("sync.rejected", {"error": "bad"}, "DX rejected the hierarchy (bad, HTTP ?): ?"),
        # One person is a person, not "1 people"; a count not carried stays plural.
        (
            "sync.held",
            {"total": 1, "see": "hrsync plan"},
            "1 person held for a problem in their own row (see hrsync plan)",
        ),
        (
            "sync.held",
            {"total": 2, "see": "hrsync plan"},
            "2 people held for a problem in their own row (see hrsync plan)",
        ),
        (
            "mapping.people_in_no_team",
            {"total": 1, "see": "hrsync plan"},
            "1 person from the export in no team (see hrsync plan)",
        ),
        (
            "mapping.lead_left",
            {"lead_name": "Petra Kaiser", "lead": "1040", "why": "x", "people": 1},
            "Petra Kaiser (1040) left (x): nobody up the chain is kept, 1 person in no team",
        ),
        ("export.read", {"people": 1, "excluded": 0}, "export read: 1 person (0 excluded)"),
        ("export.read", {"excluded": 0}, "export read: ? people (0 excluded)"),
        ("sync.submitting", {"teams": 1}, "sending 1 team to DX"),
    ],
)
def test_messages_read_as_sentences(code: str, fields: dict[str, Any], expected: str) -> None:
    assert message_for(code, fields) == expected


def test_a_long_value_and_a_long_list_are_cut() -> None:
    assert short("x" * 500).endswith("…") and len(short("x" * 500)) <= 100
    many = short([f"p{i}" for i in range(40)])
    assert many == ", ".join(f"p{i}" for i in range(LIST_SHOWN)) + " and 37 more"
    text = message_for("export.problem", {"detail": "y" * 5000})
    assert len(text) <= MAX_MESSAGE and text.endswith("…")


def test_control_characters_never_break_the_line() -> None:
    text = message_for("sync.crashed", {"error": "a\r\nb\x1b[31mc\td\x00e\u2028f"})
    assert text.isprintable() and "\n" not in text
    assert text.startswith("the run crashed: a")


class Unprintable:
    def __str__(self) -> str:
        raise RuntimeError("a broken __str__")


def test_a_value_that_cannot_be_shown_never_raises() -> None:
    # Logging must not fail because a field's value cannot become text.
    assert message_for("sync.crashed", {"error": Unprintable()}) == "sync.crashed"


values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=400),
    lambda inner: st.lists(inner, max_size=8) | st.dictionaries(st.text(max_size=8), inner),
    max_leaves=20,
)


# Names the sentences read, so the generated fields hit their branches.
NAMES = ("detail", "error", "reason", "outcome", "counts", "people", "count", "team")
NAMES += ("plan_id", "guards", "summary", "dry_run", "run_id", "trigger", "verified")


@given(
    code=st.sampled_from([*sorted(MESSAGES), "unknown.event", ""]),
    fields=st.dictionaries(st.sampled_from(NAMES), values, max_size=8),
)
def test_any_fields_give_one_short_line(code: str, fields: dict[str, Any]) -> None:
    text = message_for(code, fields)
    assert text and len(text) <= MAX_MESSAGE
    assert text.isprintable() and text == text.strip()
