"""Whether the DX Web API URL answers as hrsync's bundled simulator.

`hrsync init` points `dx.base_url` at the simulator's default address, where another
local service may be listening instead: its 401 would read as DX refusing the token.
Every answer of the simulator carries `SIMULATOR_HEADER`; `hrsync check` asks once and
says what it found instead.
"""

from __future__ import annotations

from typing import Final

import httpx

from hrsync.dx.methods import WHOAMI

SIMULATOR_HEADER: Final = "X-Hrsync-Simulator"
# Where `hrsync simulator` listens by default, and `hrsync init` points dx.base_url.
SIMULATOR_URL: Final = "http://127.0.0.1:8765"
_DEFAULT_ADDRESSES: Final = frozenset({"127.0.0.1:8765", "localhost:8765"})


def at_simulator_address(base_url: str) -> bool:
    """Whether `base_url` is the simulator's default address (the one init writes)."""
    url = httpx.URL(base_url.strip())
    return url.scheme == "http" and f"{url.host}:{url.port}" in _DEFAULT_ADDRESSES


def not_the_simulator(base_url: str, timeout_s: float = 5.0) -> str | None:
    """None when the simulator answers at `base_url`; else what answers there instead."""
    url = f"{base_url.strip().rstrip('/')}/{WHOAMI}"
    try:
        # No token: any answer will do, the simulator marks its refusals too.
        answer = httpx.get(url, timeout=timeout_s, trust_env=False)
    except httpx.ConnectError:
        return "nothing listens there (connection refused)"
    except httpx.HTTPError as exc:
        return f"no answer ({type(exc).__name__})"
    if answer.headers.get(SIMULATOR_HEADER):
        return None
    server = answer.headers.get("Server")
    by = f" from a server calling itself {server!r}" if server else ""
    return (
        f"another service answers there (HTTP {answer.status_code}{by}), not hrsync's "
        f"simulator: its answers lack the {SIMULATOR_HEADER} header"
    )
