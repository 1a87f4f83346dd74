"""`hrsync simulator`: serve the bundled fake DX API until stopped."""

from __future__ import annotations

import argparse

from hrsync.commands.startup import configure_logging
from hrsync.simulator.serve import serve


def simulator(args: argparse.Namespace) -> int:
    configure_logging(args)
    return serve(args.scenario, host=args.host, port=args.port)
