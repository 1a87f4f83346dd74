"""Where a command's report or document goes: stdout, or the file `--out` names.

Only text: what would steer a terminal (an escape sequence in a team name made in DX's
web app, or in a URL an HR API wrote) is written as a visible escape (hrsync.terminal),
in a file too, which a person reads with `cat`. A JSON document stays the same document.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import TextIO

from hrsync.commands import one_account
from hrsync.terminal import escape_controls


def write_output(text: str, out: Path | None) -> None:
    """`text` on stdout, or into `out` (`--out FILE`) with one line on stderr saying so."""
    if out is None:
        show(text)
        return
    one_account.note(text)
    out.write_text(escape_controls(text) + "\n", encoding="utf-8")
    show(f"hrsync: written to {out}", sys.stderr)


def show(text: str, file: TextIO | None = None, end: str = "\n") -> None:
    """print(), for a person: `text` on stdout (or `file`), as text only."""
    one_account.note(text)
    print(escape_controls(text), file=sys.stdout if file is None else file, end=end)


def unwritable_output(out: Path | None) -> str | None:
    """Why `--out FILE` cannot be written, or None: asked before the run, because a sync
    that changed DX and then failed to write its document exited 1 as if it had failed."""
    if out is None:
        return None
    if out.is_dir():
        return f"hrsync: --out {out} is a folder; name a file to write"
    folder = out.parent
    if not folder.is_dir():
        return f"hrsync: --out {out}: the folder {folder} does not exist"
    if not os.access(folder, os.W_OK) or (out.exists() and not os.access(out, os.W_OK)):
        return f"hrsync: --out {out} cannot be written (permission denied)"
    return None
