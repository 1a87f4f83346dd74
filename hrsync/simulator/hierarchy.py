"""Validation of an orgfiles ``teams`` payload (pure: no state, no clock)."""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Final

from hrsync.simulator.records import HierarchyRow
from hrsync.simulator.variation import InvalidRowsShape

# "5 MB" read as 5,000,000 bytes of compact JSON: the stricter reading, so a client that
# fits under it also fits under a server that means 5 MiB.
MAX_TEAMS_PAYLOAD_BYTES: Final = 5_000_000

_EMAIL: Final = re.compile(r"^[^@\s]+@[^@\s]+\.[^@\s]+$")
_REQUIRED_TEXT: Final = ("name", "reference_id", "team_lead_email")


@dataclass(frozen=True, slots=True)
class Rejection:
    """An ``{ok: false}`` answer the orgfiles methods give for bad input."""

    error: str
    message: str
    details: dict[str, Any] | None = None


def looks_like_email(value: object) -> bool:
    return isinstance(value, str) and _EMAIL.match(value) is not None


def teams_payload_size(teams: object) -> int:
    """Bytes of the ``teams`` value as compact UTF-8 JSON."""
    return len(json.dumps(teams, separators=(",", ":"), ensure_ascii=False).encode("utf-8"))


def validate_teams(
    teams: Sequence[Any],
    is_known_user: Callable[[str], bool],
    shape: InvalidRowsShape = "fields",
) -> tuple[HierarchyRow, ...] | Rejection:
    """Rows of a valid payload, or the rejection DX would give (``invalid_rows`` first,
    then ``circular_reference``); ``shape``: how ``invalid_rows`` tells its rows
    (hrsync.simulator.variation)."""
    problems: list[dict[str, Any]] = []
    rows: list[HierarchyRow] = []
    for index, raw in enumerate(teams):
        row_problems, row = _check_row(index, raw, is_known_user)
        problems.extend(row_problems)
        if row is not None:
            rows.append(row)
    problems.extend(_cross_row_problems(teams))
    if problems:
        problems.sort(key=lambda problem: int(problem["index"]))
        return invalid_rows(problems, teams, shape)
    cycle = find_cycle(rows)
    if cycle:
        return Rejection(
            error="circular_reference",
            message="a team is its own ancestor: " + " -> ".join(cycle),
            details={"cycle": cycle},
        )
    return tuple(rows)


def invalid_rows(
    problems: Sequence[dict[str, Any]], teams: Sequence[Any], shape: InvalidRowsShape
) -> Rejection:
    """The ``invalid_rows`` answer for `problems`, in one of the shapes DX might use."""
    if shape == "message":
        rows = len({p["index"] for p in problems})
        return Rejection(
            "invalid_rows", f"{rows} team entr{'y is' if rows == 1 else 'ies are'} invalid"
        )
    if shape == "reasons":
        reasons = [
            {"index": p["index"], "reference_id": p["reference_id"], "reason": _reason(p, teams)}
            for p in problems
        ]
        return Rejection("invalid_rows", "some team entries are invalid", {"errors": reasons})
    return Rejection(
        error="invalid_rows",
        message=f"{len(problems)} problem(s) in teams: "
        + "; ".join(f"row {p['index']} {p['field']}: {p['message']}" for p in problems[:5]),
        details={"rows": list(problems)},
    )


def _reason(problem: dict[str, Any], teams: Sequence[Any]) -> str:
    """A problem as one sentence quoting the value, as a server's validator might word it."""
    raw = teams[problem["index"]]
    value = raw.get(problem["field"]) if isinstance(raw, dict) else None
    if problem["field"] == "team_lead_email" and problem["message"] == "user not found":
        return f"team_lead_email {value!r} does not belong to a known user"
    return f"{problem['field']} {value!r}: {problem['message']}"


def _problem(index: int, reference_id: object, field: str, message: str) -> dict[str, Any]:
    return {
        "index": index,
        "reference_id": reference_id if isinstance(reference_id, str) else None,
        "field": field,
        "message": message,
    }


def _check_row(
    index: int, raw: object, is_known_user: Callable[[str], bool]
) -> tuple[list[dict[str, Any]], HierarchyRow | None]:
    if not isinstance(raw, dict):
        return [_problem(index, None, "team", "expected a HierarchyTeam object")], None
    reference_id = raw.get("reference_id")
    problems: list[dict[str, Any]] = []
    for field in _REQUIRED_TEXT:
        value = raw.get(field)
        if not isinstance(value, str) or not value.strip():
            problems.append(_problem(index, reference_id, field, "required, a non-empty string"))
    lead = raw.get("team_lead_email")
    if isinstance(lead, str) and lead.strip() and not is_known_user(lead):
        problems.append(_problem(index, reference_id, "team_lead_email", "user not found"))
    contributors = raw.get("contributors")
    if not isinstance(contributors, list) or not all(isinstance(c, str) for c in contributors):
        problems.append(
            _problem(index, reference_id, "contributors", "required, an array of e-mail strings")
        )
    parent_ref = raw.get("parent_team_reference_id")
    parent_name = raw.get("parent_team_name")
    for field, value in (
        ("parent_team_reference_id", parent_ref),
        ("parent_team_name", parent_name),
    ):
        if value is not None and (not isinstance(value, str) or not value.strip()):
            problems.append(
                _problem(index, reference_id, field, "must be a non-empty string or null")
            )
    if (parent_ref is None) != (parent_name is None):
        problems.append(
            _problem(
                index,
                reference_id,
                "parent_team_reference_id",
                "parent_team_reference_id and parent_team_name must both be set or both be null",
            )
        )
    if problems:
        return problems, None
    assert isinstance(contributors, list)
    return [], HierarchyRow(
        index=index,
        name=str(raw["name"]),
        reference_id=str(reference_id),
        lead_email=str(lead),
        parent_reference_id=parent_ref if isinstance(parent_ref, str) else None,
        parent_name=parent_name if isinstance(parent_name, str) else None,
        contributors=tuple(str(c) for c in contributors),
    )


@dataclass(frozen=True, slots=True)
class _Link:
    """What the cross-row checks need of a row, taken even from rows with other problems."""

    index: int
    reference_id: str
    name: object
    parent_reference_id: object
    parent_name: object


def _links(teams: Sequence[Any]) -> list[_Link]:
    return [
        _Link(
            index,
            raw["reference_id"],
            raw.get("name"),
            raw.get("parent_team_reference_id"),
            raw.get("parent_team_name"),
        )
        for index, raw in enumerate(teams)
        if isinstance(raw, dict)
        and isinstance(raw.get("reference_id"), str)
        and raw["reference_id"].strip()
    ]


def _cross_row_problems(teams: Sequence[Any]) -> list[dict[str, Any]]:
    links = _links(teams)
    problems: list[dict[str, Any]] = []
    first: dict[str, _Link] = {}
    for link in links:
        if link.reference_id in first:
            problems.append(
                _problem(
                    link.index,
                    link.reference_id,
                    "reference_id",
                    f"duplicate reference_id, first used in row {first[link.reference_id].index}",
                )
            )
        else:
            first[link.reference_id] = link
    for link in links:
        if not isinstance(link.parent_reference_id, str) or not isinstance(link.parent_name, str):
            continue
        parent = first.get(link.parent_reference_id)
        if parent is None:
            problems.append(
                _problem(
                    link.index,
                    link.reference_id,
                    "parent_team_reference_id",
                    f"no team with reference_id {link.parent_reference_id!r} in this request",
                )
            )
        elif parent.name != link.parent_name:
            problems.append(
                _problem(
                    link.index,
                    link.reference_id,
                    "parent_team_name",
                    f"{link.parent_name!r} is not the name of team {parent.reference_id!r} "
                    f"({parent.name!r})",
                )
            )
    return problems


def find_cycle(rows: Sequence[HierarchyRow]) -> list[str]:
    """A parent cycle as reference ids (first repeated at the end), or [] when there is none."""
    parent_of = {row.reference_id: row.parent_reference_id for row in rows}
    finished: set[str] = set()
    for start in parent_of:
        path: list[str] = []
        on_path: dict[str, int] = {}
        node: str | None = start
        while node is not None and node not in finished:
            if node in on_path:
                return [*path[on_path[node] :], node]
            on_path[node] = len(path)
            path.append(node)
            node = parent_of.get(node)
        finished.update(path)
    return []
