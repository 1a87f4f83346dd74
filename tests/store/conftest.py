"""The state store's fixture, shared by its tests."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from hrsync.store.repo import Store


@pytest.fixture
def store(database_url: str) -> Iterator[Store]:
    # database_url (tests/conftest.py): every test using it runs on SQLite and PostgreSQL.
    s = Store.open(database_url)
    yield s
    s.close()
