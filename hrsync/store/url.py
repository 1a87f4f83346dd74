"""The state store's URL: parsing, "is this SQLite in memory?", redaction, the start check.

The one owner of these questions: the config (anchoring a relative SQLite path and the
start-up check), the engine (WAL only for a file), the healthcheck (a missing file is
not created) and the CLI (a URL shown without its password) all ask here, so they
cannot disagree.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path

from sqlalchemy.engine import URL, make_url
from sqlalchemy.exc import ArgumentError, NoSuchModuleError

from hrsync.store.sqlite_file import empty_store_problem, linked_store_problem

KEY = "state.database_url"
EXAMPLES = "sqlite:///hrsync.db, or postgresql+psycopg://USER:PASSWORD@HOST/DATABASE"
POSTGRES_EXTRA = "pip install 'hrsync[postgres]'"
# `[scheme://]user:PASSWORD@rest`, the password up to the LAST "@": one holding an
# unencoded "@" or "/" is hidden whole (SQLAlchemy and urllib each stop at a different
# "@", and showing the rest would show part of the password). A "//" right after the ":"
# is a scheme's, not a password's (`sqlite:///a@b.db`).
_PASSWORD = re.compile(r"^(?P<head>(?:[^:/?#@]*://)?[^:/?#]*:)(?!//).*@(?P<tail>[^@]*)$", re.S)


class DatabaseUrlError(ValueError):
    """The text is not a URL SQLAlchemy can parse."""


@dataclass(frozen=True, slots=True)
class DatabaseUrl:
    text: str  # as configured
    url: URL

    @property
    def backend(self) -> str:
        return self.url.get_backend_name()

    @property
    def is_sqlite(self) -> bool:
        return self.backend == "sqlite"

    @property
    def _uri_path(self) -> str | None:
        """The path of an SQLite `file:` URI (`?uri=true`), else None."""
        database = self.url.database or ""
        if not database.startswith("file:"):
            return None
        path = database[len("file:") :].split("?", 1)[0]
        if path.startswith("//"):  # file://host/path: the host part is not a path
            path = "/" + path[2:].partition("/")[2]
        return path

    @property
    def in_memory(self) -> bool:
        """SQLite kept in memory: no file, gone with the process."""
        if not self.is_sqlite:
            return False
        database = self.url.database or ""
        if database in ("", ":memory:"):
            return True
        uri_path = self._uri_path
        if uri_path is None:
            return False
        mode = self.url.query.get("mode")
        return uri_path in ("", ":memory:") or mode == "memory" or "mode=memory" in database

    @property
    def sqlite_path(self) -> Path | None:
        """The SQLite file on disk; None in memory or for another database."""
        if not self.is_sqlite or self.in_memory:
            return None
        uri_path = self._uri_path
        return Path(uri_path if uri_path is not None else self.url.database or "").expanduser()

    def redacted(self) -> str:
        """As configured, with a password replaced by ***."""
        hidden = _hide_password(self.text)
        if hidden != self.text or self.url.password is None:
            return hidden  # SQLAlchemy's rendering would escape every ":" in a path
        return self.url.render_as_string(hide_password=True)


def parse_database_url(text: str) -> DatabaseUrl:
    try:
        return DatabaseUrl(text, make_url(text))
    except (ArgumentError, ValueError) as exc:
        raise DatabaseUrlError(str(exc)) from None


def redact(text: str) -> str:
    """The URL with any password replaced by ***, even when it does not parse."""
    try:
        return parse_database_url(text).redacted()
    except DatabaseUrlError:
        return _hide_password(text)


def _hide_password(text: str) -> str:
    return _PASSWORD.sub(r"\g<head>***@\g<tail>", text)


def anchor_sqlite(text: str, base: Path) -> str:
    """A relative SQLite path made relative to `base` (the config file's folder).

    Resolved against the working directory instead, `hrsync sync` run from another
    folder would open a second, empty store: no shared lease with the daemon and no
    last accepted export for the shrink guard. URIs, memory and other databases are
    left as they are; so is text that does not parse (the start check reports it).
    """
    try:
        parsed = parse_database_url(text)
    except DatabaseUrlError:
        return text
    path = parsed.sqlite_path
    if path is None or parsed._uri_path is not None or path.is_absolute():
        return text
    return parsed.url.set(database=str(base / path)).render_as_string(hide_password=False)


def check_database_url(text: str) -> str | None:
    """What is wrong with the URL for a store hrsync can open, as one line naming the
    key, the value (password hidden) and what was expected; None when it looks usable.

    Checks what can be known without connecting: the URL parses, SQLAlchemy knows the
    database, its driver is installed, and an SQLite file can be written where it points.
    """
    shown = redact(text)
    head = f"{KEY} {shown!r}"
    try:
        parsed = parse_database_url(text)
    except DatabaseUrlError:
        return f"{head} is not a database URL; expected one such as {EXAMPLES}"
    try:
        dialect = parsed.url.get_dialect()
    except NoSuchModuleError:
        return (
            f"{head} names a database SQLAlchemy does not know "
            f"({parsed.url.drivername!r}); expected one such as {EXAMPLES}"
        )
    try:
        dialect.import_dbapi()
    except ImportError as exc:
        return _missing_driver(head, parsed, exc)
    path = parsed.sqlite_path
    if path is not None:
        return _sqlite_file_problem(head, path)
    return None


def _missing_driver(head: str, parsed: DatabaseUrl, exc: ImportError) -> str:
    module = exc.name or str(exc)
    if parsed.backend == "postgresql":
        if parsed.url.get_driver_name() == "psycopg":
            return (
                f"{head} needs the PostgreSQL driver psycopg, which is not installed: "
                f"{POSTGRES_EXTRA}"
            )
        return (
            f"{head} needs the driver {module!r}, which is not installed; hrsync supports "
            f"PostgreSQL through psycopg 3: write postgresql+psycopg://… and {POSTGRES_EXTRA}"
        )
    return (
        f"{head} needs the driver {module!r} ({parsed.url.drivername}), which is not "
        f"installed; expected a URL such as {EXAMPLES}"
    )


def _sqlite_file_problem(head: str, path: Path) -> str | None:
    linked = linked_store_problem(path)
    if linked is not None:
        return f"{head}: {linked}"
    if path.is_dir():
        return f"{head} names the directory {str(path)!r}; expected an SQLite file in it"
    if path.exists():
        if not os.access(path, os.R_OK | os.W_OK):
            return f"{head}: the file {str(path)!r} is not readable and writable by this user"
        empty = empty_store_problem(path)
        return None if empty is None else f"{head}: {empty}"
    # The engine creates missing directories: the nearest existing one must allow it.
    ancestor = path.parent
    while not ancestor.exists() and ancestor != ancestor.parent:
        ancestor = ancestor.parent
    if not ancestor.is_dir():
        return (
            f"{head}: cannot create {str(path)!r} because {str(ancestor)!r} is a file, "
            "not a directory"
        )
    if not os.access(ancestor, os.W_OK | os.X_OK):
        return (
            f"{head}: cannot create {str(path)!r}: the directory {str(ancestor)!r} is not "
            "writable by this user"
        )
    return None


def open_failure(text: str, exc: BaseException) -> str:
    """One line for a store that passed the checks above but could not be opened:
    the database's own first line, without SQLAlchemy's wrapping and link."""
    cause = getattr(exc, "orig", None) or exc
    first = (str(cause).strip().splitlines() or [type(cause).__name__])[0]
    return f"{KEY} {redact(text)!r} cannot be opened: {first}"
