"""The attribute part of the store: confirmed values and failures, per person, at once."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from hrsync.core.attributes import Failure
from hrsync.store.attribute_values import AttributeStore
from hrsync.store.repo import Store

NOW = datetime(2026, 11, 22, 6, 0, tzinfo=UTC)


def test_confirmed_values_are_kept_per_person_and_attribute(store: Store) -> None:
    attributes = AttributeStore(store)
    assert attributes.confirmed() == {} and attributes.failures() == {}
    attributes.record("ada@x.test", {"Location": "Berlin", "Level": "L5"}, NOW)
    attributes.record("ben@x.test", {"Location": "Paris"}, NOW)
    attributes.record("ada@x.test", {"Location": "Rome"}, NOW + timedelta(days=1))
    assert attributes.confirmed() == {
        "ada@x.test": {"Location": "Rome", "Level": "L5"},
        "ben@x.test": {"Location": "Paris"},
    }


def test_a_failure_is_kept_until_the_person_succeeds(store: Store) -> None:
    attributes = AttributeStore(store)
    first = Failure("user_not_found", NOW, "d1")
    attributes.record("gone@x.test", {}, NOW, failure=first)
    assert attributes.failures() == {"gone@x.test": first}
    later = Failure("not listed", NOW + timedelta(days=1), "d2")
    attributes.record("gone@x.test", {"Level": "L2"}, later.failed_at, failure=later)
    assert attributes.failures() == {"gone@x.test": later}
    assert attributes.confirmed() == {"gone@x.test": {"Level": "L2"}}
    assert attributes.failures()["gone@x.test"].failed_at.tzinfo is not None
    attributes.record("gone@x.test", {"Location": "Oslo"}, NOW + timedelta(days=2))
    assert attributes.failures() == {}
    attributes.forget()
    assert attributes.confirmed() == {} and attributes.failures() == {}


def test_each_answer_is_committed_on_its_own(store: Store, database_url: str) -> None:
    AttributeStore(store).record("ada@x.test", {"Location": "Berlin"}, NOW)
    # Another connection (a restarted process) sees it at once.
    other = Store.open(database_url)
    try:
        assert AttributeStore(other).confirmed() == {"ada@x.test": {"Location": "Berlin"}}
    finally:
        other.close()
