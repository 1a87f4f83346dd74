"""The people tables: who DX last verifiably took, whether DX counts them, who is held."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from hrsync.store.repo import HeldRecord, Store

NOW = datetime(2026, 11, 2, 6, 0, tzinfo=UTC)


def test_sent_people_are_kept_by_email_and_those_no_longer_sent_forgotten(store: Store) -> None:
    store.people.record_sent_people({"a@x.com": "E1", "b@x.com": "E2"}, NOW)
    store.people.set_counted({"a@x.com": (True, "led a team DX took")}, NOW)
    later = NOW + timedelta(days=1)
    store.people.record_sent_people({"a@x.com": "E1b", "c@x.com": None}, later)
    people = store.people.dx_people()
    assert sorted(people) == ["a@x.com", "c@x.com"]
    a = people["a@x.com"]
    assert (a.employee_id, a.first_sent_at, a.counted, a.evidence) == (
        "E1b",
        NOW,
        True,
        "led a team DX took",
    )
    assert people["c@x.com"].counted is None
    assert people["c@x.com"].first_sent_at == later


def test_counted_at_moves_only_when_the_verdict_changes(store: Store) -> None:
    store.people.record_sent_people({"a@x.com": "E1"}, NOW)
    store.people.set_counted({"a@x.com": (False, "ignored"), "nobody@x.com": (True, "x")}, NOW)
    store.people.set_counted({"a@x.com": (False, "ignored again")}, NOW + timedelta(hours=1))
    a = store.people.dx_people()["a@x.com"]
    assert (a.counted, a.counted_at, a.evidence) == (False, NOW, "ignored again")
    store.people.set_counted({"a@x.com": (True, "counted")}, NOW + timedelta(days=2))
    assert store.people.dx_people()["a@x.com"].counted_at == NOW + timedelta(days=2)
    assert "nobody@x.com" not in store.people.dx_people()


def test_what_a_count_says_of_people_not_known_either_way_replaces_what_it_said_before(
    store: Store,
) -> None:
    store.people.record_sent_people({"a@x.com": "E1", "u@x.com": "E2", "v@x.com": "E3"}, NOW)
    store.people.set_counted({"a@x.com": (True, "led a team")}, NOW)
    store.people.set_undecided({"u@x.com": "one of two", "v@x.com": "one of two", "a@x.com": "no"})
    assert store.people.undecided() == [("u@x.com", "one of two"), ("v@x.com", "one of two")]
    assert store.people.dx_people()["a@x.com"].evidence == "led a team"  # known verdicts stay
    store.people.set_undecided({"v@x.com": "one of one"})
    assert store.people.undecided() == [("v@x.com", "one of one")]
    store.people.set_undecided({})
    assert store.people.undecided() == []


def test_a_contradicted_verdict_is_not_known_again(store: Store) -> None:
    store.people.record_sent_people({"a@x.com": "E1"}, NOW)
    store.people.set_counted({"a@x.com": (True, "counted")}, NOW)
    store.people.forget_counted({"a@x.com": "DX counted fewer"})
    a = store.people.dx_people()["a@x.com"]
    assert (a.counted, a.evidence) == (None, "DX counted fewer")


def test_held_people_keep_their_since_while_held_and_say_what_started_and_cleared(
    store: Store,
) -> None:
    first = store.people.replace_held(
        [HeldRecord("E1", "people.csv line 3", "Work Email is empty")], NOW
    )
    assert [r.person for r in first.started] == ["E1"] and not first.cleared
    later = NOW + timedelta(days=1)
    second = store.people.replace_held(
        [
            HeldRecord("E1", "people.csv line 4", "Work Email is empty"),
            HeldRecord("E2", "people.csv line 9", "manager 'E77' matches nobody"),
        ],
        later,
    )
    assert [r.person for r in second.started] == ["E2"]
    assert {r.person: r.since for r in second.held} == {"E1": NOW, "E2": later}
    third = store.people.replace_held([], later + timedelta(days=1))
    assert sorted(r.person for r in third.cleared) == ["E1", "E2"] and not third.held
    assert store.people.held_people() == {}


def test_a_held_person_s_name_is_kept_and_follows_their_row(store: Store) -> None:
    store.people.replace_held([HeldRecord("E1", "line 3", "e-mail empty", name="Ann Lee")], NOW)
    assert store.people.held_people()["E1"].name == "Ann Lee"
    assert [r.name for r in store.people.held_notices().started] == ["Ann Lee"]
    # HR fixed the name but not the e-mail: the store says the name the row gives now.
    later = NOW + timedelta(days=1)
    store.people.replace_held([HeldRecord("E1", "line 3", "e-mail empty", name="Ann Berg")], later)
    assert store.people.held_people()["E1"].name == "Ann Berg"
    cleared = store.people.replace_held([], later + timedelta(days=1)).cleared
    assert [r.name for r in cleared] == ["Ann Berg"]


def test_a_told_hold_that_ends_waits_to_be_told_cleared(store: Store) -> None:
    store.people.replace_held([HeldRecord("E1", "people.csv line 3", "Work Email is empty")], NOW)
    pending = store.people.held_notices()
    assert [r.person for r in pending.started] == ["E1"] and not pending.cleared
    store.people.held_told(pending)
    assert not store.people.held_notices().started
    later = NOW + timedelta(days=1)
    store.people.replace_held([], later)
    assert store.people.held_people() == {}
    cleared = store.people.held_notices()
    assert [r.person for r in cleared.cleared] == ["E1"] and not cleared.held
    store.people.held_told(cleared)
    after = store.people.held_notices()
    assert (after.held, after.started, after.cleared) == ((), (), ())


def test_a_hold_never_told_that_ends_leaves_nothing_to_tell(store: Store) -> None:
    store.people.replace_held([HeldRecord("E1", "people.csv line 3", "Work Email is empty")], NOW)
    store.people.replace_held([], NOW + timedelta(hours=1))
    notices = store.people.held_notices()
    assert (notices.held, notices.started, notices.cleared) == ((), (), ())


def test_not_counted_lists_only_the_people_dx_ignored(store: Store) -> None:
    store.people.record_sent_people({"a@x.test": "1", "b@x.test": None, "c@x.test": "3"}, NOW)
    store.people.set_counted({"a@x.test": (True, "lead"), "b@x.test": (False, "ignored")}, NOW)
    (person,) = store.people.not_counted()
    assert (person.email, person.counted, person.evidence) == ("b@x.test", False, "ignored")
    assert person.counted_at == NOW


def test_the_heartbeats_counts_are_the_lists_lengths(store: Store) -> None:
    """The gauges count in the database rather than load every record each beat."""
    assert (store.people.held_count(), store.people.not_counted_count()) == (0, 0)
    store.people.record_sent_people({"a@x.test": "E1", "b@x.test": "E2", "c@x.test": None}, NOW)
    store.people.set_counted({"a@x.test": (True, "lead"), "b@x.test": (False, "ignored")}, NOW)
    store.people.set_counted({"c@x.test": (False, "ignored")}, NOW)
    store.people.replace_held(
        [HeldRecord("E1", "p.csv line 2", "x"), HeldRecord("E9", "p.csv", "y")], NOW
    )
    store.people.replace_held([HeldRecord("E1", "p.csv line 2", "x")], NOW + timedelta(hours=1))
    assert store.people.not_counted_count() == len(store.people.not_counted()) == 2
    assert store.people.held_count() == len(store.people.held_people()) == 1


def test_the_e_mail_dx_took_for_an_id_is_found_newest_first(store: Store) -> None:
    store.people.record_sent_people({"kat@old.example": "E22", "bo@x.com": "E5"}, NOW)
    # Sent under a second address as well, a day later (a rename in HR): the newer wins.
    store.people.record_sent_people(
        {"kat@old.example": "E22", "bo@x.com": "E5", "kat@new.example": "E22"},
        NOW + timedelta(days=1),
    )
    assert store.people.emails_of(["E22", "E5", "E404"]) == {
        "E22": "kat@new.example",
        "E5": "bo@x.com",
    }
    assert store.people.emails_of([]) == {}
