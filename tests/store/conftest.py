"""The store tests run on both databases hrsync supports: SQLite and PostgreSQL."""

from __future__ import annotations

from pathlib import Path

import pytest


@pytest.fixture(params=["sqlite", "postgresql"])
def database_url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path / 'state.db'}"
    url = request.getfixturevalue("postgres_url")
    assert isinstance(url, str)
    return url
