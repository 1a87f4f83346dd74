"""The paragraph `hrsync sync` ends with on a terminal: one per outcome, one paragraph."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from hrsync.commands.summary import human_summary
from hrsync.core.confirmation.dx_users import Undecided
from hrsync.core.gate.plan import Create, Plan
from hrsync.outcome import Outcome
from hrsync.sync.results import Planned, Reading, SyncResult, Uncounted

PLAN = Plan(
    changes=(Create("r1", "Data", None, None, "a@example.com", 3),),
    drift=(),
    payload_digest="x",
    desired_count=12,
    payload_bytes=100,
)
PLANNED = Planned(PLAN, reading=Reading(40))


@pytest.mark.parametrize(
    ("outcome", "extra", "phrases"),
    [
        # The words of the log and the plan: done when applied, to do when not.
        (Outcome.APPLIED, {}, ["Applied: 1 created (12 teams from 40 people)", "verified"]),
        (Outcome.IN_SYNC, {}, ["In sync", "Nothing to do"]),
        (
            Outcome.PLANNED,
            {},
            ["Planned, nothing sent: 1 to create (", "`hrsync --config c.toml sync`"],
        ),
        (
            Outcome.DEFERRED,
            {"resume_at": datetime(2030, 6, 1, 7, 0, tzinfo=UTC), "reason": "snapshot window"},
            ["Deferred", "snapshot window", "2030-06-01T07:00+00:00"],
        ),
        (
            Outcome.REFUSED,
            {"reason": "would archive 9 teams", "action": "hrsync sync --allow-archive 9"},
            ["Refused, nothing sent", "would archive 9 teams", "`hrsync sync --allow-archive 9`"],
        ),
        (Outcome.REFUSED, {"reason": "export invalid"}, ["Fix the export or the settings"]),
        (Outcome.UNVERIFIED, {}, ["Sent but not verified", "again later"]),
        (Outcome.REJECTED, {"reason": "missing scope"}, ["Rejected by DX", "missing scope"]),
        (Outcome.FAILED, {"reason": "boom"}, ["Failed", "boom", "check"]),
    ],
)
def test_one_paragraph_per_outcome(
    outcome: Outcome, extra: dict[str, object], phrases: list[str]
) -> None:
    result = SyncResult(
        "run1",
        outcome,
        counts=PLAN.counts,
        planned=PLANNED,
        **extra,  # type: ignore[arg-type]
    )
    text = human_summary(result, "c.toml")
    assert "\n" not in text and text.endswith(f"(run run1, exit {outcome.exit_code})")
    for phrase in phrases:
        assert phrase in text


def test_a_deferral_with_no_daemon_running_says_who_tries_again() -> None:
    when = datetime(2030, 6, 1, 7, 0, tzinfo=UTC)
    result = SyncResult(
        "run1", Outcome.DEFERRED, counts=PLAN.counts, planned=PLANNED, resume_at=when,
        reason="snapshot s-1 is live (not completed)", defer_kind="snapshot_live",
    )  # fmt: skip
    running = human_summary(result, "c.toml", daemon_seen=True)
    assert "The daemon tries again at 2030-06-01T07:00+00:00" in running
    stopped = human_summary(result, "c.toml", daemon_seen=False)
    assert "The daemon" not in stopped
    assert (
        "No daemon runs to try again (`hrsync --config c.toml run`): run "
        "`hrsync --config c.toml sync` after 2030-06-01T07:00+00:00"
    ) in stopped


def test_a_run_stopped_while_verifying_does_not_say_nothing_was_sent() -> None:
    result = SyncResult(
        "run1", Outcome.DEFERRED, counts=PLAN.counts, planned=PLANNED,
        resume_at=datetime(2030, 6, 1, 7, 0, tzinfo=UTC),
        reason="shutting down during verification; the next start verifies",
        defer_kind="stopped_verifying",
    )  # fmt: skip
    text = human_summary(result, "c.toml")
    assert "nothing sent" not in text
    assert text.startswith(
        "Sent, not verified yet: 1 to create (12 teams from 40 people); DX accepted it and "
        "the run stopped while verifying."
    )
    assert "the next run verifies it before sending anything" in text


@pytest.mark.parametrize("hierarchy", [Outcome.APPLIED, Outcome.IN_SYNC])
def test_an_attribute_step_that_needs_a_person_is_not_nothing_to_do(hierarchy: Outcome) -> None:
    from hrsync.core.attributes import AttributeOutcome
    from hrsync.sync.results import AttributeResult

    why = (
        "attributes refused, nothing sent: Location 40% of confirmed values change. "
        "If these changes are intended, run once: hrsync sync --allow-attribute-changes"
    )
    result = SyncResult(
        "run1",
        hierarchy,
        counts=PLAN.counts,
        planned=PLANNED,
        reason=why,  # what with_attributes sets when the hierarchy had none
        attributes=AttributeResult(AttributeOutcome.REFUSED, reason=why),
    )
    text = human_summary(result, "c.toml")
    assert "\n" not in text and text.endswith("(run run1, exit 4)")
    assert "User attributes: refused" in text
    assert "hrsync sync --allow-attribute-changes" in text
    assert "Nothing to do" not in text


def test_held_people_are_named_in_the_paragraph_with_where_to_see_them() -> None:
    from hrsync.core.people import HeldPerson
    from hrsync.core.teams.held import Hold

    carl = HeldPerson(
        41, "people.csv line 42", "E901", "", "Carl", None, "E002", True, True, (), {}
    )
    result = SyncResult(
        "r1",
        Outcome.APPLIED,
        planned=Planned(PLAN, reading=Reading(40, holds=(Hold(carl, None, None, (), ()),))),
    )
    text = human_summary(result, "c.toml")
    assert "1 person is held" in text and "Carl (E901), people.csv line 42" in text
    assert "`hrsync --config c.toml plan` lists them" in text


def test_applied_names_people_dx_does_not_count_and_what_cannot_be_told_yet() -> None:
    result = SyncResult(
        "run1",
        Outcome.APPLIED,
        counts={"create": 1},
        planned=PLANNED,
        uncounted=Uncounted(
            ("nina@example.com",),
            (Undecided("Platform", 4, 3, 1, ("olga@example.com", "yuki@e.com")),),
        ),
    )
    text = human_summary(result)
    assert "DX does not count 1 of the people sent" in text and "nina@example.com" in text
    assert (
        "DX does not count 1 of 4 sent to 'Platform'; it cannot tell yet which of 2: "
        "olga@example.com, yuki@e.com." in text
    )
    assert "\n" not in text


def test_a_failed_run_on_a_terminal_says_where_its_log_is() -> None:
    # On a terminal only the short warning and error lines are above the summary, not the
    # log: the summary says how to see it.
    result = SyncResult("run1", Outcome.FAILED, counts=PLAN.counts, planned=PLANNED, reason="boom")
    short = human_summary(result, "c.toml", log_shown=False)
    assert "the log above" not in short
    assert "`hrsync --config c.toml sync -v` shows the run's log" in short
    assert "`hrsync --config c.toml history`" in short
    assert "See the log above" in human_summary(result, "c.toml")  # the log is shown
