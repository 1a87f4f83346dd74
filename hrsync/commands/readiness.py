"""`hrsync check`: is this installation ready to sync? A report, one line per check.

Nothing here writes to DX. In particular the `snapshots:admin` scope is not
probed with a preview call: a preview leaves an import in DX's web app that a
person could finish by hand, and an empty one would archive the org. `check
--preview` sends the plan's own preview, when a person asks for it.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime

from hrsync.clock import Clock, utcnow
from hrsync.config.file_modes import not_private
from hrsync.config.loading import Settings
from hrsync.core.attributes import column_problems, compile_sources
from hrsync.core.gate.guards import check_snapshots
from hrsync.core.gate.plan import COUNT_KEYS
from hrsync.core.gate.reporting_floor import FOLD_HINT, UnderFloor, floor_lines
from hrsync.core.listing import LIMIT, capped
from hrsync.core.people import HeldPerson, Person, UnknownManager, export_columns
from hrsync.core.people.joins import JoinReport
from hrsync.core.people.second_tables import TableCount
from hrsync.core.people.union import Part
from hrsync.core.report.problems import group_problems
from hrsync.core.teams.mapping import LeadLeft, LeadWithoutReports, Unplaced
from hrsync.core.text import plural
from hrsync.dx.client import DxClient
from hrsync.dx.errors import DxAuthError, DxError
from hrsync.dx.simulator_probe import at_simulator_address, not_the_simulator
from hrsync.log_messages import changes_said
from hrsync.outcome import Outcome
from hrsync.sources.base import SourceError
from hrsync.store.repo import Store
from hrsync.sync.reading import read_known
from hrsync.sync.results import SyncResult
from hrsync.sync.stages import InputRefused, map_teams

_FIX_SOURCE = "fix source.path / source.url and its access"


@dataclass(frozen=True, slots=True)
class Check:
    name: str
    ok: bool
    detail: str
    fix: str | None = None  # what to do about it, when not ok
    warning: bool = False  # ok, but worth a look
    needs_person: int = 0  # active people lost to DX until a person acts (in no team)


def run_checks(
    settings: Settings,
    *,
    client: DxClient,
    store: Store,
    now: Clock = utcnow,
) -> list[Check]:
    checks = [Check("config", True, f"loaded {settings.config_path or '(environment only)'}")]
    checks.extend(file_mode_checks(settings, os.environ))
    checks.extend(deprecation_checks(settings))
    checks.append(_state(store))
    checks.extend(_export(settings, store))
    checks.extend(_dx(settings, client, now()))
    return checks


def plan_check(result: SyncResult, preview: bool) -> Check:
    """What the plan a sync would make says of readiness: a guard's refusal, DX's
    rejection of a preview, a window it waits for, or the changes it would send."""
    name = "preview" if preview else "plan"
    # The changes in the plan's words, then what else it counted (unchanged teams,
    # attribute values held in a dry run), as the plan itself shows them.
    others = [
        f"{count} {key.replace('_', ' ')}"
        for key, count in result.counts.items()
        if count and (key == "unchanged" or key not in COUNT_KEYS)
    ]
    changes = ", ".join([changes_said(result.counts, planned=True), *others])
    reason = (result.reason or result.outcome.value).rstrip(".")
    match result.outcome:
        case Outcome.IN_SYNC:
            return Check(name, True, "DX already matches the export: nothing to send")
        case Outcome.PLANNED if preview:
            shown = f" ({result.preview_url})" if result.preview_url else ""
            return Check(name, True, f"DX validated the plan{shown}: {changes}")
        case Outcome.PLANNED:
            return Check(name, True, f"no guard trips: {changes}")
        case Outcome.DEFERRED:
            return Check(name, True, f"deferred: {reason}", warning=True)
        case Outcome.REFUSED:
            fix = result.action or "fix the export or the settings; `hrsync plan` shows the plan"
            return Check(name, False, f"a sync would be refused: {reason}", fix)
        case Outcome.REJECTED:
            return Check(
                name,
                False,
                f"DX rejected the plan: {reason}",
                "fix what DX named, then check again",
            )
    return Check(name, False, f"the plan could not be made: {reason}", "see the log")


def floor_check(floor: UnderFloor | None) -> Check | None:
    """Teams DX will leave out of the next snapshot's results: not a failure (a small
    team is a fact of the org), but a person decides whether to fold them."""
    lines = floor_lines(floor, indent="       ", fold_hint=False)
    if not lines:
        return None
    return Check(
        "reporting floor", True, "\n".join(lines), warning=True, fix=f"if intended, {FOLD_HINT}"
    )


def deprecation_checks(settings: Settings) -> list[Check]:
    """A warning for each key this release still reads but the next will not."""
    fix = "write it the new way, as the line says"
    return [Check("config", True, line, fix=fix, warning=True) for line in settings.deprecations]


def file_mode_checks(settings: Settings, environ: Mapping[str, str]) -> list[Check]:
    """A warning for each file of this installation someone else can read or write."""
    return [
        Check("file modes", True, found.message(), fix=found.fix, warning=True)
        for found in not_private(settings, environ)
    ]


def _state(store: Store) -> Check:
    runs = store.runs.recent(1)
    deferral = store.deferrals.pending()
    detail = "state store ready"
    if runs:
        last = runs[0]
        detail += f"; last run {last.started_at:%Y-%m-%d %H:%M}Z: {last.outcome or 'running'}"
    if deferral:
        detail += f"; deferred until {deferral.resume_at.isoformat()} ({deferral.reason})"
    return Check("state", True, detail)


def _pages(settings: Settings, pages: int) -> str:
    # Over HTTP the page count shows a paged API was read through, not just its first page.
    if not settings.source.url:
        return ""
    return f"{plural(pages, 'page')} read, "


def _export(settings: Settings, store: Store) -> list[Check]:
    # The run's own read and map stages: what `check` accepts, a sync accepts.
    try:
        export = read_known(settings, store)
    except SourceError as exc:  # unavailable: worth a retry, but not ready now
        return [Check("export", False, str(exc), _FIX_SOURCE)]
    except InputRefused as exc:
        if exc.stage == "source":
            return [Check("export", False, exc.problems[0], _FIX_SOURCE)]
        shown = capped(exc.problems, limit=5, sep="; ")
        return [
            Check(
                "export",
                False,
                f"{exc.source}: {plural(len(exc.problems), 'problem')}: {shown}",
                "fix the export or [source.fields]; `hrsync plan` lists every problem",
            )
        ]
    directory = export.directory
    warnings = directory.warnings
    checks = [
        Check(
            "export",
            True,
            f"{export.source}: {_pages(settings, export.pages)}{len(directory.people)} people "
            f"kept, {directory.excluded} excluded by filters, {plural(len(warnings), 'warning')}"
            # Worth a look, so shown, by kind: 35 blank names are one line with a count.
            + (":" + _bullets(group_problems(warnings)) if warnings else ""),
            warning=bool(warnings),
            fix="fix these rows in HR if they are wrong" if warnings else None,
        )
    ]
    checks.extend(
        Check(
            "pages",
            True,
            note,
            warning=True,
            fix=(
                "set [source.pagination] as the API documents its paging, if it pages "
                "(else source.single_page = true)"
            ),
        )
        for note in export.notes
    )
    checks.extend(_join(report) for report in export.joins)
    checks.extend(
        Check(f"field {report.field}", True, report.line() + " (first non-empty wins)")
        for report in export.precedence
    )
    checks.extend(
        _source(part, count) for part, count in zip(export.parts, export.sources, strict=True)
    )
    if directory.unknown_managers:
        checks.append(_unknown_managers(directory.unknown_managers))
    if settings.attributes.active:
        checks.append(_attributes(settings, directory.people))
    if directory.held:
        checks.append(_held(directory.held))
    try:
        team_map = map_teams(settings, export).team_map
    except InputRefused as exc:
        if exc.stage == "template":
            checks.append(Check("mapping", False, "; ".join(exc.problems), "fix [mapping]"))
        else:
            shown = capped(exc.problems, limit=5, sep="; ")
            checks.append(Check("mapping", False, shown, "fix [mapping] or the export"))
        return checks
    checks.append(
        Check(
            "mapping", True, f"{plural(len(team_map.teams), 'team')} ({settings.mapping.strategy})"
        )
    )
    if team_map.leads_left:
        checks.append(_leads_left(team_map.leads_left))
    if team_map.unplaced:
        checks.append(_unplaced(team_map.unplaced))
    if team_map.leads_without_reports:
        checks.append(_weak_leads(team_map.leads_without_reports))
    return checks


def _join(report: JoinReport) -> Check:
    """One `[[source.join]]`: the table read, how much of the export it matched, and the
    first rows that matched no row, or several."""
    detail = (
        f"{report.table}: {plural(report.table_rows, 'row')} read; {report.matched} of "
        f"{report.rows} rows of the export matched on {report.on}"
    )
    if report.unmatched_count:
        held = " (held when kept)" if report.match == "one" else ""
        examples = capped(
            (f"{u.location} ({u.key!r})" for u in report.unmatched),
            total=report.unmatched_count,
        )
        detail += f"; {report.unmatched_count} matched no row{held}: {examples}"
    if report.several_count:
        examples = capped(
            (f"{u.location} ({u.key!r})" for u in report.several), total=report.several_count
        )
        detail += f"; {report.several_count} matched several rows (held when kept): {examples}"
    trouble = report.several_count or (report.unmatched_count and report.match == "one")
    return Check(
        f"join {report.name}",
        True,
        detail,
        warning=bool(report.unmatched_count or report.several_count),
        fix=f"fix those rows, or {report.table}" if trouble else None,
    )


def _source(part: Part, count: TableCount) -> Check:
    """One source of the org, with `[[source.union]]`: its rows read and people kept."""
    ids = f"; its ids read as {part.prefix}ID" if part.prefix else "; its ids as written"
    attached = f", its people without a manager under {part.attach_root_to}"
    return Check(
        f"source {part.name}" if part.prefix else "source",
        True,
        f"{part.export}: {plural(count.rows, 'row')} read, {count.kept} people kept{ids}"
        + (attached if part.attach_root_to else ""),
    )


def _bullets(items: Sequence[object]) -> str:
    """The first LIMIT items as indented bullet lines, then how many more."""
    lines = "".join(f"\n       - {item}" for item in items[:LIMIT])
    if len(items) > LIMIT:
        lines += f"\n       and {len(items) - LIMIT} more"
    return lines


def _listing(
    name: str, heading: str, items: Sequence[object], fix: str, needs_person: int = 0
) -> Check:
    """A warning, not a failure: `heading`, then the items as bullets (`_bullets`)."""
    return Check(
        name,
        True,
        f"{heading}:{_bullets(items)}",
        warning=True,
        fix=fix,
        needs_person=needs_person,
    )


def _held(held: Sequence[HeldPerson]) -> Check:
    # Not a failure (everyone else syncs), but each needs their row fixed in HR.
    return _listing(
        "held people",
        f"{len(held)} held for a problem of their own row; DX keeps what it last "
        "verifiably had for them",
        [f"{p.shown}, {p.location}: {p.detail_shown}" for p in held],
        fix="fix their rows in HR; `hrsync explain PERSON` says where DX keeps each",
    )


def _unplaced(unplaced: Sequence[Unplaced]) -> Check:
    # Not a failure (a contractor without a manager is normal), never silence either:
    # anyone not meant to be in no team is counted as needing a person.
    needing = sum(1 for u in unplaced if u.needs_person)
    need = f" ({needing} need a person)" if needing else ""
    return _listing(
        "people in no team",
        f"{len(unplaced)} kept from the export, neither lead nor member of a team{need}",
        unplaced,
        fix="give them a manager (or reports) in HR, or filter them out if intended",
        needs_person=needing,
    )


def _leads_left(gone: Sequence[LeadLeft]) -> Check:
    # Not a failure: the team stays, a stand-in leads it, until HR re-points its people.
    return _listing(
        "managers who left",
        f"{plural(len(gone), 'manager')} gone from the export or filtered out while people "
        "still name them",
        gone,
        fix="in HR, give their people their new manager (`hrsync explain PERSON` tells each)",
    )


def _weak_leads(weak: Sequence[LeadWithoutReports]) -> Check:
    return _listing(
        "department leads",
        f"{len(weak)} units led by someone without reports",
        weak,
        fix="set source.fields.department_lead to name each unit's lead",
    )


def _unknown_managers(unknown: Sequence[UnknownManager]) -> Check:
    # Accepted by source.unknown_manager = "top", but never silently: who, and how many.
    people = sum(u.reports for u in unknown)
    whom = "it" if len(unknown) == 1 else "them"
    naming = (
        f"the person naming {whom} is" if people == 1 else f"the {people} people naming {whom} are"
    )
    shown = capped(
        f"{u.field} {u.value!r} ({u.reports} from {u.first})"
        for u in sorted(unknown, key=lambda u: (-u.reports, u.value))
    )
    return Check(
        "managers",
        True,
        f"{plural(len(unknown), 'manager')} not in the export; {naming} top "
        f'of the org (source.unknown_manager = "top"): {shown}',
        warning=True,
    )


def _attributes(settings: Settings, people: tuple[Person, ...]) -> Check:
    sources = compile_sources(settings.attributes.entries)
    problems = column_problems(sources, export_columns(people))
    if problems:
        return Check(
            "attributes",
            False,
            capped(problems, limit=5, sep="; "),
            "fix [attributes] or the export; a sync would refuse the attribute step",
        )
    names = capped(repr(source.name) for source in sources)
    return Check(
        "attributes",
        True,
        f"{names} read from the export; the token needs users:write (only a real sync "
        "uses it: no probe call)",
    )


def simulator_check(url: str) -> Check | None:
    """None when the bundled simulator answers at `url`; else a failed check saying what
    does. Another local service's 401 is not DX refusing the token."""
    found = not_the_simulator(url)
    if found is None:
        return None
    return Check(
        "dx",
        False,
        f"dx.base_url {url} is the bundled simulator's address, but {found}",
        "start `hrsync simulator --rehearse CONFIG` (or --users-from EXPORT) first, "
        "or set dx.base_url to your DX account's Web API URL",
    )


def _dx(settings: Settings, client: DxClient, now: datetime) -> list[Check]:
    checks: list[Check] = []
    url = settings.dx.base_url
    if at_simulator_address(url) and (wrong := simulator_check(url)) is not None:
        return [wrong]
    try:
        who = client.whoami()
    except DxAuthError as exc:
        return [Check("token", False, str(exc), "set a valid token in $HRSYNC_DX_TOKEN")]
    except DxError as exc:
        return [Check("dx", False, str(exc), f"is dx.base_url {settings.dx.base_url} right?")]
    if who.auth_token_type == "account_web_api_token":
        checks.append(Check("token", True, f"organization token for {who.account_name}"))
    else:
        user = who.user.email if who.user else "unknown user"
        checks.append(
            Check(
                "token",
                True,
                f"personal access token of {user} ({who.account_name})",
                warning=True,
                fix="an organization token is recommended for a daemon",
            )
        )
    try:
        snapshots = client.snapshots()
        teams = client.teams()
    except DxAuthError as exc:
        checks.append(Check("scopes", False, str(exc), "give the token the snapshots:read scope"))
        return checks
    except DxError as exc:
        checks.append(Check("scopes", False, str(exc)))
        return checks
    unreferenced = sum(1 for t in teams if not t.reference_id)
    detail = f"snapshots:read works; DX has {plural(len(teams), 'team')}"
    if unreferenced:
        detail += f" ({unreferenced} without reference_id, created in the web app?)"
    checks.append(
        Check(
            "scopes",
            True,
            detail + "; snapshots:admin is only checked by a real sync (no probe call)",
        )
    )
    deferral = check_snapshots(snapshots, now, settings.sync.retro_window_days)
    if deferral is None:
        checks.append(Check("snapshot window", True, "no snapshot live or in its window"))
    else:
        checks.append(
            Check(
                "snapshot window",
                True,
                f"syncs defer until {deferral.resume_at.isoformat()}: {deferral.reason}",
                warning=True,
            )
        )
    return checks


def render(checks: list[Check]) -> str:
    lines = []
    for check in checks:
        mark = "FAIL" if not check.ok else ("WARN" if check.warning else "ok")
        line = f"[{mark:>4}] {check.name}: {check.detail}"
        if check.fix and (not check.ok or check.warning):
            line += f"\n       -> {check.fix}"
        lines.append(line)
    failed = [c for c in checks if not c.ok]
    lines.append("")
    verdict = "ready" if not failed else f"not ready: {plural(len(failed), 'check')} failed"
    needing = sum(c.needs_person for c in checks)
    if needing:
        # Ready to run, but not silently: they are lost to DX until someone acts.
        verdict += f"; {plural(needing, 'person')} in no team need a person"
    lines.append(verdict)
    return "\n".join(lines)
