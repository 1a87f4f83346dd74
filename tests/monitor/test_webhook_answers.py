"""The webhook receiver's answer: hrsync needs only its status, and reads at most
`MAX_ANSWER_BYTES` of it, decoded within that cap. A receiver that answered with a gzip
bomb grew the daemon by as much as it inflated to (1.9 GB in issue 27's trial)."""

from __future__ import annotations

import gzip
import tracemalloc
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

import pytest
from structlog.testing import capture_logs

from hrsync.core.report.notify import observe
from hrsync.core.settings import NotifySettings
from hrsync.monitor.webhook import MAX_ANSWER_BYTES, Notifier
from hrsync.store.repo import Store
from tests.fakes import FakeServer, Request, Response, serve
from tests.fakes.bombs import MIB, gzip_of_zeros

NOW = datetime(2026, 11, 22, 12, 0, tzinfo=UTC)
SECRET_PATH = "/hook/T000/B000/s3cret-path"


@pytest.fixture(scope="module")
def bomb() -> bytes:
    return gzip_of_zeros(64 * MIB)


@pytest.fixture
def receiver(bomb: bytes) -> Iterator[FakeServer]:
    def answer(request: Request, base: str) -> Response:
        if request.query.get("answer") == "bomb":
            return Response(200, bomb, {"Content-Encoding": "gzip"})
        return Response(200, gzip.compress(b"ok"), {"Content-Encoding": "gzip"})

    with serve(answer) as server:
        yield server


@pytest.fixture
def store(tmp_path: Path) -> Iterator[Store]:
    opened = Store.open(f"sqlite:///{tmp_path / 'state.db'}")
    yield opened
    opened.close()


def notify(store: Store, url: str) -> tuple[bool, list[dict[str, object]], int]:
    """Whether a refused run's message was delivered, the log, and the peak memory."""
    notifier = Notifier(NotifySettings(webhook_url_env="HOOK"), store, environ={"HOOK": url})
    refused = observe("r1", "refused", quarantined=False, plan_digest="d", reason="r")
    tracemalloc.start()
    try:
        with capture_logs() as logged:
            sent = notifier.after_run(refused, NOW)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    return sent is not None, logged, peak


def test_a_small_compressed_answer_is_a_delivery(store: Store, receiver: FakeServer) -> None:
    delivered, _, _ = notify(store, f"{receiver.base_url}{SECRET_PATH}")
    assert delivered
    assert receiver.requests[-1].headers["accept-encoding"] == "gzip, deflate"


def test_a_bomb_for_an_answer_is_refused_holding_little(store: Store, receiver: FakeServer) -> None:
    delivered, logged, peak = notify(store, f"{receiver.base_url}{SECRET_PATH}?answer=bomb")
    assert peak < 16 * MIB, f"a 64 MB answer held {peak / MIB:.0f} MiB"
    assert not delivered
    assert store.notifications.state() is None  # the next run tells it again
    [failed] = [e for e in logged if e["event"] == "notify.failed"]
    assert failed["error"] == "too_large"
    detail = str(failed["detail"])
    assert "the webhook ($HOOK, named by notify.webhook_url_env) sent more than" in detail
    assert f"{MAX_ANSWER_BYTES:,} bytes (decoded)" in detail
    assert "s3cret" not in str(logged)
