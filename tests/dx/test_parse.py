"""Reply parsing: liberal about shapes DX may send, strict about what sync needs."""

from __future__ import annotations

import contextlib
from datetime import UTC, datetime, timedelta, timezone
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from hrsync.dx.errors import DxBadResponse
from hrsync.dx.parse import (
    decode_body,
    parse_api_keys,
    parse_audit_events,
    parse_import_accepted,
    parse_next_cursor,
    parse_snapshots,
    parse_teams,
    parse_timestamp,
    parse_user_attributes,
    parse_whoami,
)


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("2024-03-19T22:36:47.448Z", datetime(2024, 3, 19, 22, 36, 47, 448000, tzinfo=UTC)),
        ("2024-03-19T23:36:47+01:00", datetime(2024, 3, 19, 22, 36, 47, tzinfo=UTC)),
        ("2024-03-19T22:36:47", datetime(2024, 3, 19, 22, 36, 47, tzinfo=UTC)),
        ("2024-03-19 22:36:47.123456", datetime(2024, 3, 19, 22, 36, 47, 123456, tzinfo=UTC)),
        (1737557847, datetime(2025, 1, 22, 14, 57, 27, tzinfo=UTC)),
        ("1737557847", datetime(2025, 1, 22, 14, 57, 27, tzinfo=UTC)),
        (1737557847.5, datetime(2025, 1, 22, 14, 57, 27, 500000, tzinfo=UTC)),
        (None, None),
        ("", None),
    ],
)
def test_timestamps(raw: Any, expected: datetime | None) -> None:
    parsed = parse_timestamp(raw)
    assert parsed == expected
    if parsed is not None:
        assert parsed.tzinfo is not None and parsed.utcoffset() == timedelta(0)


@pytest.mark.parametrize("raw", ["yesterday", True, {"t": 1}, [1], float("nan")])
def test_bad_timestamps_raise(raw: Any) -> None:
    with pytest.raises(ValueError):
        parse_timestamp(raw)


@given(st.datetimes(timezones=st.sampled_from([UTC, timezone(timedelta(hours=-7, minutes=-30))])))
def test_iso_round_trip_is_the_same_instant(moment: datetime) -> None:
    assert parse_timestamp(moment.isoformat()) == moment


def test_decode_body_accepts_objects_only() -> None:
    assert decode_body("teams.list", 200, b'{"ok":true}') == {"ok": True}
    with pytest.raises(DxBadResponse, match=r"HTTP 502.*<html>"):
        decode_body("teams.list", 502, b"<html><body>Bad gateway</body></html>")
    with pytest.raises(DxBadResponse, match="empty body"):
        decode_body("teams.list", 200, b"")
    with pytest.raises(DxBadResponse, match=r"\[1, 2\]"):
        decode_body("teams.list", 200, b"[1, 2]")


def test_decode_body_shows_only_the_first_bytes() -> None:
    page = b"<html>" + b"x" * 5000 + b"SECRET-TAIL</html>"
    with pytest.raises(DxBadResponse) as caught:
        decode_body("teams.list", 503, page)
    assert "SECRET-TAIL" not in str(caught.value)
    assert len(caught.value.message) < 300
    assert caught.value.status == 503


def test_whoami_org_token_and_personal_token() -> None:
    org = parse_whoami(
        {
            "ok": True,
            "auth_token_type": "account_web_api_token",
            "account": {"name": "Acme"},
            "user": None,
            "team": None,
        }
    )
    assert (org.auth_token_type, org.account_name, org.user, org.team_name) == (
        "account_web_api_token",
        "Acme",
        None,
        None,
    )
    personal = parse_whoami(
        {
            "ok": True,
            "auth_token_type": "personal_access_token",
            "account": {"name": "Acme"},
            "user": {"id": 7, "name": "Ann", "email": "ann@example.com", "extra": 1},
            "team": {"id": "T1", "name": "Core", "lead": {}, "contributors": []},
        }
    )
    assert personal.user is not None
    assert (personal.user.id, personal.user.email, personal.team_name) == (
        "7",
        "ann@example.com",
        "Core",
    )


def test_whoami_tolerates_missing_pieces() -> None:
    who = parse_whoami({"ok": True})
    assert who.auth_token_type == "" and who.account_name == "" and who.user is None


def test_team_sample_from_dx_docs() -> None:
    sample = {
        "id": "NTA4Nzc",
        "parent_id": "NTA2MTk",
        "manager_id": "NTEyMDUw",
        "name": "Core Data",
        "parent": True,
        "ancestors": ["LTE", "MTUxODcx", "NTA2MTk", "NTA4Nzc"],
        "last_changed_at": "2024-03-19T22:36:47.448Z",
        "contributors": 0,
        "reference_id": "06BEC4E0-5A61-354E-08A6-C39D756058AB",
        "brand_new_field": {"x": 1},
    }
    (team,) = parse_teams("teams.list", {"ok": True, "teams": [sample]})
    assert team.id == "NTA4Nzc" and team.name == "Core Data"
    assert team.parent_id == "NTA2MTk" and team.manager_id == "NTEyMDUw"
    assert team.is_parent is True
    # Sentinels and the team itself stay: matching is the engine's job.
    assert team.ancestors == ("LTE", "MTUxODcx", "NTA2MTk", "NTA4Nzc")
    assert team.reference_id == "06BEC4E0-5A61-354E-08A6-C39D756058AB"
    assert team.last_changed_at == datetime(2024, 3, 19, 22, 36, 47, 448000, tzinfo=UTC)


def test_team_with_nulls_and_near_types() -> None:
    (team,) = parse_teams(
        "teams.list",
        {
            "teams": [
                {
                    "id": 12,
                    "name": "Web app team",
                    "parent_id": "LTE",
                    "reference_id": None,
                    "manager_id": None,
                    "parent": None,
                    "ancestors": ["LTE", None, 12],
                    "contributors": "4",
                    "last_changed_at": "not a time",
                }
            ]
        },
    )
    assert team.id == "12" and team.parent_id == "LTE" and team.reference_id is None
    assert team.ancestors == ("LTE", "12") and team.contributors == 4
    assert team.is_parent is False and team.last_changed_at is None


def test_team_without_id_is_a_bad_response_naming_the_element() -> None:
    with pytest.raises(DxBadResponse, match=r"teams\[1\]\.id"):
        parse_teams("teams.list", {"teams": [{"id": "a", "name": "A"}, {"name": "B"}]})


@pytest.mark.parametrize(
    ("body", "match"),
    [
        ({"ok": True}, "no 'teams' list"),
        ({"teams": {"a": 1}}, "expected a list"),
        ({"teams": ["x"]}, r"teams\[0\] is str"),
    ],
)
def test_teams_reply_without_a_list_is_refused(body: dict[str, Any], match: str) -> None:
    with pytest.raises(DxBadResponse, match=match):
        parse_teams("teams.list", body)


def test_null_list_is_empty() -> None:
    assert parse_teams("teams.list", {"ok": True, "teams": None}) == []


def test_snapshots_live_completed_deleted() -> None:
    snaps = parse_snapshots(
        "snapshots.list",
        {
            "ok": True,
            "snapshots": [
                {
                    "id": "s1",
                    "account_id": "acc",
                    "scheduled_for": "2024-06-01",
                    "completed_at": None,
                    "deleted_at": None,
                    "completed_count": 10,
                    "total_count": 90,
                },
                {
                    "id": "s2",
                    "scheduled_for": "2024-03-01",
                    "completed_at": "2024-03-15T00:00:00Z",
                    "deleted_at": "2024-03-20T00:00:00+00:00",
                },
            ],
        },
    )
    assert snaps[0].completed_at is None and snaps[0].total_count == 90
    assert snaps[1].completed_at == datetime(2024, 3, 15, tzinfo=UTC)
    assert snaps[1].deleted_at == datetime(2024, 3, 20, tzinfo=UTC)
    assert snaps[1].completed_count == 0


def test_api_keys_scopes_list_or_string() -> None:
    keys = parse_api_keys(
        "apiKeys.list",
        {
            "api_keys": [
                {
                    "id": "k1",
                    "name": "sync",
                    "scopes": ["snapshots:read", "snapshots:admin"],
                    "created_at": "2024-01-01T00:00:00Z",
                    "last_used_at": None,
                },
                {"id": "k2", "name": "old", "scopes": "snapshots:read apiKeys:read"},
            ]
        },
    )
    assert keys[0].scopes == ("snapshots:read", "snapshots:admin")
    assert keys[0].created_at == datetime(2024, 1, 1, tzinfo=UTC) and keys[0].last_used_at is None
    assert keys[1].scopes == ("snapshots:read", "apiKeys:read")


def test_audit_event_sample_from_dx_docs() -> None:
    (name_change, manager_change) = parse_audit_events(
        "teams.auditTrail",
        {
            "events": [
                {
                    "id": "MTQxMDb1",
                    "actor": "someone@example.com",
                    "team": "AI",
                    "action": "change_name",
                    "metadata": {"from": "AI", "to": "Artificial Intelligence"},
                    "created": 1737557847,
                },
                {
                    "id": "e2",
                    "actor": "someone@example.com",
                    "team": "Core",
                    "action": "change_manager",
                    "metadata": {
                        "from": {"id": "1", "name": "A", "email": "a@example.com"},
                        "to": {"id": "2", "name": "B", "email": "b@example.com"},
                    },
                    "created": "2025-01-22T14:57:27Z",
                },
            ]
        },
    )
    assert name_change.before == "AI" and name_change.after == "Artificial Intelligence"
    assert name_change.created == datetime(2025, 1, 22, 14, 57, 27, tzinfo=UTC)
    assert manager_change.after == {"id": "2", "name": "B", "email": "b@example.com"}
    assert manager_change.created == name_change.created


def test_audit_event_unknown_action_and_missing_metadata() -> None:
    (event,) = parse_audit_events(
        "teams.auditTrail",
        {"events": [{"id": "x", "action": "archive_team", "created": 1, "metadata": None}]},
    )
    assert event.action == "archive_team" and event.metadata == {} and event.before is None


def test_audit_event_without_time_is_refused() -> None:
    with pytest.raises(DxBadResponse, match=r"events\[0\]\.created"):
        parse_audit_events("teams.auditTrail", {"events": [{"id": "x", "created": None}]})


@pytest.mark.parametrize(
    ("body", "cursor"),
    [
        ({"events": []}, None),
        ({"events": [], "response_metadata": None}, None),
        ({"events": [], "response_metadata": {}}, None),
        ({"events": [], "response_metadata": {"next_cursor": None}}, None),
        ({"events": [], "response_metadata": {"next_cursor": ""}}, None),
        ({"events": [], "response_metadata": {"next_cursor": "abc"}}, "abc"),
    ],
)
def test_next_cursor(body: dict[str, Any], cursor: str | None) -> None:
    assert parse_next_cursor(body) == cursor


def test_import_accepted_keeps_the_raw_body() -> None:
    accepted = parse_import_accepted({"ok": True, "import_id": "imp-1", "extra": [1]})
    assert accepted.import_id == "imp-1" and accepted.preview_url is None
    assert accepted.raw == {"ok": True, "import_id": "imp-1", "extra": [1]}
    assert parse_import_accepted({"ok": True}).import_id is None


def test_user_attributes_result() -> None:
    user = {"id": "u1", "email": "a@example.com", "failures": [], "attributes": []}
    assert parse_user_attributes({"ok": True, "user": user}) == user
    assert parse_user_attributes({"ok": True, "other": 1}) == {"other": 1}


# Strings that mean something to the parsers; st.text() would also need Hypothesis's
# slow first-run character table, which trips its health check on a fresh CI machine.
_strings = st.sampled_from(["", "x", "LTE", "1737557847", "2024-03-19T22:36:47.448Z", "é"])
_scalar = st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | _strings
_json = st.recursive(
    _scalar,
    lambda children: (
        st.lists(children, max_size=2) | st.dictionaries(_strings, children, max_size=2)
    ),
    max_leaves=6,
)
_field_names = st.sampled_from(
    [
        "id",
        "name",
        "parent_id",
        "reference_id",
        "ancestors",
        "contributors",
        "created",
        "metadata",
        "scopes",
        "completed_at",
        "user",
        "account",
        "team",
        "last_used_at",
    ]
)
_records = st.dictionaries(_field_names, _scalar | st.lists(_scalar, max_size=2), max_size=5)


@given(
    st.dictionaries(
        st.sampled_from(["ok", "teams", "snapshots", "api_keys", "events", "response_metadata"]),
        st.lists(_records, max_size=2) | _json,
        max_size=4,
    )
)
def test_any_json_body_parses_or_is_a_bad_response(body: dict[str, Any]) -> None:
    # Whatever DX sends, parsing never fails with a stray TypeError or KeyError.
    parse_whoami(body)
    parse_next_cursor(body)
    parse_import_accepted(body)
    parse_user_attributes(body)
    for parser in (parse_teams, parse_snapshots, parse_api_keys, parse_audit_events):
        with contextlib.suppress(DxBadResponse):
            parser("m", body)
