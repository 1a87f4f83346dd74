"""What DX's `invalid_rows` names, read from whatever shape its details come in (pure).

DX documents that an import is refused with `invalid_rows` when "a team entry is
invalid (missing fields, or lead e-mail not in the system)", and nothing about
`error_details`. So nothing here expects one shape: every list and object in the
details is searched for rows, a row is recognised by any key that identifies it (an
index or row number, a reference id, a team name, a `teams[3]` path), and its problem by
any field name or sentence that mentions `team_lead_email` or another HierarchyTeam
field. E-mail addresses anywhere in DX's words (details or message) are matched against
the leads that were sent: a lead named anywhere is a lead DX does not know.

What cannot be read is not guessed at here: `suspected_leads` says which leads to stand
in for when DX named nothing (or a row without saying why): the new leads, those DX has
never shown as users.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping, Sequence
from collections.abc import Set as AbstractSet
from dataclasses import dataclass
from typing import Final, Literal

from hrsync.core.teams.identity import TeamRow

About = Literal["lead", "other", "unexplained"]

LEAD_FIELD: Final = "team_lead_email"
# The other fields of a HierarchyTeam: a row named for one of them is not about its lead.
OTHER_FIELDS: Final = (
    "parent_team_reference_id",
    "parent_team_name",
    "contributors",
    "reference_id",
    "name",
)
# Keys that identify a row, by how they count (keys compared ignoring case, `-` and spaces).
_ZERO_BASED: Final = frozenset({"index", "row", "row_index", "idx", "position", "team_index"})
_ONE_BASED: Final = frozenset({"row_number", "rownum", "line", "line_number", "number"})
_REFERENCE: Final = frozenset(
    {"reference_id", "referenceid", "ref", "ref_id", "reference", "team_reference_id"}
)
_NAME: Final = frozenset({"name", "team", "team_name"})
# Keys whose value names the field at fault.
_FIELD_KEYS: Final = frozenset(
    {"field", "fields", "column", "attribute", "key", "path", "property", "param", "parameter"}
)
_EMAIL: Final = re.compile(r"[\w.%+-]+@[\w-]+(?:\.[\w-]+)+")
_PATH: Final = re.compile(r"teams\s*\[\s*(\d+)\s*\](?:\s*\.\s*(\w+))?", re.IGNORECASE)
# Deeper than any sane error document; bounds the walk over untrusted JSON.
_MAX_DEPTH: Final = 12


@dataclass(frozen=True, slots=True)
class NamedRow:
    """A row DX named, joined with what was sent in it (None where it cannot be told)."""

    index: int | None  # position in what was sent
    reference_id: str | None
    team: str | None
    lead: str | None  # the lead sent in the row
    about: About  # the row's lead, another field, or DX did not say
    field: str | None  # the field DX named, when it named one
    problem: str | None  # DX's words for the row

    def log_fields(self) -> dict[str, object]:
        return {
            "index": self.index,
            "reference_id": self.reference_id,
            "team": self.team,
            "lead": self.lead,
            "about": self.about,
            "field": self.field,
            "problem": self.problem,
        }


@dataclass(frozen=True, slots=True)
class Refusal:
    """What an `invalid_rows` refusal names: rows, and leads DX does not know."""

    rows: tuple[NamedRow, ...]
    leads: frozenset[str]  # leads as sent, named by DX (a field, or their e-mail)

    @property
    def names_nothing(self) -> bool:
        return not self.rows and not self.leads


def read_refusal(details: object, message: str | None, sent: Sequence[TeamRow]) -> Refusal:
    """The rows and leads DX's `error_details` (any JSON) and `message` name in `sent`."""
    leads_sent = {row.lead_email.casefold(): row.lead_email for row in sent}
    rows: list[NamedRow] = []
    leads: set[str] = set()
    loose_texts: list[str] = [message] if isinstance(message, str) else []
    for item in _items(details, 0, loose_texts):
        row = _named_row(item, sent, leads_sent)
        if row is None:
            loose_texts.extend(_texts(item, 0))
            continue
        if row.about == "lead":
            if row.lead is not None:
                leads.add(row.lead)
            leads.update(_leads_in(_texts(item, 0), leads_sent))
        rows.append(row)
    # A lead's e-mail in DX's words outside any row it names: that lead is the problem.
    leads.update(_leads_in(loose_texts, leads_sent))
    return Refusal(tuple(rows), frozenset(leads))


def suspected_leads(
    refusal: Refusal, sent: Sequence[TeamRow], shown_users: AbstractSet[str]
) -> frozenset[str] | None:
    """The leads to stand in for after `refusal`, or None when DX refused something else
    (a row named for another field): then no stand-in helps.

    Named leads first. Where DX did not say why (no row at all, a row without a reason,
    a lead problem without the row): the new leads, those DX never showed as users
    (`shown_users`, casefolded), leaving out leads of top teams, whom nobody can stand
    in for; if that guess is wrong the next answer says so and the refusal stands."""
    if any(row.about == "other" for row in refusal.rows):
        return None
    suspects: set[str] = set(refusal.leads)
    new = _new_leads(sent, shown_users)
    unclear = [r for r in refusal.rows if r.about == "unexplained" or r.lead is None]
    if refusal.names_nothing or any(r.lead is None for r in unclear):
        suspects.update(new)
    else:
        suspects.update(r.lead for r in unclear if r.lead is not None and r.lead in new)
    return frozenset(suspects)


def _new_leads(sent: Sequence[TeamRow], shown_users: AbstractSet[str]) -> set[str]:
    refs = {row.reference_id for row in sent}
    tops = {
        row.lead_email.casefold()
        for row in sent
        if row.parent_reference_id is None or row.parent_reference_id not in refs
    }
    return {
        row.lead_email
        for row in sent
        if row.lead_email.casefold() not in shown_users and row.lead_email.casefold() not in tops
    }


def _key(name: object) -> str:
    return str(name).strip().casefold().replace("-", "_").replace(" ", "_")


def _identifies(item: Mapping[object, object]) -> bool:
    keys = {_key(k) for k in item}
    if keys & (_ZERO_BASED | _ONE_BASED | _REFERENCE | _NAME):
        return True
    return any(isinstance(v, str) and _PATH.search(v) for v in item.values())


def _items(value: object, depth: int, loose: list[str]) -> Iterator[Mapping[object, object]]:
    """Every object in `value` that identifies a row (outermost first); the strings
    outside them go to `loose`."""
    if depth > _MAX_DEPTH:
        return
    if isinstance(value, str):
        if _PATH.search(value):
            path: dict[object, object] = {"path": value}
            yield path
        else:
            loose.append(value)
    elif isinstance(value, Mapping):
        if _identifies(value):
            yield value
            return
        for key, inner in value.items():
            if _lists_rows(key, inner):
                assert isinstance(inner, list)
                for number in inner:
                    bare: dict[object, object] = {"index": number}
                    yield bare
            else:
                yield from _items(inner, depth + 1, loose)
    elif isinstance(value, list):
        for inner in value:
            yield from _items(inner, depth + 1, loose)


def _lists_rows(key: object, value: object) -> bool:
    """`"rows": [3, 7]`: a bare list of row indexes under a key that says so."""
    name = _key(key)
    return (
        ("row" in name or "ind" in name)
        and isinstance(value, list)
        and bool(value)
        and all(_number(v) is not None for v in value)
    )


def _problem(item: Mapping[object, object]) -> str | None:
    """DX's words for a row: its strings, less those that only identify it."""
    identifying = _ZERO_BASED | _ONE_BASED | _REFERENCE | _NAME
    texts = [
        text
        for key, value in item.items()
        if _key(key) not in identifying
        for text in _texts(value, 1)
        if not _PATH.fullmatch(text.strip())
    ]
    return "; ".join(texts) or None


def _texts(value: object, depth: int) -> list[str]:
    """Every string in `value`, keys' values and list items alike."""
    if depth > _MAX_DEPTH:
        return []
    if isinstance(value, str):
        return [value]
    if isinstance(value, Mapping):
        return [t for inner in value.values() for t in _texts(inner, depth + 1)]
    if isinstance(value, list):
        return [t for inner in value for t in _texts(inner, depth + 1)]
    return []


def _fields(value: object, depth: int) -> list[str]:
    """The values of field-naming keys anywhere in `value`."""
    if depth > _MAX_DEPTH:
        return []
    found: list[str] = []
    if isinstance(value, Mapping):
        for key, inner in value.items():
            if _key(key) in _FIELD_KEYS:
                found.extend(_texts(inner, depth + 1))
            found.extend(_fields(inner, depth + 1))
    elif isinstance(value, list):
        for inner in value:
            found.extend(_fields(inner, depth + 1))
    return found


def _leads_in(texts: Sequence[str], leads_sent: Mapping[str, str]) -> set[str]:
    return {
        leads_sent[found.casefold()]
        for text in texts
        for found in _EMAIL.findall(text)
        if found.casefold() in leads_sent
    }


def _number(value: object) -> int | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, str) and value.strip().isdigit():
        return int(value.strip())
    return None


def _row_of(item: Mapping[object, object], sent: Sequence[TeamRow]) -> TeamRow | None:
    """The sent row `item` identifies: a reference id or name first (they cannot be
    miscounted), then an index or row number, then a `teams[N]` path."""
    by_ref = {row.reference_id: row for row in sent}
    by_name = {row.name.casefold(): row for row in sent}
    for key, value in item.items():
        if _key(key) in _REFERENCE and isinstance(value, str | int) and str(value) in by_ref:
            return by_ref[str(value)]
    for key, value in item.items():
        if _key(key) in _NAME and isinstance(value, str) and value.casefold() in by_name:
            return by_name[value.casefold()]
    for key, value in item.items():
        number = _number(value)
        if number is None:
            continue
        index = number if _key(key) in _ZERO_BASED else number - 1
        if _key(key) in _ZERO_BASED | _ONE_BASED and 0 <= index < len(sent):
            return sent[index]
    for text in _texts(item, 0):
        match = _PATH.search(text)
        if match and int(match.group(1)) < len(sent):
            return sent[int(match.group(1))]
    # A team nested inside the item: {"team": {"reference_id": …}}.
    for value in item.values():
        if isinstance(value, Mapping) and _identifies(value):
            return _row_of(value, sent)
    return None


def _about(
    fields: Sequence[str], texts: Sequence[str], lead: str | None, leads_sent: Mapping[str, str]
) -> tuple[About, str | None]:
    """Whether DX's words for a row are about its lead, another field, or say nothing."""
    named = [f for f in fields if f.strip()]
    for field in named:
        if LEAD_FIELD in field.casefold():
            return "lead", LEAD_FIELD
    for text in texts:
        if LEAD_FIELD in text.casefold():
            return "lead", LEAD_FIELD
    emails = {e.casefold() for text in texts for e in _EMAIL.findall(text)}
    if (lead is not None and lead.casefold() in emails) or emails & set(leads_sent):
        return "lead", None
    for field in named:
        for other in OTHER_FIELDS:
            if other in field.casefold():
                return "other", other
    for text in texts:
        for other in OTHER_FIELDS[:3]:  # the distinctive ones; "name" is any sentence's word
            if other in text.casefold():
                return "other", other
    return "unexplained", named[0] if named else None


def _named_row(
    item: Mapping[object, object], sent: Sequence[TeamRow], leads_sent: Mapping[str, str]
) -> NamedRow | None:
    row = _row_of(item, sent)
    index = next((i for i, r in enumerate(sent) if r is row), None) if row is not None else None
    texts = _texts(item, 0)
    path_fields = [m.group(2) for t in texts for m in _PATH.finditer(t) if m.group(2)]
    about, field = _about(
        [*_fields(item, 0), *path_fields], texts, row.lead_email if row else None, leads_sent
    )
    if row is None and about == "unexplained":
        return None  # names no row we sent and says nothing we can use
    return NamedRow(
        index=index,
        reference_id=row.reference_id if row else None,
        team=row.name if row else None,
        lead=row.lead_email if row else None,
        about=about,
        field=field,
        problem=_problem(item),
    )
