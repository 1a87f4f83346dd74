"""The daemon's HTTP listener: one request per connection, and no client can starve it.

Whoever can reach `daemon.listen` can open connections, so one selector thread does all
the socket work (accept, read the request head, write the answer) without ever blocking
on a client, and a few worker threads only compute answers. An idle or slow connection
costs a file descriptor and a few bytes, never a thread. The bounds (`Limits`):

- at most `max_connections` open at once (lower when the process may open few files:
  a quarter of RLIMIT_NOFILE). A connection over the cap is closed at once: the oldest
  one that has not sent a whole request head, else the new one. A client that connects
  and says nothing thereby makes room for one that asks, as a probe does at once;
- a request head must arrive whole within `read_timeout_s` of the connection, in at
  most `MAX_HEAD_BYTES`; the answer must be taken within `write_timeout_s`;
- `fast_paths` (/healthz) have a worker of their own: a /readyz waiting on a busy state
  store never delays the liveness probe;
- when accept fails for want of file descriptors, the oldest silent connection is
  closed to make room, and with none the loop stops accepting for a moment (backing
  off up to `ACCEPT_BACKOFF_MAX_S`) instead of spinning on a socket it cannot accept;
- a dropped connection (reset, timed out, over the cap, not accepted) is counted in
  `dropped` and told in one short log line, at most once a minute: never a traceback.

The heartbeat and the scheduler run on threads of their own and need nothing from here.
"""

from __future__ import annotations

import contextlib
import errno
import queue
import selectors
import socket
import threading
import time
from collections import Counter
from collections.abc import Callable, Collection
from dataclasses import dataclass

from hrsync.core.listen import ListenAddress
from hrsync.logs import get_logger, scrub

log = get_logger(__name__)

MAX_HEAD_BYTES = 16 * 1024
ACCEPT_BATCH = 32  # accepts per turn of the loop, so reads are never starved by a flood
ACCEPT_BACKOFF_S = 0.05
ACCEPT_BACKOFF_MAX_S = 1.0
DROPS_REPEAT_S = 60.0
TICK_S = 1.0  # the loop wakes at least this often: timeouts, the drops' summary
_NO_DESCRIPTORS = frozenset({errno.EMFILE, errno.ENFILE, errno.ENOBUFS, errno.ENOMEM})
# Drops worth a warning: someone is pressing on the listener. The rest is clients' life.
_PRESSURE = ("over_cap", "accept_failed")

# The raw request head -> the whole answer (status line, headers, body).
Respond = Callable[[bytes], bytes]


@dataclass(frozen=True)
class Limits:
    max_connections: int = 64
    read_timeout_s: float = 5.0
    write_timeout_s: float = 5.0
    workers: int = 4  # for every path but `fast_paths`, which have one of their own


DEFAULT_LIMITS = Limits()


class _Connection:
    __slots__ = ("answer", "closed", "deadline", "head", "sock")

    def __init__(self, sock: socket.socket, deadline: float) -> None:
        self.sock = sock
        self.head = b""
        self.deadline = deadline
        self.answer = memoryview(b"")
        self.closed = False


class Listener:
    """Serves `respond` on `address` until `stop`."""

    def __init__(
        self,
        address: ListenAddress,
        respond: Respond,
        *,
        limits: Limits = DEFAULT_LIMITS,
        fast_paths: Collection[str] = (),
    ) -> None:
        self._respond = respond
        self._limits = limits
        self._fast_paths = frozenset(fast_paths)
        self.max_connections = _connection_cap(limits.max_connections)
        # How many connections were dropped, by why (for tests and the log).
        self.dropped: Counter[str] = Counter()
        self._drops = _Drops()
        family, kind, proto, _, where = socket.getaddrinfo(
            address.host, address.port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE
        )[0]
        self._socket = socket.socket(family, kind, proto)
        try:
            self._socket.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            self._socket.bind(where)
            # Room for a burst while the loop accepts; the cap is enforced past accept.
            self._socket.listen(max(4 * self.max_connections, 128))
            self._socket.setblocking(False)
        except BaseException:
            self._socket.close()
            raise
        self.port: int = self._socket.getsockname()[1]
        self._selector = selectors.DefaultSelector()
        self._wake_out, self._wake_in = socket.socketpair()
        self._wake_out.setblocking(False)
        self._wake_in.setblocking(False)
        # Connections by state, oldest first (dicts keep their order of insertion).
        self._reading: dict[_Connection, None] = {}
        self._working: set[_Connection] = set()
        self._writing: dict[_Connection, None] = {}
        self._answers: queue.SimpleQueue[tuple[_Connection, bytes]] = queue.SimpleQueue()
        self._fast: queue.SimpleQueue[_Connection | None] = queue.SimpleQueue()
        self._general: queue.SimpleQueue[_Connection | None] = queue.SimpleQueue()
        self._accepting = True
        self._accept_at = 0.0
        self._backoff = ACCEPT_BACKOFF_S
        self._stopping = threading.Event()
        self._threads = [
            threading.Thread(target=self._loop, name="hrsync-http", daemon=True),
            threading.Thread(
                target=self._work, args=(self._fast,), name="hrsync-http-fast", daemon=True
            ),
            *(
                threading.Thread(
                    target=self._work, args=(self._general,), name=f"hrsync-http-{n}", daemon=True
                )
                for n in range(max(limits.workers, 1))
            ),
        ]

    @property
    def open_connections(self) -> int:
        return len(self._reading) + len(self._working) + len(self._writing)

    def start(self) -> None:
        self._selector.register(self._socket, selectors.EVENT_READ, "accept")
        self._selector.register(self._wake_in, selectors.EVENT_READ, "wake")
        for thread in self._threads:
            thread.start()

    def stop(self) -> None:
        self._stopping.set()
        self._wake()
        for lane in (self._fast, *([self._general] * (len(self._threads) - 2))):
            lane.put(None)
        for thread in self._threads:
            if thread.is_alive():
                thread.join(2)
        if not self._threads[0].is_alive():
            self._close_all()

    # ------------------------------------------------------------ the loop

    def _loop(self) -> None:
        while not self._stopping.is_set():
            events = self._selector.select(self._timeout(time.monotonic()))
            now = time.monotonic()
            for key, mask in events:
                if key.data == "accept":
                    self._accept(now)
                elif key.data == "wake":
                    self._take_answers(now)
                elif key.data.closed:
                    continue  # made room for another earlier in this turn
                elif mask & selectors.EVENT_READ:
                    self._read(key.data)
                elif mask & selectors.EVENT_WRITE:
                    self._write(key.data)
            self._take_answers(now)
            self._expire(now)
            if not self._accepting and now >= self._accept_at:
                self._accepting = True
                self._selector.register(self._socket, selectors.EVENT_READ, "accept")
            self._drops.tell(now)

    def _timeout(self, now: float) -> float:
        soonest = now + TICK_S
        for connections in (self._reading, self._writing):
            if connections:
                soonest = min(soonest, next(iter(connections)).deadline)
        if not self._accepting:
            soonest = min(soonest, self._accept_at)
        return max(soonest - now, 0.0)

    def _accept(self, now: float) -> None:
        for _ in range(ACCEPT_BATCH):
            try:
                sock, _ = self._socket.accept()
            except BlockingIOError:
                break
            except (ConnectionAbortedError, InterruptedError):
                continue  # the client gave up before its turn
            except OSError as exc:
                if exc.errno in _NO_DESCRIPTORS and self._evict_silent():
                    continue  # a silent connection gave its descriptor to this one
                self._pause_accepting(now, exc)
                break
            self._backoff = ACCEPT_BACKOFF_S
            sock.setblocking(False)
            if self.open_connections >= self.max_connections and not self._evict_silent():
                sock.close()
                self._dropped("over_cap", now)
                continue
            connection = _Connection(sock, now + self._limits.read_timeout_s)
            self._reading[connection] = None
            self._selector.register(sock, selectors.EVENT_READ, connection)

    def _evict_silent(self) -> bool:
        """Close the oldest connection that has not sent a whole request head."""
        if not self._reading:
            return False
        self._close(next(iter(self._reading)), "over_cap")
        return True

    def _pause_accepting(self, now: float, exc: OSError) -> None:
        # The pending connection stays in the backlog, so the socket stays readable:
        # selecting on it now would spin.
        self._selector.unregister(self._socket)
        self._accepting = False
        self._accept_at = now + self._backoff
        self._backoff = min(self._backoff * 2, ACCEPT_BACKOFF_MAX_S)
        self._drops.failure = errno.errorcode.get(exc.errno or 0, "") or str(exc)
        self._dropped("accept_failed", now)

    def _read(self, connection: _Connection) -> None:
        try:
            data = connection.sock.recv(4096)
        except BlockingIOError:
            return
        except OSError:
            self._close(connection, "aborted")
            return
        if not data:
            # Connecting and closing says nothing (a TCP probe); half a request is an abort.
            self._close(connection, "aborted" if connection.head else None)
            return
        connection.head += data
        if b"\r\n\r\n" not in connection.head and b"\n\n" not in connection.head:
            if len(connection.head) > MAX_HEAD_BYTES:
                self._close(connection, "too_large")
            return
        del self._reading[connection]
        self._selector.unregister(connection.sock)
        self._working.add(connection)
        fast = _path(connection.head) in self._fast_paths
        (self._fast if fast else self._general).put(connection)

    def _take_answers(self, now: float) -> None:
        try:
            while self._wake_in.recv(4096):
                pass
        except BlockingIOError:
            pass
        while True:
            try:
                connection, answer = self._answers.get_nowait()
            except queue.Empty:
                return
            if connection.closed:
                continue
            self._working.discard(connection)
            connection.answer = memoryview(answer)
            connection.deadline = now + self._limits.write_timeout_s
            self._writing[connection] = None
            self._selector.register(connection.sock, selectors.EVENT_WRITE, connection)
            self._write(connection)

    def _write(self, connection: _Connection) -> None:
        try:
            sent = connection.sock.send(connection.answer)
        except BlockingIOError:
            return
        except OSError:
            self._close(connection, "aborted")
            return
        connection.answer = connection.answer[sent:]
        if not connection.answer:
            self._close(connection, None)

    def _expire(self, now: float) -> None:
        for connections in (self._reading, self._writing):
            while connections:
                oldest = next(iter(connections))
                if oldest.deadline > now:
                    break
                self._close(oldest, "timed_out")

    def _close(self, connection: _Connection, why: str | None) -> None:
        if connection.closed:
            return
        connection.closed = True
        self._reading.pop(connection, None)
        self._writing.pop(connection, None)
        self._working.discard(connection)
        # Not registered while a worker answers it.
        with contextlib.suppress(KeyError, ValueError):
            self._selector.unregister(connection.sock)
        if why is not None:  # counted first: the client may look as soon as it is closed
            self._dropped(why, time.monotonic())
        connection.sock.close()

    def _dropped(self, why: str, now: float) -> None:
        self.dropped[why] += 1
        self._drops.add(why, now)

    def _close_all(self) -> None:
        for connection in [*self._reading, *self._working, *self._writing]:
            self._close(connection, None)
        self._selector.close()
        for sock in (self._socket, self._wake_in, self._wake_out):
            sock.close()

    # ------------------------------------------------------------ workers

    def _work(self, lane: queue.SimpleQueue[_Connection | None]) -> None:
        while (connection := lane.get()) is not None:
            try:
                answer = self._respond(connection.head)
            except Exception as exc:  # `respond` answers its own errors; this is a bug
                log.warning(
                    "daemon.http_error",
                    path=_path(connection.head),
                    error=scrub(f"{type(exc).__name__}: {exc}"),
                )
                answer = b"HTTP/1.0 500 Internal Server Error\r\nContent-Length: 0\r\n\r\n"
            self._answers.put((connection, answer))
            self._wake()

    def _wake(self) -> None:
        # Full: a wake-up is already waiting; closed: stopping.
        with contextlib.suppress(OSError):
            self._wake_out.send(b"\0")


class _Drops:
    """Dropped connections told in one short line: the first at once, then what came
    after it at most once every `DROPS_REPEAT_S`."""

    def __init__(self) -> None:
        self._since_told: Counter[str] = Counter()
        self._told_at: float | None = None
        self.failure = ""  # why accept failed last (errno name)

    def add(self, why: str, now: float) -> None:
        self._since_told[why] += 1
        self.tell(now)

    def tell(self, now: float) -> None:
        if not self._since_told:
            return
        if self._told_at is not None and now - self._told_at < DROPS_REPEAT_S:
            return
        counts = dict(self._since_told)
        pressure = any(why in counts for why in _PRESSURE)
        fields: dict[str, object] = {**counts}
        if "accept_failed" in counts:
            fields["error"] = self.failure
        if self._told_at is not None:
            fields["in_last_s"] = round(now - self._told_at)
        if pressure:
            log.warning("daemon.http_dropped", **fields)
        else:
            log.info("daemon.http_dropped", **fields)
        self._told_at = now
        self._since_told.clear()


def _path(head: bytes) -> str:
    """The path of the request line ("GET /healthz?x HTTP/1.1" -> "/healthz")."""
    line = head.split(b"\n", 1)[0].decode("latin-1")
    parts = line.split()
    return parts[1].split("?", 1)[0] if len(parts) >= 2 else ""


def _connection_cap(configured: int) -> int:
    """`configured`, or a quarter of the file descriptors the process may open if fewer:
    the listener must leave the rest to the sync and the state store."""
    try:
        import resource
    except ImportError:  # not on this platform
        return configured
    soft, _ = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft == resource.RLIM_INFINITY:
        return configured
    return max(1, min(configured, max(8, soft // 4)))
