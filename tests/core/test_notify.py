"""The notifier's decisions (hrsync.core.notify): one message per change of state."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta

import pytest

from hrsync.core.notify import (
    NOTIFY_ON_ALL,
    Notice,
    Observation,
    Sent,
    decide,
    message,
    observe,
)

NOW = datetime(2026, 11, 22, 6, 0, tzinfo=UTC)
DAY = 86400.0


def seen(state: str, digest: str = "d1") -> Observation:
    outcome = {"ok": "applied", "quarantined": "failed", "": "deferred"}.get(state, state)
    return Observation(state=state, digest=digest, run_id="r1", outcome=outcome)


def sent(state: str, digest: str = "d1", ago_s: float = 60) -> Sent:
    return Sent(state, digest, NOW - timedelta(seconds=ago_s))


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
