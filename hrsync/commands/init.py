"""`hrsync init --from EXPORT`: read an export, guess a config, write it commented.

The guessing is `hrsync.core.starter.guess_fields` (pure) and the file
`hrsync.core.starter.starter_config`; here only the reading (the export through
`open_export`, as a run reads it), the writing, and what is printed. No network: EXPORT
is a file, an API's answer saved to one included.

Like `npm init` or `terraform init`, it writes the file (`hrsync.toml` by default) and
prints what it decided; `--out -` prints the config on stdout instead (the decisions then
go to stderr). An existing file is never overwritten without `--force`.
"""

from __future__ import annotations

import argparse
import dataclasses
import io
import os
import sys
from pathlib import Path
from typing import TextIO

from hrsync import logs
from hrsync.commands.output import show, unwritable_output
from hrsync.config.loading import DEFAULT_CONFIG, ConfigError, load_settings
from hrsync.core.settings import SourceSettings
from hrsync.core.starter.guess_fields import (
    FIELD_ORDER,
    Column,
    Proposal,
    RecordsGuess,
    columns_of,
    find_records,
    next_page,
    propose,
)
from hrsync.core.starter.starter_config import StarterSource, render, todo_value
from hrsync.core.text import plural
from hrsync.outcome import EXIT_OK, EXIT_USAGE
from hrsync.sources.base import Payload, SourceError, first_bytes
from hrsync.sources.json_pages import outline
from hrsync.sources.json_reader import parse_json
from hrsync.sources.open import open_export

DEFAULT_OUT = Path("hrsync.toml")
# Records of a JSON export held to guess from: the first half of them and a spread of the
# rest (a 50,000-person export of 45 fields a worker would take 300 MB whole).
SAMPLE = 10_000
_CSV_SUFFIXES = (".csv", ".tsv", ".txt")


def init(args: argparse.Namespace) -> int:
    export: Path = args.source
    to_stdout = str(args.out) == "-"
    out: Path = DEFAULT_OUT if args.out is None else args.out
    unwritable = None if to_stdout else unwritable_output(out)
    if unwritable is not None:
        show(unwritable, file=sys.stderr)
        return EXIT_USAGE
    if not to_stdout and out.is_symlink():
        # Written through, even with --force, it would replace the file it points at.
        show(
            f"hrsync: {out} is a symbolic link; hrsync init writes a new file only: name "
            "the config file itself with --out",
            file=sys.stderr,
        )
        return EXIT_USAGE
    if not to_stdout and out.exists() and not args.force:
        show(
            f"hrsync: {out} exists; hrsync init never overwrites a config: pass --force, or "
            "--out ANOTHER.toml",
            file=sys.stderr,
        )
        return EXIT_USAGE
    # The reader's own events (source.opened) are not what a person asked for here.
    logs.configure(args.log_format or "auto", args.log_level or "warning", sys.stderr)
    try:
        fmt, records, paged = _locate(export, args.encoding)
        columns, sampled_from = _read(export, records, args.encoding)
    except SourceError as exc:
        hint = " (hrsync init: pass --encoding)" if "source.encoding" in str(exc) else ""
        show(f"hrsync: cannot read the export: {exc}{hint}", file=sys.stderr)
        return EXIT_USAGE
    proposal = propose(columns, sampled_from=sampled_from)
    if paged is not None:
        proposal = dataclasses.replace(proposal, notes=(*proposal.notes, paged))
    folder = Path.cwd() if to_stdout else out.absolute().parent
    source = StarterSource(
        path=_as_written(export, folder),
        shown=str(export),
        format=fmt,
        records=records,
        encoding=args.encoding,
    )
    text = render(proposal, source)
    report = sys.stderr if to_stdout else sys.stdout
    _tell(proposal, export, fmt, len(columns), records, report)
    if to_stdout:
        sys.stdout.write(text)
        return EXIT_OK
    out.write_text(text, encoding="utf-8")
    show(f"\nWrote {out}.", file=report)
    _next_steps(out, report)
    return EXIT_OK


def guess_reading(
    export: Path, source: SourceSettings, *, encoding: str = "utf-8"
) -> tuple[SourceSettings, Proposal, str]:
    """`source` reading `export` as `hrsync init` would configure it (format, where a JSON
    document keeps its people, the fields), the proposal, and the guesses as init prints
    them. For a command given an export and no config (`simulator --users-from`)."""
    fmt, records, _ = _locate(export, encoding)  # fmt: "csv" or "json", by records
    columns, sampled_from = _read(export, records, encoding)
    proposal = propose(columns, sampled_from=sampled_from)
    report = io.StringIO()
    _tell(proposal, export, fmt, len(columns), records, report)
    # A field init leaves a TODO keeps hrsync's default: the read then names it missing.
    guessed = {n: v for n in FIELD_ORDER if (v := proposal.field(n)) or _decided(proposal, n)}
    fields = dataclasses.replace(source.fields, **guessed)
    reading = dataclasses.replace(
        source,
        path=export,
        url=None,
        format="json" if records is not None else "csv",
        encoding=encoding,
        records_path=records.path if records is not None else "",
        fields=fields,
    )
    return reading, proposal, report.getvalue()


def _decided(proposal: Proposal, name: str) -> bool:
    """Whether init decided the field (blank included), rather than leaving a TODO."""
    key = f"source.fields.{name}"
    return any(g.key == key for g in proposal.fields) and all(t.key != key for t in proposal.todos)


def _as_written(export: Path, folder: Path) -> str:
    """The export as the config names it: relative when it lies under the config's folder
    (the two move together), else absolute (``../../..`` breaks when either moves)."""
    whole = Path(os.path.abspath(export))
    try:
        return str(whole.relative_to(os.path.abspath(folder)))
    except ValueError:
        return str(whole)


def _locate(export: Path, encoding: str) -> tuple[str, RecordsGuess | None, str | None]:
    """The export's format, for JSON where its list of people is, and whether the file is
    one page of an API's answer."""
    payload = Payload.from_path(export)
    suffix = export.suffix.lower()
    start = first_bytes(payload).lstrip(b"\xef\xbb\xbf \t\r\n")[:1]
    if suffix in _CSV_SUFFIXES or (suffix != ".json" and start not in (b"[", b"{")):
        return "csv", None, None
    # The document is read here only to find its list (its lists' items past the first
    # few left empty); the records are read by open_export below, as a run reads them.
    document = outline(payload, encoding)
    if document is None:
        document = parse_json(payload, encoding)  # which says what is wrong
    records = find_records(document)
    if records is None:
        raise SourceError(f"{export.name} holds no list of records (objects) to read people from")
    return "json", records, next_page(document)


def _read(export: Path, records: RecordsGuess | None, encoding: str) -> tuple[list[Column], int]:
    """The export's columns, and the records read when they hold a sample of them (0:
    every record): a JSON export of more than `SAMPLE` records is guessed from a sample."""
    settings = SourceSettings(
        path=export,
        encoding=encoding,
        format="json" if records else "csv",
        records_path=records.path if records else "",
    )
    opened = open_export(settings, sample=SAMPLE)
    return columns_of(opened.columns, opened.table()), opened.sampled_from


def _tell(
    proposal: Proposal,
    export: Path,
    fmt: str,
    columns: int,
    records: RecordsGuess | None,
    report: TextIO,
) -> None:
    def say(text: str = "") -> None:
        show(text, file=report)

    say(
        f"hrsync init: {export} ({fmt}, {plural(proposal.records, 'record')}, "
        f"{plural(columns, 'column')})"
        if not proposal.sampled_from
        else f"hrsync init: {export} ({fmt}, {proposal.sampled_from:,} records, "
        f"{plural(columns, 'column')}; guessed from a sample of {proposal.records:,}: the "
        f"first {proposal.records // 2:,} and a spread of the rest)"
    )
    if records is not None:
        say(f'  records_path = "{records.path}"  <- {records.evidence}')
    for guess in proposal.fields:
        if guess.value or guess.evidence:
            say(f'  {guess.key} = "{guess.value}"  <- {guess.evidence}')
    say(f'  mapping.strategy = "{proposal.strategy.value}"  <- {proposal.strategy.evidence}')
    if proposal.active_status is not None:
        kept = ", ".join(f'"{v}"' for v in proposal.kept_statuses)
        say(f"  filter.active_status = [{kept}]  <- {proposal.active_status.evidence}")
    for note in proposal.notes:
        say(f"  note: {note}")
    for todo in proposal.todos:
        say(f'  TODO {todo.key} = "{todo_value(todo)}": {todo.why}')


def _next_steps(out: Path, report: TextIO) -> None:
    """What the written file still needs, as `hrsync check` will say it (the file is
    loaded here as a run would load it, without a token or DX)."""
    try:
        load_settings(out, {}, require_token=False, require_dx=False)
    except ConfigError as exc:
        others = [p for p in exc.problems if "TODO" not in p]
        todos = len(exc.problems) - len(others)
        if todos:
            show(
                f"Replace the {plural(todos, 'TODO value')} in {out}; until then hrsync "
                "refuses it.",
                file=report,
            )
        for problem in others:
            show(f"  config: {problem}", file=report)
    # In the folder of ./hrsync.toml every command finds it: no --config to type.
    here = out.resolve() == (Path.cwd() / DEFAULT_CONFIG).resolve()
    command = "hrsync check" if here else f"hrsync --config {out} check"
    show(
        f"Next: {command}   (with HRSYNC_DX_TOKEN set; the config points "
        "at the bundled simulator until you change dx.base_url)",
        file=report,
    )
