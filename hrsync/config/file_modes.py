"""Files hrsync reads or keeps that others on the machine can read or write.

The state store holds e-mails, attribute values and every hierarchy sent; the token and
key files are credentials. Each one readable or writable by its group or by others is
told (a warning at start, a line in `hrsync check`), with its mode and the chmod that
fixes it. Never refused: a Kubernetes secret is mounted 0644 unless its volume says
otherwise, and hrsync must not stop over what it cannot change itself.

What counts:
- the SQLite store and its -wal, -shm and -journal files: any access by group or others;
- the store's directory: write access only (listing it shows names, not the store, but
  whoever may write there may replace or delete it);
- the DX token file and the Google service account's key file: any access;
- the config file: write access (others could point hrsync elsewhere), or read access
  when a URL in it carries a password (no token is ever in it: that is refused).
"""

from __future__ import annotations

import shlex
import stat
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path

from hrsync.config.userinfo import hide_userinfo
from hrsync.core.settings import Settings
from hrsync.store.url import DatabaseUrlError, parse_database_url

_READ = {"group": stat.S_IRGRP, "others": stat.S_IROTH}
_WRITE = {"group": stat.S_IWGRP, "others": stat.S_IWOTH}
_ANY = stat.S_IRWXG | stat.S_IRWXO
_ANY_WRITE = stat.S_IWGRP | stat.S_IWOTH
_ANY_READ = stat.S_IRGRP | stat.S_IROTH
_STORE_SUFFIXES = ("", "-wal", "-shm", "-journal")


@dataclass(frozen=True, slots=True)
class OpenFile:
    """A file (or directory) others can read or write, and what to do about it."""

    what: str  # "the DX token file", as a message names it
    path: Path
    mode: int  # the permission bits
    directory: bool = False
    # A credential or config often mounted from a Kubernetes secret or ConfigMap.
    secret_mount: bool = False

    @property
    def fix(self) -> str:
        return f"chmod {'700' if self.directory else '600'} {shlex.quote(str(self.path))}"

    @property
    def access(self) -> str:
        """'readable by group and others and writable by group', from the mode."""
        parts = []
        for verb, bits in (("readable", _READ), ("writable", _WRITE)):
            whom = [who for who, bit in bits.items() if self.mode & bit]
            if whom:
                parts.append(f"{verb} by {' and '.join(whom)}")
        if len(parts) == 2 and parts[0].split(" by ")[1] == parts[1].split(" by ")[1]:
            return f"readable and writable by {parts[0].split(' by ')[1]}"
        return " and ".join(parts) or "open to others"

    def message(self) -> str:
        text = f"{self.what} {self.path} is {self.access} (mode {self.mode:04o}): run `{self.fix}`"
        if self.secret_mount:
            text += (
                " or, mounted from a Kubernetes secret or ConfigMap, set defaultMode: 0400 on "
                "its volume"
            )
        return text


def not_private(settings: Settings, environ: Mapping[str, str]) -> list[OpenFile]:
    """The files of this installation others can read or write, that exist now."""
    return list(_store(settings)) + list(_credentials(settings, environ))


def _store(settings: Settings) -> Iterator[OpenFile]:
    try:
        path = parse_database_url(settings.state.database_url).sqlite_path
    except DatabaseUrlError:
        return
    if path is None:
        return
    folder = _mode(path.parent)
    if folder is not None and folder & _ANY_WRITE:
        yield OpenFile("the state store's directory", path.parent, folder, directory=True)
    for suffix in _STORE_SUFFIXES:
        file = path.with_name(path.name + suffix)
        mode = _mode(file)
        if mode is not None and mode & _ANY:
            yield OpenFile(
                "the state store" if not suffix else f"the state store's {suffix}", file, mode
            )


def _credentials(settings: Settings, environ: Mapping[str, str]) -> Iterator[OpenFile]:
    token = settings.dx.token_file
    if token is not None:
        yield from _secret("the DX token file (dx.token_file)", token)
    variable = settings.source.google_service_account.key_file_env
    key = environ.get(variable, "").strip() if variable else ""
    if key:
        yield from _secret("the Google service account's key file", Path(key))
    config = settings.config_path
    mode = None if config is None else _mode(config)
    if config is None or mode is None:
        return
    if mode & _ANY_WRITE or (mode & _ANY_READ and _holds_password(config)):
        yield OpenFile("the config file", config, mode, secret_mount=True)


def _secret(what: str, path: Path) -> Iterator[OpenFile]:
    mode = _mode(path)
    if mode is not None and mode & _ANY:
        yield OpenFile(what, path, mode, secret_mount=True)


def _holds_password(config: Path) -> bool:
    """Whether a URL in the config file carries user-info (a password, an API key)."""
    try:
        text = config.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return False
    return hide_userinfo(text) != text


def _mode(path: Path) -> int | None:
    """The permission bits of `path` (through a symbolic link, as a secret mount has
    them), None when it does not exist or cannot be looked at."""
    try:
        return stat.S_IMODE(path.stat().st_mode)
    except OSError:
        return None
