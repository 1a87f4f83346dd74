"""HR attributes to DX user attributes: desired values, changes, guard, retries (pure).

`[attributes]` maps a DX attribute name to an HR column (its value as is) or to a
template over columns (hrsync.core.export.templates, the engine of `mapping.team_name`). Every
value is text with its whitespace runs collapsed.

- Desired values: one per person and attribute. An empty value is left out (DX keeps
  what it has) unless `attributes.clear_empty`, which sends it as "" to clear DX's.
- Changes: a person's desired values that differ from those DX last confirmed (the
  store keeps them). One call per person with at least one change, holding all of that
  person's changed values; everyone else is unchanged and costs no call. Applying the
  changes to the confirmed values gives the desired ones, so the next run finds none.
- Guard: per attribute, the values that would replace a confirmed one are counted
  against the people holding a confirmed value; more than `max_change_fraction` of them
  (and more than one) refuses the attribute step, naming the attribute and examples, as
  does a column the export lacks. Values set for the first time never count, so a first
  run (nothing confirmed) and a newly added attribute are exempt.
- Failures are per person: a person whose call failed is not sent again while their
  desired values are the ones that failed (same digest), until `RETRY_AFTER` has passed.
- People DX does not count (not DX users yet: the hierarchy's evidence, or an answer
  naming an unknown user) wait: they are not sent, whatever their values, until DX counts
  them, and are asked again once a day (`RETRY_AFTER`) in case they joined DX unnoticed.
  Waiting is no failure: a new hire's account often comes days after their HR row.
- DX refusing every person sent says a setting is wrong (an attribute DX takes from
  nobody, e-mails of another domain), not that each person is: from `EVERY_REFUSED_FROM`
  people sent, that fails the step (`refused_every`). Fewer are a few people's problems.
  Answers naming no user count only while DX has confirmed no one of the export: once it
  has, they are new hires, and five of them in a week fail nothing.
- DX's answer confirms a value when it lists the attribute with the value sent; anything
  else (a failure, a different value, an attribute missing from the answer) is a
  failure of that person, with DX's words.
"""

from __future__ import annotations

import difflib
import hashlib
import json
from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from enum import StrEnum
from typing import Any

from hrsync.core.export.templates import Template, check_template
from hrsync.core.gate.safety import GuardTrip
from hrsync.core.listing import LIMIT, capped
from hrsync.core.people import Person
from hrsync.core.text import shown_value as text_shown_value

RETRY_AFTER = timedelta(days=1)
# From this many people sent, DX refusing every one of them fails the step: one or two
# refused people (a new hire, a typo) are theirs, a whole batch is a setting.
EVERY_REFUSED_FROM = 5
# DX's error codes for an e-mail that is no DX user (the contract names `user_not_found`;
# a code naming a user and "not found" or "unknown" is taken as the same).
UNKNOWN_USER_ERRORS = frozenset({"user_not_found", "users_not_found", "unknown_user"})
EXAMPLES = 5  # changed values shown per refused attribute
_FAILURE_CHARS = 300  # DX's words about one failure, at most
_VALUE_CHARS = 60  # one value in a message, at most


class AttributeOutcome(StrEnum):
    """How the attribute step of a run ended (`attributes_outcome` of `sync.finished`)."""

    APPLIED = "applied"  # calls sent; per-person failures are counted, not fatal
    IN_SYNC = "in_sync"  # nothing to send
    REFUSED = "refused"  # guard or a missing column: nothing sent
    REJECTED = "rejected"  # DX refused the token or its scope
    FAILED = "failed"  # DX unreachable, or the step stopped before its end
    SKIPPED = "skipped"  # not configured, or with_hierarchy_only after a hierarchy problem
    PLANNED = "planned"  # a dry run with changes to make


# Most serious first: the run's exit code is that of the more serious of its two steps.
_SEVERITY = ("failed", "rejected", "refused", "unverified", "deferred")


def more_serious(hierarchy: str, attributes: str) -> str:
    """The outcome whose exit code the run ends with (hierarchy on a tie)."""
    rank = {outcome: index for index, outcome in enumerate(_SEVERITY)}
    worst = len(_SEVERITY)
    if rank.get(attributes, worst) < rank.get(hierarchy, worst):
        return attributes
    return hierarchy


# ---------------------------------------------------------------- sources


@dataclass(frozen=True, slots=True)
class AttributeSource:
    """One `[attributes]` entry: where a DX attribute's value comes from."""

    name: str  # the DX attribute
    written: str  # as configured: a column name or a template
    template: Template | None  # None: `written` is a column, read as is

    @property
    def columns(self) -> tuple[str, ...]:
        return (self.written,) if self.template is None else self.template.names

    def render(self, values: Mapping[str, str]) -> str:
        if self.template is None:
            return " ".join(values.get(self.written, "").split())
        return self.template.render(lambda name: values.get(name, ""))


def compile_sources(entries: Mapping[str, str]) -> tuple[AttributeSource, ...]:
    """The entries in configured order; templates are the values holding braces.

    The config loader has checked each template's shape already.
    """
    return tuple(
        AttributeSource(name, text, Template(text) if "{" in text or "}" in text else None)
        for name, text in entries.items()
    )


def source_columns(sources: Iterable[AttributeSource]) -> tuple[str, ...]:
    """Every column the attributes read, once each (for the export's value checks)."""
    return tuple(dict.fromkeys(column for source in sources for column in source.columns))


def column_problems(sources: Sequence[AttributeSource], columns: Collection[str]) -> list[str]:
    """What stops the attributes from being read from an export with `columns`.

    A column the export lacks would make every value empty: never a quiet no-op.
    """
    problems: list[str] = []
    present = set(columns)
    for source in sources:
        where = f"attributes.{source.name}"
        if source.template is not None:
            problems.extend(
                check_template(source.written, present, where=f"{where} {source.written!r}")
            )
        elif source.written not in present:
            close = difflib.get_close_matches(source.written, sorted(present), n=1, cutoff=0.6)
            hint = f"; did you mean {close[0]!r}?" if close else ""
            problems.append(
                f"{where} reads the column {source.written!r}, which the export does not have "
                f"(columns: {capped(sorted(present))}){hint}"
            )
    return problems


# ---------------------------------------------------------------- desired values


Values = Mapping[str, str]  # DX attribute name -> value


def desired_values(
    people: Iterable[Person], sources: Sequence[AttributeSource], *, clear_empty: bool
) -> dict[str, dict[str, str]]:
    """Per person (e-mail), the value of each attribute to hold in DX."""
    desired: dict[str, dict[str, str]] = {}
    for person in people:
        values: dict[str, str] = {}
        for source in sources:
            value = source.render(person.attributes)
            if value or clear_empty:
                values[source.name] = value
        desired[person.email] = values
    return desired


def values_digest(values: Values) -> str:
    """Stands for a person's desired values: a failure is retried when it changes."""
    text = "".join(f"{name}\x00{value}\x1e" for name, value in sorted(values.items()))
    return hashlib.sha256(text.encode()).hexdigest()


# ---------------------------------------------------------------- planning


@dataclass(frozen=True, slots=True)
class Failure:
    """A person's last failed call, as the store keeps it."""

    error: str
    failed_at: datetime
    digest: str  # of the desired values that failed


@dataclass(frozen=True, slots=True)
class PersonChange:
    email: str
    values: Values  # what to send: only the values that differ from the confirmed ones
    previous: Mapping[str, str | None]  # per sent attribute: the confirmed value, or None
    digest: str  # of all the person's desired values


@dataclass(frozen=True, slots=True)
class Held:
    """A person not sent this run: the same values failed less than `RETRY_AFTER` ago."""

    email: str
    error: str
    failed_at: datetime
    retry_at: datetime


@dataclass(frozen=True, slots=True)
class Waiting:
    """A person not sent this run because DX does not count them (not a DX user yet)."""

    email: str
    retry_at: datetime  # when they are asked again, if DX has not counted them before


def names_unknown_user(error: str | None) -> bool:
    """Whether DX's error (its code, or a stored failure starting with it) says the e-mail
    is no DX user."""
    if not error:
        return False
    code = error.split(":", 1)[0].strip().casefold()
    if code in UNKNOWN_USER_ERRORS:
        return True
    return "user" in code and ("not_found" in code or "unknown" in code)


def refused_every(sent: int, updated: int, refused: int, *, unknown: int, known: int) -> bool:
    """DX refused every one of `sent` people (no update, every answer a refusal or an
    unknown user), and enough were sent for that to be a setting's fault, not theirs.

    `known` people of this export hold a value DX confirmed: DX knows the export's
    e-mails, so people it names no user of are new hires who have not joined yet, however
    many, and only its other refusals can say a setting is wrong."""
    if sent < EVERY_REFUSED_FROM or updated:
        return False
    if known and refused < sent:
        return False
    return refused + unknown == sent


@dataclass(frozen=True, slots=True)
class AttributeCount:
    name: str
    new: int = 0  # values set where none was confirmed
    changed: int = 0  # values replacing a confirmed one (cleared ones included)
    cleared: int = 0  # confirmed values replaced by "" (clear_empty)
    confirmed: int = 0  # people of this export holding a confirmed value: the guard's base
    examples: tuple[str, ...] = ()  # the first changed values, "e-mail: 'old' -> 'new'"


@dataclass(frozen=True)
class AttributePlan:
    changes: tuple[PersonChange, ...]  # by e-mail
    unchanged: int  # people with nothing to send
    held: tuple[Held, ...] = ()  # by e-mail
    counts: tuple[AttributeCount, ...] = ()  # per configured attribute, in config order
    people: int = 0
    waiting: tuple[Waiting, ...] = ()  # by e-mail: not DX users yet, not sent

    @property
    def values_to_send(self) -> int:
        return sum(len(change.values) for change in self.changes)


def plan_attributes(
    desired: Mapping[str, Values],
    confirmed: Mapping[str, Values],
    failures: Mapping[str, Failure],
    now: datetime,
    names: Sequence[str],
    *,
    not_users: Mapping[str, datetime] | None = None,
    users: Collection[str] = (),
) -> AttributePlan:
    """The calls to make: people whose desired values differ from the confirmed ones.

    `names` are the configured attributes, for the counts (in that order). `not_users`:
    the people DX does not count, each since when that is known; `users`: those it
    counts (a refusal naming an unknown user is stale for them: they joined DX).
    """
    not_users = not_users or {}
    counted = set(users)
    changes: list[PersonChange] = []
    held: list[Held] = []
    waiting: list[Waiting] = []
    unchanged = 0
    new = dict.fromkeys(names, 0)
    changed = dict.fromkeys(names, 0)
    cleared = dict.fromkeys(names, 0)
    base = dict.fromkeys(names, 0)
    examples: dict[str, list[str]] = {name: [] for name in names}
    for email in sorted(desired):
        values = desired[email]
        known = confirmed.get(email, {})
        for name in names:
            if name in known:
                base[name] += 1
        send = {name: value for name, value in values.items() if known.get(name) != value}
        if not send:
            unchanged += 1
            continue
        digest = values_digest(values)
        failure = failures.get(email)
        unknown = failure is not None and names_unknown_user(failure.error)
        if unknown and email in counted:
            failure = None  # DX counts them now: its old answer no longer holds
        asked = [
            *([not_users[email]] if email in not_users else []),
            *([failure.failed_at] if failure is not None and unknown else []),
        ]
        if asked:
            retry_at = max(asked) + RETRY_AFTER
            if now < retry_at:
                waiting.append(Waiting(email, retry_at))
                continue
        elif failure is not None and failure.digest == digest:
            retry_at = failure.failed_at + RETRY_AFTER
            if now < retry_at:
                held.append(Held(email, failure.error, failure.failed_at, retry_at))
                continue
        previous = {name: known.get(name) for name in send}
        for name, value in send.items():
            before = previous[name]
            if before is None:
                new[name] = new.get(name, 0) + 1
                continue
            changed[name] = changed.get(name, 0) + 1
            if value == "":
                cleared[name] = cleared.get(name, 0) + 1
            shown = examples.setdefault(name, [])
            if len(shown) < EXAMPLES:
                shown.append(f"{email}: {shown_value(before)} -> {shown_value(value)}")
        changes.append(PersonChange(email, send, previous, digest))
    counts = tuple(
        AttributeCount(
            name,
            new=new[name],
            changed=changed[name],
            cleared=cleared[name],
            confirmed=base[name],
            examples=tuple(examples[name]),
        )
        for name in names
    )
    return AttributePlan(
        tuple(changes),
        unchanged,
        tuple(held),
        counts,
        people=len(desired),
        waiting=tuple(waiting),
    )


def guard(plan: AttributePlan, max_change_fraction: float) -> list[str]:
    """Why the attribute step must not send this plan; [] when it may."""
    return [trip.message for trip in guard_trips(plan, max_change_fraction)]


def guard_trips(
    plan: AttributePlan, max_change_fraction: float, override: str | None = None
) -> list[GuardTrip]:
    """The attribute guard's trips, one per attribute changing too many confirmed values,
    of the kind every guard gives the gate (`core.gate.guards.judge`). `override`: the
    `hrsync sync` flag that lets them through once.

    One changed value never trips it, whatever the fraction (a one-person org must be able
    to change an office).
    """
    trips: list[GuardTrip] = []
    for count in plan.counts:
        if count.changed <= 1 or count.changed <= max_change_fraction * count.confirmed:
            continue
        share = count.changed / count.confirmed
        more = count.changed - len(count.examples)
        tail = f" and {more} more" if more > 0 else ""
        trips.append(
            GuardTrip(
                guard="max_change_fraction",
                message=(
                    f"attribute {count.name!r} would change {count.changed} of "
                    f"{count.confirmed} confirmed values ({share:.0%}, over "
                    f"attributes.max_change_fraction {max_change_fraction:.0%}), "
                    f"e.g. {'; '.join(count.examples)}{tail}"
                ),
                actual=count.changed,
                limit=int(max_change_fraction * count.confirmed),
                setting="attributes.max_change_fraction",
                override=override,
            )
        )
    return trips


def calls_json(plan: AttributePlan) -> str:
    """Exactly what the step would send, one call per person: what a refused attribute
    plan is kept as, and digested into its id."""
    calls = [{"email": c.email, "values": dict(sorted(c.values.items()))} for c in plan.changes]
    return json.dumps(calls, sort_keys=True, separators=(",", ":"))


def calls_digest(plan: AttributePlan) -> str:
    return hashlib.sha256(calls_json(plan).encode()).hexdigest()


# ---------------------------------------------------------------- DX's answer


@dataclass(frozen=True, slots=True)
class CallResult:
    confirmed: Values  # the values DX confirmed, to store
    problems: tuple[str, ...]  # empty when DX confirmed everything sent

    @property
    def ok(self) -> bool:
        return not self.problems


def read_result(sent: Values, user: Mapping[str, Any]) -> CallResult:
    """What DX's ``user`` result confirms of the values `sent` (liberal in what it takes)."""
    reported: dict[str, Any] = {}
    listed = user.get("attributes")
    if isinstance(listed, list):
        for item in listed:
            if isinstance(item, Mapping) and isinstance(item.get("name"), str):
                reported[item["name"]] = item.get("value")
    problems: list[str] = []
    failures = user.get("failures")
    if isinstance(failures, list):
        problems.extend(_short(failure) for failure in failures[:LIMIT])
        if len(failures) > LIMIT:
            problems.append(f"and {len(failures) - LIMIT} more failures")
    elif failures not in (None, {}):
        problems.append(_short(failures))
    confirmed: dict[str, str] = {}
    missing: list[str] = []
    for name, value in sent.items():
        if name not in reported:
            missing.append(name)
            continue
        got = reported[name]
        if got is None or str(got) == value:
            confirmed[name] = value
        else:
            problems.append(
                f"{name}: DX holds {shown_value(got)}, not the {shown_value(value)} sent"
            )
    if missing:
        problems.append(f"DX's answer does not list {capped(repr(n) for n in missing)}")
    return CallResult(confirmed, tuple(problems))


def shown_value(value: object) -> str:
    """A value in an attribute message: quoted, and cut shorter than elsewhere (a message
    may name hundreds of people's values)."""
    return text_shown_value(value, _VALUE_CHARS)


def _short(value: object) -> str:
    text = value if isinstance(value, str) else repr(value)
    return text if len(text) <= _FAILURE_CHARS else text[: _FAILURE_CHARS - 1] + "…"


# ---------------------------------------------------------------- progress


@dataclass
class Progress:
    """When a long attribute step logs its progress: every tenth of the calls, or a minute.

    A step of fewer than `minimum` calls is short enough to log only its end.
    """

    total: int
    started: datetime
    every: timedelta = timedelta(minutes=1)
    minimum: int = 100
    _last_at: datetime | None = field(default=None, repr=False)
    _last_tenth: int = field(default=0, repr=False)

    def due(self, done: int, now: datetime) -> bool:
        if self.total < self.minimum or done >= self.total:
            return False
        tenth = done * 10 // self.total
        last_at = self._last_at or self.started
        if tenth > self._last_tenth or now - last_at >= self.every:
            self._last_tenth = max(tenth, self._last_tenth)
            self._last_at = now
            return True
        return False
