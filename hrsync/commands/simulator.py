"""`hrsync simulator`: serve the bundled fake DX API until stopped.

With `--rehearse CONFIG` or `--users-from EXPORT` the account served is a rehearsal of
the operator's own org (`hrsync.simulator.rehearsal`): the export is read exactly as a
sync reads it (the config's [source], fields and filters, so HTTP and JSON sources work
too), its people are the DX users, and there are no teams yet.
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Final

from hrsync import logs
from hrsync.commands.init import guess_reading
from hrsync.commands.output import show
from hrsync.commands.startup import configure_logging, tell_found
from hrsync.config.loading import DEFAULT_CONFIG, Settings, config_file, load_settings
from hrsync.core.people import Directory
from hrsync.core.people.emails import is_valid_email
from hrsync.outcome import EXIT_FAILED, EXIT_USAGE
from hrsync.simulator.rehearsal import Rehearsal, rehearsal
from hrsync.simulator.serve import serve, serve_scenario
from hrsync.sources.base import SourceError, SourceUnavailable
from hrsync.sync.reading import Export, InputRefused, map_teams, read_export

# The rehearsal's own state store (beside the config): rehearsed runs and reference_ids
# never mix with a real store, and deleting it starts a rehearsal over.
REHEARSAL_DB: Final = "sqlite:///rehearsal.db"
_SHOWN: Final = 5  # e-mails named in the "not in DX" line; the rest are counted


def simulator(args: argparse.Namespace) -> int:
    if args.rehearse is None and args.users_from is None:
        if args.in_dx != 1.0:
            show("hrsync: --in-dx needs --rehearse CONFIG or --users-from EXPORT", file=sys.stderr)
            return EXIT_USAGE
        configure_logging(args)
        return serve(args.scenario, host=args.host, port=args.port, seed=args.seed)
    return _rehearse(args)


def _rehearse(args: argparse.Namespace) -> int:
    # stdout is for the lines a person copies; the log goes to stderr, warnings only
    # unless asked: reading the export is not news to the person starting it.
    logs.configure(args.log_format or "auto", args.log_level or "warning", sys.stderr)
    config: Path | None = args.rehearse if args.rehearse is not None else args.config
    # No config anywhere: the export is read as `hrsync init` would configure it.
    found = config_file(config, os.environ)
    tell_found(found)
    guessing = args.users_from is not None and found.path is None
    settings = load_settings(
        config,
        require_token=False,
        require_dx=False,
        require_source=args.users_from is None,
    )
    reads_url = bool(settings.source.url)
    if args.users_from is not None:
        export_path = args.users_from.resolve()
        source = dataclasses.replace(settings.source, path=export_path, url=None)
        settings = dataclasses.replace(settings, source=source)
    if guessing:
        try:
            source, proposal, report = guess_reading(args.users_from, settings.source)
        except SourceError as exc:
            show(f"hrsync: cannot rehearse: cannot read the export: {exc}", file=sys.stderr)
            return EXIT_USAGE
        kept = proposal.kept_statuses if proposal.active_status is not None else ()
        settings = dataclasses.replace(
            settings,
            source=dataclasses.replace(source, path=export_path),
            filter=dataclasses.replace(settings.filter, active_status=kept),
        )
    guessed = [f"# no config: the columns of {args.users_from} as hrsync init guesses them"]
    if guessing:
        guessed += [f"# {line}" for line in report.splitlines()[1:]]
    try:
        export = read_export(settings)
    except InputRefused as exc:
        show(f"hrsync: cannot rehearse with {exc.source or 'the export'}:", file=sys.stderr)
        for problem in exc.problems:
            show(f"  - {problem}", file=sys.stderr)
        if guessing:
            show("\n".join(guessed), file=sys.stderr)
            show(
                "These are the columns as hrsync init guesses them (no config was given): "
                f"write one with `hrsync init --from {args.users_from}`, set what it could "
                "not guess, then start again in its folder (or pass it with --config).",
                file=sys.stderr,
            )
        else:
            where = settings.config_path or "the HRSYNC_SOURCE__… variables"
            show(
                f"The export is read through the [source] settings of {where}: fix them, "
                "then start again.",
                file=sys.stderr,
            )
        return EXIT_USAGE
    except SourceUnavailable as exc:
        show(f"hrsync: cannot rehearse: {exc}", file=sys.stderr)
        return EXIT_FAILED
    if guessing:
        show("\n".join(guessed))  # comments: the lines to copy stay usable as they are
    people = rehearsal_people(export.directory)
    if not people:
        show(f"hrsync: cannot rehearse: {export.source} has nobody to sync", file=sys.stderr)
        return EXIT_USAGE
    planned = rehearsal(
        people, source=export.source, share=args.in_dx, leads=_leads(settings, export)
    )
    # The one place the token is shown is the line printed for the person to copy.
    logs.register_secret(planned.token)
    extra = [("HRSYNC_STATE__DATABASE_URL", REHEARSAL_DB)]
    # The sync reads the same file; a config reading an HR API keeps reading it (a path
    # beside its url would be refused), presumably the same people as the saved answer.
    if args.users_from is not None and not reads_url:
        extra.append(("HRSYNC_SOURCE__PATH", str(args.users_from.resolve())))
    used = settings.config_path  # --rehearse, --config, $HRSYNC_CONFIG or ./hrsync.toml
    if guessing:
        command = f"hrsync init --from {args.users_from}, then hrsync"
    elif (
        found.how != "$HRSYNC_CONFIG"
        and used is not None
        and used.absolute() == Path.cwd() / DEFAULT_CONFIG
    ):
        command = "hrsync"  # ./hrsync.toml: every command finds it here
    else:
        command = f"hrsync --config {used}" if used is not None else "hrsync --config CONFIG"
    return serve_scenario(
        planned.scenario,
        host=args.host,
        port=args.port,
        token=planned.token,
        exports=extra,
        notes=lambda base_url: _notes(planned, base_url, command),
        seed=args.seed,
    )


def _leads(settings: Settings, export: Export) -> set[str]:
    """The e-mails of the teams' leads, as the sync will map them; when the mapping is
    refused (the run would be too), the people anyone reports to."""
    try:
        return {team.lead_email for team in map_teams(settings, export).team_map.teams}
    except InputRefused:
        people = export.directory.people
        managers = {p.manager_id for p in people if p.manager_id}
        return {p.email for p in people if p.employee_id in managers}


def _notes(planned: Rehearsal, base_url: str, command: str) -> Sequence[str]:
    in_dx = len(planned.scenario.users)
    lines = [f"# {in_dx} of {planned.people} people are DX users; no teams yet"]
    if planned.left_out:
        named = ", ".join(planned.left_out[:_SHOWN])
        rest = len(planned.left_out) - _SHOWN
        more = f" and {rest} more" if rest > 0 else ""
        lines.append(
            f"# not DX users yet (DX ignores them in a team, hrsync names them): {named}{more}"
        )
    lines += [
        f'# or in the config file: [dx] base_url = "{base_url}" (the token stays in the'
        " environment)",
        "# rehearsal.db (beside the config) keeps this rehearsal's state; delete it when you"
        " restart the simulator",
        f"# next: {command} check, then plan, then sync",
    ]
    return lines


def rehearsal_people(directory: Directory) -> list[tuple[str, str]]:
    """(name, e-mail) of the people the rehearsal makes DX users: those kept, then those
    held with a usable e-mail. DX knows people by e-mail, whatever HR's row says of their
    manager: a person hrsync holds is still a DX user (and a held lead needs to be one)."""
    held = [(h.name, h.email) for h in directory.held if h.email and is_valid_email(h.email)]
    return [(p.name, p.email) for p in directory.people] + held
