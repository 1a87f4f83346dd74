"""Plain http:// to another machine: where a credential must not travel unasked.

Loopback (127.0.0.0/8, ::1, `localhost`) never leaves this machine, nor does the
unspecified address (0.0.0.0, ::), which a connection takes for loopback: the bundled
simulator and local fakes need no exception. Any other host, a private address too, is
across a network someone else may read.
"""

from __future__ import annotations

import ipaddress
from urllib.parse import urlsplit


def plain_http_host(url: str) -> str | None:
    """The host `url` would be sent to in clear text over a network: its host when the
    scheme is http:// and the host is not this machine; None for https://, loopback, or
    what is no http URL at all (refused elsewhere, for that)."""
    try:
        parts = urlsplit(url.strip())
        host = parts.hostname
    except ValueError:
        return None
    if parts.scheme.lower() != "http" or not host:
        return None
    return None if _this_machine(host) else host


def _this_machine(host: str) -> bool:
    if host == "localhost":  # urlsplit gives the host in lower case
        return True
    try:
        address = ipaddress.ip_address(host)
    except ValueError:
        return False  # a name: only the one above is known to stay on this machine
    return address.is_loopback or address.is_unspecified


# How a credential over plain http:// travels, for messages.
IN_CLEAR = "would cross the network readable by anyone on the way"


def refusal(key: str, host: str, why: str, allow_key: str) -> str:
    """The message refusing `key`'s plain http:// to `host`; `why` follows the host."""
    return (
        f"{key} is plain http:// to {host}{why}; use https://, or set {allow_key} = true "
        "for a network you trust"
    )
