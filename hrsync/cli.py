"""Commands and exit codes, nothing else: each command hands over to its module."""

from __future__ import annotations

import argparse
import sys
import threading
from collections.abc import Callable, Sequence
from pathlib import Path

from hrsync import __version__, logs
from hrsync.config import ConfigError, Settings, load_settings
from hrsync.outcome import EXIT_FAILED, EXIT_OK, EXIT_USAGE

Handler = Callable[[argparse.Namespace], int]


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="hrsync",
        description="Keep DX's team hierarchy in step with the HR system.",
    )
    parser.add_argument("--version", action="version", version=f"hrsync {__version__}")
    parser.add_argument(
        "--config",
        type=Path,
        metavar="PATH",
        help="TOML config file (default: $HRSYNC_CONFIG)",
    )
    parser.add_argument(
        "--log-format",
        choices=("auto", "json", "console"),
        help="force the log format (default: log.format, else JSON unless on a terminal)",
    )
    parser.add_argument(
        "--log-level", choices=("debug", "info", "warning", "error"), help="log level"
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    sub.required = True

    run = sub.add_parser("run", help="the daemon: sync on the configured schedule")
    run.add_argument("--now", action="store_true", help="also run once at start")

    sync = sub.add_parser("sync", help="one sync now")
    mode = sync.add_mutually_exclusive_group()
    mode.add_argument("--dry-run", action="store_true", help="plan only; send nothing")
    mode.add_argument(
        "--preview",
        action="store_true",
        help="send the preview call and print the preview URL; nothing is applied",
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

    plan = sub.add_parser("plan", help="print the plan (same as sync --dry-run)")
    plan.add_argument(
        "--detailed-exitcode",
        action="store_true",
        help="exit 0 when nothing would change, 2 when something would, 1 on error",
    )

    history = sub.add_parser("history", help="recent runs, one line each")
    history.add_argument("--limit", type=_non_negative_int, default=20, metavar="N")

    sub.add_parser("check", help="readiness report: config, export, token, scopes, snapshots")
    sub.add_parser("healthcheck", help="exit 0 when the daemon's heartbeat is fresh")

    simulator = sub.add_parser("simulator", help="serve the bundled fake DX API")
    simulator.add_argument("--scenario", type=Path, metavar="FILE", help="scenario JSON")
    simulator.add_argument("--host", default="127.0.0.1")
    simulator.add_argument("--port", type=_non_negative_int, default=8765)

    demo = sub.add_parser("demo", help="a full sync and a reorg against the simulator")
    demo.add_argument(
        "--keep",
        type=Path,
        metavar="DIR",
        help="keep the demo's state store and config in DIR",
    )

    db = sub.add_parser("db", help="state store maintenance")
    db_sub = db.add_subparsers(dest="db_command", metavar="ACTION")
    db_sub.required = True
    db_sub.add_parser("upgrade", help="apply migrations (also done on every start)")
    return parser


def _non_negative_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number, got {text!r}") from None
    if value < 0:
        raise argparse.ArgumentTypeError(f"expected 0 or more, got {value}")
    return value


def load_for(
    args: argparse.Namespace,
    *,
    require_token: bool = True,
    require_source: bool = True,
    require_dx: bool = True,
) -> Settings:
    """Load and validate settings, then configure logging from them and the flags."""
    settings = load_settings(
        args.config,
        require_token=require_token,
        require_source=require_source,
        require_dx=require_dx,
    )
    configure_logging(args, settings)
    if settings.token is not None:
        logs.register_secret(settings.token)
    return settings


def configure_logging(args: argparse.Namespace, settings: Settings | None = None) -> None:
    fmt = args.log_format or (settings.log.format if settings else "auto")
    level = args.log_level or (settings.log.level if settings else "info")
    # Commands that print a report keep stdout for it; their log goes to stderr.
    stream = sys.stderr if args.command in _REPORTING else sys.stdout
    logs.configure(fmt, level, stream)


_REPORTING = frozenset({"plan", "history", "check"})


def _db(args: argparse.Namespace) -> int:
    from sqlalchemy.exc import SQLAlchemyError

    from hrsync.store.engine import make_engine
    from hrsync.store.migrate import upgrade
    from hrsync.store.url import open_failure

    settings = load_for(args, require_token=False, require_source=False, require_dx=False)
    url = settings.state.database_url
    try:
        engine = make_engine(url)
        try:
            before, after = upgrade(engine)
        finally:
            engine.dispose()
    except (SQLAlchemyError, OSError) as exc:
        raise ConfigError([open_failure(url, exc)]) from None
    logs.get_logger("hrsync.db").info(
        "db.upgraded" if before != after else "db.up_to_date",
        before=before,
        after=after,
        database=_safe_url(settings.state.database_url),
    )
    return EXIT_OK


def _safe_url(url: str) -> str:
    from hrsync.store.url import redact

    return redact(url)


def _simulator(args: argparse.Namespace) -> int:
    from hrsync.simulator.serve import serve

    configure_logging(args)
    return serve(args.scenario, host=args.host, port=args.port)


def _sync(args: argparse.Namespace) -> int:
    from hrsync import commands
    from hrsync.sync import SyncRequest

    settings = load_for(args)
    request = SyncRequest(
        trigger="manual",
        dry_run=args.dry_run,
        preview=args.preview,
        allow_archive=args.allow_archive,
        allow_shrink=args.allow_shrink,
    )
    return commands.sync(settings, request)


def _plan(args: argparse.Namespace) -> int:
    from hrsync import commands

    return commands.plan(load_for(args), detailed_exitcode=args.detailed_exitcode)


def _history(args: argparse.Namespace) -> int:
    from hrsync import commands

    settings = load_for(args, require_token=False, require_source=False, require_dx=False)
    return commands.history(settings, limit=args.limit)


def _check(args: argparse.Namespace) -> int:
    from hrsync import commands

    return commands.check(load_for(args))


def _demo(args: argparse.Namespace) -> int:
    from hrsync.demo import run_demo

    return run_demo(keep=args.keep)


def _run(args: argparse.Namespace) -> int:
    from hrsync import commands, daemon
    from hrsync.sync import SyncRequest, SyncResult, run_sync

    settings = load_for(args)
    store = commands.open_store(settings)
    stop = threading.Event()  # set on SIGTERM: a run in progress ends after its step

    def one_run(request: SyncRequest) -> SyncResult:
        return run_sync(settings, request, store=store, stop=stop)

    try:
        return daemon.run(settings, now=args.now, store=store, run_sync=one_run, stop_event=stop)
    finally:
        store.close()


def _healthcheck(args: argparse.Namespace) -> int:
    from hrsync import health

    settings = load_for(args, require_token=False, require_source=False, require_dx=False)
    return health.main(settings)


def _handler(command: str) -> Handler:
    # Each handler imports its module lazily so `--help` and `healthcheck` start fast.
    handlers: dict[str, Handler] = {
        "run": _run,
        "sync": _sync,
        "plan": _plan,
        "history": _history,
        "check": _check,
        "healthcheck": _healthcheck,
        "simulator": _simulator,
        "demo": _demo,
        "db": _db,
    }
    return handlers[command]


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        return _handler(args.command)(args)
    except ConfigError as exc:
        print(logs.scrub(f"hrsync: configuration error: {exc}"), file=sys.stderr)
        return EXIT_USAGE
    except KeyboardInterrupt:
        return 130
    except Exception as exc:  # the last line of defence: one clean line, logged
        logs.get_logger("hrsync").error("hrsync.crashed", error=str(exc), exc_info=True)
        print(logs.scrub(f"hrsync: {type(exc).__name__}: {exc}"), file=sys.stderr)
        return EXIT_FAILED


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
