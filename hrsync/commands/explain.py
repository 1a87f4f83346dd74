"""`explain PERSON`: why a person is, or is not, in a team. Reads the export and DX's
teams through the run's own read, map and assign stages; sends nothing, writes nothing
but the store's migrations."""

from __future__ import annotations

import argparse
from collections.abc import Mapping

from hrsync.commands.output import show
from hrsync.commands.startup import load_for, open_store
from hrsync.config.loading import Settings
from hrsync.core.export.filters import build_row_filter
from hrsync.core.listing import capped
from hrsync.core.people import HeldPerson, precedence
from hrsync.core.people.joins import provenance
from hrsync.core.people.union import origin, part_of
from hrsync.core.report.explanation import (
    DxUser,
    Sent,
    explain,
    explain_excluded,
    explain_held,
    find_excluded,
    find_held,
    find_person,
    people_named,
    suggestions,
)
from hrsync.core.teams.identity import assign
from hrsync.dx.client import DxClient
from hrsync.outcome import EXIT_FAILED, EXIT_OK
from hrsync.sources.base import SourceError
from hrsync.sync.holding import known_places
from hrsync.sync.reading import open_merged, read_known
from hrsync.sync.stages import Export, InputRefused, map_teams


def explain_command(args: argparse.Namespace) -> int:
    settings = load_for(args)
    query: str = args.person
    store = open_store(settings)
    try:
        # As a run reads it: a manager missing from the export may be one who left.
        export = read_known(settings, store)
    except SourceError as exc:
        show(f"hrsync: the export cannot be read: {exc}")
        return EXIT_FAILED
    except InputRefused as exc:
        if exc.stage == "source":  # never read: nothing is known of its people
            show("hrsync: the export cannot be read (the source is unreadable):")
        else:
            show(f"hrsync: the export cannot be synced ({exc.source or 'source'}):")
        show("\n".join(f"  - {p}" for p in exc.problems[:20]))
        return EXIT_FAILED
    finally:
        store.close()
    people = export.directory.people
    held = find_held(export.directory.held, query)
    if held is not None:
        return _explain_held(settings, export, held)
    person = find_person(people, query)
    if person is None:
        named = people_named(people, query)
        if len(named) > 1:
            show(
                f"{len(named)} people are named {query!r} in {export.source}; ask by id or e-mail:"
            )
            for one in named:
                show(f"  {one.employee_id}  {one.name} <{one.email}>")
            return EXIT_FAILED
        person = named[0] if named else None
    if person is None:
        # The export was read and kept nobody of that id; a filtered row may still hold it.
        # Read as the sync reads it, with its joins (a filter may read a joined column) and
        # its unions (the person may be one of theirs).
        try:
            _, joined, merged, _ = open_merged(settings)
        except (SourceError, InputRefused) as exc:
            show(f"hrsync: the export cannot be read again to look among its filtered rows: {exc}")
            return EXIT_FAILED
        fields = merged.fields
        row_filter, _ = build_row_filter(settings.filter, fields, merged.columns)
        excluded = find_excluded(merged.table.rows(), fields, row_filter, query)
        if excluded is not None:
            show(explain_excluded(query, excluded), end="")
            for line in provenance(
                excluded.values, excluded.email, excluded.employee_id, joined.reports
            ):
                show(line)
            return EXIT_OK
        close = suggestions(people, query)
        hint = f"; did you mean {capped(repr(c) for c in close)}?" if close else ""
        show(
            f"no person with employee id, e-mail or name {query!r} in {export.source} "
            f"(among the {len(people)} people kept after filters){hint}"
        )
        return EXIT_FAILED
    store = open_store(settings)
    try:
        try:
            team_map = map_teams(settings, export, known_places(store, export.directory)).team_map
        except InputRefused as exc:
            show(f"hrsync: the teams cannot be made from {export.source}:")
            show("\n".join(f"  - {p}" for p in exc.problems[:20]))
            return EXIT_FAILED
        with DxClient.from_settings(settings) as client:
            dx_teams = client.teams()
        # The assign stage's own function: the reference_ids a sync would send.
        assignment = assign(team_map.teams, store.identities.load(), dx_teams)
        sent: dict[str, Sent] = {}
        for submission in store.submissions.after(None):  # oldest first: the last wins
            for row in submission.plan.rows:
                sent[row.reference_id] = Sent(
                    submission.run_id,
                    submission.sent_at or submission.created_at,
                    submission.status.value,
                )
        known = store.people.dx_people().get(person.email)
    finally:
        store.close()
    show(
        explain(
            person,
            people,
            team_map,
            export.fields,
            rows=assignment.teams,
            dx_teams=dx_teams,
            sent=sent,
            strategy=settings.mapping.strategy,
            dx_user=DxUser(known.counted, known.evidence) if known is not None else None,
            joined=[
                *_origin(export, person.employee_id),
                *provenance(person.attributes, person.email, person.employee_id, export.joins),
                *_ranked(settings, export, person.employee_id, person.attributes),
            ],
        ),
        end="",
    )
    return EXIT_OK


def _explain_held(settings: Settings, export: Export, person: HeldPerson) -> int:
    store = open_store(settings)
    try:
        placed = map_teams(settings, export, known_places(store, export.directory))
        record = store.people.held_people().get(person.key)
    except InputRefused as exc:
        show(f"hrsync: the teams cannot be made from {export.source}:")
        show("\n".join(f"  - {p}" for p in exc.problems[:20]))
        return EXIT_FAILED
    finally:
        store.close()
    hold = next(h for h in placed.holds if h.person.row == person.row)
    show(explain_held(hold, record.since if record is not None else None), end="")
    for line in _origin(export, person.employee_id):
        show(line)
    for line in provenance(person.values, person.email, person.employee_id, export.joins):
        show(line)
    for line in _ranked(settings, export, person.employee_id, person.values):
        show(line)
    return EXIT_OK


def _origin(export: Export, employee_id: str) -> list[str]:
    """With `[[source.union]]`: the source a person came from, and their id there."""
    where = origin(export.parts, employee_id)
    return [] if where is None else [f"  source: {where}"]


def _ranked(
    settings: Settings, export: Export, employee_id: str, values: Mapping[str, str]
) -> list[str]:
    """Which column of each precedence list gave the person's value: the lists of the
    source they came from (a union's own `[source.union.fields]`, or `[source.fields]`)."""
    source = settings.source
    first_of, own = source.first_of, source.name
    if export.parts:
        part = part_of(export.parts, employee_id)
        union = next((u for u in source.union if part.prefix and u.name == part.name), None)
        if union is not None:
            first_of, own = union.table.first_of, union.name
    return precedence.provenance(values, first_of, own)
