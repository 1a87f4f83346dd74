"""The teams payload: compact encoding and the local 5 MB guard."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from hrsync.dx.errors import DxInvalidRequest, DxRejected
from hrsync.dx.payload import (
    MAX_PAYLOAD_BYTES,
    PayloadTooLargeLocal,
    check_payload_size,
    encode_teams,
    largest_teams,
)


def team(ref: str, contributors: int = 0, name: str | None = None) -> dict[str, Any]:
    return {
        "name": name or f"Team {ref}",
        "reference_id": ref,
        "team_lead_email": f"lead-{ref}@example.com",
        "parent_team_reference_id": None,
        "parent_team_name": None,
        "contributors": [f"person{i}-{ref}@example.com" for i in range(contributors)],
    }


def test_encoding_is_compact_json_of_the_teams_value() -> None:
    teams = [team("eng-001", 1, name="Café")]
    raw = encode_teams(teams)
    assert json.loads(raw) == teams
    assert b", " not in raw and b": " not in raw
    # Non-ASCII stays UTF-8, as DX measures bytes on the wire.
    assert "Café".encode() in raw


def test_limit_is_the_stricter_reading_of_five_megabytes() -> None:
    assert MAX_PAYLOAD_BYTES == 5_000_000


def test_small_payload_passes() -> None:
    check_payload_size([team("a", 10), team("b", 3)])
    check_payload_size([])


def test_exactly_at_the_limit_passes_one_byte_over_fails() -> None:
    teams = [team("a", 5)]
    size = len(encode_teams(teams))
    check_payload_size(teams, limit=size)
    with pytest.raises(PayloadTooLargeLocal):
        check_payload_size(teams, limit=size - 1)


def test_too_large_names_size_limit_and_the_five_largest_teams() -> None:
    teams = [team(f"t{i:02d}", contributors=i * 10) for i in range(12)]
    size = len(encode_teams(teams))
    with pytest.raises(PayloadTooLargeLocal) as caught:
        check_payload_size(teams, limit=1000)
    exc = caught.value
    assert isinstance(exc, DxInvalidRequest) and isinstance(exc, DxRejected)
    assert exc.error == "payload_too_large"
    text = str(exc)
    assert f"{size} bytes" in text and "1000-byte limit" in text
    for ref in ("t11", "t10", "t09", "t08", "t07"):
        assert f"'{ref}'" in text
    assert "'t06'" not in text
    assert [t["reference_id"] for t in exc.error_details["largest_teams"]] == [
        "t11",
        "t10",
        "t09",
        "t08",
        "t07",
    ]
    assert exc.error_details["size_bytes"] == size


def test_real_five_megabyte_org_is_refused() -> None:
    # ~210k contributor e-mails over 300 teams: past 5 MB once encoded.
    teams = [team(f"eng-{i:03d}", contributors=700) for i in range(300)]
    assert len(encode_teams(teams)) > MAX_PAYLOAD_BYTES
    with pytest.raises(PayloadTooLargeLocal, match="over the 5000000-byte limit"):
        check_payload_size(teams)


@given(st.lists(st.integers(min_value=0, max_value=30), max_size=15))
def test_largest_teams_are_sorted_and_sized_exactly(sizes: list[int]) -> None:
    teams = [team(f"r{i}", n) for i, n in enumerate(sizes)]
    top = largest_teams(teams)
    assert len(top) == min(5, len(teams))
    assert [b for _, _, b in top] == sorted((b for _, _, b in top), reverse=True)
    by_ref = {t["reference_id"]: len(json.dumps(t, separators=(",", ":"))) for t in teams}
    for _, ref, nbytes in top:
        assert by_ref[ref] == nbytes
