"""Where a command's report or document goes: stdout, or the file `--out` names."""

from __future__ import annotations

import sys
from pathlib import Path


def write_output(text: str, out: Path | None) -> None:
    """`text` on stdout, or into `out` (`--out FILE`) with one line on stderr saying so."""
    if out is None:
        print(text)
        return
    out.write_text(text + "\n", encoding="utf-8")
    print(f"hrsync: written to {out}", file=sys.stderr)
