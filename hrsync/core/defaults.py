"""Defaults read without loading the settings: `hrsync healthcheck`'s cheap probe runs
every few seconds, and building the settings' dataclasses costs it ~20 ms. The settings
(`hrsync.core.settings`) take these same values, so each has one owner."""

from __future__ import annotations

DATABASE_URL = "sqlite:///hrsync.db"
HEALTHCHECK_MAX_AGE_S = 120.0
QUARANTINE_ALERT_S = 86400.0
