"""Running hrsync as a reader of the docs does: a rehearsal simulator started as in a
second terminal (`hrsync simulator --rehearse CONFIG` or `--users-from EXPORT`), commands
run with the environment it printed, a page's ```sh blocks in order, and a command on a
terminal (a pseudo-terminal), where hrsync prints for a person.

Shared by the tests of the rehearsal how-to and of the tutorial.
"""

from __future__ import annotations

import os
import pty
import re
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

import httpx

from tests.e2e.conftest import Run, parse_events
from tests.simulating import seed_args

HRSYNC = [sys.executable, "-m", "hrsync"]


@dataclass
class Rehearsal:
    process: subprocess.Popen[str]
    printed: list[str]
    env: dict[str, str]

    @property
    def token(self) -> str:
        return self.env["HRSYNC_DX_TOKEN"]

    @property
    def base_url(self) -> str:
        return self.env["HRSYNC_DX__BASE_URL"]

    def teams(self) -> dict[str, dict[str, object]]:
        reply = httpx.get(
            f"{self.base_url}/teams.list", headers={"Authorization": f"Bearer {self.token}"}
        )
        return {t["name"]: t for t in reply.json()["teams"]}


def clean_env() -> dict[str, str]:
    return {k: v for k, v in os.environ.items() if not k.startswith("HRSYNC_")}


@contextmanager
def rehearsing(cwd: Path, *args: str, env: dict[str, str] | None = None) -> Iterator[Rehearsal]:
    process = subprocess.Popen(
        [*HRSYNC, "simulator", *args, "--port", "0", *seed_args()],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**clean_env(), **(env or {})},
        cwd=cwd,
    )
    try:
        assert process.stdout is not None
        printed: list[str] = []
        while not printed or not printed[-1].startswith("# try:"):
            line = process.stdout.readline()
            assert line, f"the simulator ended: {process.wait()} {process.stderr}"
            printed.append(line.rstrip("\n"))
        exported = dict(env or {})
        for line in printed:
            if line.startswith("export "):
                name, _, value = line.removeprefix("export ").partition("=")
                exported[name] = value
        yield Rehearsal(process, printed, exported)
        process.terminate()
        assert process.wait(timeout=10) == 0
        assert process.stderr is not None
        assert exported["HRSYNC_DX_TOKEN"] not in process.stderr.read()
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()


def hrsync(cwd: Path, rehearsal: Rehearsal, *args: str) -> Run:
    proc = subprocess.run(
        [*HRSYNC, *args],
        env={**clean_env(), **rehearsal.env},
        capture_output=True,
        text=True,
        timeout=90,
        cwd=cwd,
    )
    # The token was printed once, for the person; no command shows it again.
    assert rehearsal.token not in proc.stdout + proc.stderr
    return Run(proc.returncode, proc.stdout, proc.stderr, parse_events(proc.stdout + proc.stderr))


def fenced_blocks(page: Path) -> list[tuple[str, str]]:
    """Every fenced block of the page, in order, as (its language or "", its text)."""
    blocks: list[tuple[str, str]] = []
    current: list[str] = []
    language: str | None = None
    for line in page.read_text(encoding="utf-8").splitlines():
        if language is None and line.startswith("```"):
            language, current = line.removeprefix("```").strip(), []
        elif language is not None and line == "```":
            blocks.append((language, "\n".join(current)))
            language = None
        elif language is not None:
            current.append(line)
    return blocks


def sh_blocks(page: Path) -> list[str]:
    return [text for language, text in fenced_blocks(page) if language == "sh"]


ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")


@dataclass
class Terminal:
    """A command running on a terminal of its own, its output read as it comes."""

    process: subprocess.Popen[bytes]
    master: int
    chunks: list[bytes] = field(default_factory=list)
    reader: threading.Thread | None = None

    @property
    def output(self) -> str:
        text = b"".join(self.chunks).decode("utf-8", errors="replace")
        return ANSI.sub("", text.replace("\r\n", "\n"))

    def read(self) -> None:
        while True:
            try:
                data = os.read(self.master, 65536)
            except OSError:  # EIO: every writer closed the terminal
                return
            if not data:
                return
            self.chunks.append(data)

    def wait_for(self, text: str, timeout: float = 60) -> None:
        deadline = time.monotonic() + timeout
        while text not in self.output:
            assert self.process.poll() is None, f"ended before {text!r}: {self.output}"
            assert time.monotonic() < deadline, f"no {text!r} in {timeout} s: {self.output}"
            time.sleep(0.05)

    def interrupt(self) -> None:
        """Ctrl-C: SIGINT to the terminal's foreground process group."""
        os.killpg(self.process.pid, signal.SIGINT)

    def finish(self, timeout: float = 90) -> int:
        code = self.process.wait(timeout=timeout)
        if self.reader is not None:
            self.reader.join(timeout=10)
        return code


@contextmanager
def on_terminal(command: str, cwd: Path, env: dict[str, str]) -> Iterator[Terminal]:
    """`command` run by bash with a terminal as its stdin, stdout and stderr, as a person
    runs it; killed on the way out if it is still running."""
    master, slave = pty.openpty()
    process = subprocess.Popen(
        ["bash", "-c", command],
        stdin=slave,
        stdout=slave,
        stderr=slave,
        cwd=cwd,
        env=env,
        start_new_session=True,
    )
    os.close(slave)
    terminal = Terminal(process, master)
    terminal.reader = threading.Thread(target=terminal.read, daemon=True)
    terminal.reader.start()
    try:
        yield terminal
    finally:
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()
        terminal.finish()
        os.close(master)


def run_on_terminal(command: str, cwd: Path, env: dict[str, str]) -> tuple[int, str]:
    with on_terminal(command, cwd, env) as terminal:
        code = terminal.finish()
    return code, terminal.output


def shown(lines: Sequence[str], output: str) -> list[str]:
    """The lines a page shows that the output does not print, in the page's order. A line
    shown is a whole line of the output, "…" standing for any text within it; a shown line
    that is only "…" or "..." stands for lines left out."""
    printed = output.splitlines()
    missing: list[str] = []
    at = 0
    for line in lines:
        if line.strip() in {"…", "...", ""}:
            continue
        pattern = re.compile(".*".join(re.escape(part) for part in line.split("…")))
        found = next((i for i in range(at, len(printed)) if pattern.fullmatch(printed[i])), None)
        if found is None:
            missing.append(line)
        else:
            at = found + 1
    return missing
