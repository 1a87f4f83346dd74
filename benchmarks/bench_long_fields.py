"""Time reading CSV exports of absurd shapes, beside a plain read of the same bytes.

    PYTHONPATH=. .venv/bin/python benchmarks/bench_long_fields.py            # 2, 16, 50 MB
    PYTHONPATH=. .venv/bin/python benchmarks/bench_long_fields.py --sizes 8

Reading must stay linear in the length of a line or a value: a 50 MB file of any shape is
refused (or read) within seconds and a few hundred MB. Each shape is written at each size
to a temporary directory, then measured in fresh child processes, so each peak RSS
(VmHWM) is that process's own:

- floor: ``open(path, encoding="utf-8").read()``: the bytes read and decoded, nothing else;
- read: ``open_export`` then ``Export.table()``, as a sync reads the export,
  until it ends or is refused.

Shapes: ``field``, one unquoted value holding the whole file on one line; ``quoted``, one
quoted value spread over many short lines; ``line``, one line of millions of short values;
``near``, rows whose name is 60,000 characters, under the limit: read, not refused.
Ratios are read / floor; the RSS ratio compares against the floor's RSS, which includes
the file held once as a string.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

SIZES_MB = (2, 16, 50)
SHAPES = ("field", "quoted", "line", "near")
MB = 1024 * 1024


def _rss_mb() -> float:
    # ru_maxrss would include the parent's memory (inherited across fork and exec).
    with open("/proc/self/status", encoding="ascii") as fh:
        for line in fh:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    raise RuntimeError("no VmHWM in /proc/self/status")


def write_shape(path: Path, shape: str, size: int) -> None:
    head = b"id,name,email\n1,"
    tail = b",a@x.com\n"
    if shape == "field":
        body = b"a" * size
    elif shape == "quoted":
        body = b'"' + b"line\n" * (size // 5) + b'"'
    elif shape == "line":
        head, body, tail = b"id,name,email\n", b"1,b,c," * (size // 6), b"\n"
    else:
        # Accepted, and long: every row holds a value just under the limit, so each line
        # spans chunks and is joined from held pieces.
        row = b"%d," + b"n" * 60_000 + b",p@x.com\n"
        head, tail = b"id,name,email\n", b""
        body = b"".join(row % i for i in range(size // len(row)))
    path.write_bytes(head + body + tail)


def child(mode: str, path: Path) -> dict[str, Any]:
    import time

    if mode == "floor":
        started = time.perf_counter()
        with path.open(encoding="utf-8") as fh:
            length = len(fh.read())
        return {"seconds": time.perf_counter() - started, "rss_mb": _rss_mb(), "chars": length}

    from hrsync.config.loading import SourceSettings
    from hrsync.sources.base import SourceError
    from hrsync.sources.open import open_export

    started = time.perf_counter()
    try:
        export = open_export(SourceSettings(path=path, max_bytes=1024 * MB))
        rows = len(export.table().cells)  # as a sync reads: the whole-file pass
        outcome = f"read {rows} rows"
    except SourceError as exc:
        outcome = f"refused: {exc}"
    return {"seconds": time.perf_counter() - started, "rss_mb": _rss_mb(), "outcome": outcome}


def run_child(mode: str, path: Path) -> dict[str, Any]:
    proc = subprocess.run(
        [sys.executable, __file__, "--child", mode, str(path)],
        capture_output=True,
        text=True,
        check=True,
        timeout=600,
    )
    result: dict[str, Any] = json.loads(proc.stdout.strip().splitlines()[-1])
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--sizes", default=",".join(map(str, SIZES_MB)), help="comma-separated sizes in MB"
    )
    parser.add_argument("--child", nargs=2, metavar=("MODE", "PATH"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        import logging

        import structlog

        # source.opened would go to stdout, where the parent reads the figures.
        structlog.configure(wrapper_class=structlog.make_filtering_bound_logger(logging.ERROR))
        print(json.dumps(child(args.child[0], Path(args.child[1]))))
        return
    sizes = [int(s) for s in args.sizes.split(",")]
    print(
        f"{'shape':>6} {'MB':>4} │ {'floor':>7} {'RSS':>6} │ {'read':>7} {'×':>6} "
        f"{'RSS':>6} {'×':>5} │ outcome"
    )
    print("─" * 100)
    with tempfile.TemporaryDirectory() as tmp:
        for shape in SHAPES:
            for size in sizes:
                path = Path(tmp) / f"{shape}-{size}.csv"
                write_shape(path, shape, size * MB)
                floor = run_child("floor", path)
                read = run_child("read", path)
                path.unlink()
                ratio = read["seconds"] / max(floor["seconds"], 1e-6)
                rss_ratio = read["rss_mb"] / floor["rss_mb"]
                print(
                    f"{shape:>6} {size:>4} │ {floor['seconds']:>6.3f}s {floor['rss_mb']:>5.0f}M │ "
                    f"{read['seconds']:>6.3f}s {ratio:>5.1f}x {read['rss_mb']:>5.0f}M "
                    f"{rss_ratio:>4.1f}x │ {read['outcome'][:60]}"
                )
    print(
        "\nfloor: open().read() of the file (decode only); read: open_export + every row "
        "(refused early is the goal);\n×: read / floor. RSS: the child's peak (VmHWM); the "
        "read's includes importing hrsync (about 30 MB)."
    )


if __name__ == "__main__":
    main()
