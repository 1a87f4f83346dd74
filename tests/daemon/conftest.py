"""The daemon tests' fixtures (a migrated SQLite store, an explicit clock, the harness)
are defined with the scheduling tests, in test_service.py; shared from here so the
other daemon test modules use the same ones."""

from tests.daemon.test_service import clock, harness, migrated_db, store

__all__ = ["clock", "harness", "migrated_db", "store"]
