"""One run, start to finish: the only orchestration (imperative shell).

CONTRACT used by the daemon and the CLI: `SyncRequest`, `SyncResult`, `run_sync`.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime

from hrsync.outcome import Outcome

Clock = Callable[[], datetime]


def utcnow() -> datetime:
    return datetime.now(UTC)


@dataclass(frozen=True, slots=True)
class SyncRequest:
    trigger: str = "manual"  # manual | schedule | resume | startup
    dry_run: bool = False
    preview: bool = False
    allow_archive: int = 0
    allow_shrink: bool = False


@dataclass(frozen=True, slots=True)
class SyncResult:
    run_id: str
    outcome: Outcome
    counts: Mapping[str, int] = field(default_factory=dict)
    reason: str | None = None
    resume_at: datetime | None = None

    @property
    def exit_code(self) -> int:
        return self.outcome.exit_code
