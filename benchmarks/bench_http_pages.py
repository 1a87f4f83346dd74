"""Time reading 100,000 people over 100 HTTP pages beside the same records in one file.

    PYTHONPATH=. .venv/bin/python benchmarks/bench_http_pages.py
    PYTHONPATH=. .venv/bin/python benchmarks/bench_http_pages.py --people 20000 --pages 20

- floor: ``open_export`` of one local JSON file holding every record (Workday shape),
  then every row of ``Export.rows()``;
- paged: the same records served by a local fake (tests/fakes) as Graph-style pages
  (``value`` + ``@odata.nextLink``), read with ``source.pagination.style = "odata"``,
  then every row;
- server: the time the fake spent answering (its handler, pages pre-serialised), which
  the paged read waits for and the floor does not.

The issue's bar: paged <= 2 x (floor + server). Each is the best of `--repeat` runs.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from benchmarks.generator import generate_org, write_json  # noqa: E402
from hrsync.core.settings import PaginationSettings, SourceSettings  # noqa: E402
from hrsync.sources.open import open_export  # noqa: E402
from tests.fakes import Request, Response, serve  # noqa: E402


def read_all(settings: SourceSettings) -> tuple[float, int, int]:
    started = time.perf_counter()
    export = open_export(settings, environ={})
    count = sum(1 for _ in export.rows())
    return time.perf_counter() - started, count, export.pages


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--people", type=int, default=100_000)
    parser.add_argument("--pages", type=int, default=100)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args(argv)

    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "org.json"
        write_json(generate_org(args.people, seed=7), path)
        entries: list[Any] = json.loads(path.read_text(encoding="utf-8"))["Report_Entry"]
        size = -(-len(entries) // args.pages)
        bodies: list[dict[str, Any]] = [
            {"value": entries[i * size : (i + 1) * size]} for i in range(args.pages)
        ]
        for i, body in enumerate(bodies[:-1]):
            body["@odata.nextLink"] = f"/users?$skiptoken={i + 1}"
        pages = [json.dumps(body, ensure_ascii=False).encode() for body in bodies]
        del bodies

        def handler(request: Request, base: str) -> Response:
            index = int(request.query.get("$skiptoken", "0"))
            return Response(200, pages[index], {"Content-Type": "application/json"})

        floor_settings = SourceSettings(path=path, records_path="Report_Entry")
        floors = [read_all(floor_settings) for _ in range(args.repeat)]
        with serve(handler) as server:
            paged_settings = SourceSettings(
                url=f"{server.base_url}/users",
                records_path="value",
                pagination=PaginationSettings(style="odata"),
            )
            paged = []
            for _ in range(args.repeat):
                server.busy_s.clear()
                seconds, count, read_pages = read_all(paged_settings)
                paged.append((seconds, count, read_pages, sum(server.busy_s)))
        floor = min(f[0] for f in floors)
        best = min(paged, key=lambda run: run[0])
        assert best[1] == floors[0][1] == len(entries), "the paged read lost people"
        bar = floor + best[3]
        print(
            f"{len(entries):,} people, {best[2]} pages, "
            f"{sum(len(p) for p in pages) / 1e6:.1f} MB of JSON\n"
            f"floor (one local file): {floor:6.2f} s\n"
            f"paged (HTTP, odata):    {best[0]:6.2f} s\n"
            f"server's own time:      {best[3]:6.2f} s\n"
            f"paged / (floor + server) = {best[0] / bar:.2f} (bar: 2.00)"
        )
        return 0 if best[0] <= 2 * bar else 1


if __name__ == "__main__":
    raise SystemExit(main())
