"""What every command does first: load the settings, configure logging, open the store."""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Iterator
from contextlib import contextmanager

from sqlalchemy.exc import SQLAlchemyError

from hrsync import logcap, logs
from hrsync.commands import one_account
from hrsync.commands.output import show
from hrsync.config.file_modes import not_private
from hrsync.config.loading import (
    FOUND_HERE,
    ConfigError,
    ConfigFile,
    Settings,
    config_file,
    load_settings,
)
from hrsync.core import defaults
from hrsync.store.presence import missing_store
from hrsync.store.repo import Store
from hrsync.store.url import open_failure

# Commands that print a report keep stdout for it; their log goes to stderr.
_REPORTING = frozenset({"plan", "history", "check", "status", "explain", "approvals"})
# Commands a person runs and reads: on a terminal, the report and the warnings.
_INTERACTIVE = _REPORTING | {"sync", "approve"}


def load_for(
    args: argparse.Namespace,
    *,
    require_token: bool = True,
    require_source: bool = True,
    require_dx: bool = True,
) -> Settings:
    """Load and validate settings, then configure logging from them and the flags."""
    tell_found(config_file(args.config, os.environ))
    settings = load_settings(
        args.config,
        require_token=require_token,
        require_source=require_source,
        require_dx=require_dx,
    )
    configure_logging(args, settings)
    if settings.token is not None:
        logs.register_secret(settings.token)
    if args.command != "healthcheck":  # a probe every 30 s, not a start to warn at
        warn_not_private(settings)
        warn_deprecated(settings)
    return settings


def warn_deprecated(settings: Settings) -> None:
    """Once per start: each key this release still reads but the next will not."""
    log = logs.get_logger(__name__)
    for line in settings.deprecations:
        log.warning("config.deprecated", detail=line)


def tell_found(found: ConfigFile) -> None:
    """A config nobody named (./hrsync.toml): say which file, on stderr so that stdout
    stays the report's."""
    if found.how == FOUND_HERE:
        show(f"hrsync: config {found.path} (found in the current folder)", file=sys.stderr)


def warn_not_private(settings: Settings) -> None:
    """Once per start: each file of this installation someone else can read or write."""
    log = logs.get_logger(__name__)
    for found in not_private(settings, os.environ):
        log.warning(
            "files.not_private",
            path=str(found.path),
            mode=f"{found.mode:04o}",
            fix=found.fix,
            detail=found.message(),
        )


def load_local(args: argparse.Namespace) -> Settings:
    """Settings for a command that reads only the state store: no token, export or DX."""
    return load_for(args, require_token=False, require_source=False, require_dx=False)


def reports_on_stdout(args: argparse.Namespace) -> bool:
    """A report or document owns stdout: the log goes to stderr."""
    if args.command in _REPORTING:
        return True
    if args.command != "sync":
        return False
    summary = getattr(args, "summary", "auto")
    return (
        bool(getattr(args, "dry_run", False))
        or bool(getattr(args, "preview", False))
        or getattr(args, "format", "text") == "json"
        # The summary on stdout, on a terminal or a pipe alike; `never` leaves stdout to
        # the log, for a script that reads it.
        or summary != "never"
    )


def configure_logging(args: argparse.Namespace, settings: Settings | None = None) -> None:
    fmt = args.log_format or (settings.log.format if settings else "auto")
    level = args.log_level or (settings.log.level if settings else "info")
    stream = sys.stderr if reports_on_stdout(args) else sys.stdout
    verbose = getattr(args, "verbose", 0)
    if verbose:
        logs.configure(fmt, "debug" if verbose > 1 else "info", stream)
    elif (
        args.log_level is None
        and args.log_format is None
        and args.command in _INTERACTIVE
        and stream.isatty()
    ):
        # A person reading a report wants it, and once, short, the warnings it does not
        # show: not the run's every step (-v, --log-level or --log-format ask for them).
        handler = one_account.start(stream)
        logs.configure(fmt, _quieter(level, "warning"), stream, handler=handler)
    else:
        logs.configure(fmt, level, stream)
    if settings is not None:
        logcap.set_cap(defaults.EVENTS_PER_KIND)


@contextmanager
def store_setting(url: str) -> Iterator[None]:
    """At start, a store that cannot be opened is a setting to fix (exit 2), said in one
    line: not a traceback ending in a link to SQLAlchemy's docs."""
    try:
        yield
    except (SQLAlchemyError, OSError) as exc:
        raise ConfigError([open_failure(url, exc)]) from None


def open_store(settings: Settings, *, existing: bool = False) -> Store:
    """The state store, its schema brought up to date. With `existing`, for a command that
    only reads it, a store that is not there is a setting to fix (exit 2), never made."""
    # Migrations run on every start: a new version's schema is in place before use.
    url = settings.state.database_url
    with store_setting(url):
        if existing and (missing := missing_store(url)) is not None:
            raise ConfigError(
                [
                    f"{missing}: hrsync has not run with this configuration here, or the "
                    "setting points elsewhere. Give the daemon's config (--config or "
                    "$HRSYNC_CONFIG), or run `hrsync sync --dry-run` to make one"
                ]
            )
        return Store.open(url)


_LEVELS = ("debug", "info", "warning", "error")


def _quieter(level: str, floor: str) -> str:
    known = level if level in _LEVELS else "info"
    return _LEVELS[max(_LEVELS.index(known), _LEVELS.index(floor))]
