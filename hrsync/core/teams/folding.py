"""Small teams folded into their parents (pure): ``mapping.min_team_size``.

After the strategy has built the teams, deepest first (ties by key), a non-root team
with fewer contributors than ``min_team_size`` is folded into its parent: its
contributors join the parent's contributors, its lead too when the lead is a
contributor of no team (with the manager strategy the lead is already one of the
parent's contributors), and its sub-teams re-attach to the parent. Because children
fold first, people folded into a team count towards that team's size. A root team
is never folded; one below the minimum is kept and noted. Every fold is noted.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping

from hrsync.core.teams.team_drafts import Drafts
from hrsync.core.text import plural


def fold_small(
    drafts: Drafts,
    sorted_depths: tuple[list[str], Mapping[str, int]],
    minimum: int,
    notes: list[str],
) -> None:
    keys, depth = sorted_depths
    parent_of = drafts.parent
    members = {key: set(emails) for key, emails in drafts.contributors.items()}
    children: dict[str, list[str]] = defaultdict(list)
    for key, parent_key in parent_of.items():
        if parent_key is not None:
            children[parent_key].append(key)
    placed: set[str] = set().union(*members.values())
    # Deepest first, then by key: `keys` is sorted, the sort by depth stable.
    for key in sorted(keys, key=lambda k: -depth[k]):
        size = len(members[key])
        if size >= minimum:
            continue
        parent_key = parent_of[key]
        if parent_key is None:
            notes.append(
                f"kept root team {key} with {plural(size, 'contributor')}, below "
                f"min_team_size {minimum}: a root team is never folded"
            )
            continue
        merged = members[parent_key]
        merged |= members.pop(key)
        lead_email = drafts.lead[key].email
        if key not in drafts.stand_in and lead_email not in placed:
            merged.add(lead_email)
            placed.add(lead_email)
        moved = children.pop(key, [])
        for child in moved:
            parent_of[child] = parent_key
        children[parent_key] = [c for c in children[parent_key] if c != key] + moved
        drafts.remove(key)
        notes.append(
            f"folded {key} ({plural(size, 'contributor')}, below min_team_size {minimum}) "
            f"into {parent_key}; {plural(len(moved), 'sub-team')} re-attached to {parent_key}"
        )
    drafts.contributors = {key: emails for key, emails in members.items()}
