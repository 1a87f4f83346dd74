"""A webhook URL is a secret (Slack's and Teams' carry their credential): over plain
http:// to another machine it is not used, and the daemon says so once at start."""

from __future__ import annotations

import pytest
from structlog.testing import capture_logs

from hrsync.core.settings import NotifySettings
from hrsync.monitor.webhook import Notifier
from hrsync.store.repo import Store


def test_a_webhook_over_plain_http_is_not_used_and_said_at_start(
    store: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HOOK", "http://hooks.example.test/services/T0/B0/s3cret-path")
    with capture_logs() as logs:
        assert Notifier.configured(NotifySettings(webhook_url_env="HOOK"), store) is None
    (said,) = logs
    assert said["event"] == "notify.insecure_url" and said["log_level"] == "error"
    assert said["host"] == "hooks.example.test" and said["variable"] == "HOOK"
    assert "dx.allow_insecure_http" in said["detail"]
    assert "s3cret-path" not in str(said)
    allowed = NotifySettings(webhook_url_env="HOOK", allow_insecure_http=True)
    assert Notifier.configured(allowed, store) is not None
    for url in ("https://hooks.example.test/x", "http://127.0.0.1:9/hook"):
        monkeypatch.setenv("HOOK", url)
        assert Notifier.configured(NotifySettings(webhook_url_env="HOOK"), store) is not None
