"""`daemon.listen`: the address of the daemon's HTTP listener, read once for the config
check and the bind, so what the check lets through is what binds.

"HOST:PORT": an IPv4 address, a host name, or an IPv6 address in brackets
("[::]:9464"); port 0 (any free port) to 65535.
"""

from __future__ import annotations

import ipaddress
import re
from dataclasses import dataclass

EXPECTED = (
    '"HOST:PORT" such as "0.0.0.0:9464", "127.0.0.1:9464" or "[::]:9464" '
    "(an IPv6 address in brackets; port 0 to 65535)"
)
_PORT = re.compile(r"^(0|[1-9][0-9]{0,4})$")
_LABEL = re.compile(r"^[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?$")


@dataclass(frozen=True, slots=True)
class ListenAddress:
    host: str  # as bound: an IPv6 address without its brackets
    port: int
    ipv6: bool = False

    def __str__(self) -> str:
        return f"[{self.host}]:{self.port}" if self.ipv6 else f"{self.host}:{self.port}"


def parse_listen(text: str) -> ListenAddress:
    """The address in `text`, or ValueError saying what is wrong with it."""
    if any(c.isspace() for c in text):
        raise ValueError("it contains spaces")
    if "/" in text:
        raise ValueError("a host and a port, not a URL or a path")
    if text.startswith("["):
        host, bracket, rest = text[1:].partition("]")
        if not bracket or not rest.startswith(":"):
            raise ValueError("no port after the bracketed IPv6 address")
        try:
            ipaddress.IPv6Address(host)
        except ValueError:
            raise ValueError(f"{host!r} in brackets is not an IPv6 address") from None
        return ListenAddress(host, _port(rest[1:]), ipv6=True)
    host, colon, port = text.rpartition(":")
    if not colon:
        raise ValueError("no port")
    if ":" in host:
        raise ValueError("an IPv6 address goes in brackets, e.g. [::1]:9464")
    if not host:
        raise ValueError('no host (e.g. "0.0.0.0" for every interface)')
    _check_host(host)
    return ListenAddress(host, _port(port))


def _port(text: str) -> int:
    if not _PORT.match(text) or int(text) > 65535:
        raise ValueError(f"the port {text!r} is not a number from 0 to 65535")
    return int(text)


def _check_host(host: str) -> None:
    labels = host.split(".")
    if all(label.isdigit() for label in labels):
        try:
            ipaddress.IPv4Address(host)
        except ValueError:
            raise ValueError(f"{host!r} is not an IPv4 address") from None
        return
    if len(host) > 253 or not all(_LABEL.match(label) for label in labels):
        raise ValueError(
            f"{host!r} is not a host name (letters, digits, hyphens and dots) or an address"
        )
