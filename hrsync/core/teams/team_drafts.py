"""The teams while a strategy builds them (pure): drafts folded and named before they
are frozen, their depths, and a chain of managers that leads back to itself.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence

from hrsync.core.people import Person
from hrsync.core.teams.team_map import LeadLeft
from hrsync.core.tree import forest


class ManagerCycle(Exception):
    """Control flow inside the mapping, not an error: a chain of managers (or of their
    teams) leads back to itself. `build_teams` turns it into a problem of its TeamMap."""

    def __init__(self, cycle: Sequence[str]) -> None:
        super().__init__(" -> ".join([*cycle, cycle[0]]))
        self.chain = str(self)
        self.first = cycle[0]  # an employee id, or the key of a team (`manager:E1`)


class Drafts:
    """The teams while they are being built, folded and named before they are frozen: one
    dict per field, keyed by team key (cheaper than an object per team at 15k teams, and
    `parent` is the mapping `forest` walks)."""

    __slots__ = (
        "contributors",
        "department",
        "department_path",
        "lead",
        "left",
        "named",
        "parent",
        "stand_in",
    )

    def __init__(self) -> None:
        self.parent: dict[str, str | None] = {}
        self.lead: dict[str, Person] = {}
        # E-mails: a list may name one twice (a set once folding merges teams).
        self.contributors: dict[str, Collection[str]] = {}
        self.department: dict[str, str] = {}  # {department} of the team name
        self.department_path: dict[str, str] = {}  # {department_path}
        # Teams of a manager who left: `lead` is the manager (the name is theirs), the
        # stand-in leads the team sent.
        self.stand_in: dict[str, Person] = {}
        self.left: list[LeadLeft] = []  # every manager who left whom people still name
        # By key: a name to keep as is (a manager missing from the export has no row to
        # render one from; DX's name for the team stays).
        self.named: dict[str, str] = {}

    def add(
        self,
        key: str,
        lead: Person,
        parent: str | None,
        contributors: Collection[str],
        department: str,
        department_path: str,
    ) -> None:
        self.parent[key] = parent
        self.lead[key] = lead
        self.contributors[key] = contributors
        self.department[key] = department
        self.department_path[key] = department_path

    def remove(self, key: str) -> None:
        del self.parent[key], self.lead[key], self.contributors[key]
        del self.department[key], self.department_path[key]


def team_depths(drafts: Drafts) -> tuple[list[str], Mapping[str, int]]:
    """The keys sorted, and each team's depth."""
    keys = sorted(drafts.parent)
    return keys, depths_or_refuse(drafts.parent, keys)


def depths_or_refuse(
    parents: Mapping[str, str | None], order: Sequence[str] | None = None
) -> Mapping[str, int]:
    """Depths in a chain of managers (or their teams); a cycle is refused, naming it.
    `order`: the nodes sorted, when the caller has them (the walk needs that order)."""
    tree = forest(parents, sorted(parents) if order is None else order)
    if tree.cycles:
        raise ManagerCycle(tree.cycles[0])
    return tree.depths
