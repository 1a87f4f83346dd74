"""Manager resolution (pure): each kept person's manager from the references the export
gives (an id, an e-mail or a name), reporting cycles, and the org under `filter.root`."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping, Sequence, Set
from dataclasses import dataclass
from itertools import compress, repeat
from operator import eq
from typing import NamedTuple

from hrsync.core.listing import capped
from hrsync.core.people.columns import PersonColumns, pick, scatter, take
from hrsync.core.people.emails import normalise_email
from hrsync.core.people.person import Person
from hrsync.core.people.validation import WHOLE_EXPORT, Finding, fatal, of_person, warning
from hrsync.core.text import collapse_whitespace, natural_key, shown_value
from hrsync.core.tree import forest

_PUNCTUATION = re.compile(r"[^\w\s,]")


def name_key(value: str) -> str:
    """A display name as `source.fields.manager_name` compares it.

    Case, surrounding and repeated whitespace and punctuation (``.``, ``'``, ``-``) do not
    count, and ``Last, First Middle`` reads as ``First Middle Last``: ``Brandon R.
    LeBlanc`` and ``LeBlanc, Brandon  R`` are one key. Only the first comma turns the
    order; a name without one is taken as written.
    """
    folded = _PUNCTUATION.sub("", value.casefold())
    last, comma, rest = folded.partition(",")
    if comma:
        folded = f"{rest.replace(',', ' ')} {last}"
    return " ".join(folded.split())


@dataclass(frozen=True, slots=True)
class UnknownManager:
    """A manager reference matching nobody, accepted by `source.unknown_manager = "top"`."""

    field: str  # the column (or template) it was read from
    value: str  # as written in the export
    reports: int  # how many people name it: each is top of the org
    first: str  # location of the first of them


class RowIndex:
    """Rows by a key: the first row for each key, and every row for keys held more than once."""

    __slots__ = ("first", "repeated")

    def __init__(self, rows: Sequence[int], keys: Sequence[str]) -> None:
        held = take(keys, rows)
        # Built backwards, so that the first row of each key is the one that stays.
        self.first: dict[str, int] = dict(zip(reversed(held), reversed(rows), strict=True))
        self.first.pop("", None)
        self.repeated: dict[str, list[int]] = {}
        if len(self.first) + held.count("") != len(held):
            for key, row in zip(held, rows, strict=True):
                if key and self.first[key] != row:
                    self.repeated.setdefault(key, [self.first[key]]).append(row)


def _earliest(locations: Sequence[str], rows: Iterable[int], keys: Sequence[str]) -> dict[str, int]:
    """One row per key; on a tie the earliest location, whatever the order of the rows."""
    firsts: dict[str, int] = {}
    for row in rows:
        key = keys[row]
        if not key:
            continue
        held = firsts.get(key)
        if held is None or natural_key(locations[row]) < natural_key(locations[held]):
            firsts[key] = row
    return firsts


class Refs(NamedTuple):
    """Where a manager reference may point: kept rows first, then filtered-out ones. Names
    are by `name_key`, and empty unless `source.fields.manager_name` is set."""

    kept_by_id: RowIndex
    kept_by_email: RowIndex
    kept_by_name: RowIndex
    dropped_by_id: Mapping[str, int]
    dropped_by_email: Mapping[str, int]
    dropped_by_name: Mapping[str, int]

    def by_id(self, ref: str) -> int | None:
        return _lookup(ref, self.kept_by_id, self.dropped_by_id)

    def by_email(self, ref: str) -> int | None:
        return _lookup(ref, self.kept_by_email, self.dropped_by_email)

    def by_name(self, written: str) -> int | None:
        return _lookup(name_key(written), self.kept_by_name, self.dropped_by_name)


def _lookup(ref: str, kept: RowIndex, dropped: Mapping[str, int]) -> int | None:
    if not ref:
        return None
    found = kept.first.get(ref)
    return dropped.get(ref) if found is None else found


def index_rows(
    fields: PersonColumns, kept: Sequence[int], dropped: Sequence[int], *, by_name: bool
) -> Refs:
    """The rows by id and e-mail (and by name, when managers may be given by name)."""
    locations = fields.location
    names = list(map(name_key, fields.name)) if by_name else ()
    return Refs(
        kept_by_id=RowIndex(kept, fields.employee_id),
        kept_by_email=RowIndex(kept, fields.email),
        kept_by_name=RowIndex(kept if by_name else (), names),
        dropped_by_id=_earliest(locations, dropped, fields.employee_id),
        dropped_by_email=_earliest(locations, dropped, fields.email),
        dropped_by_name=_earliest(locations, dropped if by_name else (), names),
    )


class Managers(NamedTuple):
    """Each kept row's manager, as `resolve_managers` found them."""

    manager: Sequence[str | None]  # by row: the manager's employee id (None: no manager)
    # By row: the manager's row, kept or not (for filter.root only: empty without it).
    up: Mapping[int, int | None]
    ambiguous: frozenset[int]  # rows whose manager reference matches several people
    unknown: tuple[UnknownManager, ...]  # with unknown_manager = "top": references to nobody
    findings: list[Finding]
    # By kept row: the filtered-out row their manager reference names (a manager who left).
    left: Mapping[int, int] = {}
    # By kept row: the id their manager reference names, of nobody in the export but of a
    # team DX last took (`KnownTeam`): a manager who left, their row dropped too.
    gone: Mapping[int, str] = {}


class ManagerRules(NamedTuple):
    """What reading a manager reference takes, for every row alike."""

    fields: PersonColumns
    reason: Sequence[str | None]  # by row: why it is filtered out (None: kept)
    refs: Refs
    labels: Mapping[str, str]  # the configured column of each field
    # With unknown_manager = "top": references matching nobody are returned, grouped by
    # value, instead of reported.
    top: bool
    # The teams DX last took, by their manager's id: an id matching nobody but one of them
    # is a manager who left, not a problem.
    known: Mapping[str, KnownTeam] = {}


def resolve_managers(
    export_name: str, kept: Sequence[int], rules: ManagerRules, *, links: bool
) -> Managers:
    """Each kept row's manager: the common case in bulk (`_by_id_in_bulk`), the others row
    by row (`_by_rules`). `links` keeps every row's manager row, for filter.root."""
    fields, labels = rules.fields, rules.labels
    bulk = _by_id_in_bulk(fields, kept, rules.refs.kept_by_id, links=links)
    exact = _by_rules(rules, bulk.left)
    manager = bulk.manager
    scatter(manager, exact.manager.keys(), exact.manager.values())
    unknown = tuple(
        UnknownManager(column, value, len(rows), fields.location[rows[0]])
        for (column, value), rows in exact.absent.items()
    )
    # With unknown_manager = "top" too, so many absent managers put the export in doubt.
    kinds = {labels.get(k, ""): w for k, w in reversed(_FIELD_OF.items())}
    absent_by_kind: dict[str, list[str]] = {}
    for (column, value), rows in exact.absent.items():
        absent_by_kind.setdefault(kinds.get(column, "name"), []).extend([value] * len(rows))
    doubts = {
        what: suspect_hint(what, missing, *_references(fields, kept, what))
        for what, missing in absent_by_kind.items()
    }
    doubt = {column: doubts[what] for column, what in kinds.items() if what in doubts}
    nobody = [
        of_person(row, fields.location[row], column, written, expected)
        for what, misses in exact.nobody.items()
        for expected in [_nobody_of_kind(fields, kept, what, [m[2] for m in misses])]
        for row, column, written in misses
    ]
    return Managers(
        manager=manager,
        up={**bulk.up, **exact.up},
        ambiguous=frozenset(exact.ambiguous),
        unknown=unknown,
        findings=[*exact.findings, *nobody, *_unknown_warnings(export_name, unknown, doubt)],
        left=exact.left,
        gone=exact.gone,
    )


def _nobody_of_kind(
    fields: PersonColumns, kept: Sequence[int], what: str, missing: Sequence[str]
) -> str:
    """`nobody_expected` for the references of one kind (`what`) that match nobody."""
    return nobody_expected(what, missing, *_references(fields, kept, what))


def _references(fields: PersonColumns, kept: Sequence[int], what: str) -> tuple[int, Sequence[str]]:
    """How many kept rows give a manager reference of kind `what`, and the kept people's
    own values of that kind (none for names)."""
    by_id, by_email = fields.manager_id_ref, fields.manager_email_ref
    if what == "employee id":
        given = sum(1 for r in kept if by_id[r])
        own: Sequence[str] = take(fields.employee_id, kept)
    elif what == "e-mail":
        given = sum(1 for r in kept if by_email[r] and not by_id[r])
        own = take(fields.email, kept)
    else:
        names = fields.manager_name_ref
        given = sum(1 for r in kept if names[r] and not by_id[r] and not by_email[r])
        own = ()
    return given, own


# More references than this matching nobody are no stray board member.
STRAY_REFERENCES = 5
# In the hint of references too many to be strays: the export itself is suspect.
SUSPECT_REFERENCES = "references to managers match nobody"
_RUNS = re.compile(r"\d+|[^\W\d_]+")


def _id_shape(value: str) -> str:
    """An id's look: each run of digits a ``9``, of letters an ``a`` (``E-1001`` → ``a-9``)."""
    return _RUNS.sub(lambda m: "9" if m.group()[0].isdigit() else "a", value)


def _email_shape(value: str) -> str:
    return "@" if "@" in value else ""


_SHAPES = {"employee id": _id_shape, "e-mail": _email_shape}
_FIELD = {"employee id": "manager_id", "e-mail": "manager_email", "name": "manager_name"}
_FIELD_OF = {field: what for what, field in _FIELD.items()}


def nobody_expected(what: str, missing: Sequence[str], given: int, own: Sequence[str]) -> str:
    """What a manager reference matching nobody must be, with the hint the evidence allows.

    `missing`: the references of kind `what` that match nobody, one per row; `given`: how
    many kept rows give a reference of that kind; `own`: the kept people's own values of
    that kind (their ids, their e-mails). One or two strays (a board member) are what
    `source.unknown_manager = "top"` is for. Many, or a large share, say the export lacks
    pages or the column holds another kind of id: making those people top of the org
    would sync a wrong org, so that setting is not suggested then.
    """
    told = f"must be the {what} of a person in the export, but it matches nobody"
    suspect = suspect_hint(what, missing, given, own)
    if suspect is None:
        return told + ' (source.unknown_manager = "top" makes such people top of the org)'
    return f"{told}; {suspect}"


def suspect_hint(what: str, missing: Sequence[str], given: int, own: Sequence[str]) -> str | None:
    """Why references matching nobody (as for `nobody_expected`) put the export itself in
    doubt, or None for a stray or two."""
    rows, distinct = len(missing), dict.fromkeys(missing)
    many = rows > STRAY_REFERENCES or len(distinct) > 2 or (rows > 2 and 2 * rows > given)
    if not many:
        return None
    share = f"{rows} of {given} {SUSPECT_REFERENCES}"
    shape = _SHAPES.get(what)
    known = {shape(v) for v in own if v} if shape is not None else set()
    if shape is not None and known and not any(shape(v) in known for v in distinct):
        # The smallest of each, so that the text does not depend on the order of the rows.
        example = min((v for v in own if v), key=natural_key)
        written = min(distinct, key=natural_key)
        return (
            f"{share} and none looks like an {what} here ({shown_value(written)} beside the "
            f"{what} {shown_value(example)}): the column probably holds another kind of id; "
            f"point source.fields.{_FIELD[what]} at the managers' {what}s"
        )
    return (
        f"{share}: pages of the export may be missing (see source.pagination) or the "
        "column holds another kind of id"
    )


class _Bulk(NamedTuple):
    manager: list[str | None]  # by row
    up: dict[int, int | None]  # by kept row, when asked for
    left: Sequence[int]  # the kept rows the bulk pass leaves to the rules, ascending


def _by_id_in_bulk(
    fields: PersonColumns, kept: Sequence[int], kept_by_id: RowIndex, *, links: bool
) -> _Bulk:
    """The common case, in C over whole columns: a manager given by an id alone (no e-mail
    beside it to compare) that names one kept person other than the row itself. The rows
    left have no manager here."""
    manager: list[str | None] = [None] * len(fields.employee_id)
    if kept_by_id.repeated or not any(fields.manager_id_ref):
        return _Bulk(manager, {}, kept)  # an id held twice needs the rules for every row
    references = take(fields.manager_id_ref, kept)
    nobody = -1  # the position of no row: where a reference matches no kept person
    chosen = list(map(kept_by_id.first.get, references, repeat(nobody)))
    # Left for the rules: no match (or no id given), the row itself, an e-mail beside.
    left = set(compress(kept, map(nobody.__eq__, chosen)))
    # No id is held twice here, so a row names itself exactly when its manager is its row.
    if any(map(eq, chosen, kept)):
        left.update(r for r, c in zip(kept, chosen, strict=True) if c == r)
    if any(fields.manager_email_ref):
        left.update(r for r in kept if fields.manager_email_ref[r])
    up: dict[int, int | None] = dict(zip(kept, chosen, strict=True)) if links else {}
    # Found by id, the manager's id equals the reference. The manager's own id string is
    # kept, not the reference's copy of it: every later look-up by a manager's id (teams,
    # cycles, leads) then matches by identity instead of comparing text.
    owners = [*fields.employee_id, None]  # owners[nobody] is None
    scatter(manager, kept, pick(owners, chosen))
    for row in left:
        manager[row] = None
        if links:
            up[row] = None
    return _Bulk(manager, up, sorted(left))


class _Exact(NamedTuple):
    manager: dict[int, str | None]  # by row, for the rows given
    up: dict[int, int | None]
    ambiguous: set[int]
    absent: dict[tuple[str, str], list[int]]  # by (column, value): the rows naming nobody
    # Without `top`, by kind of reference: (row, column, value) of each naming nobody.
    nobody: dict[str, list[tuple[int, str, str]]]
    findings: list[Finding]
    left: dict[int, int]  # by row: the filtered-out row its manager reference names
    gone: dict[int, str]  # by row: the id it names, of a known team's manager not in the export


def _by_rules(rules: ManagerRules, rows: Sequence[int]) -> _Exact:
    """The manager of each of `rows` by every rule: the id wins when several references
    are given, then the e-mail, then the name."""
    fields, reason, refs, labels, top, known = rules
    id_column = labels.get("manager_id", "")
    email_column = labels.get("manager_email", "")
    name_column = labels.get("manager_name", "")
    ids, emails, location = fields.employee_id, fields.email, fields.location
    id_refs, email_refs, name_refs = (
        fields.manager_id_ref,
        fields.manager_email_ref,
        fields.manager_name_ref,
    )
    out = _Exact({}, {}, set(), {}, {}, [], {}, {})
    for row in rows:
        written: str
        if id_refs[row]:
            ref = written = id_refs[row]
            column, kept_by, dropped_by = id_column, refs.kept_by_id, refs.dropped_by_id
            what, own = "employee id", ids[row]
        elif email_refs[row]:
            ref = written = email_refs[row]
            column, kept_by, dropped_by = email_column, refs.kept_by_email, refs.dropped_by_email
            what, own = "e-mail", emails[row]
        elif name_refs[row]:
            written, ref = name_refs[row], name_key(name_refs[row])
            column, kept_by, dropped_by = name_column, refs.kept_by_name, refs.dropped_by_name
            what, own = "name", None
        else:
            continue
        at = (row, location[row], column, written)  # where a finding about it points
        chosen = kept_by.first.get(ref)
        if chosen is None:
            chosen = dropped_by.get(ref)
        if chosen is None and what == "employee id" and ref in known and ref != own:
            # Not a finding of each row: the team's story is told once, for all who name
            # them (`mapping.lead_left`), as for a manager a filter leaves out.
            out.gone[row] = ref
            continue
        if chosen is None:
            if top:
                out.absent.setdefault((column, written), []).append(row)
            else:
                # Told once all are known: how many match nobody decides the hint.
                out.nobody.setdefault(what, []).append((row, column, written))
            continue
        if what == "name" and ref in kept_by.repeated:
            # Ids and e-mails held twice are fatal anyway; a name held twice is fine until
            # someone's manager is given by it alone.
            same = sorted(kept_by.repeated[ref], key=lambda i: natural_key(location[i]))
            listed = capped((f"{fields.describe(i)} at {location[i]}" for i in same), sep="; ")
            out.findings.append(
                of_person(
                    *at,
                    f"must name one person, but it matches {len(same)}: {listed}; "
                    "give the manager by id or e-mail too (source.fields.manager_id or "
                    "manager_email), which wins over the name",
                )
            )
            continue
        out.up[row] = chosen
        if ref in kept_by.repeated:
            out.ambiguous.add(row)
        if reason[chosen] is not None:
            out.left[row] = chosen
            out.findings.append(
                warning(
                    *at,
                    f"names {fields.describe(chosen)} at {location[chosen]}, who is excluded "
                    f"by {reason[chosen]}; {fields.describe(row)} stays in their team, led "
                    "by the nearest manager above who is kept, until HR names a new manager",
                )
            )
            continue
        if chosen == row or ref == own:
            out.findings.append(
                of_person(
                    *at,
                    "must name someone else: a person cannot be their own manager",
                )
            )
            out.up[row] = None
            continue
        out.manager[row] = ids[chosen] or None
        if not (id_refs[row] and email_refs[row]):
            continue
        by_email = refs.by_email(email_refs[row])
        if by_email is not None and by_email != chosen:
            out.findings.append(
                warning(
                    row,
                    location[row],
                    email_column,
                    email_refs[row],
                    f"names {fields.describe(by_email)}, but {id_column} names "
                    f"{fields.describe(chosen)}; the employee id wins",
                )
            )
    return out


def _unknown_warnings(
    export_name: str, unknown: Iterable[UnknownManager], doubt: Mapping[str, str | None]
) -> list[Finding]:
    """One warning per manager absent from the export: the people naming them are top;
    `doubt`, by column: why so many absent put the export in doubt."""
    return [
        warning(
            WHOLE_EXPORT,
            export_name,
            u.field,
            u.value,
            f"matches nobody in the export; {u.reports} "
            + ("person naming it is" if u.reports == 1 else "people naming it are")
            + f' top of the org (first at {u.first}; source.unknown_manager = "top")'
            + (f"; but {hint}" if (hint := doubt.get(u.field)) else ""),
        )
        for u in unknown
    ]


def find_cycles(
    fields: PersonColumns,
    kept: Sequence[int],
    kept_by_id: RowIndex,
    managers: Managers,
    labels: Mapping[str, str],
) -> list[Finding]:
    """Reporting cycles among the kept people, each told once, as a chain of ids."""
    # A duplicated id has no single manager, and a reference to a duplicated id or e-mail no
    # single target; both are already fatal, so they end chains here, which keeps the
    # reported cycles the same whatever the order of the rows.
    repeated, ambiguous = kept_by_id.repeated, managers.ambiguous
    ids, manager = fields.employee_id, managers.manager
    if repeated or ambiguous:
        manager_of = {
            ids[i]: manager[i]
            for i in kept
            if manager[i] and ids[i] and i not in ambiguous and ids[i] not in repeated
        }
    else:
        # No id held twice, no reference to one. Everyone on a cycle is the manager of the
        # one before, so the walk needs only the managers, each with their own manager.
        row_of = kept_by_id.first
        bosses = dict.fromkeys(manager)
        bosses.pop(None, None)
        manager_of = {boss: manager[row_of[boss]] for boss in bosses if boss in row_of}
    column = (
        labels.get("manager_id") or labels.get("manager_email") or labels.get("manager_name", "")
    )
    found: list[Finding] = []
    for cycle in forest(manager_of).cycles:
        # From the smallest id, so a cycle reads the same whatever the order of the rows.
        first = cycle.index(min(cycle))
        chain = cycle[first:] + cycle[:first]
        owner = kept_by_id.first[chain[0]]
        # Every row of the cycle is named: any of them may be the one to fix.
        others = capped(fields.location[kept_by_id.first[i]] for i in chain[1:])
        found.append(
            of_person(
                owner,
                f"{fields.location[owner]} (cycle with {others})",
                column,
                capped([*chain, chain[0]], sep=" → "),
                "must not form a reporting cycle (each id's manager is the next one)",
                holds=[kept_by_id.first[i] for i in chain],
            )
        )
    return found


class Org(NamedTuple):
    """The org under `filter.root`."""

    rows: Set[int] | None  # the kept rows in it (None: no root filter)
    root: int | None  # the root's row, whose own manager is cut
    findings: list[Finding]


NO_ROOT = Org(None, None, [])


def apply_root(
    export_name: str,
    root: str | None,
    fields: PersonColumns,
    reason: Sequence[str | None],
    kept: Sequence[int],
    dropped: Sequence[int],
    refs: Refs,
    up: Mapping[int, int | None],
) -> Org:
    """The root and everyone below them, following reporting lines also through
    filtered-out managers (a manager who left does not cut their team out of the org)."""
    if root is None or not root.strip():
        return NO_ROOT
    wanted = root.strip()
    top = refs.kept_by_id.first.get(wanted)
    if top is None:
        top = refs.kept_by_email.first.get(normalise_email(wanted))
    if top is None:
        gone = refs.dropped_by_id.get(wanted)
        if gone is None:
            gone = refs.dropped_by_email.get(normalise_email(wanted))
        why = (
            f"names {fields.describe(gone)} at {fields.location[gone]}, who is excluded by "
            f"{reason[gone]}"
            if gone is not None
            else "must be the employee id or e-mail of a person in the export"
        )
        return Org(None, None, [fatal(WHOLE_EXPORT, export_name, "filter.root", wanted, why)])
    lines = {**up, **_lines_of_dropped(fields, dropped, refs)}
    below: dict[int, list[int]] = {}
    for row in [*kept, *dropped]:
        boss = lines.get(row)
        if boss is not None:
            below.setdefault(boss, []).append(row)
    in_org: set[int] = set()
    visited = {top}
    queue = [top]
    while queue:
        row = queue.pop()
        if reason[row] is None:
            in_org.add(row)
        for child in below.get(row, ()):
            if child not in visited:
                visited.add(child)
                queue.append(child)
    return Org(in_org, top, [])


class LeftManagers(NamedTuple):
    """Managers who left: filtered out of the export (terminated, excluded by a filter)
    while kept people still name them. Their rows are read as people, so that their team
    can stay, led by a stand-in, until HR re-points their reports."""

    # By employee id: each such manager, and the filtered-out managers above them. A
    # person's `manager_id` here is their own manager's id (kept or filtered out; None
    # when the row names none, or one nobody has).
    people: Mapping[str, Person]
    reason: Mapping[str, str]  # by employee id: the filter that left them out
    of_person: Mapping[str, str]  # a kept person's id -> the manager who left, as named
    # By employee id: a manager missing from the export, their team's name as DX has it
    # (there is no row to render one from).
    names: Mapping[str, str] = {}


NO_MANAGER_LEFT = LeftManagers({}, {}, {})

# Why a manager known only from the teams DX last took left (`LeftManagers.reason`).
NOT_IN_EXPORT = "no longer in the export"


class KnownTeam(NamedTuple):
    """A team DX last verifiably took, led by a manager (`manager:<id>`), as the reader
    needs it when that manager's row is missing from the export: its name, and the id of
    the manager of the team above (None: a root, or a team above not led by a manager)."""

    name: str
    manager_above: str | None


def left_managers(
    fields: PersonColumns,
    row_values: Callable[[int], Mapping[str, str]],
    reason: Sequence[str | None],
    refs: Refs,
    left: Mapping[int, int],
    org: Org,
    gone: Mapping[int, str] = {},
    known: Mapping[str, KnownTeam] = {},
) -> LeftManagers:
    """The managers who left whom kept people (of the org) still name, and the filtered-out
    managers above them, up to the first kept one: the chain a stand-in is found on. `gone`
    and `known`: managers missing from the export whom people name (`Managers.gone`), and
    the teams DX last took, which give the chain above them."""
    if not left and not gone:
        return NO_MANAGER_LEFT
    ids = fields.employee_id
    in_org = org.rows
    of_person: dict[str, str] = {}
    people: dict[str, Person] = {}
    why: dict[str, str] = {}
    names: dict[str, str] = {}
    named: list[tuple[int, int | str]] = [
        *((row, manager) for row, manager in left.items() if ids[manager]),
        *gone.items(),
    ]
    for row, manager in named:
        if not ids[row] or row == org.root:
            continue  # the root's manager is cut; a blank id names no team
        if in_org is not None and row not in in_org:
            continue
        of_person[ids[row]] = manager if isinstance(manager, str) else ids[manager]
        at: int | str | None = manager
        while at is not None:
            if isinstance(at, str):  # a manager with no row, known from DX's teams
                if at in people or at not in known:
                    break
                team = known[at]
                people[at] = _missing_person(at, team)
                why[at] = NOT_IN_EXPORT
                names[at] = team.name
                above = team.manager_above
                boss = None if above is None else refs.by_id(above)
                at = above if boss is None else boss
                continue
            if reason[at] is None or ids[at] in people:
                break
            boss = _line_of(fields, at, refs)
            written = fields.manager_id_ref[at]
            missing = boss is None and written in known and written != ids[at]
            people[ids[at]] = _person_of(
                fields,
                row_values,
                at,
                written if missing else None if boss is None else ids[boss] or None,
            )
            why[ids[at]] = str(reason[at])
            at = written if missing else boss if boss is not None and ids[boss] else None
    return LeftManagers(people, why, of_person, names)


def _missing_person(employee_id: str, team: KnownTeam) -> Person:
    """A manager missing from the export read as a person, from what DX knows: only their
    id (their team keeps its own name, `LeftManagers.names`)."""
    return Person(
        employee_id=employee_id,
        email="",
        name=employee_id,
        manager_id=team.manager_above,
        department=None,
        status=None,
        at="the teams DX last took",
        row={},
    )


def _person_of(
    fields: PersonColumns,
    row_values: Callable[[int], Mapping[str, str]],
    row: int,
    manager_id: str | None,
) -> Person:
    """A filtered-out row read as a person (its team's name is rendered from it)."""
    return Person(
        employee_id=fields.employee_id[row],
        email=fields.email[row],
        name=fields.name[row] or fields.email[row] or fields.employee_id[row],
        manager_id=manager_id,
        department=collapse_whitespace(fields.department[row]) or None,
        status=fields.status[row] or None,
        at=fields.location[row],
        row=dict(row_values(row)),
    )


def _line_of(fields: PersonColumns, row: int, refs: Refs) -> int | None:
    """The row a row's manager reference names, kept or filtered out (None: none)."""
    boss = refs.by_id(fields.manager_id_ref[row])
    if boss is None:
        boss = refs.by_email(fields.manager_email_ref[row])
    if boss is None:
        boss = refs.by_name(fields.manager_name_ref[row])
    return boss if boss != row else None


def _lines_of_dropped(
    fields: PersonColumns, dropped: Sequence[int], refs: Refs
) -> dict[int, int | None]:
    """Reporting lines through filtered-out rows, so filter.root still sees the whole org."""
    return {row: _line_of(fields, row, refs) for row in dropped}
