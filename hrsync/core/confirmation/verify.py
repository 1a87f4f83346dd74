"""Did DX really change? Convergence of `teams.list` and audit-trail matching (pure).

The polling loop (with I/O and a clock) lives in the shell; these functions judge one
`teams.list` reply and one batch of audit events.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from functools import partial
from typing import Any

from hrsync.core.gate.compare import index_dx
from hrsync.core.gate.plan import Change, Create, LeadChange, Move, Plan, Rename, rename_and_move
from hrsync.core.listing import capped
from hrsync.core.teams.identity import TeamRow
from hrsync.dx.models import AuditEvent, DxTeam

# ---------------------------------------------------------------- convergence


@dataclass(frozen=True, slots=True)
class Uncounted:
    """DX counts fewer contributors than were sent: DX ignores e-mails it does not know."""

    reference_id: str
    name: str
    sent: int
    counted: int


@dataclass(frozen=True, slots=True)
class Overcounted:
    """DX counts more contributors than were sent: it still has members we removed."""

    reference_id: str
    name: str
    sent: int
    counted: int


@dataclass(frozen=True, slots=True)
class CountRange:
    """What DX may count for a team when hrsync has not learned of everyone whether DX
    counts them: at least the members known to be counted, at most everyone sent."""

    low: int
    high: int

    def holds(self, counted: int) -> bool:
        return self.low <= counted <= self.high


@dataclass(frozen=True, slots=True)
class Undercounted:
    """DX counts fewer contributors than the members it is known to count: it has not
    taken the import yet (or lacks someone it counted before)."""

    reference_id: str
    name: str
    known_counted: int
    counted: int


@dataclass(frozen=True, slots=True)
class Convergence:
    missing: tuple[TeamRow, ...]
    # The renames and moves DX has not taken yet, as the plan would propose them now.
    wrong_names: tuple[Rename, ...]
    wrong_parents: tuple[Move, ...]
    still_present: tuple[DxTeam, ...]  # planned archives DX still lists
    contributors_uncounted: tuple[Uncounted, ...]  # reported, never fatal
    # Teams whose new lead or members teams.list cannot show: DX has not touched them
    # since the submission yet (their last_changed_at is older), so the import has not run.
    not_yet_changed: tuple[str, ...] = ()
    # DX never counts more contributors than were sent once it took them.
    overcounted: tuple[Overcounted, ...] = ()
    # Watched teams (holding people not known to be counted) DX has not touched since the
    # submission: never a failure; their count says who DX counts only once DX took it.
    unsettled: tuple[str, ...] = ()
    # An awaited or watched team changed after the submission: DX took the import.
    import_shown: bool = False
    # Teams given a count range whose count is below it.
    undercounted: tuple[Undercounted, ...] = ()

    @property
    def _shows_everything_but_counts(self) -> bool:
        return not (
            self.missing
            or self.wrong_names
            or self.wrong_parents
            or self.still_present
            or self.not_yet_changed
            or self.overcounted
        )

    @property
    def converged(self) -> bool:
        return self._shows_everything_but_counts and not self.undercounted

    @property
    def only_undercounted(self) -> bool:
        """DX shows everything but counts fewer in some teams than the members it is known
        to count: what was learned of them is contradicted (`dx_users.contradicted`)."""
        return bool(self.undercounted) and self._shows_everything_but_counts

    def summary(self) -> str:
        if self.converged:
            text = "DX matches the submission"
        else:
            # Each kind of difference: how many, what, and a few of them by name.
            kinds: list[tuple[Sequence[object], str, Iterable[object]]] = [
                (self.missing, "missing", (r.name for r in self.missing)),
                (
                    self.wrong_names,
                    "with the wrong name",
                    (f"{m.old_name!r} should be {m.new_name!r}" for m in self.wrong_names),
                ),
                (
                    self.wrong_parents,
                    "under the wrong parent",
                    (m.name for m in self.wrong_parents),
                ),
                (self.still_present, "not yet archived", (t.name for t in self.still_present)),
                (
                    self.not_yet_changed,
                    "with a new lead or members not yet changed",
                    self.not_yet_changed,
                ),
                (
                    self.overcounted,
                    "with more contributors than sent",
                    (f"{o.name}: {o.counted} > {o.sent}" for o in self.overcounted),
                ),
                (
                    self.undercounted,
                    "counting fewer contributors than it is known to count",
                    (f"{u.name}: {u.counted} < {u.known_counted}" for u in self.undercounted),
                ),
            ]
            parts = [
                f"{len(found)} {what} ({_few(named)})" for found, what, named in kinds if found
            ]
            text = "DX does not match yet: " + "; ".join(parts)
        if self.contributors_uncounted:
            people = sum(u.sent - u.counted for u in self.contributors_uncounted)
            text += (
                f"; {people} contributors in {len(self.contributors_uncounted)} teams "
                "not counted by DX so far (e-mails it does not know, or counts not shown yet)"
            )
        return text


def _few(names: Iterable[object]) -> str:
    # A summary line names a few teams; the log's per-team events name them all.
    return capped(names, limit=5)


_NOTHING: Mapping[str, datetime] = {}


def check_convergence(
    desired: Sequence[TeamRow],
    archived: Sequence[str],
    current: Sequence[DxTeam],
    *,
    archived_dx_ids: Sequence[str] = (),
    awaiting_change: Mapping[str, datetime] = _NOTHING,
    watching: Mapping[str, datetime] = _NOTHING,
    count_ranges: Mapping[str, CountRange] | None = None,
) -> Convergence:
    """Judge one `teams.list` reply against the submission.

    `archived` are the reference_ids the plan archived; `archived_dx_ids` names planned
    archives that have no reference_id by their DX id. Parents are compared by
    reference_id exactly as in planning.

    `awaiting_change` maps reference_ids whose change teams.list cannot show (a new
    lead: it lists only a manager id; new members: it lists only a count) to DX's
    `last_changed_at` for the team before the submission. Such a team counts as done once
    DX reports a later `last_changed_at`; one without the timestamp is taken as done, as
    the server gives nothing to wait for. Comparing DX's timestamps with each other
    avoids any clock skew with ours. A team DX counts more contributors for than were
    sent is not done either: DX drops unknown e-mails, it never adds members.

    `watching` maps teams holding people not known to be counted the same way; they never
    keep the reply from converging (`unsettled` names those DX has not touched yet).

    `count_ranges` bounds the count of teams holding people whose DX status is not known
    (`dx_users.count_ranges`): a count below the members known to be counted is not done.
    Every team's count is at most what was sent.
    """
    ranges = count_ranges or {}
    dx = index_dx(current)

    missing: list[TeamRow] = []
    wrong_names: list[Rename] = []
    wrong_parents: list[Move] = []
    uncounted: list[Uncounted] = []
    overcounted: list[Overcounted] = []
    undercounted: list[Undercounted] = []
    for row in desired:
        team = dx.by_ref.get(row.reference_id)
        if team is None:
            missing.append(row)
            continue
        rename, move = rename_and_move(row, team, dx)
        if rename is not None:
            wrong_names.append(rename)
        if move is not None:
            wrong_parents.append(move)
        sent = len(set(row.contributors))
        if team.contributors < sent:
            uncounted.append(Uncounted(row.reference_id, row.name, sent, team.contributors))
        elif team.contributors > sent:
            overcounted.append(Overcounted(row.reference_id, row.name, sent, team.contributors))
        bounds = ranges.get(row.reference_id)
        if bounds is not None and team.contributors < bounds.low:
            undercounted.append(
                Undercounted(row.reference_id, row.name, bounds.low, team.contributors)
            )

    not_yet, awaited_done = _not_changed(awaiting_change, dx.by_ref)
    unsettled, watched_done = _not_changed(watching, dx.by_ref)
    shown = bool(awaited_done or watched_done)

    # A planned archive of a team sharing a desired reference_id (the extra one) is told
    # by its DX id: by its reference_id, the desired holder would never count as gone.
    gone_refs = set(archived).difference(row.reference_id for row in desired)
    gone_ids = set(archived_dx_ids)
    still_present = [
        t
        for t in dx.by_id.values()
        if t.id in gone_ids or (t.reference_id is not None and t.reference_id in gone_refs)
    ]
    return Convergence(
        missing=tuple(missing),
        wrong_names=tuple(wrong_names),
        wrong_parents=tuple(wrong_parents),
        still_present=tuple(sorted(still_present, key=lambda t: t.name)),
        contributors_uncounted=tuple(uncounted),
        not_yet_changed=tuple(sorted(not_yet)),
        overcounted=tuple(overcounted),
        unsettled=tuple(sorted(unsettled)),
        import_shown=shown,
        undercounted=tuple(undercounted),
    )


def _not_changed(
    since: Mapping[str, datetime], by_ref: Mapping[str, DxTeam]
) -> tuple[list[str], int]:
    """Names of the teams DX has not changed after the time given for each, and how many
    it has changed."""
    names: list[str] = []
    done = 0
    for ref, before in since.items():
        touched = by_ref.get(ref)
        if touched is None or touched.last_changed_at is None:
            continue  # missing is reported above; no timestamp, nothing to wait for
        if touched.last_changed_at <= before:
            names.append(touched.name)
        else:
            done += 1
    return names, done


def awaiting_since(
    refs: Sequence[str],
    rows: Mapping[str, Mapping[str, Any]],
    current: Sequence[DxTeam],
    earlier: Sequence[tuple[Mapping[str, Any], Mapping[str, datetime]]] = (),
) -> dict[str, datetime]:
    """Before which `last_changed_at` each awaited team counts as not yet changed.

    Normally DX's value now. When an earlier submission since the last verified one
    asked for exactly the same row (`earlier`: its rows by reference_id and its own
    awaited times), DX may apply that one any moment, and then this submission changes
    nothing for the team: the earlier, older time is used, so DX's change counts for
    both instead of leaving this one waiting for a change that never comes.
    A team without a timestamp in DX is not awaited (nothing to wait for).
    """
    # The team holding the reference_id in `index_dx`, the one convergence checks: when
    # two share it, another's older time would count the holder as changed at once.
    holders = index_dx(current).by_ref
    found: dict[str, datetime] = {}
    for ref in refs:
        holder = holders.get(ref)
        when = holder.last_changed_at if holder is not None else None
        if when is None:
            continue
        for earlier_rows, earlier_awaited in earlier:
            before = earlier_awaited.get(ref)
            if before is not None and before < when and earlier_rows.get(ref) == rows.get(ref):
                when = before
        found[ref] = when
    return found


# ---------------------------------------------------------------- audit trail


@dataclass(frozen=True, slots=True)
class AuditMatch:
    matched: tuple[tuple[Change, AuditEvent], ...]
    missing: tuple[Change, ...]  # planned renames / known lead changes with no event
    unexpected: tuple[AuditEvent, ...]  # events since submission the plan does not explain
    # Events explained by hrsync's own earlier submissions (recorded in the same window).
    earlier: tuple[AuditEvent, ...] = ()


def match_audit(
    plan: Plan,
    events: Sequence[AuditEvent],
    since: datetime,
    earlier: Sequence[Plan] = (),
) -> AuditMatch:
    """Pair audit events (created at or after `since`) with planned changes.

    `change_name` events match Renames by their to-name (and from-name when present);
    `change_manager` events match LeadChanges by the new lead's e-mail, preferring one on
    the same team. A lead change whose old lead hrsync never knew may produce no event
    (the lead may already be right), so it is never "missing"; creates likewise.
    Metadata may be a dict, a JSON string, or lack keys.

    `earlier` are the plans of hrsync's own earlier submissions whose events may fall in
    the same window (two runs a minute apart): what this plan leaves over and one of
    them explains is hrsync's own, not unexpected.
    """
    if since.tzinfo is None:
        raise ValueError(f"since must be a timezone-aware datetime, got naive {since!r}")
    # Pages may overlap while DX adds events: an id counts once.
    unique = {e.id: e for e in events if _created(e) >= since}
    pending = sorted(unique.values(), key=lambda e: (_created(e), e.id))
    matched: list[tuple[Change, AuditEvent]] = []
    missing: list[Change] = []

    def take(predicate: Callable[[AuditEvent], bool]) -> AuditEvent | None:
        for event in pending:
            if predicate(event):
                pending.remove(event)
                return event
        return None

    for change in plan.changes:
        event: AuditEvent | None = None
        if isinstance(change, Rename):
            event = take(partial(_is_rename_of, change=change))
            if event is None:
                missing.append(change)
        elif isinstance(change, LeadChange):
            event = take(partial(_is_lead_change_of, change=change, same_team=True))
            if event is None:
                event = take(partial(_is_lead_change_of, change=change, same_team=False))
            if event is None and change.old_lead_known:
                missing.append(change)
        if event is not None:
            matched.append((change, event))

    # Events DX may emit while creating a team are explained by the Create. Only events
    # under the team's name can be, so each Create looks at those alone: a scan of every
    # event per Create cost seconds for a first run creating thousands of teams.
    under: dict[str, list[AuditEvent]] = {}
    for event in pending:
        under.setdefault(event.team, []).append(event)
    created: set[str] = set()  # ids of the events taken
    for change in plan.changes:
        if isinstance(change, Create):
            for event in under.get(change.name, ()):
                if event.id not in created and _belongs_to_create(event, change):
                    created.add(event.id)
                    matched.append((change, event))
    if created:
        pending[:] = [event for event in pending if event.id not in created]

    ours: list[AuditEvent] = []
    for older in earlier:
        for change in older.changes:
            event = None
            if isinstance(change, Rename):
                event = take(partial(_is_rename_of, change=change))
            elif isinstance(change, LeadChange):
                event = take(partial(_is_lead_change_of, change=change, same_team=False))
            if event is not None:
                ours.append(event)

    return AuditMatch(tuple(matched), tuple(missing), tuple(pending), tuple(ours))


def _created(event: AuditEvent) -> datetime:
    # DX sends Unix seconds, which are UTC; a parser that forgot the zone must not crash us.
    created = event.created
    return created if created.tzinfo is not None else created.replace(tzinfo=UTC)


def _side(event: AuditEvent, key: str) -> Any:
    """`from` or `to` of an event, as `hrsync.dx.parse` decoded it."""
    return event.before if key == "from" else event.after


def _name_of(value: Any) -> str | None:
    if isinstance(value, str):
        return value
    if isinstance(value, dict):
        name = value.get("name")
        return name if isinstance(name, str) else None
    return None


def _email_of(value: Any) -> str | None:
    if isinstance(value, dict):
        value = value.get("email")
    if isinstance(value, str) and "@" in value:
        return value.strip().casefold()
    return None


def _is_rename_of(event: AuditEvent, change: Rename) -> bool:
    if event.action != "change_name":
        return False
    to_name = _name_of(_side(event, "to"))
    if to_name is None:
        to_name = event.team  # no usable metadata: the event's team name is all we have
    return to_name == change.new_name and _name_of(_side(event, "from")) in (None, change.old_name)


def _is_lead_change_of(event: AuditEvent, change: LeadChange, *, same_team: bool) -> bool:
    if event.action != "change_manager":
        return False
    if _email_of(_side(event, "to")) != change.new_lead.casefold():
        return False
    return not same_team or event.team == change.name


def _belongs_to_create(event: AuditEvent, change: Create) -> bool:
    if event.team != change.name:
        return False
    if event.action == "change_manager":
        return _email_of(_side(event, "to")) in (None, change.lead_email.casefold())
    if event.action == "change_name":
        return _name_of(_side(event, "to")) in (None, change.name)
    return False
