"""The DX Web API method names hrsync calls: one constant each, spelled once.

The client, the state store (which records which method a submission went to), the run,
the demo and the simulator's method table all use these names.
"""

from __future__ import annotations

from typing import Final

WHOAMI: Final = "auth.whoami"
API_KEYS_LIST: Final = "apiKeys.list"
SNAPSHOTS_LIST: Final = "snapshots.list"
SNAPSHOTS_INFO: Final = "snapshots.info"
TEAMS_LIST: Final = "teams.list"
TEAMS_AUDIT_TRAIL: Final = "teams.auditTrail"
PREVIEW: Final = "orgfiles.teamHierarchy.preview"
PROCESS: Final = "orgfiles.teamHierarchy.process"
USER_ATTRIBUTES_UPDATE: Final = "users.attributes.update"
