"""Where a command's report or document goes: stdout, or the file `--out` names."""

from __future__ import annotations

import os
import sys
from pathlib import Path


def write_output(text: str, out: Path | None) -> None:
    """`text` on stdout, or into `out` (`--out FILE`) with one line on stderr saying so."""
    if out is None:
        print(text)
        return
    out.write_text(text + "\n", encoding="utf-8")
    print(f"hrsync: written to {out}", file=sys.stderr)


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
