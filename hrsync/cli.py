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

# Each command's exit codes, at the end of its --help: a script's author reads them there.
_SYNC_CODES = """exit codes:
  0  in sync, applied and verified, or (dry run, preview) planned
  1  failed: an unexpected error, or DX unreachable after retries
  2  usage or configuration error
  3  deferred: a snapshot window or an import in progress; nothing sent
  4  refused: the export cannot be trusted or a guard tripped; nothing sent
  5  unverified: sent, but DX did not show the change in time
  6  rejected: DX refused the request"""
_EXIT_CODES = {
    "run": "exit codes:\n  0  stopped on SIGTERM/SIGINT\n  1  a crash\n  2  usage or "
    "configuration error",
    "sync": _SYNC_CODES,
    "plan": "exit codes:\n  as sync's (hrsync sync --help); it sends nothing, so never 5 or 6\n"
    "  with --detailed-exitcode: 0 no changes, 2 changes, 1 any error",
    "history": "exit codes:\n  0  listed\n  2  usage or configuration error",
    "approve": "exit codes:\n  0  approved\n  2  not a plan id the store knows, or a "
    "configuration error",
    "approvals": "exit codes:\n  0  listed\n  2  usage or configuration error",
    "check": "exit codes:\n  0  ready (warnings allowed)\n  1  not ready\n  2  configuration error",
    "healthcheck": "exit codes:\n  0  the daemon's heartbeat is fresh\n  1  it is not",
    "explain": "exit codes:\n  0  explained\n  1  no such person, or the export or DX "
    "could not be read\n  2  configuration error",
    "status": "exit codes:\n  0  shown (whatever it shows)\n  2  configuration error",
    "simulator": "exit codes:\n  0  stopped\n  2  a scenario or export it cannot read",
    "demo": "exit codes:\n  0  the walkthrough ran\n  1  a step did not go as told",
    "init": "exit codes:\n  0  written\n  2  an export it cannot read, or FILE exists",
    "db": "exit codes:\n  0  done\n  2  configuration error",
    "completion": "exit codes:\n  0  printed",
}


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
        help="end with a one-paragraph summary on stdout, the log then on stderr (auto, always: "
        "on a terminal or a pipe; never: no summary, the log on stdout)",
    )

    plan = sub.add_parser("plan", help="print the plan (same as sync --dry-run)")
    plan.add_argument(
        "--detailed-exitcode",
        action="store_true",
        help="exit 0 when nothing would change, 2 when something would, 1 on error",
    )
    _output_options(plan, ("text", "json", "tree"))

    history = sub.add_parser("history", help="recent runs, one line each")
    history.add_argument(
        "--limit", type=_non_negative_int, default=20, metavar="N", help="runs to list (20)"
    )
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
    approvals.add_argument(
        "--limit", type=_non_negative_int, default=50, metavar="N", help="approvals to list (50)"
    )
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
    explain.add_argument(
        "person", metavar="PERSON", help="employee id, e-mail or name (any case or accents)"
    )
    status = sub.add_parser(
        "status", help="the daemon, last runs, what needs a person, the next run (store only)"
    )
    status.add_argument(
        "--format",
        choices=("text", "json"),
        default="text",
        help="text for a person; json: one document",
    )

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
    simulator.add_argument("--host", default="127.0.0.1", help="address to serve on (127.0.0.1)")
    simulator.add_argument(
        "--port", type=_non_negative_int, default=8765, help="port (8765; 0: any free one)"
    )
    simulator.add_argument(
        "--seed",
        type=_non_negative_int,
        metavar="N",
        help="what the simulator varies where DX's contract is silent (printed at start; "
        "default: chosen at start)",
    )

    demo = sub.add_parser("demo", help="a full sync and a reorg against the simulator")
    demo.add_argument(
        "--keep",
        type=Path,
        metavar="DIR",
        help="keep the demo's state store and config in DIR",
    )
    demo.add_argument(
        "--seed",
        type=_non_negative_int,
        metavar="N",
        help="the simulator's seed (printed; default: chosen at start)",
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
    completion = sub.add_parser(
        "completion", help="print a shell completion script (bash, zsh or tcsh)"
    )
    completion.add_argument(
        "shell",
        choices=("bash", "zsh", "tcsh"),
        help="e.g. `source <(hrsync completion bash)` in ~/.bashrc",
    )
    # `hrsync check --config X` reads as well as `hrsync --config X check`.
    for command in _subcommands(parser):
        _add_global_options(command, default=argparse.SUPPRESS)
    for name, command in sub.choices.items():
        command.epilog = _EXIT_CODES.get(name)
        command.formatter_class = argparse.RawDescriptionHelpFormatter
    return parser


def _add_global_options(parser: argparse.ArgumentParser, *, default: object) -> None:
    """--config, --log-format, --log-level, -v: on the top parser with their defaults, and on
    every command with none, so that one given after the command is not undone."""
    parser.add_argument(
        "--config",
        type=Path,
        metavar="PATH",
        default=default,
        help="TOML config file (default: $HRSYNC_CONFIG, else ./hrsync.toml)",
    )
    parser.add_argument(
        "--log-format",
        type=str.lower,
        choices=("auto", "json", "console"),
        default=default,
        help="force the log format (default: log.format, else JSON unless on a terminal)",
    )
    parser.add_argument(
        "--log-level",
        type=str.lower,  # INFO and info alike
        choices=("debug", "info", "warning", "error"),
        default=default,
        help="log level: debug, info, warning or error, in any case (default: log.level)",
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
        case "completion":
            import shtab

            print(shtab.complete(build_parser(), args.shell), end="")
            return EXIT_OK
    raise AssertionError(f"the parser accepted an unknown command {args.command!r}")


def main(argv: Sequence[str] | None = None) -> int:
    words = list(sys.argv[1:] if argv is None else argv)
    # With `plan --detailed-exitcode`, 2 means "changes pending": a CI job must not read a
    # broken config or a mistyped flag as that, so every error says 1 (as Terraform's).
    usage_error = EXIT_FAILED if "--detailed-exitcode" in words else EXIT_USAGE
    try:
        args = build_parser().parse_args(words)
    except SystemExit as exc:
        if exc.code == EXIT_USAGE:
            return usage_error
        raise
    try:
        try:
            return _dispatch(args)
        finally:
            # On a terminal: what the report did not show of the held warnings, once.
            from hrsync.commands.one_account import settle

            settle()
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
            return usage_error
        # The last line of defence: one clean line, logged.
        logs.get_logger(__name__).error("hrsync.crashed", error=str(exc), exc_info=True)
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
