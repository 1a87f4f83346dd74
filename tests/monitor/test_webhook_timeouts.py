"""The webhook's time limits: a receiver that answers one byte at a time held the daemon's
run thread for as long as it liked (62 s in a trial; each byte restarted httpx's read
timeout), where docs/how-to/monitoring.md promises about 7 s at most."""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path

import pytest

from hrsync import logs
from hrsync.core.report.notify import observe
from hrsync.core.settings import NotifySettings
from hrsync.monitor.webhook import Notifier
from hrsync.store.repo import Store

NOW = datetime(2026, 11, 22, 12, 0, tzinfo=UTC)


@contextmanager
def trickling_receiver() -> Iterator[str]:
    """A webhook that reads the POST, then sends its answer a byte every 0.2 s (~20 s)."""
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen()
    stop = threading.Event()

    def serve() -> None:
        conn, _ = server.accept()
        with conn:
            conn.recv(65536)
            for byte in b"HTTP/1.1 200 OK\r\nX-Slow: " + b"a" * 100:
                if stop.is_set():
                    return
                try:
                    conn.send(bytes([byte]))
                except OSError:
                    return
                stop.wait(0.2)

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.getsockname()[1]}/hook/s3cret-path"
    finally:
        stop.set()
        server.close()
        thread.join(2)


def test_a_webhook_that_trickles_its_answer_is_given_up_at_the_deadline(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    logs.configure("json", "info", None)
    store = Store.open(f"sqlite:///{tmp_path / 'state.db'}")
    try:
        with trickling_receiver() as url:
            notifier = Notifier(
                NotifySettings(webhook_url_env="HOOK"),
                store,
                environ={"HOOK": url},
                deadline_s=0.6,
            )
            started = time.monotonic()
            sent = notifier.after_run(
                observe("r1", "refused", quarantined=False, plan_digest="d", reason="r"), NOW
            )
            took = time.monotonic() - started
        assert sent is None
        assert took < 1.5, f"the run thread was held {took:.1f} s"
        assert store.notifications.state() is None  # not delivered: the next run tries again
    finally:
        store.close()
    out = capsys.readouterr()
    assert '"notify.failed"' in out.out + out.err
    assert "deadline" in out.out + out.err
    assert "s3cret-path" not in out.out + out.err
