"""Serve the simulator in the foreground until SIGINT or SIGTERM.

``python -m hrsync.simulator.serve --scenario FILE --port N`` (the CLI's
``hrsync simulator`` calls ``serve``).
"""

from __future__ import annotations

import argparse
import errno
import signal
import sys
import threading
from collections.abc import Callable, Sequence
from pathlib import Path
from types import FrameType
from typing import Any, TextIO

from hrsync.simulator.records import ORG_TOKEN
from hrsync.simulator.scenario import (
    Scenario,
    ScenarioError,
    default_scenario,
    load_scenario,
    require_tokens,
)
from hrsync.simulator.server import start_simulator
from hrsync.terminal import escape_controls


def usable_token(scenario: Scenario) -> str | None:
    """The token to offer an operator: an organization token that may import, else any."""
    for token in scenario.tokens:
        if token.kind == ORG_TOKEN and "snapshots:admin" in token.scopes:
            return token.value
    return scenario.tokens[0].value if scenario.tokens else None


def serve(
    scenario_path: Path | None,
    *,
    host: str = "127.0.0.1",
    port: int = 8765,
    out: TextIO = sys.stdout,
    err: TextIO = sys.stderr,
    stop: threading.Event | None = None,
    seed: int | None = None,
) -> int:
    """Serve until SIGINT/SIGTERM (or ``stop`` is set). Returns an exit code: 0 after a
    clean stop, 2 when the scenario is unusable or the port cannot be bound. ``seed``:
    what the simulator varies (printed; None: the scenario's, else chosen now)."""
    try:
        scenario = load_scenario(scenario_path) if scenario_path else default_scenario()
        require_tokens(scenario)
    except ScenarioError as exc:
        print(f"error: {exc}", file=err)
        return 2
    notes: tuple[str, ...] = ()
    if scenario_path is None:
        # The built-in account is a made-up company's, with teams of its own: a sync of
        # another export against it would archive them and name leads it does not know.
        notes = (
            f"# {scenario.account_name!r} is a made-up company with users and teams of its own;"
            " to rehearse your own org: hrsync simulator --rehearse CONFIG",
        )
    return serve_scenario(
        scenario, host=host, port=port, out=out, err=err, stop=stop, notes=notes, seed=seed
    )


def serve_scenario(
    scenario: Scenario,
    *,
    host: str = "127.0.0.1",
    port: int = 8765,
    out: TextIO = sys.stdout,
    err: TextIO = sys.stderr,
    stop: threading.Event | None = None,
    token: str | None = None,
    exports: Sequence[tuple[str, str]] = (),
    notes: Callable[[str], Sequence[str]] | Sequence[str] = (),
    seed: int | None = None,
) -> int:
    """Serve ``scenario`` as `serve` does. ``token``: the one to print (default: the
    scenario's usable one); ``exports``: more ``export NAME=VALUE`` lines; ``notes``:
    comment lines after the heading, or a function of the base URL giving them."""
    try:
        simulator = start_simulator(scenario, host=host, port=port, seed=seed)
    except OSError as exc:
        print(f"error: cannot listen on {host}:{port}: {exc.strerror}", file=err)
        if exc.errno == errno.EADDRINUSE:
            # Then the base URL to copy is the one printed: any free port will do.
            print(
                "  another program listens there: stop it, or pass --port 0 for any free "
                "port (then use the HRSYNC_DX__BASE_URL line it prints)",
                file=err,
            )
        return 2
    stop = stop or threading.Event()
    restore = _install_signal_handlers(stop)
    try:
        token = token or usable_token(scenario)
        print(f"export HRSYNC_DX__BASE_URL={simulator.base_url}", file=out)
        if token is not None:
            print(f"export HRSYNC_DX_TOKEN={token}", file=out)
        for name, value in exports:
            print(f"export {name}={value}", file=out)
        print(
            f"# DX simulator for {scenario.account_name!r} "
            f"(scenario {scenario.source}); stop with Ctrl-C",
            file=out,
        )
        for line in notes(simulator.base_url) if callable(notes) else notes:
            # Names from a rehearsed export: text only (hrsync.terminal).
            print(escape_controls(line), file=out)
        # Where the contract is silent the seed decides; the same seed replays the answers.
        print(
            f"# {simulator.dx.variation.describe()}; replay with --seed {simulator.dx.seed}",
            file=out,
        )
        print(
            '# try: curl -H "Authorization: Bearer $HRSYNC_DX_TOKEN" '
            "$HRSYNC_DX__BASE_URL/teams.list",
            file=out,
        )
        out.flush()
        while not stop.wait(0.2):
            pass
    finally:
        simulator.stop()
        restore()
    return 0


def _install_signal_handlers(stop: threading.Event) -> _Restore:
    if threading.current_thread() is not threading.main_thread():
        return _Restore({})  # signals only reach the main thread; callers use `stop` instead

    def on_signal(signum: int, frame: FrameType | None) -> None:
        stop.set()

    previous = {sig: signal.signal(sig, on_signal) for sig in (signal.SIGINT, signal.SIGTERM)}
    return _Restore(previous)


_SignalHandler = Callable[[int, FrameType | None], Any] | int | None


class _Restore:
    def __init__(self, previous: dict[signal.Signals, _SignalHandler]) -> None:
        self._previous = previous

    def __call__(self) -> None:
        for sig, handler in self._previous.items():
            if handler is not None:  # None: installed outside Python, cannot be restored
                signal.signal(sig, handler)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m hrsync.simulator.serve")
    parser.add_argument("--scenario", type=Path, default=None, help="scenario JSON file")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8765, help="0 picks a free port")
    parser.add_argument("--seed", type=int, default=None, help="what the simulator varies")
    args = parser.parse_args(argv)
    return serve(args.scenario, host=args.host, port=args.port, seed=args.seed)


if __name__ == "__main__":
    sys.exit(main())
