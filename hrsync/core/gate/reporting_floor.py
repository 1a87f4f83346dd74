"""Teams under DX's reporting floor at the next snapshot (pure).

DX leaves a team with fewer than three contributors out of a snapshot's results: its
people answer the survey, and the team shows nothing. Nothing in DX's answers says so
beforehand, so hrsync counts what DX will count, ahead of a snapshot, and names those
teams with their people. `mapping.min_team_size` folds such teams into their parents;
whether to is a person's decision, so hrsync only tells.

What DX counts: the contributors sent, except people known not to be DX users (DX
ignores an e-mail it does not know). People whose DX account is not known yet are
counted: a team that reaches the floor only with them may still fall under it, so the
list is then a lower bound (`unsure` says how many teams could join it).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from hrsync.core.gate.snapshot_ahead import NextSnapshot
from hrsync.core.listing import LIMIT, capped
from hrsync.core.text import plural, quoted

# DX's rule, not a decision for the user: not a configuration key.
REPORTING_FLOOR = 3
# People shown per team in a message: a team under the floor has at most two counted,
# but may have many DX does not count.
PEOPLE_SHOWN = 5
FOLD_HINT = (
    f"mapping.min_team_size = {REPORTING_FLOOR} folds such teams into their parent teams "
    "(a root team is never folded)"
)


@dataclass(frozen=True, slots=True)
class SmallTeam:
    """A team DX will count fewer than `REPORTING_FLOOR` contributors of."""

    name: str
    reference_id: str
    counted: tuple[str, ...]  # contributors DX counts, or may (not yet known)
    not_dx_users: tuple[str, ...]  # contributors known not to be DX users

    @property
    def people(self) -> str:
        """ "zainab@…, oliver@…" and those DX does not count, capped."""
        shown = capped(self.counted, limit=PEOPLE_SHOWN, empty="nobody")
        if self.not_dx_users:
            others = capped(self.not_dx_users, limit=PEOPLE_SHOWN)
            shown += f"; not DX users: {others}"
        return shown


@dataclass(frozen=True, slots=True)
class UnderFloor:
    """The teams under the floor at `snapshot`; `unsure`: teams at or above it only
    because people whose DX account is not known yet are counted."""

    snapshot: NextSnapshot
    teams: tuple[SmallTeam, ...]
    unsure: int = 0

    @property
    def lower_bound(self) -> bool:
        return self.unsure > 0


Team = tuple[str, str, Sequence[str]]  # name, reference_id, contributor e-mails


def under_floor(
    snapshot: NextSnapshot | None, teams: Iterable[Team], known: Mapping[str, bool | None]
) -> UnderFloor | None:
    """The teams of `teams` DX will leave out of `snapshot`'s results, by name; None when
    no snapshot is ahead. `known`: e-mail → True a DX user, False not one, None unknown."""
    if snapshot is None:
        return None
    small: list[SmallTeam] = []
    unsure = 0
    for name, reference_id, contributors in teams:
        people = sorted(set(contributors))
        counted = tuple(e for e in people if known.get(e) is not False)
        if len(counted) < REPORTING_FLOOR:
            not_users = tuple(e for e in people if known.get(e) is False)
            small.append(SmallTeam(name, reference_id, counted, not_users))
        elif sum(1 for e in counted if known.get(e) is True) < REPORTING_FLOOR:
            unsure += 1
    small.sort(key=lambda t: (t.name, t.reference_id))
    return UnderFloor(snapshot, tuple(small), unsure)


def floor_lines(
    floor: UnderFloor | None, *, indent: str = "  ", fold_hint: bool = True
) -> list[str]:
    """What a person reads: the teams, their people (capped), that DX leaves them out of
    the snapshot's results, and how to fold them (unless the caller says it itself);
    nothing when none is under the floor."""
    if floor is None or not floor.teams:
        return []
    count = len(floor.teams)
    snapshot = floor.snapshot
    lines = [
        f"{plural(count, 'team')} will have fewer than "
        f"{REPORTING_FLOOR} counted contributors at snapshot {snapshot.snapshot_id} "
        f"({snapshot.day.isoformat()}): DX leaves {'it' if count == 1 else 'them'} out of "
        "the snapshot's results."
    ]
    for team in floor.teams[:LIMIT]:
        lines.append(f"{indent}- {quoted(team.name)}: {len(team.counted)} ({team.people})")
    if count > LIMIT:
        lines.append(f"{indent}… and {count - LIMIT} more (`hrsync plan --format json` lists all)")
    if floor.lower_bound:
        lines.append(
            f"{indent}At least these: {plural(floor.unsure, 'more team')} may fall under it "
            "too, counted with people whose DX account is not known yet."
        )
    if fold_hint:
        lines.append(f"{indent}To fold them: {FOLD_HINT}.")
    return lines


def floor_document(floor: UnderFloor | None) -> dict[str, Any] | None:
    """The JSON form (plan, status, the notice): every team, uncapped."""
    if floor is None:
        return None
    return {
        "snapshot_id": floor.snapshot.snapshot_id,
        "scheduled_for": floor.snapshot.day.isoformat(),
        "floor": REPORTING_FLOOR,
        "lower_bound": floor.lower_bound,
        "unsure": floor.unsure,
        "teams": [
            {
                "name": t.name,
                "reference_id": t.reference_id,
                "counted": len(t.counted),
                "contributors": list(t.counted),
                "not_dx_users": list(t.not_dx_users),
            }
            for t in floor.teams
        ],
    }
