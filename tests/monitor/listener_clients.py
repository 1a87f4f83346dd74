"""Clients of the daemon's HTTP listener, run as child processes by the listener tests, so
that neither they nor the listener wait on the other's interpreter lock:

    python -m tests.monitor.listener_clients flood HOST PORT N
        opens N idle TCP connections, says "open", and on the line "close" on stdin closes
        them all at once, says "closed" and exits.
    python -m tests.monitor.listener_clients poll HOST PORT
        sends GET /healthz every 20 ms on a fresh connection (as a kubelet does), says
        "polling" after the first answer, and on end of stdin prints every answer as one
        JSON list of [seconds since start, status (0: no answer), seconds taken].
    python -m tests.monitor.listener_clients starved LIMIT
        serves the endpoints in a process whose every file descriptor but the listener's
        own is taken (by files, as a sync's would be), RLIMIT_NOFILE lowered to LIMIT;
        says "@@ PORT CAP", then answers "cpu" with "@@ PROCESS_SECONDS ACCEPT_FAILURES"
        and "free" (the files closed) with "@@ freed".

Protocol lines are the only ones starting with "@@" or being exactly a word; log lines
of the child may come in between.
"""

from __future__ import annotations

import json
import os
import resource
import socket
import sys
import threading
import time
from typing import IO, Any

GET = b"GET /healthz HTTP/1.1\r\nHost: hrsync\r\nConnection: close\r\n\r\n"


def say(text: str) -> None:
    print(text, flush=True)


def flood(host: str, port: int, count: int) -> None:
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (min(hard, max(soft, count + 64)), hard))
    held: list[socket.socket] = []
    for _ in range(count):
        try:
            held.append(socket.create_connection((host, port), timeout=2))
        except OSError:
            continue  # a connection the listener's backlog had no room for
    say(f"open {len(held)}")
    sys.stdin.readline()
    for sock in held:
        sock.close()
    say("closed")


def poll(host: str, port: int) -> None:
    answers: list[list[float]] = []
    started = time.monotonic()
    stop = threading.Event()

    def loop() -> None:
        while not stop.is_set():
            began = time.monotonic()
            answers.append([began - started, _get(host, port), time.monotonic() - began])
            if len(answers) == 1:
                say("polling")
            stop.wait(0.02)

    thread = threading.Thread(target=loop)
    thread.start()
    sys.stdin.read()
    stop.set()
    thread.join()
    say(json.dumps(answers))


def _get(host: str, port: int) -> int:
    """One probe as a kubelet makes it: a connection the listener closed over its cap is
    tried once more at once (a probe fails a pod only after several misses). Under a
    flood, a probe starved of CPU between its connect and its request is the oldest
    silent connection, the one the listener lets go to make room."""
    status = _get_once(host, port)
    return status if status else _get_once(host, port)


def _get_once(host: str, port: int) -> int:
    try:
        with socket.create_connection((host, port), timeout=2) as sock:
            sock.sendall(GET)
            data = b""
            while chunk := sock.recv(4096):
                data += chunk
    except OSError:
        return 0
    parts = data.split(b" ", 2)
    return int(parts[1]) if len(parts) > 1 and parts[1].isdigit() else 0


def starved(limit: int) -> None:
    import structlog

    from hrsync.monitor.endpoints import Endpoints

    # The listener's log lines on stderr: on stdout they could split a protocol line.
    structlog.configure(logger_factory=structlog.PrintLoggerFactory(sys.stderr))

    _, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (limit, hard))
    endpoints = Endpoints(
        "127.0.0.1:0",
        health=lambda: (True, "ok"),
        ready=lambda: (True, "ready"),
        metrics=lambda: b"",
    )
    endpoints.start()
    files: list[IO[Any]] = []
    while True:
        try:
            files.append(open(os.devnull, "rb"))  # noqa: SIM115
        except OSError:
            break
    port = endpoints.address.rpartition(":")[2]
    say(f"@@ {port} {endpoints.listener.max_connections}")
    for line in sys.stdin:
        if line.strip() == "cpu":
            say(f"@@ {time.process_time()} {endpoints.listener.dropped['accept_failed']}")
        elif line.strip() == "free":
            for file in files:
                file.close()
            files.clear()
            say("@@ freed")
    endpoints.stop()


if __name__ == "__main__":
    command, *args = sys.argv[1:]
    if command == "flood":
        flood(args[0], int(args[1]), int(args[2]))
    elif command == "poll":
        poll(args[0], int(args[1]))
    elif command == "starved":
        starved(int(args[0]))
    else:
        raise SystemExit(f"unknown command {command!r}")
