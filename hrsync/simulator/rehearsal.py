"""A rehearsal account: the operator's own people as DX users, no teams, a fresh token.

`hrsync simulator --rehearse CONFIG` (or `--users-from EXPORT`) reads the export and
hands its people here. A rehearsal starts where a real first sync starts: DX knows the
people (DX learns them from its other integrations) and has no teams yet. With a share
below one, some people are not DX users yet, as new hires often are not: DX ignores
them as contributors, which hrsync reports as "not in DX yet".
"""

from __future__ import annotations

import hashlib
import math
import secrets
from collections.abc import Collection, Sequence
from dataclasses import dataclass
from datetime import timedelta
from typing import Final

from hrsync.simulator.records import ORG_TOKEN
from hrsync.simulator.scenario import (
    ALL_SCOPES,
    Scenario,
    ScenarioApiKey,
    ScenarioToken,
    ScenarioUser,
)

TOKEN_PREFIX: Final = "rehearse-"


@dataclass(frozen=True, slots=True)
class Rehearsal:
    scenario: Scenario
    token: str
    people: int  # people read from the export
    left_out: tuple[str, ...]  # their e-mails, not DX users in this rehearsal


def new_token() -> str:
    """A token for one rehearsal: random, so a rehearsal token is never a guessable
    constant that someone might also configure against a real DX."""
    return TOKEN_PREFIX + secrets.token_urlsafe(18)


def in_dx(emails: Sequence[str], share: float, *, always: Collection[str] = ()) -> set[str]:
    """The e-mails that are DX users: ``share`` of them, chosen by a hash of each e-mail,
    so the same export always gives the same people, whatever its row order.

    Those in ``always`` (the teams' leads) are always chosen: DX refuses a lead it does
    not know, and a rehearsal of newcomers is about contributors. The share is of all
    the people, rounded up, so 0.9 of 10 leaves exactly one out when leads allow it.
    """
    if not 0 < share <= 1:
        raise ValueError(f"the share of people in DX must be above 0 and at most 1, got {share}")
    unique = list(dict.fromkeys(e.casefold() for e in emails))
    wanted = math.ceil(share * len(unique) - 1e-9)  # 0.9 * 10 is 9.000000000000002
    leads = {e.casefold() for e in always}
    chosen = {e for e in unique if e in leads}
    others = sorted(
        (e for e in unique if e not in leads),
        key=lambda e: hashlib.sha256(e.encode("utf-8")).hexdigest(),
    )
    chosen.update(others[: max(0, wanted - len(chosen))])
    return chosen


def rehearsal(
    people: Sequence[tuple[str, str]],
    *,
    source: str,
    share: float = 1.0,
    leads: Collection[str] = (),
    token: str | None = None,
) -> Rehearsal:
    """The account for ``people`` (name, e-mail pairs in export order) read from ``source``:
    ``share`` of them DX users, every lead among them, no teams, no snapshots (so no
    window defers the rehearsal), one organization token with every scope."""
    token = token or new_token()
    emails = [email for _, email in people]
    chosen = in_dx(emails, share, always=leads)
    users: list[ScenarioUser] = []
    left_out: list[str] = []
    seen: set[str] = set()
    for name, email in people:
        key = email.casefold()
        if key in seen:
            continue
        seen.add(key)
        if key in chosen:
            users.append(ScenarioUser(name=name or email, email=email))
        else:
            left_out.append(email)
    scenario = Scenario(
        account_name=f"Rehearsal of {source}",
        app_url="https://app.dx.example",
        users=tuple(users),
        tokens=(ScenarioToken(token, ORG_TOKEN, ALL_SCOPES, api_key_id="key-rehearsal"),),
        api_keys=(ScenarioApiKey("key-rehearsal", "hrsync rehearsal", ALL_SCOPES, timedelta(0)),),
        # A real import takes seconds; a rehearsal need not wait longer than that.
        import_delay_s=1.0,
        source=f"<rehearsal of {source}>",
    )
    return Rehearsal(scenario, token, len(seen), tuple(left_out))
