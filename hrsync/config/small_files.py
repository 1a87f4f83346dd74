"""Reading a small file whole, safely: a size cap, and only a regular file.

A setting naming a file hrsync reads whole (the DX token file, the config file, a
service account's key file, `init --from`) may name something else by mistake:
`/dev/zero` or `/dev/urandom` would be read without end, a FIFO would block the start
for ever. The file is opened without blocking, refused unless it is a regular file, and
read up to its cap (one byte more tells a file over it).
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

# A DX token is under a hundred characters; the cap leaves room for a line or two.
MAX_TOKEN_FILE_BYTES = 64 * 1024
# A config file is a few KB; the example with every key and comment is about 30 KB.
MAX_CONFIG_FILE_BYTES = 1024 * 1024

_KINDS = (
    (stat.S_ISDIR, "a directory"),
    (stat.S_ISFIFO, "a FIFO (named pipe)"),
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
    (stat.S_ISSOCK, "a socket"),
)


class SmallFileError(OSError):
    """The file is no regular file, or over its cap; the message says which."""


def kind_of(mode: int) -> str:
    """What a file of `mode` is, in words, when it is no regular file."""
    return next((words for test, words in _KINDS if test(mode)), "not a regular file")


def read_small_file(path: Path, limit: int) -> bytes:
    """The bytes of `path`, a regular file of at most `limit` bytes; SmallFileError
    saying what it is otherwise, OSError when it cannot be opened."""
    # O_NONBLOCK: opening a FIFO with no writer returns at once instead of waiting.
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
    try:
        mode = os.fstat(fd).st_mode
    except OSError:
        os.close(fd)
        raise
    if not stat.S_ISREG(mode):
        os.close(fd)
        raise SmallFileError(f"is not a regular file but {kind_of(mode)}")
    with os.fdopen(fd, "rb") as fh:
        data = fh.read(limit + 1)
    if len(data) > limit:
        raise SmallFileError(f"is over {limit:,} bytes: not the file expected here")
    return data
