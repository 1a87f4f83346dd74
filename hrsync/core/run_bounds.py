"""How long a run may take before it is overdue: stuck, not slow.

Each step of a run is bounded on its own: the read by `source.deadline_s`, the wait for
DX to show what was sent by `sync.verify_timeout_s`, and the DX calls around them (each
within `dx.timeout_s`, paced below DX's rate limit; the attribute step one call per
changed person) by less than `RUN_SLACK_S`. A run past their sum holds the daemon's
one run slot while scheduled runs are skipped: the daemon warns (`daemon.run_overdue`)
and /readyz says not ready.
"""

from __future__ import annotations

from hrsync.core.settings import Settings

RUN_SLACK_S = 3600.0


def overdue_after_s(settings: Settings) -> float:
    return settings.source.deadline_s + settings.sync.verify_timeout_s + RUN_SLACK_S
