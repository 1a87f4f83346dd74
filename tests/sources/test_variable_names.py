"""A value pasted where a source setting names an environment variable (issue 27, finding
4): the loader refuses it (tests/config/test_secret_values.py), and the readers, given
such settings all the same (built in code), name the setting without the value."""

from __future__ import annotations

from pathlib import Path

import pytest
from structlog.testing import capture_logs

from hrsync.config.loading import SourceSettings
from hrsync.core.settings import (
    GoogleServiceAccountSettings,
    NotifySettings,
    OAuth2Settings,
)
from hrsync.monitor.webhook import Notifier
from hrsync.sources.base import SourceError
from hrsync.sources.open import open_export
from hrsync.store.repo import Store

# Nothing the log's own redaction knows the shape of: only not echoing hides it.
PASTED = "hunter2 correct horse battery"
URL = "http://127.0.0.1:9/people.csv"  # never reached: the credentials fail first


@pytest.mark.parametrize(
    ("settings", "key"),
    [
        (
            SourceSettings(url=URL, headers={"Authorization": PASTED}),
            "source.headers.Authorization",
        ),
        (
            SourceSettings(url=URL, username_env=PASTED, password_env="P"),
            "source.username_env",
        ),
        (
            SourceSettings(url=URL, username_env="U", password_env=PASTED),
            "source.password_env",
        ),
        (SourceSettings(url=URL, headers={"X-Api-Key": PASTED}), "source.headers.X-Api-Key"),
        (
            SourceSettings(
                url=URL,
                oauth2=OAuth2Settings(
                    token_url="http://127.0.0.1:9/token",
                    client_id_env="I",
                    client_secret_env=PASTED,
                ),
            ),
            "source.oauth2.client_secret_env",
        ),
        (
            SourceSettings(
                url=URL,
                google_service_account=GoogleServiceAccountSettings(
                    key_file_env=PASTED, scopes=("s",)
                ),
            ),
            "source.google_service_account.key_file_env",
        ),
    ],
)
def test_a_reader_names_the_setting_not_the_value(settings: SourceSettings, key: str) -> None:
    with capture_logs() as logs, pytest.raises(SourceError) as caught:
        open_export(settings, environ={"U": "user", "P": "password", "I": "client"})
    message = str(caught.value)
    assert key in message
    assert "hunter2" not in message and "hunter2" not in repr(logs)


def test_the_webhook_names_its_setting_not_the_value(tmp_path: Path) -> None:
    store = Store.open(f"sqlite:///{tmp_path / 'state.db'}")
    try:
        with capture_logs() as logs:
            Notifier.configured(NotifySettings(webhook_url_env=PASTED), store)
    finally:
        store.close()
    assert [e["event"] for e in logs] == ["notify.no_url"]
    assert "hunter2" not in repr(logs)
