"""The ``teams`` payload of the orgfiles methods: compact encoding and DX's 5 MB limit."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from hrsync.dx.errors import DxInvalidRequest
from hrsync.dx.methods import PROCESS

# DX says "5 MB" without saying which: the stricter reading (10^6) never lets through
# a payload DX would refuse.
MAX_PAYLOAD_BYTES = 5_000_000
_LARGEST_SHOWN = 5


class PayloadTooLargeLocal(DxInvalidRequest):
    """Refused before sending: the teams value is over DX's limit."""

    show_details_in_str = False


def encode_json(value: Any) -> bytes:
    """Compact UTF-8 JSON, as the client sends every POST body."""
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"), allow_nan=False).encode(
        "utf-8"
    )


def encode_teams(teams: Sequence[Mapping[str, Any]]) -> bytes:
    """The ``teams`` value as DX receives it (compact JSON)."""
    return encode_json([dict(team) for team in teams])


def largest_teams(
    teams: Sequence[Mapping[str, Any]], count: int = _LARGEST_SHOWN
) -> list[tuple[str, str, int]]:
    """(name, reference_id, encoded bytes) of the ``count`` largest teams, largest first."""
    sized = [
        (str(team.get("name", "")), str(team.get("reference_id", "")), len(encode_json(team)))
        for team in (dict(t) for t in teams)
    ]
    sized.sort(key=lambda entry: entry[2], reverse=True)
    return sized[:count]


def check_payload_size(
    teams: Sequence[Mapping[str, Any]],
    *,
    method: str = PROCESS,
    limit: int = MAX_PAYLOAD_BYTES,
) -> None:
    """Raise ``PayloadTooLargeLocal`` when the encoded teams exceed ``limit`` bytes."""
    size = len(encode_teams(teams))
    if size <= limit:
        return
    largest = largest_teams(teams)
    listed = "; ".join(
        f"{name!r} (reference_id {ref!r}): {nbytes} bytes" for name, ref, nbytes in largest
    )
    message = (
        f"teams payload is {size} bytes, over the {limit}-byte limit by {size - limit} bytes "
        f"({len(teams)} teams); largest teams: {listed}"
    )
    raise PayloadTooLargeLocal(
        method,
        message,
        error="payload_too_large",
        error_details={
            "size_bytes": size,
            "limit_bytes": limit,
            "largest_teams": [
                {"name": name, "reference_id": ref, "bytes": nbytes}
                for name, ref, nbytes in largest
            ],
        },
    )
