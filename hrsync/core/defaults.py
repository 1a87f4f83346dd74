"""Values hrsync fixes rather than asks for, each with one owner here.

Some are read without loading the settings: `hrsync healthcheck`'s cheap probe runs
every few seconds, and building the settings' dataclasses costs it ~20 ms. The settings
(`hrsync.core.settings`) take these same values. The others are no decision a user must
make (DX's own rules, or what hrsync needs to work well), so they are no key.
"""

from __future__ import annotations

DATABASE_URL = "sqlite:///hrsync.db"
HEARTBEAT_S = 30.0
# Missed heartbeats before the healthcheck calls the daemon stuck: a slow store write or
# a paused container skips one or two, never four.
HEARTBEATS_MISSED = 4
QUARANTINE_ALERT_S = 86400.0  # the healthcheck fails when quarantined longer than a day
# On SIGTERM the daemon waits this long for the current step (a DX call, a store write):
# the deploy files give the container 45 s to stop, more than this.
SHUTDOWN_GRACE_S = 30.0

# DX allows 1,000 Web API requests a minute per account (a sliding window); hrsync stays
# below it so another client of the same account still has room.
DX_MAX_REQUESTS_PER_MINUTE = 900
# The most one DX answer may decode to. teams.list of a 100,000-person org is tens of MB
# at most (about 500 bytes a team, and fewer teams than people).
DX_MAX_RESPONSE_BYTES = 256 * 1024 * 1024

# While people DX does not count yet are listed, the hierarchy is sent again at most this
# often even when nothing else changed, so they are placed once they join DX.
RECHECK_NOT_IN_DX_HOURS = 24.0
# Someone DX has not counted for longer than this is told once (notify.on not_in_dx).
NOT_IN_DX_ALERT_DAYS = 14.0
# A manager who left while people still name them: their team stays with a stand-in lead;
# told once (notify.on lead_left) when HR has not re-pointed them after this.
LEAD_LEFT_ALERT_DAYS = 3.0
# An approval (`hrsync approve`) not applied within this long lapses: a plan approved on
# Friday is not applied weeks later under a person's name.
APPROVAL_TTL_HOURS = 72.0
# Events about one team or person each (plan.change, identity.decision, …): this many per
# kind at their level, the rest at debug, then one log.capped summary.
EVENTS_PER_KIND = 50


def healthcheck_max_age_s(heartbeat_s: float) -> float:
    """The healthcheck fails when the heartbeat is older than this."""
    return HEARTBEATS_MISSED * heartbeat_s


HEALTHCHECK_MAX_AGE_S = healthcheck_max_age_s(HEARTBEAT_S)
