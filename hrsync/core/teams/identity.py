"""Stable reference_ids for teams: assignment, continuity and adoption (pure).

CONTRACT: `TeamRow` is one HierarchyTeam of the payload; `KnownIdentity`
is what the store keeps per team; `assign` turns desired teams into rows.

DX keeps a team's history under its `reference_id`, so the id must follow the team
through renames, moves and a change of lead, and must never be handed to another
team. `assign` decides, for every desired team, in this order:

1. ``known``: the store knows its HR key: the id the store holds. A rename, a move or
   new members keep it. A retired identity of the same HR key is revived (the same
   lead or unit is back); a retired id is never given to any other key.
2. ``continued``: the key is new, but an identity the store knows is no longer desired
   (its key vanished in this export) and the team is recognisably the same one:
   a. membership: the Jaccard index of the two contributor sets (shared / union) is at
      least ``CONTINUITY_MIN_JACCARD`` (0.5) and at least ``CONTINUITY_MIN_SHARED`` (2)
      e-mails are shared. A lead who left and was replaced while most of the team
      stayed is the typical case. When several pairs qualify, the highest Jaccard
      wins, then the most shared e-mails, then the smaller desired key, then the
      smaller old key; each team and each old identity is used once.
   b. failing that, the same lead e-mail (an HR key that changed under the same lead,
      e.g. a renamed department unit). Teams are taken top-down; among old identities
      with that lead, one whose parent had the reference_id this team's parent now has
      is preferred, then one with the same name, then the smaller old key.
   The old identity is re-keyed: it no longer exists under its old key.
3. Adoption of a team already in DX (first run, lost store, or any team still
   unmatched), top-down so that parents are adopted before their children. DX teams
   whose reference_id the store knows are never adopted: the store decides about them.
   a. ``adopted_reference``: a DX team whose reference_id is the one hrsync derives from
      this team's HR key (`derived_reference_id`, or it with a collision suffix), so a
      rebuilt store finds its teams again whatever they were renamed to meanwhile; else
      one whose reference_id is the HR key (``manager:E12``), its bare id (``E12``) or
      the lead's employee id, compared case-insensitively: an id an earlier hand-made
      import derived from HR data.
   b. ``adopted_name``: a DX team with the same name (case-insensitive, whitespace
      collapsed) and the same parent: DX's ``parent_id`` equals the DX id of the desired
      parent's team, or for a root team the DX team is a root (no parent_id, or one that
      names no listed team, i.e. DX's root sentinel). Candidates with a reference_id go
      first, then by DX id. When the DX team has a reference_id it is taken and DX
      updates the team in place. When it has none, DX's import cannot match it: a new
      id is generated, the old DX team will be archived and a new one created, and the
      detail says so (its children can still be adopted through it).
   Membership cannot be compared with DX directly: ``teams.list`` reports a contributor
   count, not e-mails. Overlap is only known where the store remembers members, which
   is rule 2.
4. ``new``: the id `reference_id_for` derives from the HR key: ``hrsync-`` plus the
   first 16 hex characters of the key's SHA-256, so the same key always gets the same
   id, and a rebuilt store adopts the team by it (3a) even after renames. When that id
   is taken (known to the store, active or retired, on a DX team, or given out earlier
   in this run: a team continued under another key can hold it), ``-2``, ``-3`` … is
   appended, the first free one. Ids the store already holds are never changed, so
   teams created before ids were derived keep their random ``hrsync-`` + 8 hex ids.

Known identities that no desired team claims are returned retired (they keep their
key, so the store can revive them if the key returns). `unreferenced_dx` lists every DX
team with no reference_id: DX's import cannot match such a team, so a full replacement
archives it even when a desired team was adopted from it by name; the plan calls them
out.

Output rows are ordered parents before children: by depth, then by key.
"""

from __future__ import annotations

import hashlib
import itertools
import re
from collections import defaultdict
from collections.abc import Callable, Collection, Iterable, Iterator, Sequence
from dataclasses import dataclass
from functools import partial
from itertools import repeat
from operator import attrgetter
from typing import Any, Literal, NamedTuple, cast

from hrsync.core.listing import capped
from hrsync.core.teams.mapping import DEPARTMENT_PREFIX, MANAGER_PREFIX, DesiredTeam, SortedEmails
from hrsync.core.tree import forest
from hrsync.dx.models import DxTeam

REFERENCE_PREFIX = "hrsync-"
CONTINUITY_MIN_JACCARD = 0.5
CONTINUITY_MIN_SHARED = 2
_DERIVED_HEX = 16
_DERIVED = re.compile(
    rf"(?P<base>{re.escape(REFERENCE_PREFIX)}[0-9a-f]{{{_DERIVED_HEX}}})"
    r"(?:-(?P<n>[2-9]|[1-9][0-9]+))?"
)

How = Literal["known", "continued", "adopted_reference", "adopted_name", "new"]


class KnownIdentity(NamedTuple):
    """A team as the state store keeps it. NamedTuples here and in `TeamRow` and
    `IdentityDecision`: a run builds one per team (15,000s), and a frozen dataclass costs
    four times as much to build."""

    key: str  # HR key
    reference_id: str
    name: str
    parent_key: str | None
    lead_email: str | None
    members: tuple[str, ...]  # contributor e-mails, sorted and unique (as a row's contributors)
    retired: bool = False


class TeamRow(NamedTuple):
    """One HierarchyTeam, exactly as `orgfiles.teamHierarchy.*` takes it, plus our key."""

    key: str
    reference_id: str
    name: str
    lead_email: str
    parent_reference_id: str | None
    parent_name: str | None
    contributors: tuple[str, ...]

    def to_payload(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "reference_id": self.reference_id,
            "team_lead_email": self.lead_email,
            "parent_team_reference_id": self.parent_reference_id,
            "parent_team_name": self.parent_name,
            "contributors": list(self.contributors),
        }


class IdentityDecision(NamedTuple):
    key: str
    reference_id: str
    how: How
    detail: str  # for the log, readable by a person


@dataclass(frozen=True, slots=True)
class Assignment:
    teams: tuple[TeamRow, ...]  # the payload rows, parents before children
    identities: tuple[KnownIdentity, ...]  # the store after this run: active, then retired
    decisions: tuple[IdentityDecision, ...]  # one per team, in row order
    unreferenced_dx: tuple[DxTeam, ...]  # DX teams with no reference_id (archived by import)


def derived_reference_id(key: str) -> str:
    """The reference_id an HR key maps to before any collision: same key, same id."""
    return REFERENCE_PREFIX + hashlib.sha256(key.encode("utf-8")).hexdigest()[:_DERIVED_HEX]


def reference_id_for(key: str, taken: Collection[str]) -> str:
    """The reference_id for a new team with this HR key: the derived id, or the first
    of ``-2``, ``-3`` … appended to it that is not in `taken`. The one place new ids
    are made."""
    base = derived_reference_id(key)
    if base not in taken:
        return base
    for n in itertools.count(2):
        candidate = f"{base}-{n}"
        if candidate not in taken:
            return candidate
    raise AssertionError("unreachable")  # pragma: no cover


def _derived_base(reference_id: str) -> tuple[str, int] | None:
    """(derived id, suffix number) when `reference_id` has the derived form."""
    match = _DERIVED.fullmatch(reference_id)
    if match is None:
        return None
    return match.group("base"), int(match.group("n") or 1)


def assign(
    desired: Sequence[DesiredTeam],
    known: Sequence[KnownIdentity],
    dx_teams: Sequence[DxTeam],
) -> Assignment:
    ordered, by_key = _ordered(desired)
    known_by_key, known_refs = _index_known(known)
    chosen: dict[str, IdentityDecision] = {}
    taken_refs: set[str] = set()

    def take(team: DesiredTeam, ref: str, how: How, detail: str) -> None:
        chosen[team.key] = IdentityDecision(team.key, ref, how, detail)
        taken_refs.add(ref)

    if known_by_key:
        for team in ordered:
            old = known_by_key.get(team.key)
            if old is not None:
                ref = old.reference_id
                detail = _known_detail(old, team) if old.retired or old.name != team.name else ""
                chosen[team.key] = IdentityDecision(team.key, ref, "known", detail)
                taken_refs.add(ref)

    orphans = {
        i.key: i for i in known if not i.retired and i.key not in by_key
    }  # known, active, no longer desired: candidates for continuity
    _continue_by_members(ordered, chosen, orphans, take)
    _continue_by_lead(ordered, chosen, orphans, known_by_key, take)

    if len(chosen) < len(ordered):  # the steady state has every team known
        _adopt_and_create(ordered, chosen, known_refs, dx_teams, take, taken_refs)

    rows = _rows(ordered, chosen)
    identities = _identities(ordered, rows, known)
    unreferenced = tuple(
        sorted((t for t in dx_teams if not t.reference_id), key=lambda t: (t.name, t.id))
    )
    return Assignment(
        teams=rows,
        identities=identities,
        decisions=tuple(map(chosen.__getitem__, map(_KEY, ordered))),
        unreferenced_dx=unreferenced,
    )


# ---------------------------------------------------------------- inputs


def _ordered(
    desired: Sequence[DesiredTeam],
) -> tuple[list[DesiredTeam], dict[str, DesiredTeam]]:
    """The teams parents first (by depth, then key), and the teams by key."""
    by_key = {team.key: team for team in desired}
    if len(by_key) < len(desired):
        seen: set[str] = set()
        for team in desired:
            if team.key in seen:
                raise ValueError(f"desired team key {team.key!r} appears twice")
            seen.add(team.key)
    parents = {key: team.parent_key for key, team in by_key.items()}
    for key, parent in parents.items():
        if parent is not None and parent not in parents:
            raise ValueError(
                f"desired team {key!r} names parent {parent!r}, which is not a desired team"
            )
    tree = forest(parents)
    if tree.cycles:
        cycle = tree.cycles[0]
        raise ValueError(f"desired teams form a cycle: {capped([*cycle, cycle[0]], sep=' -> ')}")
    # By key, then a stable sort by depth: two sorts in C, no key tuple per team.
    keys = sorted(parents)
    keys.sort(key=tree.depths.__getitem__)
    return [by_key[key] for key in keys], by_key


def _index_known(known: Sequence[KnownIdentity]) -> tuple[dict[str, KnownIdentity], set[str]]:
    by_key: dict[str, KnownIdentity] = {}
    refs: set[str] = set()
    for identity in known:
        if identity.key in by_key:
            raise ValueError(f"the identity store holds key {identity.key!r} twice")
        if identity.reference_id in refs:
            raise ValueError(
                f"the identity store holds reference_id {identity.reference_id!r} twice"
            )
        by_key[identity.key] = identity
        refs.add(identity.reference_id)
    return by_key, refs


def _known_detail(old: KnownIdentity, team: DesiredTeam) -> str:
    parts: list[str] = []
    if old.retired:
        parts.append("revived: this HR key's team is back under its old reference_id")
    if old.name != team.name:
        parts.append(f"renamed {old.name!r} -> {team.name!r}")
    return "; ".join(parts)


# ---------------------------------------------------------------- continuity

_Take = Callable[[DesiredTeam, str, How, str], None]


def _continue_by_members(
    ordered: list[DesiredTeam],
    chosen: dict[str, IdentityDecision],
    orphans: dict[str, KnownIdentity],
    take: _Take,
) -> None:
    if not orphans:
        return
    index: dict[str, list[str]] = defaultdict(list)
    for old in orphans.values():
        for email in old.members:
            index[email].append(old.key)
    pairs: list[tuple[float, int, str, str, int]] = []
    for team in ordered:
        if team.key in chosen or not team.contributors:
            continue
        shared: dict[str, int] = defaultdict(int)
        for email in set(team.contributors):
            for old_key in index.get(email, ()):
                shared[old_key] += 1
        members = len(set(team.contributors))
        for old_key, count in shared.items():
            union = members + len(orphans[old_key].members) - count
            jaccard = count / union
            if jaccard >= CONTINUITY_MIN_JACCARD and count >= CONTINUITY_MIN_SHARED:
                pairs.append((-jaccard, -count, team.key, old_key, union))
    by_key = {team.key: team for team in ordered}
    for negative_jaccard, negative_count, key, old_key, union in sorted(pairs):
        if key in chosen or old_key not in orphans:
            continue
        old = orphans.pop(old_key)
        take(
            by_key[key],
            old.reference_id,
            "continued",
            f"continues {old_key} ({old.name!r}): {-negative_count} of {union} members "
            f"shared (Jaccard {-negative_jaccard:.2f} >= {CONTINUITY_MIN_JACCARD})",
        )


def _continue_by_lead(
    ordered: list[DesiredTeam],
    chosen: dict[str, IdentityDecision],
    orphans: dict[str, KnownIdentity],
    known_by_key: dict[str, KnownIdentity],
    take: _Take,
) -> None:
    by_lead: dict[str, list[KnownIdentity]] = defaultdict(list)
    for old in sorted(orphans.values(), key=lambda i: i.key):
        if old.lead_email:
            by_lead[old.lead_email.casefold()].append(old)
    if not by_lead:
        return

    def old_parent_ref(old: KnownIdentity) -> str | None:
        parent = known_by_key.get(old.parent_key) if old.parent_key is not None else None
        return None if parent is None else parent.reference_id

    # Top-down, so a parent's id is settled before its children are compared: one lead
    # may lead a chain of units (a unit and its sub-unit), told apart by their parents.
    for team in ordered:
        if team.key in chosen:
            continue
        candidates = [o for o in by_lead.get(team.lead_email.casefold(), ()) if o.key in orphans]
        if not candidates:
            continue
        parent = chosen.get(team.parent_key) if team.parent_key is not None else None
        parent_ref = None if parent is None else parent.reference_id
        parent_unsettled = team.parent_key is not None and parent is None
        old = min(
            candidates,
            key=lambda o: (
                parent_unsettled or old_parent_ref(o) != parent_ref,
                _norm(o.name) != _norm(team.name),
                o.key,
            ),
        )
        orphans.pop(old.key)
        take(
            team,
            old.reference_id,
            "continued",
            f"continues {old.key} ({old.name!r}): same lead {team.lead_email}",
        )


# ---------------------------------------------------------------- adoption


def _norm(name: str) -> str:
    return " ".join(name.split()).casefold()


def _derived_refs(team: DesiredTeam) -> set[str]:
    refs = {team.key.casefold()}
    for prefix in (MANAGER_PREFIX, DEPARTMENT_PREFIX):
        if team.key.startswith(prefix):
            refs.add(team.key[len(prefix) :].casefold())
    if team.lead_employee_id:
        refs.add(team.lead_employee_id.casefold())
    return refs


def _adopt_and_create(
    ordered: list[DesiredTeam],
    chosen: dict[str, IdentityDecision],
    known_refs: set[str],
    dx_teams: Sequence[DxTeam],
    take: _Take,
    taken_refs: set[str],
) -> None:
    dx_ids = {t.id for t in dx_teams}
    dx_refs = {t.reference_id for t in dx_teams if t.reference_id}
    dx_by_ref: dict[str, DxTeam] = {}
    for t in sorted(dx_teams, key=lambda t: t.id):
        if t.reference_id:
            dx_by_ref.setdefault(t.reference_id, t)
    # DX teams the store does not know: the only ones open to adoption.
    open_teams = sorted(
        (t for t in dx_teams if not t.reference_id or t.reference_id not in known_refs),
        key=lambda t: (t.reference_id is None or t.reference_id == "", t.id),
    )
    by_derived: dict[str, list[DxTeam]] = defaultdict(list)
    by_name: dict[str, list[DxTeam]] = defaultdict(list)
    # Derived id -> DX teams holding it or it with a suffix, the plain one first.
    by_hashed: dict[str, list[tuple[int, DxTeam]]] = defaultdict(list)
    for t in open_teams:
        if t.reference_id:
            by_derived[t.reference_id.casefold()].append(t)
            hashed = _derived_base(t.reference_id)
            if hashed is not None:
                by_hashed[hashed[0]].append((hashed[1], t))
        by_name[_norm(t.name)].append(t)
    for candidates in by_hashed.values():
        candidates.sort(key=lambda pair: (pair[0], pair[1].id))
    claimed: set[str] = set()  # DX ids
    dx_of_key: dict[str, str] = {}
    for key, decision in chosen.items():
        found = dx_by_ref.get(decision.reference_id)
        if found is not None:
            dx_of_key[key] = found.id
            claimed.add(found.id)

    taken = _Taken(known_refs, dx_refs, taken_refs)  # sees every id `take` adds

    def fresh(key: str) -> str:
        return reference_id_for(key, taken)

    if not open_teams and _create_all(ordered, chosen, taken_refs, known_refs, dx_refs):
        return
    for team in ordered:
        if team.key in chosen:
            continue
        if not open_teams:  # nothing in DX to adopt (a first run): a new team
            take(team, fresh(team.key), "new", _NEW)
            continue
        adopted = _first_free(_by_reference(team, by_hashed, by_derived), claimed, taken_refs)
        if adopted is not None and adopted.reference_id:
            claimed.add(adopted.id)
            dx_of_key[team.key] = adopted.id
            take(
                team,
                adopted.reference_id,
                "adopted_reference",
                f"adopted DX team {adopted.name!r} (id {adopted.id}): its reference_id "
                f"{adopted.reference_id!r} is derived from this team's HR data; "
                "DX updates it in place",
            )
            continue
        adopted = _by_name_and_parent(team, by_name, claimed, taken_refs, dx_of_key, dx_ids)
        if adopted is not None:
            claimed.add(adopted.id)
            dx_of_key[team.key] = adopted.id
            if adopted.reference_id:
                take(
                    team,
                    adopted.reference_id,
                    "adopted_name",
                    f"adopted DX team {adopted.name!r} (id {adopted.id}) by name and parent; "
                    "DX updates it in place",
                )
            else:
                ref = fresh(team.key)
                take(
                    team,
                    ref,
                    "adopted_name",
                    f"matches DX team {adopted.name!r} (id {adopted.id}) by name and parent, "
                    "but that team has no reference_id, which DX's import cannot match: it "
                    f"will be archived and a new team created as {ref}; its history does "
                    "not carry over",
                )
            continue
        take(team, fresh(team.key), "new", _NEW)


_NEW = "no known identity or DX team matches: a new team"


def _create_all(
    ordered: list[DesiredTeam],
    chosen: dict[str, IdentityDecision],
    taken_refs: set[str],
    *avoid: set[str],
) -> bool:
    """Every team not chosen yet as new, in bulk, when each gets its derived id (none in
    `taken_refs` or `avoid`, no two alike): what the loop in `_adopt_and_create` decides
    then, team by team. False, deciding nothing, otherwise."""
    keys = [team.key for team in ordered if team.key not in chosen]
    refs = list(map(derived_reference_id, keys))
    if len(set(refs)) < len(refs) or not all(s.isdisjoint(refs) for s in (taken_refs, *avoid)):
        return False
    fields = zip(keys, refs, repeat("new", len(keys)), repeat(_NEW, len(keys)), strict=True)
    chosen.update(zip(keys, map(_new_decision, fields), strict=True))
    taken_refs.update(refs)
    return True


def _free(candidate: DxTeam, claimed: set[str], taken_refs: set[str]) -> bool:
    # DX should not hold one reference_id twice; if it does, only one team may take it.
    if candidate.id in claimed:
        return False
    return not candidate.reference_id or candidate.reference_id not in taken_refs


def _first_free(
    candidates: Iterable[DxTeam], claimed: set[str], taken_refs: set[str]
) -> DxTeam | None:
    return next((c for c in candidates if _free(c, claimed, taken_refs)), None)


class _Taken:
    """The union of the id sets `reference_id_for` must avoid, without copying them."""

    def __init__(self, *sets: set[str]) -> None:
        self._sets = sets

    def __contains__(self, ref: object) -> bool:
        # A loop, not any() over a generator: asked once per new team, 15k times at 100k.
        for refs in self._sets:  # noqa: SIM110
            if ref in refs:
                return True
        return False

    def __iter__(self) -> Iterator[str]:
        return itertools.chain.from_iterable(self._sets)

    def __len__(self) -> int:
        return sum(len(s) for s in self._sets)


def _by_reference(
    team: DesiredTeam,
    by_hashed: dict[str, list[tuple[int, DxTeam]]],
    by_derived: dict[str, list[DxTeam]],
) -> Iterator[DxTeam]:
    """The DX teams holding an id derived from this team's HR data: its hashed id (plain,
    then with a suffix) first, then the other ids its data derives. Lazily: the first
    free one ends the search."""
    if by_hashed:  # no DX team holds a derived id (e.g. a first run): spare the hash
        for _, candidate in by_hashed.get(derived_reference_id(team.key), ()):
            yield candidate
    if by_derived:  # DX lists no team open to adoption by reference (e.g. a first run)
        for ref in sorted(_derived_refs(team)):
            yield from by_derived.get(ref, ())


def _by_name_and_parent(
    team: DesiredTeam,
    by_name: dict[str, list[DxTeam]],
    claimed: set[str],
    taken_refs: set[str],
    dx_of_key: dict[str, str],
    dx_ids: set[str],
) -> DxTeam | None:
    if team.parent_key is None:
        wanted_parent: str | None = None
    else:
        wanted_parent = dx_of_key.get(team.parent_key)
        if wanted_parent is None:  # the parent is not in DX: nothing there can match
            return None
    for candidate in by_name.get(_norm(team.name), ()):
        if not _free(candidate, claimed, taken_refs):
            continue
        parent = candidate.parent_id if candidate.parent_id in dx_ids else None
        if parent == wanted_parent:
            return candidate
    return None


# ---------------------------------------------------------------- output


def _rows(ordered: list[DesiredTeam], chosen: dict[str, IdentityDecision]) -> tuple[TeamRow, ...]:
    keys = list(map(_KEY, ordered))
    refs = [chosen[key].reference_id for key in keys]
    names = list(map(_NAME, ordered))
    parents = list(map(_PARENT_KEY, ordered))
    # Each parent's id and name by its key; every parent is a team (`_ordered` checked).
    ref_of: dict[str | None, str | None] = dict(zip(keys, refs, strict=True))
    name_of: dict[str | None, str | None] = dict(zip(keys, names, strict=True))
    ref_of[None] = name_of[None] = None
    fields = zip(
        keys,
        refs,
        names,
        map(_LEAD_EMAIL, ordered),
        map(ref_of.__getitem__, parents),
        map(name_of.__getitem__, parents),
        map(_sorted_unique, map(_CONTRIBUTORS, ordered)),
        strict=True,
    )
    return tuple(map(_new_row, fields))


# Each team's fields read in C, and each row built in C (TeamRow() is a Python call).
_KEY = attrgetter("key")
_NAME = attrgetter("name")
_PARENT_KEY = attrgetter("parent_key")
_LEAD_EMAIL = attrgetter("lead_email")
_CONTRIBUTORS = attrgetter("contributors")
_new_row = cast(Callable[[tuple[object, ...]], TeamRow], partial(tuple.__new__, TeamRow))
_new_decision = cast(
    Callable[[tuple[object, ...]], IdentityDecision], partial(tuple.__new__, IdentityDecision)
)
_new_identity = cast(
    Callable[[tuple[object, ...]], KnownIdentity], partial(tuple.__new__, KnownIdentity)
)


def _sorted_unique(emails: tuple[str, ...]) -> tuple[str, ...]:
    if type(emails) is SortedEmails:  # from build_teams: sorted and unique already
        return emails
    return tuple(sorted(set(emails)))


def _identities(
    ordered: list[DesiredTeam],
    rows: tuple[TeamRow, ...],
    known: Sequence[KnownIdentity],
) -> tuple[KnownIdentity, ...]:
    """The store after this run; `rows`: the payload rows of `ordered`, one each."""
    identity_fields = zip(
        map(_KEY, ordered),
        map(attrgetter("reference_id"), rows),
        map(_NAME, ordered),
        map(_PARENT_KEY, ordered),
        map(_LEAD_EMAIL, ordered),
        map(_CONTRIBUTORS, rows),  # sorted and unique, as the rows have them
        repeat(False, len(ordered)),  # retired
        strict=True,
    )
    active = list(map(_new_identity, identity_fields))
    in_use = {identity.reference_id for identity in active}
    retired = sorted(
        (
            identity if identity.retired else identity._replace(retired=True)
            for identity in known
            if identity.reference_id not in in_use
        ),
        key=lambda i: i.key,
    )
    return (*active, *retired)
