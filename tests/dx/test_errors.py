"""The error hierarchy: which code lands where, and what the message says."""

from __future__ import annotations

import pytest

from hrsync.dx.errors import (
    DxAuthError,
    DxDeferred,
    DxError,
    DxInvalidRequest,
    DxRejected,
    ImportInProgress,
    SnapshotInProgress,
    error_for_code,
    error_from_body,
)


@pytest.mark.parametrize(
    ("code", "cls", "family"),
    [
        ("not_authed", DxAuthError, DxRejected),
        ("invalid_auth", DxAuthError, DxRejected),
        ("not_authorized", DxAuthError, DxRejected),
        ("invalid_rows", DxInvalidRequest, DxRejected),
        ("circular_reference", DxInvalidRequest, DxRejected),
        ("payload_too_large", DxInvalidRequest, DxRejected),
        ("invalid_email", DxInvalidRequest, DxRejected),
        ("snapshot_in_progress", SnapshotInProgress, DxDeferred),
        ("import_in_progress", ImportInProgress, DxDeferred),
        ("something_new", DxRejected, DxRejected),
        (None, DxRejected, DxRejected),
    ],
)
def test_codes_map_to_what_the_engine_does(
    code: str | None, cls: type[DxError], family: type[DxError]
) -> None:
    exc = error_for_code("orgfiles.teamHierarchy.process", code, message=None, status=400)
    assert type(exc) is cls
    assert isinstance(exc, family)
    assert exc.error == code and exc.status == 400
    assert exc.message  # a default explanation when DX gives none


def test_body_fields_are_kept_verbatim() -> None:
    details = {"rows": [{"index": 3, "reason": "team_lead_email not found"}], "message": "x"}
    exc = error_from_body(
        "orgfiles.teamHierarchy.process",
        200,
        {"ok": False, "error": "invalid_rows", "message": "Invalid rows", "error_details": details},
    )
    assert isinstance(exc, DxInvalidRequest)
    assert exc.error_details is details
    assert exc.message == "Invalid rows"
    text = str(exc)
    assert text.startswith("orgfiles.teamHierarchy.process: invalid_rows: Invalid rows (HTTP 200)")
    assert "team_lead_email not found" in text
    assert "\n" not in text


def test_long_details_are_shortened_in_the_one_liner() -> None:
    exc = error_from_body(
        "m", 400, {"ok": False, "error": "invalid_rows", "error_details": ["row " * 1000]}
    )
    assert len(str(exc)) < 450
    assert len(exc.error_details[0]) == 4000


def test_odd_types_in_the_body_do_not_break_mapping() -> None:
    exc = error_from_body("m", 500, {"ok": False, "error": 42, "message": ["x"]})
    assert type(exc) is DxRejected and exc.error is None
