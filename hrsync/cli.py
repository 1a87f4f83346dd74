"""The command line: parse it, hand the command to its module in `hrsync.commands`, and
turn what escapes into an exit code (a configuration error is 2, a crash one clean line
and 1)."""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence
from pathlib import Path

from hrsync import __version__
from hrsync.outcome import EXIT_FAILED, EXIT_OK, EXIT_USAGE


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="hrsync",
        description="Keep DX's team hierarchy in step with the HR system.",
    )
    parser.add_argument("--version", action="version", version=f"hrsync {__version__}")
    _add_global_options(parser, default=None)
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    sub.required = True

    run = sub.add_parser("run", help="the daemon: sync on the configured schedule")
    run.add_argument("--now", action="store_true", help="also run once at start")

    sync = sub.add_parser("sync", help="one sync now")
    mode = sync.add_mutually_exclusive_group()
    mode.add_argument("--dry-run", action="store_true", help="plan only; send nothing")
    mode.add_argument(
        "--preview",
        nargs="?",
        const=True,
        default=False,
        metavar="PLAN_ID",
        help="send the preview call and print the preview URL; nothing is applied. With "
        "PLAN_ID: a preview of exactly that refused plan, as it was refused",
    )
    sync.add_argument(
        "--allow-archive",
        type=_non_negative_int,
        default=0,
        metavar="N",
        help="let this run archive up to N teams past the archive guards",
    )
    sync.add_argument(
        "--allow-shrink", action="store_true", help="accept a shrunken export this once"
    )
    sync.add_argument(
        "--allow-held",
        type=_non_negative_int,
        default=None,
        metavar="N",
        help="let this run hold up to N people whose own rows have problems, past "
        "sync.max_held and sync.max_held_fraction",
    )
    sync.add_argument(
        "--allow-attribute-changes",
        action="store_true",
        help="let this run change more user attributes than attributes.max_change_fraction",
    )
    _output_options(sync, ("text", "json"))
    sync.add_argument(
        "--summary",
        choices=("auto", "always", "never"),
        default="auto",
        help="end with a one-paragraph summary for a person (auto: when stdout is a terminal)",
    )

    plan = sub.add_parser("plan", help="print the plan (same as sync --dry-run)")
    plan.add_argument(
        "--detailed-exitcode",
        action="store_true",
        help="exit 0 when nothing would change, 2 when something would, 1 on error",
    )
    _output_options(plan, ("text", "json", "tree"))

    history = sub.add_parser("history", help="recent runs, one line each")
    history.add_argument("--limit", type=_non_negative_int, default=20, metavar="N")
    history.add_argument(
        "--all", action="store_true", help="also list dry runs and previews (`plan`)"
    )
    _output_options(history, ("text", "json"), "Reference, The plan as JSON: history --format json")

    approve = sub.add_parser(
        "approve",
        help="approve exactly one refused plan by its id; the daemon applies it (sends nothing)",
    )
    approve.add_argument("plan_id", metavar="PLAN_ID", help="the id a refusal printed")
    approve.add_argument("--note", metavar="TEXT", help="why: kept with the approval")
    approve.add_argument("--by", metavar="NAME", help="who approves (default: the OS user)")
    approvals = sub.add_parser("approvals", help="approvals: pending, applied and expired")
    approvals.add_argument("--limit", type=_non_negative_int, default=50, metavar="N")
    _output_options(approvals, ("text", "json"), "Reference, The plan as JSON: approvals")

    check = sub.add_parser(
        "check", help="readiness report: config, export, token, scopes, snapshots, the plan"
    )
    check.add_argument(
        "--preview",
        action="store_true",
        help="also ask DX to validate the plan (a preview: it applies nothing, but DX keeps "
        "it in its web app)",
    )
    sub.add_parser("healthcheck", help="exit 0 when the daemon's heartbeat is fresh")
    explain = sub.add_parser(
        "explain", help="why a person is, or is not, in a team (reads the export and DX)"
    )
    explain.add_argument("person", metavar="PERSON", help="employee id or e-mail")
    status = sub.add_parser(
        "status", help="the daemon, last runs, what needs a person, the next run (store only)"
    )
    status.add_argument("--format", choices=("text", "json"), default="text")

    simulator = sub.add_parser("simulator", help="serve the bundled fake DX API")
    account = simulator.add_mutually_exclusive_group()
    account.add_argument("--scenario", type=Path, metavar="FILE", help="scenario JSON")
    account.add_argument(
        "--rehearse",
        type=Path,
        metavar="CONFIG",
        help="rehearse with your own org: the people of CONFIG's export are the DX users, "
        "with no teams and a new token (printed)",
    )
    account.add_argument(
        "--users-from",
        type=Path,
        metavar="EXPORT",
        help="as --rehearse, with the people of this file, read through --config's [source] "
        "settings (else the default column names)",
    )
    simulator.add_argument(
        "--in-dx",
        type=_share,
        default=1.0,
        metavar="SHARE",
        help="with --rehearse or --users-from: this share of the people are DX users "
        "(e.g. 0.9; the same people each time, every lead among them); default 1",
    )
    simulator.add_argument("--host", default="127.0.0.1")
    simulator.add_argument("--port", type=_non_negative_int, default=8765)

    demo = sub.add_parser("demo", help="a full sync and a reorg against the simulator")
    demo.add_argument(
        "--keep",
        type=Path,
        metavar="DIR",
        help="keep the demo's state store and config in DIR",
    )

    init = sub.add_parser(
        "init", help="propose a commented config from an HR export (reads a file; no network)"
    )
    init.add_argument(
        "--from",
        dest="source",
        type=Path,
        required=True,
        metavar="EXPORT",
        help="the export: CSV, JSON, or an HR API's JSON answer saved to a file",
    )
    init.add_argument(
        "--out",
        type=Path,
        metavar="FILE",
        help="where to write the config (default: hrsync.toml; '-': print it on stdout)",
    )
    init.add_argument("--force", action="store_true", help="overwrite FILE if it exists")
    init.add_argument(
        "--encoding",
        default="utf-8-sig",
        metavar="NAME",
        help="the export's text encoding, e.g. cp1252 (default: UTF-8; written to the config)",
    )

    db = sub.add_parser("db", help="state store maintenance")
    db_sub = db.add_subparsers(dest="db_command", metavar="ACTION")
    db_sub.required = True
    db_sub.add_parser("upgrade", help="apply migrations (also done on every start)")
    # `hrsync check --config X` reads as well as `hrsync --config X check`.
    for command in _subcommands(parser):
        _add_global_options(command, default=argparse.SUPPRESS)
    return parser


def _add_global_options(parser: argparse.ArgumentParser, *, default: object) -> None:
    """--config, --log-format, --log-level, -v: on the top parser with their defaults, and on
    every command with none, so that one given after the command is not undone."""
    parser.add_argument(
        "--config",
        type=Path,
        metavar="PATH",
        default=default,
        help="TOML config file (default: $HRSYNC_CONFIG)",
    )
    parser.add_argument(
        "--log-format",
        choices=("auto", "json", "console"),
        default=default,
        help="force the log format (default: log.format, else JSON unless on a terminal)",
    )
    parser.add_argument(
        "--log-level",
        choices=("debug", "info", "warning", "error"),
        default=default,
        help="log level",
    )
    parser.add_argument(
        "-v",
        "--verbose",
        action="count",
        default=0 if default is None else default,
        help="on a terminal, show the info log (-vv: debug) beside the report",
    )


def _subcommands(parser: argparse.ArgumentParser) -> list[argparse.ArgumentParser]:
    """Every command's parser, nested ones (`db upgrade`) too."""
    found: list[argparse.ArgumentParser] = []
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for command in dict.fromkeys(action.choices.values()):
                found.append(command)
                found.extend(_subcommands(command))
    return found


def _output_options(
    parser: argparse.ArgumentParser,
    formats: tuple[str, ...],
    doc: str = "Reference, The plan as JSON",
) -> None:
    parser.add_argument(
        "--format",
        choices=formats,
        default="text",
        help=f"text for a person; json: one document (docs: {doc})"
        + ("; tree: the desired hierarchy, each team's change marked" if "tree" in formats else ""),
    )
    parser.add_argument(
        "--out", type=Path, metavar="FILE", help="write the report or document to FILE"
    )


def _share(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number, got {text!r}") from None
    if not 0 < value <= 1:
        raise argparse.ArgumentTypeError(f"expected a share above 0 and at most 1, got {text}")
    return value


def _non_negative_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number, got {text!r}") from None
    if value < 0:
        raise argparse.ArgumentTypeError(f"expected 0 or more, got {value}")
    return value


def _dispatch(args: argparse.Namespace) -> int:
    # Each command's module is imported only when it runs, so `--help` and
    # `healthcheck` start fast.
    match args.command:
        case "run":
            from hrsync.commands.run import run

            return run(args)
        case "sync":
            from hrsync.gcpause import imports_frozen

            with imports_frozen():
                from hrsync.commands.sync import sync

            return sync(args)
        case "plan":
            from hrsync.gcpause import imports_frozen

            with imports_frozen():
                from hrsync.commands.sync import plan

            return plan(args)
        case "history":
            from hrsync.commands.history import history

            return history(args)
        case "approve":
            from hrsync.commands.approve import approve

            return approve(args)
        case "approvals":
            from hrsync.commands.approve import approvals

            return approvals(args)
        case "check":
            from hrsync.commands.check import check

            return check(args)
        case "healthcheck":
            from hrsync.commands.healthcheck import healthcheck

            return healthcheck(args)
        case "explain":
            from hrsync.commands.explain import explain_command

            return explain_command(args)
        case "status":
            from hrsync.commands.status import status

            return status(args)
        case "simulator":
            from hrsync.commands.simulator import simulator

            return simulator(args)
        case "demo":
            from hrsync.commands.demo import demo

            return demo(args)
        case "init":
            from hrsync.commands.init import init

            return init(args)
        case "db":
            from hrsync.commands.db import db

            return db(args)
    raise AssertionError(f"the parser accepted an unknown command {args.command!r}")


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        return _dispatch(args)
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        # The reader stopped reading (`hrsync status | head -1`): its choice, not a
        # failure. What is left unprinted goes nowhere, including Python's flush at exit.
        # The daemon's stdout is its log: with nobody reading it, it must not run on, and
        # a restart policy must see it stop.
        _silence_stdout()
        if args.command == "run":
            print("hrsync: standard output was closed; the daemon stops", file=sys.stderr)
            return EXIT_FAILED
        return EXIT_OK
    except Exception as exc:
        # Imported only here: `--help`, `--version` and `healthcheck` need neither
        # structlog nor the settings loader (which brings in SQLAlchemy).
        from hrsync import logs
        from hrsync.config.loading import ConfigError
        from hrsync.terminal import escape_controls

        if isinstance(exc, ConfigError):
            told = logs.scrub(f"hrsync: configuration error: {exc}")
            print(escape_controls(told), file=sys.stderr)
            return EXIT_USAGE
        # The last line of defence: one clean line, logged.
        logs.get_logger("hrsync").error("hrsync.crashed", error=str(exc), exc_info=True)
        told = logs.scrub(f"hrsync: {type(exc).__name__}: {exc}")
        print(escape_controls(told), file=sys.stderr)
        return EXIT_FAILED


def _silence_stdout() -> None:
    devnull = os.open(os.devnull, os.O_WRONLY)
    try:
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError):  # stdout already closed or not a file: nothing to do
        pass
    finally:
        os.close(devnull)


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
