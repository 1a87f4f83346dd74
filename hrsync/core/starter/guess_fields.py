"""`hrsync init`'s guesses (pure): an export's columns and values → the `[source.fields]`,
the manager strategy and the status filter a config would need, each with its evidence.

A guess is made from two kinds of evidence, and says which it used:

- the column's **name**, as the HR systems hrsync knows spell it (Workday's
  ``Email_-_Work``, BambooHR's ``supervisorEId``, Graph's ``mail``, SCIM's
  ``…:enterprise:2.0:User.manager.value``, Personio's ``attributes.email.value`` …);
- its **values**: e-mail addresses, ids that are unique per row, display names, a
  manager column whose values are the ids (or e-mails, or names) of other rows.

Values win over names where they can decide: the employee id is the column the manager
column refers to (Okta's ``profile.managerId`` names Okta's ``id``, not the
``employeeNumber``), and an e-mail column is found whatever it is called. What cannot be
decided is a `Todo`, never a guess presented as a fact: a wrong column would sync a
wrong org, a TODO stops at `hrsync check`.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from itertools import pairwise
from typing import Any

from hrsync.core.export.page_signs import one_page_sign, page_signs
from hrsync.core.export.rows import RowTable
from hrsync.core.export.templates import FILTERS, Template, is_template
from hrsync.core.listing import capped
from hrsync.core.people.emails import valid_emails
from hrsync.core.people.managers import name_key
from hrsync.core.text import plural

# What a JSON reader joins several values of one list with (hrsync.sources.json_reader).
LIST_SEPARATOR = "; "


@dataclass(frozen=True)
class Column:
    """One column of the export: its name (CSV header or JSON dotted path), its value in
    every record (blank where missing), and in how many records it read several values
    from a JSON list."""

    name: str
    values: tuple[str, ...]
    several: int = 0


@dataclass(frozen=True)
class Guess:
    """`key` (e.g. ``source.fields.email``) set to `value`, because of `evidence`."""

    key: str
    value: str
    evidence: str


@dataclass(frozen=True)
class Todo:
    """A key `hrsync init` could not decide: left for a person, `why` says what to do."""

    key: str
    why: str


@dataclass(frozen=True)
class Proposal:
    """Everything guessed about one export: `[source.fields]` in `fields` (every key
    hrsync's defaults would otherwise fill is set, blank when the export has none),
    `strategy`, `active_status` (None: no status column), and what is left to a person."""

    fields: tuple[Guess, ...]
    strategy: Guess
    active_status: Guess | None
    kept_statuses: tuple[str, ...]
    todos: tuple[Todo, ...]
    notes: tuple[str, ...] = ()
    records: int = 0
    # The columns were a sample of `records` records of this many (0: every record).
    sampled_from: int = 0

    def field(self, name: str) -> str:
        """The value proposed for ``source.fields.<name>`` ("" when none)."""
        for guess in self.fields:
            if guess.key == f"source.fields.{name}":
                return guess.value
        return ""


# ---------------------------------------------------------------- column names

# Path segments that say nothing about what a value is (Personio's
# ``attributes.email.value``, Okta's ``profile.email``, HiBob's ``work.department``).
_GENERIC = frozenset({"value", "values", "attributes", "profile", "root", "work", "internal"})
_GENERIC |= frozenset({"user", "fields", "about", "employment", "personal", "person"})
# Columns that are a value's description, not the value (Personio's ``…label``,
# Graph's ``manager.@odata.type``, Okta's ``_links.self.href``).
_NEVER = frozenset({"label", "type", "odatatype", "href", "schemas", "universalid"})

_EMAIL_KEYS = frozenset({"email", "emails", "workemail", "mail", "emailwork", "primaryemail"})
_EMAIL_KEYS |= frozenset({"emailaddress", "workemailaddress", "businessemail", "companyemail"})
_ID_KEYS = frozenset({"employeeid", "employeenumber", "employeeno", "employee", "workerid"})
_ID_KEYS |= frozenset({"empid", "eid", "personid", "personnumber", "id", "staffid", "userid"})
_ID_KEYS |= frozenset({"employeecode", "externalid", "associateid", "filenumber"})
_NAME_KEYS = frozenset({"name", "fullname", "displayname", "worker", "employeename"})
_NAME_KEYS |= frozenset({"preferredname", "legalname", "workername", "formatted"})
_FIRST_KEYS = frozenset({"firstname", "givenname", "first", "forename", "preferredfirstname"})
_FIRST_KEYS |= frozenset({"vorname"})
_LAST_KEYS = frozenset({"lastname", "surname", "familyname", "last", "nachname"})
_DEPARTMENT_KEYS = frozenset({"department", "dept", "departmentname", "orgunit", "division"})
_DEPARTMENT_KEYS |= frozenset({"organization", "organisation", "supervisoryorganization"})
_DEPARTMENT_KEYS |= frozenset({"team", "orgunitpath", "businessunit", "abteilung"})
# Words that make any column a department's wherever they stand in its name (ADP's
# "Home Department Description", "Department Name", "Dept Code").
_DEPARTMENT_WORDS = ("department", "dept", "abteilung")
# Names of columns that may group people as a department does, but are not proposed: a
# cost center is often a finance code, a function or group a looser grouping. Named in
# the note, so a person knows where to look.
_MAYBE_DEPARTMENT = ("costcenter", "costcentre", "function", "group", "unit", "area")


def _maybe_department(s: _Stats) -> bool:
    """Named with one of those words, as a word ("Cost Center", "Job Function"; not
    "Community"), and grouping people: far fewer values than people, none an id or
    an e-mail address."""
    words = re.findall(r"[a-z0-9]+", re.sub(r"([a-z])([A-Z])", r"\1 \2", s.name).lower())
    joined = {a + b for a, b in pairwise(words)}
    named = any(w in words or w in joined for w in _MAYBE_DEPARTMENT)
    return (
        named
        and not any(w in ("id", "code", "number") for w in words[-1:])
        and 1 < s.distinct <= len(s.filled) // 2
        and s.share(s.emails) < 0.5
    )


# Endings of first- and last-name columns, whatever precedes them ("Legal First Name",
# "Preferred First Name", "Given_Name", "Family Name").
_FIRST_ENDINGS = ("firstname", "givenname", "forename", "vorname")
_LAST_ENDINGS = ("lastname", "surname", "familyname", "nachname")
_STATUS_KEYS = frozenset({"status", "employmentstatus", "workerstatus", "lifecyclestatus"})
_STATUS_KEYS |= frozenset({"accountenabled", "active", "enabled", "suspended", "state"})
_STATUS_KEYS |= frozenset({"employeestatus", "isactive", "activestatus"})
# Personio's exports are often in German: Vorgesetzte:r, Abteilung, Vorname, Nachname.
_MANAGER_WORDS = ("manager", "supervisor", "reportsto", "reportingto", "linemanager", "vorgesetzt")
_TITLE_WORDS = ("title", "job", "position", "role")
_PRIMARY_FLAGS = frozenset({"primary", "isprimary", "isprimaryjob", "primaryjob"})
_PRIMARY_FLAGS |= frozenset({"primaryposition", "isprimaryposition"})


def _segments(name: str) -> list[str]:
    """The column's meaningful path segments, lower case, letters and digits only."""
    parts = [re.sub(r"[^a-z0-9]", "", part.lower()) for part in name.split(".")]
    return [part for part in parts if part and part not in _GENERIC and not part.isdigit()]


def _last(name: str) -> str:
    segments = _segments(name)
    return segments[-1] if segments else ""


def _mentions_manager(name: str) -> bool:
    # Workday's Supervisory_Organization is the person's own unit, not their supervisor.
    return any(
        word in segment and not segment.startswith("supervisory")
        for segment in _segments(name)
        for word in _MANAGER_WORDS
    )


def _is_description(name: str) -> bool:
    # Only inside a JSON object: a CSV column called "Type" may hold anything.
    return "." in name and _last(name) in _NEVER


def _named(name: str, keys: frozenset[str]) -> bool:
    """The column's own name (its last meaningful segment) is one of `keys`, or its
    container is (Personio's ``department.value.attributes.name``)."""
    segments = _segments(name)
    if not segments:
        return False
    if segments[-1] in keys:
        return True
    return len(segments) > 1 and segments[-1] in ("name", "id", "value") and segments[-2] in keys


# ---------------------------------------------------------------- column values

# Letters, digits and a few joiners, at least one digit: E001, 00u1f…, a GUID, 4711.
_ID_SHAPE = re.compile(r"(?=[^0-9]*[0-9])[A-Za-z0-9][A-Za-z0-9_.:#/+-]{0,63}")
_NAME_SHAPE = re.compile(r"[^\W\d_][\w'’.-]*(?:,? [^\W\d_][\w'’.()-]*){1,5}")


@dataclass(frozen=True)
class _Stats:
    """A column's values, measured once."""

    column: Column
    filled: tuple[str, ...]  # the non-blank values, trimmed
    items: tuple[str, ...]  # the same, each list of several split into its values
    distinct: int
    emails: int
    ids: int
    names: int

    @property
    def name(self) -> str:
        return self.column.name

    @property
    def unique(self) -> bool:
        """Every filled value differs (a person's own id, e-mail or name)."""
        return bool(self.filled) and self.distinct == len(self.filled)

    def share(self, count: int) -> float:
        return count / len(self.filled) if self.filled else 0.0


def _measure(column: Column) -> _Stats:
    filled = tuple(stripped for v in column.values if (stripped := v.strip()))
    items = filled
    if column.several:
        items = tuple(
            part.strip() for value in filled for part in value.split(LIST_SEPARATOR) if part.strip()
        )
    # Each distinct value's shape once: a department or status column repeats a few.
    counts = Counter(filled)
    distinct = tuple(counts)
    weights = tuple(counts.values())

    def count(matches: Iterable[object]) -> int:
        return sum(n for n, match in zip(weights, matches, strict=True) if match)

    return _Stats(
        column=column,
        filled=filled,
        items=items,
        distinct=len(distinct),
        emails=count(valid_emails(v.lower() for v in distinct)),
        ids=count(map(_ID_SHAPE.fullmatch, distinct)),
        names=count(map(_NAME_SHAPE.fullmatch, distinct)),
    )


def _of(count: int, total: int) -> str:
    return f"{count} of {total}"


# ---------------------------------------------------------------- the proposal


def propose(columns: Sequence[Column], *, sampled_from: int = 0) -> Proposal:
    """Guess a config's fields, strategy and status filter from an export's columns.
    `sampled_from`: the columns hold a sample of the records of an export of this many
    (0: every record); a manager column then finds only the managers the sample holds."""
    records = max((len(c.values) for c in columns), default=0)
    share = records / sampled_from if sampled_from > records else 1.0
    # A description (Personio's `…label`) is skipped, unless it holds e-mail addresses:
    # an e-mail column is found whatever its name.
    measured = [_measure(c) for c in columns]
    stats = [s for s in measured if s.filled and (s.emails or not _is_description(s.name))]
    taken: set[str] = set()
    guesses: dict[str, Guess] = {}
    todos: list[Todo] = []
    notes: list[str] = []
    # A setting holding a brace is a template, and a placeholder cannot hold one: a column
    # whose name has a brace cannot be named in a config at all, so none is proposed.
    unnamable = [s.name for s in stats if is_template(s.name)]
    if unnamable:
        stats = [s for s in stats if not is_template(s.name)]
        notes.append(
            f"{capped(repr(n) for n in unnamable)}: a column whose name holds a brace "
            "cannot be named in the config (it would read as a template); rename it in the "
            "export to use it"
        )

    def settle(key: str, found: tuple[str, str, str] | None, todo: str) -> None:
        """A field's guess (the column it takes, the value written, why) kept, or its TODO."""
        if found is None:
            todos.append(Todo(f"source.fields.{key}", todo))
            return
        column, value, evidence = found
        guesses[key] = Guess(f"source.fields.{key}", value, evidence)
        taken.add(column)

    email = _email_column(stats)
    settle(
        "email",
        None if email is None else (email[0], *email),
        "name the column holding each person's work e-mail (as DX knows them), or a "
        'template such as "{First}.{Last}@example.com"',
    )
    emails = next((s for s in stats if s.name == guesses["email"].value), None) if email else None

    ids = [s for s in stats if s.name not in taken and _id_like(s)]
    names = [s for s in stats if s.name not in taken and _name_like(s)]
    name_guess = _name(stats, names, taken)
    name_stats = next((s for s in stats if name_guess and s.name == name_guess[0]), None)
    if name_guess is not None and is_template(name_guess[1]):
        # A manager given by name is compared with the names the template renders.
        name_stats = _measure(_rendered(name_guess[1], stats, records))

    manager = _manager(stats, ids, emails, name_stats, taken, share)
    if name_guess is not None and (legal := _legal_name(name_guess[1])) is not None:
        # HR systems give a manager by their legal name (ADP's "Reports To Name"): one
        # who goes by a preferred name would match nobody. When the legal name matches
        # more of them, it is the name read.
        legal_stats = _measure(_rendered(legal, stats, records))
        by_legal = _manager(stats, ids, emails, legal_stats, taken, share)
        if (
            by_legal is not None
            and by_legal[0] == "manager_name"
            and (manager is None or manager[0] == "manager_name")
            and _names_found(by_legal[1], stats, legal_stats)
            > (_names_found(manager[1], stats, name_stats) if manager else 0)
        ):
            manager = by_legal
            # The evidence's first two parts: no full-name column, the legal pair.
            pair = "; ".join(name_guess[2].split("; ")[:2])
            name_guess = (
                name_guess[0],
                legal,
                f"{pair}; the preferred first name is not read: {by_legal[1]} gives "
                "managers by their legal names, which a preferred name would not match",
            )
    employee_id: tuple[str, str] | None = None
    if manager is not None:
        field_name, column, target, evidence = manager
        guesses[field_name] = Guess(f"source.fields.{field_name}", column, evidence)
        taken.add(column)
        if field_name == "manager_id":
            target_stats = next(s for s in stats if s.name == target)
            employee_id = (
                target,
                f"{target}: {_of(target_stats.distinct, len(target_stats.filled))} values "
                f"are different ids, and {column} names them",
            )
    if employee_id is None:
        employee_id = _best_id(ids, taken)
    several = [s.name for s in ids if s.name not in taken]
    settle(
        "employee_id",
        None if employee_id is None else (employee_id[0], *employee_id),
        "name the column holding each person's unique, lasting id (an employee number); "
        + (
            f"{capped(several)} each hold a different id on every row: name the one "
            "that stays with the person (not a position's or a login's)"
            if several
            else "no column holds a different id on every row"
        ),
    )
    settle(
        "name",
        name_guess if name_guess is not None and name_guess[0] not in taken else None,
        "name the column holding each person's display name, or a template such as "
        '"{First Name} {Last Name}"',
    )
    if manager is None:
        todos.append(
            Todo(
                "source.fields.manager_id",
                "name the column holding each person's manager's employee id here; or, "
                "for a column of their e-mails or display names, name it in manager_email or "
                'manager_name below and set this one to "". No column\'s values are mostly '
                "other rows' ids, e-mails or names. For teams from departments instead, set "
                'manager_id = "" and mapping.strategy = "department"',
            )
        )
    department = _department(stats, taken)
    if department is not None:
        guesses["department"] = Guess("source.fields.department", *department)
        taken.add(department[0])
    else:
        notes.append(_no_department(stats, taken))
    status = _status(stats, taken)
    active: Guess | None = None
    kept: tuple[str, ...] = ()
    if status is not None:
        column, kept, unknown = status.column, status.kept, status.unknown
        guesses["status"] = Guess("source.fields.status", column, status.evidence)
        taken.add(column)
        if kept:
            active = Guess("filter.active_status", "", _status_evidence(status))
        else:
            todos.append(
                Todo(
                    "filter.active_status",
                    f"list the values of {column} that mean employed (others drop out); "
                    "none of its values is a status hrsync init knows",
                )
            )
        if unknown:
            notes.append(
                f"{column}: {', '.join(repr(v) for v in unknown)} "
                f"{'is' if len(unknown) == 1 else 'are'} not a status hrsync init knows: "
                "left out of filter.active_status, so those people drop out; add "
                f"{'it' if len(unknown) == 1 else 'them'} to keep them"
            )
    # A description (Google's relations.type) may still say which item of a list to pick.
    fields = _with_picks(guesses, measured, notes)
    strategy = (
        Guess(
            "mapping.strategy",
            "manager",
            f"teams from the manager chain: {manager[1]} names each person's manager",
        )
        if manager is not None
        else Guess(
            "mapping.strategy",
            "manager",
            "teams from the manager chain, once a manager column is named (see the TODO)",
        )
    )
    return Proposal(
        fields=fields,
        strategy=strategy,
        active_status=active,
        kept_statuses=kept,
        todos=tuple(todos),
        notes=tuple(notes),
        records=records,
        sampled_from=sampled_from if share < 1 else 0,
    )


FIELD_ORDER = (
    "employee_id",
    "email",
    "name",
    "manager_id",
    "manager_email",
    "manager_name",
    "department",
    "status",
)


def _with_picks(
    guesses: Mapping[str, Guess], stats: Sequence[_Stats], notes: list[str]
) -> tuple[Guess, ...]:
    """Every field in order, a column that reads several values from a list given the
    pick of the primary item where the list marks one (Workday's ``Is_Primary_Job``)."""
    by_name = {s.name: s for s in stats}
    out: list[Guess] = []
    for key in FIELD_ORDER:
        guess = guesses.get(key)
        if guess is None:
            # Written blank: hrsync's defaults name columns ("manager_id") an export lacks.
            if key in ("manager_id", "manager_email", "manager_name"):
                out.append(Guess(f"source.fields.{key}", "", ""))
            continue
        column = by_name.get(guess.value)
        if column is not None and column.column.several:
            pick = _pick(guess.value, key, by_name)
            count = column.column.several
            if pick is not None:
                path, why = pick
                guess = Guess(
                    guess.key,
                    path,
                    f"{guess.evidence}; {plural(count, 'record')} list several, {why}",
                )
            else:
                notes.append(
                    f"{guess.value}: {plural(count, 'record')} hold several values "
                    "from a list: those people would be held; pick one item with a path "
                    "(docs: Exports, How lists are read)"
                )
        out.append(guess)
    return tuple(out)


def _pick(column: str, key: str, by_name: Mapping[str, _Stats]) -> tuple[str, str] | None:
    prefix, dot, leaf = column.rpartition(".")
    if not dot:
        return None
    for name, s in by_name.items():
        parent, _, flag = name.rpartition(".")
        if parent != prefix:
            continue
        flag_key = re.sub(r"[^a-z0-9]", "", flag.lower())
        values = {v.lower() for v in s.items}
        if flag_key in _PRIMARY_FLAGS:
            if "1" in values:
                return f"{prefix}[{flag}=1].{leaf}", f"the one with {flag} 1 is read"
            if "true" in values:
                return f"{prefix}[{flag}].{leaf}", f"the one with {flag} true is read"
        if flag_key == "type" and key.startswith("manager") and "manager" in values:
            return f"{prefix}[{flag}=manager].{leaf}", f"the one of {flag} manager is read"
    return None


def _id_like(s: _Stats) -> bool:
    return s.share(s.ids) >= 0.95 and s.unique and not _mentions_manager(s.name)


def _name_like(s: _Stats) -> bool:
    if _mentions_manager(s.name) or any(w in _last(s.name) for w in _TITLE_WORDS):
        return False
    return s.share(s.names) >= 0.8 and s.distinct >= 0.9 * len(s.filled)


def _nearly_unique(s: _Stats) -> bool:
    """All different but for a few repeats: an ordinary day's typo (two people given one
    address) in a small export must not hide the column, while a manager's column, whose
    values repeat for every report, stays out."""
    repeats = len(s.filled) - s.distinct
    return repeats <= max(2, 0.05 * len(s.filled)) and s.distinct * 2 > len(s.filled)


def _mostly_in(values: set[str], others: set[str]) -> bool:
    return bool(values) and len(values & others) >= 0.8 * len(values)


def _email_column(stats: Sequence[_Stats]) -> tuple[str, str] | None:
    """The person's own e-mail: nearly every value an address, nearly all different, and
    not the manager's. A column named like an e-mail comes first; then the fuller."""
    candidates = [
        s
        for s in stats
        if s.share(s.emails) >= 0.8 and _nearly_unique(s) and not _mentions_manager(s.name)
    ]
    if not candidates:
        return None
    # A column whose addresses are mostly another candidate's, and not the other way
    # round, names other people (managers, in a small export where they hardly repeat).
    own = {s.name: {v.lower() for v in s.filled} for s in candidates}
    people = [
        s
        for s in candidates
        if not any(
            _mostly_in(own[s.name], own[o.name]) and not _mostly_in(own[o.name], own[s.name])
            for o in candidates
            if o is not s
        )
    ]
    best = max(
        people or candidates, key=lambda s: (_named(s.name, _EMAIL_KEYS), len(s.filled), s.emails)
    )
    evidence = f"{best.name}: {_of(best.emails, len(best.filled))} values are e-mail addresses" + (
        f", {len(best.filled)} of {len(best.column.values)} rows filled"
        if len(best.filled) < len(best.column.values)
        else ""
    )
    if not _named(best.name, _EMAIL_KEYS):
        evidence += " (found by its values, not its name)"
    return best.name, evidence


def _name(
    stats: Sequence[_Stats], names: Sequence[_Stats], taken: set[str]
) -> tuple[str, str, str] | None:
    """(column, value, evidence) of the display name: a column named like one, else one
    whose values read as names; else a template over a first and a last name."""
    named = [s for s in names if _named(s.name, _NAME_KEYS)]
    if named:
        best = max(named, key=lambda s: (s.names, s.distinct))
        return _natural_order(
            best, f"{best.name}: {_of(best.names, len(best.filled))} values read as names"
        )
    given = _name_parts(stats, _FIRST_KEYS, _FIRST_ENDINGS) + _preferred_first(stats)
    family = _name_parts(stats, _LAST_KEYS, _LAST_ENDINGS)
    plain = [s for s in given if not _preferred(s.name)]
    preferred = [s for s in given if _preferred(s.name)]
    last = next((s for s in family if not _preferred(s.name)), family[0] if family else None)
    first = plain[0] if plain else (preferred[0] if preferred else None)
    if first is not None and last is not None and _templatable(first.name, last.name):
        evidence = (
            f"no full-name column; {first.name} and {last.name} hold the first and last names"
        )
        first_part = f"{{{first.name}}}"
        if preferred and plain and _templatable(preferred[0].name):
            pref = preferred[0]
            filled = f"{_of(len(pref.filled), len(pref.column.values))} rows"
            if len(pref.filled) == len(pref.column.values):
                first_part = f"{{{pref.name}}}"
                evidence += f", {pref.name} (filled on {filled}) before {first.name}"
            else:
                first_part = f"{{{pref.name} || {first.name}}}"
                evidence += (
                    f"; {pref.name} is filled on {filled}: it wins where filled, "
                    f"{first.name} elsewhere"
                )
        return first.name, f"{first_part} {{{last.name}}}", evidence
    unnamed = [s for s in names if s.name not in taken]
    if unnamed:
        best = max(unnamed, key=lambda s: (s.names, s.distinct))
        return _natural_order(
            best,
            f"{best.name}: {_of(best.names, len(best.filled))} values read as names "
            "(found by its values, not its name)",
        )
    return None


def _natural_order(s: _Stats, evidence: str) -> tuple[str, str, str]:
    """A name column as the name field: through the `natural` filter when most of its
    names are written last name first ("Schmidt, Anna"), else as it is."""
    flipped = [v for v in s.filled if FILTERS["natural"](v) != v]
    if not _templatable(s.name) or len(flipped) < 0.8 * len(s.filled):
        return s.name, s.name, evidence
    # Counted, not quoted: the evidence is written into the config file, and a config goes
    # to git and to ConfigMaps, where nobody's name belongs.
    return (
        s.name,
        f"{{{s.name}|natural}}",
        f"{evidence}, last name first on {_of(len(flipped), len(s.filled))} rows "
        "('Last, First'): read as 'First Last'",
    )


def _name_parts(
    stats: Sequence[_Stats], keys: frozenset[str], endings: tuple[str, ...]
) -> list[_Stats]:
    """The columns holding a part of the person's own name (not their manager's)."""
    return [
        s
        for s in stats
        if not _mentions_manager(s.name)
        and (_named(s.name, keys) or _last(s.name).endswith(endings))
    ]


def _preferred_first(stats: Sequence[_Stats]) -> list[_Stats]:
    """A preferred name of one word on every filled row (BambooHR's `Preferred Name`,
    "Bob"): a preferred first name, though not named so."""
    return [
        s
        for s in stats
        if _last(s.name) in ("preferredname", "nickname")
        and not _mentions_manager(s.name)
        and all(" " not in v for v in s.filled)
    ]


def _preferred(name: str) -> bool:
    return any(word in _last(name) for word in ("preferred", "nick"))


def _rendered(template: str, stats: Sequence[_Stats], records: int) -> Column:
    """A template's value on every row, as a column (what a sync would read)."""
    by_name = {s.name: s.column.values for s in stats}
    parsed = Template(template)

    def on_row(i: int) -> Callable[[str], str]:
        def value(name: str) -> str:
            values = by_name.get(name, ())
            return values[i] if i < len(values) else ""

        return value

    return Column(template, tuple(parsed.render(on_row(i)) for i in range(records)))


def _templatable(*names: str) -> bool:
    # A template placeholder is `{column|filter}`: braces, a bar or a colon in a column's
    # name cannot be written in one.
    return not any(c in name for name in names for c in "{}|:!")


def _best_id(ids: Sequence[_Stats], taken: set[str]) -> tuple[str, str] | None:
    free = [s for s in ids if s.name not in taken]
    named = [s for s in free if _named(s.name, _ID_KEYS)]
    if not named:
        if len(free) != 1:
            return None  # several unnamed columns of unique ids: not a guess to make
        only = free[0]
        return (
            only.name,
            f"{only.name}: {_of(only.distinct, len(only.filled))} values are different ids "
            "(found by its values, not its name; no manager column names them)",
        )
    # An employee number before a system's generic "id".
    best = max(named, key=lambda s: (_last(s.name) != "id", len(s.filled)))
    return (
        best.name,
        f"{best.name}: {_of(best.distinct, len(best.filled))} values are different ids "
        "(no manager column names them: check this is the id managers are given by)",
    )


def _manager(
    stats: Sequence[_Stats],
    ids: Sequence[_Stats],
    emails: _Stats | None,
    names: _Stats | None,
    taken: set[str],
    share_held: float = 1.0,
) -> tuple[str, str, str, str] | None:
    """(field, column, the column it refers to, evidence) of the manager: a column whose
    values are mostly other rows' ids, else e-mails, else names. By id first: it is what
    a manager is best given by (an e-mail or a name changes). A column named like a
    manager's wins over one that merely refers (a second-line manager, a buddy).
    `share_held`: the share of the records the columns hold (a sample's), and so about the
    share of the managers among them to be found."""
    tiers: list[tuple[int, str, Sequence[_Stats], Callable[[str], str]]] = [
        (2, "manager_id", ids, _same),
        (1, "manager_email", [emails] if emails is not None else [], str.lower),
        (0, "manager_name", [names] if names is not None else [], name_key),
    ]
    known: dict[tuple[str, int], frozenset[str]] = {}
    best: tuple[tuple[bool, int, bool, float], tuple[str, str, str, str]] | None = None
    for rank, field_name, targets, fold in tiers:
        if best is not None and best[0][0]:
            break  # a column named like a manager's, read by a better key, is found
        for s in stats:
            if s.name in taken or not s.items:
                continue
            for target in targets:
                if target.name == s.name:
                    continue
                key = (target.name, rank)
                if key not in known:
                    known[key] = frozenset(map(fold, target.filled))
                found = _references(s, target, fold, known[key], share_held)
                if found is None:
                    continue
                share, matched = found
                # Somebody is at the top, with no manager: a column of location or
                # cost-centre numbers that happen to be ids too has no blank.
                top = len(s.filled) < len(s.column.values)
                score = (_mentions_manager(s.name), rank, top, share)
                if best is None or score > best[0]:
                    evidence = (
                        f"{s.name}: {_of(matched, len(s.items))} values are "
                        f"{_what(field_name)} found in {target.name}"
                    )
                    if share_held < 1:
                        evidence += (
                            f" (the sample holds {share_held:.0%} of the records, so about "
                            f"that share of the managers)"
                        )
                    best = (score, (field_name, s.name, target.name, evidence))
    return best[1] if best is not None else None


_PREFERRED_FIRST = re.compile(r"\{[^{}|]+ \|\| ([^{}|]+)\}")


def _legal_name(template: str) -> str | None:
    """`{Preferred First Name || Legal First Name} {Legal Last Name}` without its preferred
    part, or None for a template without one."""
    legal = _PREFERRED_FIRST.sub(r"{\1}", template)
    return legal if legal != template else None


def _names_found(column: str, stats: Sequence[_Stats], names: _Stats | None) -> int:
    """How many of `column`'s values are names `names` holds."""
    values = next((s.items for s in stats if s.name == column), ())
    known = {name_key(v) for v in names.filled} if names is not None else set()
    return sum(1 for v in values if name_key(v) in known)


def _same(value: str) -> str:
    return value


def _what(field_name: str) -> str:
    return {"manager_id": "ids", "manager_email": "e-mail addresses"}.get(field_name, "names")


def _references(
    s: _Stats,
    target: _Stats,
    fold: Callable[[str], str],
    known: frozenset[str],
    share_held: float = 1.0,
) -> tuple[float, int] | None:
    """How many of `s`'s values name a row of `target`, when that is most of them (of
    those a sample holding `share_held` of the records can find) and they are not the
    row's own value (a second copy of the e-mail is no manager)."""
    # Most columns refer to nothing: a look at the first values tells them, cheaply.
    head = s.items[:200]
    if sum(1 for v in head if fold(v) in known) < 0.5 * share_held * len(head):
        return None
    matched = sum(1 for v in s.items if fold(v) in known)
    share = matched / len(s.items)
    if share < 0.8 * share_held:
        return None
    rows = zip(s.column.values, target.column.values, strict=False)
    own = sum(
        1 for mine, theirs in rows if mine.strip() and fold(mine.strip()) == fold(theirs.strip())
    )
    if own > 0.5 * len(s.filled):
        return None
    return share, matched


def _department_named(name: str) -> bool:
    return _named(name, _DEPARTMENT_KEYS) or any(w in _last(name) for w in _DEPARTMENT_WORDS)


def _department(stats: Sequence[_Stats], taken: set[str]) -> tuple[str, str] | None:
    candidates = [
        s
        for s in stats
        if s.name not in taken
        and _department_named(s.name)
        and not _mentions_manager(s.name)
        and s.distinct > 1
        and s.share(s.emails) < 0.5
    ]
    if not candidates:
        return None
    # A department's name before its code ("Home Department Description", not "… Code").
    best = max(
        candidates,
        key=lambda s: (
            len(s.filled),
            not _last(s.name).endswith(("id", "code", "number")),
            -s.share(s.ids),
        ),
    )
    return (
        best.name,
        f"{best.name}: named like a department, {best.distinct} different values over "
        f"{len(best.filled)} rows",
    )


def _no_department(stats: Sequence[_Stats], taken: set[str]) -> str:
    """Why no department is proposed: a note, so a person knows what to set."""
    fix = (
        "teams are named after their lead; set source.fields.department to a column "
        "holding each person's department to name them after it"
    )
    named = [s for s in stats if _department_named(s.name) and s.name not in taken]
    if not named:
        maybe = [
            f"{s.name} might hold it ({s.distinct} different values)"
            for s in stats
            if s.name not in taken and not _mentions_manager(s.name) and _maybe_department(s)
        ][:3]
        hint = f"; {', '.join(maybe)}" if maybe else ""
        return f"no column is named like a department (Department, Dept, Division …){hint}: {fix}"
    reasons = []
    for s in named:
        if _mentions_manager(s.name):
            why = "is the manager's"
        elif s.distinct <= 1:
            why = f"holds {plural(s.distinct, 'value')} on every row"
        else:
            why = "holds e-mail addresses"
        reasons.append(f"{s.name} {why}")
    return f"no department: {'; '.join(reasons)}; {fix}"


# Statuses, lower case without spaces, dashes or underscores: kept (still employed) and
# dropped. Okta's SUSPENDED, LOCKED_OUT … are accounts of people still employed; Rippling's
# INIT, HIRED, ACCEPTED are people who have not started.
_KEPT = frozenset({"active", "employed", "leave", "onleave", "leaveofabsence", "loa"})
_KEPT |= frozenset({"parentalleave", "sickleave", "maternityleave", "sabbatical", "probation"})
_KEPT |= frozenset({"onboarding", "provisioned", "recovery", "lockedout", "passwordexpired"})
_KEPT |= frozenset({"suspended", "current", "working", "fulltime", "parttime"})
# The same in HR systems set up in German, French, Spanish, Italian, Portuguese and Dutch.
_KEPT |= frozenset({"aktiv", "beschäftigt", "elternzeit", "mutterschutz", "beurlaubt", "actif"})
_KEPT |= frozenset({"activo", "activa", "attivo", "attiva", "ativo", "ativa", "actief"})
_DROPPED = frozenset({"terminated", "inactive", "deprovisioned", "former", "leaver", "left"})
_DROPPED |= frozenset({"offboarded", "staged", "hired", "init", "accepted", "prehire"})
_DROPPED |= frozenset({"pending", "notstarted", "retired", "deceased", "deleted", "archived"})
_DROPPED |= frozenset({"disabled", "separated", "withdrawn", "ended", "exited", "garden"})
_DROPPED |= frozenset({"inaktiv", "ausgetreten", "gekündigt", "ehemalig", "inactif", "sorti"})
_DROPPED |= frozenset({"inactivo", "inactiva", "inattivo", "cessato", "cessata", "inativo"})
_DROPPED |= frozenset({"inativa", "desligado", "desligada", "inactief", "uitdienst"})
# A boolean as some HR systems write it (Workday's 1/0, SuccessFactors' t/f).
_BOOLEANS = {"1": "true", "0": "false", "t": "true", "f": "false"}
# Boolean status columns that are true for the people who are *not* employed.
_NEGATIVE = frozenset({"suspended", "disabled", "archived", "inactive", "terminated", "deleted"})


def _fold_status(value: str) -> str:
    return re.sub(r"[\s_-]", "", value.lower())


@dataclass(frozen=True)
class _StatusGuess:
    column: str
    evidence: str
    kept: tuple[str, ...]
    dropped: tuple[str, ...]
    unknown: tuple[str, ...]
    counts: Mapping[str, int]


def _status(stats: Sequence[_Stats], taken: set[str]) -> _StatusGuess | None:
    """The status column: named like one, or holding statuses hrsync knows (not mere
    true/false: a SCIM ``emails.primary`` is no status), with few different values; and
    which of its values mean still employed."""
    best: tuple[tuple[Any, ...], _Stats] | None = None
    for s in stats:
        if s.name in taken or s.distinct > 12:
            continue
        spelled = Counter(_fold_status(v) for v in s.filled)
        known = sum(n for v, n in spelled.items() if v in _KEPT | _DROPPED)
        named = _named(s.name, _STATUS_KEYS)
        if not named and known < 0.8 * len(s.filled):
            continue
        # A column that tells someone gone (BambooHR's Status: Active, Inactive) before
        # one that only sorts the employed (its Employment Status: Full-Time, Part-Time).
        drops = any(v in _DROPPED for v in spelled)
        score = (named, drops, _last(s.name) in ("lifecyclestatus", "employmentstatus"), known)
        if best is None or score > best[0]:
            best = (score, s)
    if best is None:
        return None
    s = best[1]
    counts = Counter(s.filled)
    kept: list[str] = []
    dropped: list[str] = []
    unknown: list[str] = []
    negative = _last(s.name) in _NEGATIVE
    for value, _ in counts.most_common():
        # Workday's Active_Status is a boolean written 1 or 0; SuccessFactors' User status
        # one written t or f.
        folded = _BOOLEANS.get(_fold_status(value), _fold_status(value))
        if folded in ("true", "false"):
            employed = (folded == "true") != negative
            (kept if employed else dropped).append(value)
        elif folded in _KEPT:
            kept.append(value)
        elif folded in _DROPPED:
            dropped.append(value)
        else:
            unknown.append(value)
    shown = ", ".join(f"{v} ({n})" for v, n in counts.most_common())
    evidence = f"{s.name}: its values are statuses: {shown}"
    return _StatusGuess(s.name, evidence, tuple(kept), tuple(dropped), tuple(unknown), counts)


def _status_evidence(status: _StatusGuess) -> str:
    def listed(values: Sequence[str]) -> str:
        return ", ".join(f"{v} ({status.counts[v]})" for v in values)

    text = f"kept: {listed(status.kept)}, still employed"
    if status.dropped:
        text += f"; dropped: {listed(status.dropped)}, gone or not started"
    if status.unknown:
        text += f"; dropped, unknown to hrsync init: {listed(status.unknown)} (see the note)"
    return text


# ---------------------------------------------------------------- JSON documents

# Where HR APIs put their list of people, and whose answer that is.
KNOWN_LISTS: Mapping[str, str] = {
    "value": "Microsoft Graph",
    "Resources": "SCIM",
    "Report_Entry": "Workday RaaS",
    "data": "Personio or BambooHR datasets",
    "employees": "BambooHR or HiBob",
    "results": "Rippling",
    "users": "Google Workspace",
    "d.results": "SAP SuccessFactors (OData v2)",
}


@dataclass(frozen=True)
class RecordsGuess:
    """Where a JSON document keeps its people: `path` for `source.records_path` ("" for
    a list at the top level), and why."""

    path: str
    count: int
    evidence: str


def find_records(document: Any, *, depth: int = 4) -> RecordsGuess | None:
    """The list of records in a JSON document: the top level when it is a list, else the
    longest list of objects under an object (an API's answer around it), a list known
    from an HR API winning a tie."""
    if isinstance(document, list):
        return RecordsGuess("", len(document), f"the top level is a list of {len(document)}")
    found: list[tuple[str, int]] = []
    _lists(document, "", depth, found)
    if not found:
        return None
    path, count = max(found, key=lambda item: (item[1], item[0] in KNOWN_LISTS, -len(item[0])))
    family = KNOWN_LISTS.get(path)
    evidence = f"{path!r} holds a list of {plural(count, 'record')}" + (
        f" ({family}'s answer)" if family else ""
    )
    others = [p for p, _ in found if p != path]
    if others:
        evidence += f"; also lists: {', '.join(repr(p) for p in others[:5])}"
    return RecordsGuess(path, count, evidence)


def next_page(document: Any) -> str | None:
    """A note when a saved API answer says it is one page of more (by its shape, as a run
    tells: `hrsync.core.export.page_signs`): `init` reads the file, but a config reading the API
    must page."""
    records = find_records(document)
    if records is None or not isinstance(document, dict):
        return None
    signs = page_signs(document, records_path=records.path)
    sign = one_page_sign(signs, records.count)
    if sign is None:
        return None
    # The path, and the count for a total ("totalResults 40").
    marker = sign.path if sign.kind in ("next", "more", "done") else f"{sign.path} {sign.value}"
    return (
        f"the saved answer is one page of more ({marker or sign.where}): only its records "
        "were read. Reading the API with source.url, set [source.pagination] as your HR "
        "system's how-to shows"
    )


def _lists(node: Any, prefix: str, depth: int, found: list[tuple[str, int]]) -> None:
    if not isinstance(node, dict) or depth == 0:
        return
    for key, value in node.items():
        path = f"{prefix}.{key}" if prefix else str(key)
        if isinstance(value, list) and value and all(isinstance(v, dict) for v in value):
            found.append((path, len(value)))
        elif isinstance(value, dict) and "." not in str(key):
            _lists(value, path, depth - 1, found)


def columns_of(names: Iterable[str], table: RowTable) -> list[Column]:
    """The export's columns (`names`, in its order) from every row of its table."""
    several: Counter[str] = Counter()
    for found in table.several.values():
        # A value of another kind than text (`Several.kind`) is not several values.
        several.update(column for column, what in found.items() if what.kind is None)
    columns: list[Column] = []
    for name in names:
        position = table.index.get(name)
        if position is None:
            continue
        values = tuple(cells[position] if position < len(cells) else "" for cells in table.cells)
        columns.append(Column(name, values, several[name]))
    return columns


__all__ = [
    "FIELD_ORDER",
    "KNOWN_LISTS",
    "Column",
    "Guess",
    "Proposal",
    "RecordsGuess",
    "Todo",
    "columns_of",
    "find_records",
    "next_page",
    "propose",
]
