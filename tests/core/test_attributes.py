"""Tests for hrsync/core/attributes.py: values, changes, guard, retries, DX's answer."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from hypothesis import given
from hypothesis import strategies as st

from hrsync.core.attributes import (
    RETRY_AFTER,
    AttributePlan,
    Failure,
    Progress,
    column_problems,
    compile_sources,
    desired_values,
    guard,
    more_serious,
    names_unknown_user,
    plan_attributes,
    read_result,
    refused_every,
    source_columns,
    values_digest,
)
from hrsync.core.people import export_columns
from tests.strategies import make_person

NOW = datetime(2026, 11, 22, 12, 0, tzinfo=UTC)
ENTRIES = {"Location": "{Office}", "Level": "Job Level", "Cost center": "{Cost Center|strip}"}
NAMES = tuple(ENTRIES)


def plan(
    desired: dict[str, dict[str, str]],
    confirmed: dict[str, dict[str, str]] | None = None,
    failures: dict[str, Failure] | None = None,
    now: datetime = NOW,
) -> AttributePlan:
    return plan_attributes(desired, confirmed or {}, failures or {}, now, NAMES)


# ---------------------------------------------------------------- values


def test_columns_and_templates_render_per_person() -> None:
    sources = compile_sources(ENTRIES)
    people = [
        make_person(
            "E1",
            "Ada",
            None,
            "Eng",
            email="ada@x.test",
            extra={"Office": "Berlin  Mitte", "Job Level": "L5", "Cost Center": " CC-1 "},
        ),
        make_person("E2", "Ben", "E1", "Eng", email="ben@x.test", extra={"Office": "Paris"}),
    ]
    assert desired_values(people, sources, clear_empty=False) == {
        "ada@x.test": {"Location": "Berlin Mitte", "Level": "L5", "Cost center": "CC-1"},
        "ben@x.test": {"Location": "Paris"},  # empty values are not sent
    }
    assert desired_values(people, sources, clear_empty=True)["ben@x.test"] == {
        "Location": "Paris",
        "Level": "",
        "Cost center": "",
    }
    assert source_columns(sources) == ("Office", "Job Level", "Cost Center")


@pytest.mark.parametrize(
    ("columns", "fragment"),
    [
        (["Offices", "Job Level", "Cost Center"], "did you mean {Offices}?"),
        (["Office", "Level", "Cost Center"], "attributes.Level reads the column 'Job Level'"),
        (
            ["Office", "Job Level"],
            "attributes.Cost center '{Cost Center|strip}' uses {Cost Center}",
        ),
    ],
)
def test_a_column_the_export_lacks_is_a_problem(columns: list[str], fragment: str) -> None:
    problems = column_problems(compile_sources(ENTRIES), columns)
    assert len(problems) == 1 and fragment in problems[0], problems


def test_column_problems_cap_the_columns_they_list() -> None:
    columns = [f"col{i:05d}" for i in range(50_000)]
    [problem] = column_problems(compile_sources({"Level": "Job Level"}), columns)
    assert "col00019 and 49980 more" in problem and len(problem) < 1000


# ---------------------------------------------------------------- changes


def test_first_run_sends_everyone_and_is_exempt_from_the_guard() -> None:
    desired = {f"p{i}@x.test": {"Location": f"City {i}"} for i in range(10)}
    first = plan(desired)
    assert [c.email for c in first.changes] == sorted(desired)
    assert first.unchanged == 0 and guard(first, 0.3) == []
    assert first.counts[0].new == 10 and first.counts[0].changed == 0


@pytest.mark.parametrize(
    ("desired", "confirmed", "sent"),
    [
        ({"Location": "Berlin"}, {"Location": "Berlin"}, None),
        ({"Location": "Paris"}, {"Location": "Berlin"}, {"Location": "Paris"}),
        ({"Location": "Paris", "Level": "L5"}, {"Location": "Paris"}, {"Level": "L5"}),
        # An attribute DX holds but the export leaves empty is not touched...
        ({}, {"Location": "Berlin"}, None),
        # ...unless clear_empty made it a desired "".
        ({"Location": ""}, {"Location": "Berlin"}, {"Location": ""}),
        ({"Location": ""}, {}, {"Location": ""}),
    ],
)
def test_only_changed_values_are_sent(
    desired: dict[str, str], confirmed: dict[str, str], sent: dict[str, str] | None
) -> None:
    result = plan({"a@x.test": desired}, {"a@x.test": confirmed})
    if sent is None:
        assert result.changes == () and result.unchanged == 1
    else:
        [change] = result.changes
        assert dict(change.values) == sent


def test_counts_per_attribute() -> None:
    desired = {
        "a@x.test": {"Location": "Paris", "Level": ""},
        "b@x.test": {"Location": "Rome"},
        "c@x.test": {"Location": "Oslo"},
    }
    confirmed = {
        "a@x.test": {"Location": "Berlin", "Level": "L3"},
        "b@x.test": {"Location": "Rome"},
    }
    location, level, cost = plan(desired, confirmed).counts
    assert (location.new, location.changed, location.confirmed) == (1, 1, 2)
    assert location.examples == ("a@x.test: 'Berlin' -> 'Paris'",)
    assert (level.changed, level.cleared, level.confirmed) == (1, 1, 1)
    assert (cost.new, cost.changed, cost.confirmed) == (0, 0, 0)


_values = st.dictionaries(
    st.sampled_from(NAMES), st.sampled_from(["", "Berlin", "Paris", "L5"]), max_size=3
)
_people = st.dictionaries(st.sampled_from([f"p{i}@x.test" for i in range(8)]), _values)


@given(_people, _people)
def test_applying_the_changes_gives_the_desired_values_and_then_nothing(
    desired: dict[str, dict[str, str]], confirmed: dict[str, dict[str, str]]
) -> None:
    first = plan(desired, confirmed)
    after = {email: dict(values) for email, values in confirmed.items()}
    for change in first.changes:
        after.setdefault(change.email, {}).update(change.values)
    for email, values in desired.items():
        assert {k: after.get(email, {}).get(k) for k in values} == values
    second = plan(desired, after)
    assert second.changes == () and second.unchanged == len(desired)
    assert first.unchanged + len(first.changes) == len(desired)


# ---------------------------------------------------------------- guard


def _moved(share: int, total: int = 10) -> AttributePlan:
    confirmed = {f"p{i}@x.test": {"Location": "Berlin"} for i in range(total)}
    desired = {
        f"p{i}@x.test": {"Location": "Paris" if i < share else "Berlin"} for i in range(total)
    }
    return plan(desired, confirmed)


def test_guard_trips_above_the_fraction_naming_the_attribute_and_examples() -> None:
    assert guard(_moved(3), 0.3) == []
    [reason] = guard(_moved(4), 0.3)
    assert "attribute 'Location' would change 4 of 10 confirmed values (40%" in reason
    assert "p0@x.test: 'Berlin' -> 'Paris'" in reason
    [reason] = guard(_moved(10), 0.3)
    assert "and 5 more" in reason


def test_guard_never_trips_on_one_value_and_counts_new_values_as_no_change() -> None:
    assert guard(_moved(1, total=2), 0.3) == []
    confirmed = {"p0@x.test": {"Location": "Berlin"}}
    desired = {f"p{i}@x.test": {"Location": "Berlin", "Level": "L5"} for i in range(10)}
    assert guard(plan(desired, confirmed), 0.0) == []


def test_a_renamed_column_in_the_template_trips_the_guard_when_values_are_cleared() -> None:
    confirmed = {f"p{i}@x.test": {"Location": "Berlin"} for i in range(10)}
    cleared = {f"p{i}@x.test": {"Location": ""} for i in range(10)}  # clear_empty = true
    [reason] = guard(plan(cleared, confirmed), 0.3)
    assert "would change 10 of 10" in reason


# ---------------------------------------------------------------- retries


def test_a_failed_person_waits_for_changed_values_or_a_day() -> None:
    desired = {"gone@x.test": {"Location": "Berlin"}}
    failure = Failure("invalid_value: Berlin", NOW, values_digest(desired["gone@x.test"]))
    held = plan(desired, failures={"gone@x.test": failure}, now=NOW + timedelta(hours=23))
    assert held.changes == ()
    assert [(h.email, h.retry_at) for h in held.held] == [("gone@x.test", NOW + RETRY_AFTER)]
    after_a_day = plan(desired, failures={"gone@x.test": failure}, now=NOW + RETRY_AFTER)
    assert [c.email for c in after_a_day.changes] == ["gone@x.test"]
    moved = {"gone@x.test": {"Location": "Paris"}}
    changed = plan(moved, failures={"gone@x.test": failure}, now=NOW + timedelta(minutes=1))
    assert [c.email for c in changed.changes] == ["gone@x.test"]


# ---------------------------------------------------------------- DX's answer


def test_dx_confirms_what_it_lists_with_the_value_sent() -> None:
    sent = {"Location": "Berlin", "Level": "L5"}
    user = {
        "attributes": [
            {"name": "Location", "value": "Berlin", "updated": True},
            {"name": "Level", "value": "L5", "updated": False},
        ],
        "failures": [],
    }
    result = read_result(sent, user)
    assert result.ok and dict(result.confirmed) == sent


@pytest.mark.parametrize(
    ("user", "confirmed", "fragment"),
    [
        (
            {
                "attributes": [{"name": "Location", "value": "Berlin"}],
                "failures": [{"name": "Level", "error": "invalid"}],
            },
            {"Location": "Berlin"},
            "'error': 'invalid'",
        ),
        (
            {"attributes": [{"name": "Location", "value": "Berlin"}]},
            {"Location": "Berlin"},
            "'Level'",
        ),
        (
            {"attributes": [{"name": "Location", "value": "BERLIN"}, {"name": "Level"}]},
            {"Level": "L5"},
            "Location: DX holds 'BERLIN', not the 'Berlin' sent",
        ),
        ({}, {}, "DX's answer does not list 'Location', 'Level'"),
    ],
)
def test_anything_dx_does_not_confirm_is_a_failure(
    user: dict[str, object], confirmed: dict[str, str], fragment: str
) -> None:
    result = read_result({"Location": "Berlin", "Level": "L5"}, user)
    assert not result.ok
    assert dict(result.confirmed) == confirmed
    assert any(fragment in p for p in result.problems), result.problems


# ---------------------------------------------------------------- outcome, progress


@pytest.mark.parametrize(
    ("hierarchy", "attributes", "worst"),
    [
        ("applied", "refused", "refused"),
        ("applied", "applied", "applied"),
        ("in_sync", "skipped", "in_sync"),
        ("deferred", "applied", "deferred"),
        ("deferred", "refused", "refused"),
        ("refused", "rejected", "rejected"),
        ("unverified", "refused", "refused"),
        ("rejected", "failed", "failed"),
        ("failed", "rejected", "failed"),
        ("planned", "planned", "planned"),
    ],
)
def test_the_more_serious_outcome_wins(hierarchy: str, attributes: str, worst: str) -> None:
    assert more_serious(hierarchy, attributes) == worst


def test_progress_every_tenth_or_minute() -> None:
    progress = Progress(total=100, started=NOW)
    assert not progress.due(5, NOW + timedelta(seconds=1))
    assert progress.due(10, NOW + timedelta(seconds=2))
    assert not progress.due(15, NOW + timedelta(seconds=3))
    assert progress.due(16, NOW + timedelta(seconds=63))  # a minute since the last line
    assert progress.due(20, NOW + timedelta(seconds=64))
    assert not progress.due(100, NOW + timedelta(seconds=99))  # the end is logged anyway
    short = Progress(total=99, started=NOW)
    assert not any(short.due(done, NOW + timedelta(minutes=done)) for done in range(99))


def test_export_columns_are_every_column_of_every_row() -> None:
    people = [
        make_person("E1", "Ada", None, "Eng", extra={"Office": "Berlin"}),
        make_person("E2", "Ben", "E1", "Eng", extra={"Floor": "3"}),
    ]
    columns = export_columns(people)
    assert {"Office", "Floor", "Work Email"} <= columns


def test_long_values_are_cut_short_in_messages() -> None:
    long = "x" * 70_000
    confirmed = {f"p{i}@x.test": {"Location": "Berlin"} for i in range(4)}
    desired = {f"p{i}@x.test": {"Location": long} for i in range(4)}
    [reason] = guard(plan(desired, confirmed), 0.3)
    assert len(reason) < 1000 and "…" in reason
    result = read_result(
        {"Location": "Berlin"}, {"attributes": [{"name": "Location", "value": long}]}
    )
    assert len(result.problems[0]) < 200


# ---------------------------------------------------------------- people DX does not count


def waiting_of(result: AttributePlan) -> list[tuple[str, datetime]]:
    return [(w.email, w.retry_at) for w in result.waiting]


def test_a_person_dx_does_not_count_waits_whatever_their_values() -> None:
    desired = {"new@x.test": {"Location": "Lisbon"}, "old@x.test": {"Location": "Berlin"}}
    since = NOW - timedelta(hours=2)
    result = plan_attributes(desired, {}, {}, NOW, NAMES, not_users={"new@x.test": since})
    assert [c.email for c in result.changes] == ["old@x.test"]
    assert waiting_of(result) == [("new@x.test", since + RETRY_AFTER)]
    assert result.held == ()
    # A day later they are asked again, in case they joined DX unnoticed.
    later = plan_attributes(
        desired, {}, {}, since + RETRY_AFTER, NAMES, not_users={"new@x.test": since}
    )
    assert [c.email for c in later.changes] == ["new@x.test", "old@x.test"]


@pytest.mark.parametrize("error", ["user_not_found: no user", "users_not_found", "unknown_user"])
def test_an_answer_naming_an_unknown_user_makes_them_wait_not_held(error: str) -> None:
    desired = {"new@x.test": {"Location": "Lisbon"}}
    failure = Failure(error, NOW, values_digest(desired["new@x.test"]))
    moved = {"new@x.test": {"Location": "Paris"}}  # changed values do not send them either
    for values in (desired, moved):
        result = plan(values, failures={"new@x.test": failure}, now=NOW + timedelta(hours=1))
        assert waiting_of(result) == [("new@x.test", NOW + RETRY_AFTER)]
        assert result.changes == () and result.held == ()


def test_a_person_dx_counts_now_is_sent_at_once_despite_an_old_unknown_user_answer() -> None:
    desired = {"new@x.test": {"Location": "Lisbon"}}
    failure = Failure("user_not_found", NOW, values_digest(desired["new@x.test"]))
    result = plan_attributes(desired, {}, {"new@x.test": failure}, NOW, NAMES, users={"new@x.test"})
    assert [c.email for c in result.changes] == ["new@x.test"] and result.waiting == ()


@pytest.mark.parametrize(
    ("error", "unknown"),
    [
        ("user_not_found", True),
        ("User_Not_Found: x", True),
        ("unknown_user_email", True),
        ("invalid_value", False),
        ("not_found", False),
        ("", False),
        (None, False),
    ],
)
def test_which_errors_name_an_unknown_user(error: str | None, unknown: bool) -> None:
    assert names_unknown_user(error) is unknown


@pytest.mark.parametrize(
    ("sent", "updated", "refused", "unknown", "known", "fails"),
    [
        (1, 0, 1, 0, 0, False),  # a lone refusal
        (4, 0, 4, 0, 0, False),
        (5, 0, 5, 0, 0, True),  # a setting: DX takes the values of nobody
        (37, 0, 37, 0, 30, True),  # ... even from people it confirmed before
        (37, 1, 36, 0, 0, False),
        (5, 0, 4, 0, 0, False),  # one answered with a value DX did not confirm
        (0, 0, 0, 0, 0, False),
        (37, 0, 0, 37, 0, True),  # DX knows none of the export's e-mails: another domain?
        (5, 0, 0, 5, 32, False),  # five new hires; DX confirmed 32 others of the export
        (5, 0, 3, 2, 32, False),  # new hires beside people it refused: theirs, not a setting
        (5, 0, 3, 2, 0, True),
    ],
)
def test_every_person_refused_is_a_setting_only_from_five_sent(
    sent: int, updated: int, refused: int, unknown: int, known: int, fails: bool
) -> None:
    assert refused_every(sent, updated, refused, unknown=unknown, known=known) is fails
