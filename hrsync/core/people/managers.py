"""Each kept person's manager from the references the export gives, reporting cycles, and
the org under `filter.root` (pure)."""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from itertools import compress, repeat
from operator import eq

from hrsync.core.emails import normalise_email
from hrsync.core.listing import capped
from hrsync.core.people.columns import _pick, _Rows, _scatter, _take
from hrsync.core.people.validation import _natural, _Report
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


class _Index:
    """Rows by a key: the first row for each key, and every row for keys held more than once."""

    def __init__(self, rows: Sequence[int], keys: Sequence[str]) -> None:
        held = _take(keys, rows)
        # Built backwards, so that the first row of each key is the one that stays.
        self.first: dict[str, int] = dict(zip(reversed(held), reversed(rows), strict=True))
        self.first.pop("", None)
        self.repeated: dict[str, list[int]] = {}
        if len(self.first) + held.count("") != len(held):
            for key, row in zip(held, rows, strict=True):
                if key and self.first[key] != row:
                    self.repeated.setdefault(key, [self.first[key]]).append(row)


def _first(data: _Rows, rows: Iterable[int], keys: Sequence[str]) -> dict[str, int]:
    """One row per key; on a tie the earliest location, whatever the order of the rows."""
    firsts: dict[str, int] = {}
    for row in rows:
        key = keys[row]
        if not key:
            continue
        held = firsts.get(key)
        if held is None or _natural(data.location[row]) < _natural(data.location[held]):
            firsts[key] = row
    return firsts


@dataclass(frozen=True, slots=True)
class _Names:
    """Rows by `name_key` of their name, for `source.fields.manager_name` (empty when unset)."""

    kept: _Index
    dropped: Mapping[str, int]


@dataclass(frozen=True, slots=True)
class _Refs:
    """Where a manager reference may point: kept rows first, then filtered-out ones."""

    kept_by_id: _Index
    kept_by_email: _Index
    dropped_by_id: Mapping[str, int]
    dropped_by_email: Mapping[str, int]
    names: _Names

    def by_id(self, ref: str) -> int | None:
        return _lookup(ref, self.kept_by_id, self.dropped_by_id)

    def by_email(self, ref: str) -> int | None:
        return _lookup(ref, self.kept_by_email, self.dropped_by_email)

    def by_name(self, written: str) -> int | None:
        return _lookup(name_key(written), self.names.kept, self.names.dropped)


def _lookup(ref: str, kept: _Index, dropped: Mapping[str, int]) -> int | None:
    if not ref:
        return None
    found = kept.first.get(ref)
    return dropped.get(ref) if found is None else found


def _resolve_plain_ids(
    data: _Rows, kept: Sequence[int], kept_by_id: _Index, *, links: bool
) -> Sequence[int]:
    """The common case in bulk: a manager given by an id alone (no e-mail beside it to
    compare) that names one kept person other than the row itself. Returns the rows left
    for the exact, row-by-row rules (`_resolve_managers`)."""
    if kept_by_id.repeated or not any(data.manager_id_ref):
        return kept  # an id held twice needs the exact rules for every row naming it
    references = _take(data.manager_id_ref, kept)
    nobody = -1  # the position of no row: where a reference matches no kept person
    chosen = list(map(kept_by_id.first.get, references, repeat(nobody)))
    # Left for the exact rules: no match (or no id given), the row itself, an e-mail beside.
    left = set(compress(kept, map(nobody.__eq__, chosen)))
    # No id is held twice here, so a row names itself exactly when its manager is its row.
    if any(map(eq, chosen, kept)):
        left.update(r for r, c in zip(kept, chosen, strict=True) if c == r)
    if any(data.manager_email_ref):
        left.update(r for r in kept if data.manager_email_ref[r])
    if links:
        data.up.update(zip(kept, chosen, strict=True))
    # Found by id, the manager's id equals the reference. The manager's own id string is
    # kept, not the reference's copy of it: every later look-up by a manager's id (teams,
    # cycles, leads) then matches by identity instead of comparing text.
    owners = [*data.employee_id, None]  # owners[nobody] is None
    _scatter(data.manager, kept, _pick(owners, chosen))
    for row in left:
        data.up[row] = data.manager[row] = None
    return sorted(left)


def _resolve_managers(
    data: _Rows,
    kept: Sequence[int],
    refs: _Refs,
    columns: Mapping[str, str],
    report: _Report,
    *,
    top: bool,
    links: bool,
) -> list[UnknownManager]:
    """Each kept row's manager; with `top`, references matching nobody are returned
    (grouped by value) instead of reported."""
    id_column = columns.get("manager_id", "")
    email_column = columns.get("manager_email", "")
    name_column = columns.get("manager_name", "")
    absent: dict[tuple[str, str], list[int]] = {}
    ids, emails, reason = data.employee_id, data.email, data.reason
    id_refs, email_refs, name_refs = (
        data.manager_id_ref,
        data.manager_email_ref,
        data.manager_name_ref,
    )
    manager, up = data.manager, data.up
    for row in _resolve_plain_ids(data, kept, refs.kept_by_id, links=links):
        # The id wins when several are given, then the e-mail, then the name.
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
            column, kept_by, dropped_by = name_column, refs.names.kept, refs.names.dropped
            what, own = "name", None
        else:
            continue
        chosen = kept_by.first.get(ref)
        if chosen is None:
            chosen = dropped_by.get(ref)
        if chosen is None:
            if top:
                absent.setdefault((column, written), []).append(row)
                continue
            report.fatal(
                row,
                data.location[row],
                column,
                written,
                f"must be the {what} of a person in the export, but it matches nobody"
                + ' (source.unknown_manager = "top" makes such people top of the org)',
            )
            continue
        if what == "name" and ref in kept_by.repeated:
            # Ids and e-mails held twice are fatal anyway; a name held twice is fine until
            # someone's manager is given by it alone.
            same = sorted(kept_by.repeated[ref], key=lambda i: _natural(data.location[i]))
            listed = capped((f"{data.describe(i)} at {data.location[i]}" for i in same), sep="; ")
            report.fatal(
                row,
                data.location[row],
                column,
                written,
                f"must name one person, but it matches {len(same)}: {listed}; "
                "give the manager by id or e-mail too (source.fields.manager_id or "
                "manager_email), which wins over the name",
            )
            continue
        up[row] = chosen
        if ref in kept_by.repeated:
            data.ambiguous.add(row)
        if reason[chosen] is not None:
            report.warn(
                row,
                data.location[row],
                column,
                written,
                f"names {data.describe(chosen)} at {data.location[chosen]}, who is excluded "
                f"by {reason[chosen]}; {data.describe(row)} is kept without a manager",
            )
            continue
        if chosen == row or ref == own:
            report.fatal(
                row,
                data.location[row],
                column,
                written,
                "must name someone else: a person cannot be their own manager",
            )
            up[row] = None
            continue
        manager[row] = ids[chosen] or None
        if not (id_refs[row] and email_refs[row]):
            continue
        by_email = refs.by_email(email_refs[row])
        if by_email is not None and by_email != chosen:
            report.warn(
                row,
                data.location[row],
                email_column,
                email_refs[row],
                f"names {data.describe(by_email)}, but {id_column} names "
                f"{data.describe(chosen)}; the employee id wins",
            )
    return [
        UnknownManager(column, value, len(rows), data.location[rows[0]])
        for (column, value), rows in absent.items()
    ]


def _report_unknown_managers(
    export_name: str, absent: Sequence[UnknownManager], report: _Report
) -> None:
    """One warning per manager absent from the export: the people naming them are top."""
    for unknown in absent:
        people = "person naming it is" if unknown.reports == 1 else "people naming it are"
        report.warn(
            -1,
            export_name,
            unknown.field,
            unknown.value,
            f"matches nobody in the export; {unknown.reports} {people} top of the org "
            f'(first at {unknown.first}; source.unknown_manager = "top")',
        )


def _link_dropped(data: _Rows, dropped: Sequence[int], refs: _Refs) -> None:
    """Reporting lines through filtered-out rows, so filter.root still sees the whole org."""
    for row in dropped:
        up = refs.by_id(data.manager_id_ref[row])
        if up is None:
            up = refs.by_email(data.manager_email_ref[row])
        if up is None:
            up = refs.by_name(data.manager_name_ref[row])
        data.up[row] = up if up != row else None


def _report_cycles(
    data: _Rows,
    kept: Sequence[int],
    kept_by_id: _Index,
    columns: Mapping[str, str],
    report: _Report,
) -> None:
    # A duplicated id has no single manager, and a reference to a duplicated id or e-mail no
    # single target; both are already fatal, so they end chains here, which keeps the
    # reported cycles the same whatever the order of the rows.
    repeated, ambiguous = kept_by_id.repeated, data.ambiguous
    ids, manager = data.employee_id, data.manager
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
        columns.get("manager_id") or columns.get("manager_email") or columns.get("manager_name", "")
    )
    for cycle in forest(manager_of).cycles:
        # From the smallest id, so a cycle reads the same whatever the order of the rows.
        first = cycle.index(min(cycle))
        chain = cycle[first:] + cycle[:first]
        owner = kept_by_id.first[chain[0]]
        report.fatal(
            owner,
            data.location[owner],
            column,
            capped([*chain, chain[0]], sep=" → "),
            "must not form a reporting cycle (each id's manager is the next one)",
        )


def _apply_root(
    export_name: str,
    root: str | None,
    data: _Rows,
    kept: Sequence[int],
    dropped: Sequence[int],
    refs: _Refs,
    report: _Report,
) -> set[int] | None:
    """Positions of the kept rows in the org under filter.root (None: no root filter)."""
    if root is None or not root.strip():
        return None
    wanted = root.strip()
    top = refs.kept_by_id.first.get(wanted)
    if top is None:
        top = refs.kept_by_email.first.get(normalise_email(wanted))
    if top is None:
        gone = refs.dropped_by_id.get(wanted)
        if gone is None:
            gone = refs.dropped_by_email.get(normalise_email(wanted))
        why = (
            f"names {data.describe(gone)} at {data.location[gone]}, who is excluded by "
            f"{data.reason[gone]}"
            if gone is not None
            else "must be the employee id or e-mail of a person in the export"
        )
        report.fatal(-1, export_name, "filter.root", wanted, why)
        return None
    below: dict[int, list[int]] = {}
    for row in [*kept, *dropped]:
        up = data.up.get(row)
        if up is not None:
            below.setdefault(up, []).append(row)
    in_org: set[int] = set()
    visited = {top}
    queue = [top]
    while queue:
        row = queue.pop()
        if data.reason[row] is None:
            in_org.add(row)
        for child in below.get(row, ()):
            if child not in visited:
                visited.add(child)
                queue.append(child)
    data.manager[top] = None
    return in_org
