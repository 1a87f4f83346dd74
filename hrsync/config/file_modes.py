"""Files hrsync reads or keeps that others on the machine can read or write.

The state store holds e-mails, attribute values and every hierarchy sent; the token and
key files are credentials. Each one someone else can read or write is told (a warning
at start, a line in `hrsync check`) with its mode and the chmod that fixes it. Never
refused: a Kubernetes secret is mounted 0644 unless its volume says otherwise, and
hrsync must not stop over what it may not be able to change itself.

Who "someone else" is: others, always; the file's group only when the file is hrsync's
own (its owner is the user hrsync runs as). A file of another owner is read through its
group: `root:hrsync 0640`, or a Kubernetes secret or volume with the pod's `fsGroup`
(0440 with `defaultMode: 0400`, a volume's directory group-writable); that group access
is what lets hrsync in, not a leak. A file hrsync only reads is never to be written by
its group either.

What counts:
- the SQLite store and its -wal, -shm and -journal files: read or write access;
- the store's directory: write access (listing it shows names, not the store; whoever
  may write there may replace or delete it);
- the DX token file and the Google service account's key file: read or write access;
- the config file: write access (others could point hrsync elsewhere), read access only
  when a URL in it carries a password (no token is ever in it: that is refused).
"""

from __future__ import annotations

import os
import shlex
import stat
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path

from hrsync.config.userinfo import hide_userinfo
from hrsync.core.settings import Settings
from hrsync.store.url import DatabaseUrlError, parse_database_url

_READ = stat.S_IRGRP | stat.S_IROTH
_WRITE = stat.S_IWGRP | stat.S_IWOTH
_STORE_SUFFIXES = ("", "-wal", "-shm", "-journal")
_WHO = {"group": (stat.S_IRGRP, stat.S_IWGRP), "others": (stat.S_IROTH, stat.S_IWOTH)}


@dataclass(frozen=True, slots=True)
class OpenFile:
    """A file (or directory) someone else can read or write, and what to do about it."""

    what: str  # "the DX token file", as a message names it
    path: Path
    mode: int  # its permission bits
    exposed: int  # the bits of `mode` that let someone else in
    # A credential or config often mounted from a Kubernetes secret or ConfigMap.
    secret_mount: bool = False

    @property
    def fix(self) -> str:
        return f"chmod {self.mode & ~self.exposed:03o} {shlex.quote(str(self.path))}"

    @property
    def access(self) -> str:
        """'readable by group and others and writable by others', from the bits exposed."""
        verbs: dict[str, list[str]] = {"readable": [], "writable": []}
        for who, (read, write) in _WHO.items():
            if self.exposed & read:
                verbs["readable"].append(who)
            if self.exposed & write:
                verbs["writable"].append(who)
        readers, writers = verbs["readable"], verbs["writable"]
        if readers and readers == writers:
            return f"readable and writable by {' and '.join(readers)}"
        parts = [f"{verb} by {' and '.join(whom)}" for verb, whom in verbs.items() if whom]
        return " and ".join(parts)

    def message(self) -> str:
        text = f"{self.what} {self.path} is {self.access} (mode {self.mode:04o}): run `{self.fix}`"
        if self.secret_mount:
            text += (
                " or, mounted from a Kubernetes secret or ConfigMap, set defaultMode: 0400 on "
                "its volume"
            )
        return text


def not_private(
    settings: Settings, environ: Mapping[str, str], *, uid: int | None = None
) -> list[OpenFile]:
    """The files of this installation someone else can read or write, that exist now.
    `uid`: the user hrsync runs as (this process's, by default)."""
    me = os.geteuid() if uid is None else uid
    return list(_store(settings, me)) + list(_credentials(settings, environ, me))


def _store(settings: Settings, me: int) -> Iterator[OpenFile]:
    try:
        path = parse_database_url(settings.state.database_url).sqlite_path
    except DatabaseUrlError:
        return
    if path is None:
        return
    yield from _check("the state store's directory", path.parent, me, read=False)
    for suffix in _STORE_SUFFIXES:
        what = f"the state store's {suffix} file" if suffix else "the state store"
        yield from _check(what, path.with_name(path.name + suffix), me)


def _credentials(settings: Settings, environ: Mapping[str, str], me: int) -> Iterator[OpenFile]:
    token = settings.dx.token_file
    if token is not None:
        yield from _check("the DX token file (dx.token_file)", token, me, read_only=True)
    variable = settings.source.google_service_account.key_file_env
    key = environ.get(variable, "").strip() if variable else ""
    if key:
        what = "the Google service account's key file"
        yield from _check(what, Path(key), me, read_only=True)
    config = settings.config_path
    if config is not None:
        readable = _holds_password(config)
        yield from _check("the config file", config, me, read=readable, read_only=True)


def _check(
    what: str, path: Path, me: int, *, read: bool = True, read_only: bool = False
) -> Iterator[OpenFile]:
    """`path` when someone else can read (if `read`) or write it; `read_only`: a file
    hrsync only reads, which its group has no business writing either."""
    try:
        st = path.stat()  # through a symbolic link, as a secret mount has them
    except OSError:
        return  # missing or out of sight: whoever reads it says so
    mode = stat.S_IMODE(st.st_mode)
    someone_else = stat.S_IRWXO
    if st.st_uid == me:
        someone_else |= stat.S_IRWXG
    elif read_only:
        someone_else |= stat.S_IWGRP
    exposed = mode & someone_else & ((_READ if read else 0) | _WRITE)
    if exposed:
        yield OpenFile(what, path, mode, exposed, secret_mount=read_only)


def _holds_password(config: Path) -> bool:
    """Whether a URL in the config file carries user-info (a password, an API key)."""
    try:
        text = config.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return False
    return hide_userinfo(text) != text
