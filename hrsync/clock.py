"""The clock: its type, and the one function that reads it.

Everything that needs the time takes a `Clock` and is handed `utcnow` in production and
a frozen or stepped clock in tests. The core takes times, never a clock.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime

Clock = Callable[[], datetime]


def utcnow() -> datetime:
    return datetime.now(UTC)
