"""Problems of people's own rows, in-process against the simulator and through the real
store (SQLite and PostgreSQL): each is held and named, and none crashes a run."""

from __future__ import annotations

import csv
import dataclasses
import json
import random
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from structlog.testing import capture_logs

from hrsync.commands.demo import CONFIG
from hrsync.config.loading import Settings, load_settings
from hrsync.core.export.rows import MAX_FIELD_CHARS
from hrsync.resources import shipped_dir
from hrsync.simulator.scenario import load_scenario
from hrsync.simulator.server import RunningSimulator
from hrsync.store.repo import Store
from hrsync.sync.results import SyncRequest, SyncResult
from hrsync.sync.story import run_sync
from tests.simulating import start_simulator

SAMPLES = shipped_dir("config")


@pytest.fixture(scope="module")
def sim() -> Iterator[RunningSimulator]:
    scenario = dataclasses.replace(
        load_scenario(SAMPLES / "demo-scenario.json"), import_delay_s=0.05
    )
    with start_simulator(scenario) as running:
        yield running


def sample_rows() -> list[dict[str, str]]:
    with (SAMPLES / "sample-org.csv").open(encoding="utf-8", newline="") as fh:
        return list(csv.DictReader(fh))


def write_csv(path: Path, rows: list[dict[str, str]]) -> None:
    with path.open("w", encoding="utf-8", newline="") as fh:
        writer = csv.DictWriter(fh, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)


def settings_for(
    folder: Path,
    sim: RunningSimulator,
    database_url: str,
    export: Path,
    edits: dict[str, str] | None = None,
) -> Settings:
    """The demo's configuration on `database_url`, with `edits` (text replaced)."""
    config = folder / "hrsync.toml"
    text = CONFIG.format(base_url=sim.base_url, export=export, db="unused")
    edits = {
        'database_url = "sqlite:///unused"': f'database_url = "{database_url}"',
        **(edits or {}),
    }
    for old, new in edits.items():
        assert old in text, old
        text = text.replace(old, new)
    config.write_text(text, encoding="utf-8")
    return load_settings(config, {"HRSYNC_DX_TOKEN": "demo-org-token"})


def sync_once(settings: Settings) -> SyncResult:
    store = Store.open(settings.state.database_url)
    try:
        return run_sync(settings, SyncRequest(), store=store)
    finally:
        store.close()


def test_two_rows_with_one_employee_id_are_held_not_a_crash(
    tmp_path: Path, sim: RunningSimulator, database_url: str
) -> None:
    rows = sample_rows()
    twin = {**rows[20], "Full Name": "Sam Twin", "Work Email": "sam.twin@example.com"}
    rows.append(twin)
    export = tmp_path / "people.csv"
    write_csv(export, rows)
    settings = settings_for(tmp_path, sim, database_url, export)
    first = sync_once(settings)
    assert first.exit_code == 0, first.reason
    held = {h.person.location for h in first.held}
    # The sample's 21st row is on line 22 (after the header), the twin on the last line.
    twin_line = f"line {len(rows) + 1}"
    assert held == {"people.csv line 22", f"people.csv {twin_line}"}
    store = Store.open(settings.state.database_url)
    try:
        (record,) = store.people.held_people().values()
    finally:
        store.close()
    assert record.person == twin["Employee ID"]
    assert "line 22" in record.location and twin_line in record.location
    # The next run, the same export: still held, still no crash.
    again = sync_once(settings)
    assert again.exit_code == 0, again.reason
    assert len(again.held) == 2


# ---------------------------------------------------------------- any mix of bad rows

# One kind of problem per generated row, each a person's own: held (exit 0) or, past the
# held guard or for a lead nobody can stand in for, refused (exit 4); never a crash.
BAD_KINDS = (
    "duplicate_id",
    "duplicate_email",
    "empty_email",
    "malformed_email",
    "object_email",
    "list_email",
    "number_email",
    "boolean_name",
    "unknown_manager",
    "cycle",
    "over_long_name",
)


def bad_records(kinds: list[str], base: list[dict[str, object]]) -> list[dict[str, object]]:
    """One or two records per kind (a cycle is two people), every one of them wrong."""
    records: list[dict[str, object]] = []
    for n, kind in enumerate(kinds):
        eid = f"X{n:03d}"
        good: dict[str, object] = {
            "id": eid,
            "name": f"Bad Row {n}",
            "email": f"bad.row.{n}@example.com",
            "manager": "E010",
            "department": "Platform",
            "status": "Active",
        }
        other = base[(n * 7) % len(base)]
        if kind == "duplicate_id":
            good["id"] = other["id"]
        elif kind == "duplicate_email":
            good["email"] = other["email"]
        elif kind == "empty_email":
            good["email"] = ""
        elif kind == "malformed_email":
            good["email"] = f"bad.row.{n}.example.com"
        elif kind == "object_email":
            good["email"] = {"primary": f"bad.row.{n}@example.com"}
        elif kind == "list_email":
            good["email"] = [{"primary": f"a{n}@example.com"}, {"primary": f"b{n}@example.com"}]
        elif kind == "number_email":
            good["email"] = 1000 + n
        elif kind == "boolean_name":
            good["name"] = True
        elif kind == "unknown_manager":
            good["manager"] = f"NOBODY{n}"
        elif kind == "over_long_name":
            good["name"] = "N" * (MAX_FIELD_CHARS + 10)
        elif kind == "cycle":
            good["manager"] = f"{eid}B"
            records.append({**good, "id": f"{eid}B", "email": f"b.{n}@example.com", "manager": eid})
        records.append(good)
    return records


WRONG_TYPES = {
    "object_email": "email is an object, expected text",
    "list_email": "email is a list, expected text",
    "number_email": "email is a number, expected text",
    "boolean_name": "name is a boolean, expected text",
}

# The demo's columns as the JSON export names them; a held share a small org can reach.
JSON_CONFIG = {
    '"Employee ID"': '"id"',
    '"Full Name"': '"name"',
    '"Work Email"': '"email"',
    '"Manager ID"': '"manager"',
    '"Department"': '"department"',
    '"Status"': '"status"',
    "[sync]\n": "[sync]\nmax_held_fraction = 0.5\n",
}


@pytest.fixture(scope="module")
def base_people() -> list[dict[str, object]]:
    return [
        {
            "id": row["Employee ID"],
            "name": row["Full Name"],
            "email": row["Work Email"],
            "manager": row["Manager ID"],
            "department": row["Department"],
            "status": row["Status"],
        }
        for row in sample_rows()
    ]


@settings(
    max_examples=15,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(
    kinds=st.lists(st.sampled_from(BAD_KINDS), min_size=1, max_size=4),
    shuffle=st.randoms(use_true_random=False),
)
def test_any_mix_of_bad_rows_is_held_or_refused_naming_each_row_never_a_crash(
    tmp_path: Path,
    sim: RunningSimulator,
    database_url: str,
    base_people: list[dict[str, object]],
    kinds: list[str],
    shuffle: random.Random,
) -> None:
    records = [*base_people, *bad_records(kinds, base_people)]
    shuffle.shuffle(records)
    export = tmp_path / "people.json"
    export.write_text(json.dumps(records), encoding="utf-8")
    config = settings_for(tmp_path, sim, database_url, export, JSON_CONFIG)
    with capture_logs() as logs:
        result = sync_once(config)
    told = "\n".join(
        [
            result.reason or "",
            result.report,
            *result.problems,
            *(f"{h.person.location}: {h.person.detail}" for h in result.held),
            *map(str, logs),
        ]
    )
    assert "Traceback" not in told
    assert not [e for e in logs if e["event"].endswith(".crashed")], told[-3000:]
    assert result.exit_code in (0, 4), told[-3000:]
    # A value of the wrong type is named as what it is.
    for kind, said in WRONG_TYPES.items():
        if kind in kinds:
            assert said in told, (kind, told[-3000:])
    bad_ids = {str(r["id"]) for r in bad_records(kinds, base_people)}
    for position, record in enumerate(records):
        if str(record["id"]) in bad_ids and record not in base_people:
            assert f"people.json [{position}]" in told, (record["id"], told[-3000:])
