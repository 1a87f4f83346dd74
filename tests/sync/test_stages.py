"""The run's read and map stages, which `hrsync check` shares: what each refusal says."""

from __future__ import annotations

import csv
import dataclasses
import shutil
from pathlib import Path

import pytest

from hrsync.commands.demo import CONFIG
from hrsync.config.loading import Settings, load_settings
from hrsync.dx.client import DxClient
from hrsync.resources import shipped_dir
from hrsync.sync.stages import InputRefused, map_teams, read_export

SAMPLES = shipped_dir("config")


@pytest.fixture
def settings(tmp_path: Path) -> Settings:
    export = tmp_path / "people.csv"
    shutil.copy(SAMPLES / "sample-org.csv", export)
    config = tmp_path / "hrsync.toml"
    config.write_text(
        CONFIG.format(base_url="http://127.0.0.1:9", export=export, db=tmp_path / "state.db")
    )
    return load_settings(config, {"HRSYNC_DX_TOKEN": "t0ken-of-test"})


def _rows() -> list[dict[str, str]]:
    with (SAMPLES / "sample-org.csv").open(encoding="utf-8-sig", newline="") as fh:
        return list(csv.DictReader(fh))


def _write(settings: Settings, rows: list[dict[str, str]]) -> None:
    assert settings.source.path is not None
    with settings.source.path.open("w", newline="", encoding="utf-8") as fh:
        writer = csv.DictWriter(fh, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)


def test_a_good_export_reads_and_maps(settings: Settings) -> None:
    export = read_export(settings)
    assert len(export.directory.people) == 37 and export.source.endswith("people.csv")
    assert len(map_teams(settings, export).team_map.teams) == 13


def test_an_export_that_cannot_be_read_is_refused_at_the_source(settings: Settings) -> None:
    assert settings.source.path is not None
    settings.source.path.unlink()
    with pytest.raises(InputRefused) as refused:
        read_export(settings)
    assert refused.value.stage == "source" and refused.value.directory is None
    assert "people.csv" in refused.value.problems[0]


def test_rows_with_problems_are_refused_with_every_problem_and_the_people_read(
    settings: Settings,
) -> None:
    rows = _rows()
    rows[2]["Employee ID"] = rows[1]["Employee ID"]
    _write(settings, rows)
    # A duplicate id alone holds its rows; `max_held = 0` refuses them.
    strict = dataclasses.replace(settings, sync=dataclasses.replace(settings.sync, max_held=0))
    with pytest.raises(InputRefused) as refused:
        read_export(strict)
    assert refused.value.stage == "export"
    assert refused.value.source.endswith("people.csv")
    assert refused.value.directory is not None
    assert any("Employee ID" in p for p in refused.value.problems)


def test_a_team_name_template_the_people_do_not_fit_is_refused_by_the_mapping(
    settings: Settings,
) -> None:
    export = read_export(settings)
    bad = dataclasses.replace(
        settings, mapping=dataclasses.replace(settings.mapping, team_name="{lead_name|nosuch}")
    )
    with pytest.raises(InputRefused) as refused:
        map_teams(bad, export)
    assert refused.value.stage == "template" and refused.value.problems


def test_the_client_is_built_from_the_settings(settings: Settings) -> None:
    with DxClient.from_settings(settings) as client:
        assert client.base_url.startswith("http://127.0.0.1:9")
        assert "t0ken-of-test" not in repr(client)
    with pytest.raises(ValueError, match="token is missing"):
        DxClient.from_settings(dataclasses.replace(settings, token=None))


def test_the_held_guard_says_the_manager_column_holds_another_kind_of_id(
    settings: Settings,
) -> None:
    # Every manager given by an Okta-style user id: 36 people would be held. Holding them
    # (or making them top of the org) would sync a wrong org, so the first line says why.
    rows = _rows()
    for row in rows:
        if row["Manager ID"]:
            row["Manager ID"] = "00u" + row["Manager ID"].lower() + "x8a7"
    _write(settings, rows)
    with pytest.raises(InputRefused) as refused:
        read_export(settings)
    first = refused.value.problems[0]
    assert "would be held" in first
    assert "Manager ID" in first and "another kind of id" in first, first
    assert "beside the employee id 'E001'" in first
    assert all('unknown_manager = "top"' not in p for p in refused.value.problems)


def test_a_refusal_of_the_export_locates_its_problems_without_the_hr_values(
    settings: Settings,
) -> None:
    # What is stored as the run's reason, logged and sent to the webhook names the file,
    # the line and the column, as a held person's event does, never the value itself (the
    # CEO's e-mail on a second row, a value made to look like a link in a chat).
    rows = _rows()
    ceo = rows[0]["Work Email"]
    rows[3]["Work Email"] = ceo
    rows[5]["Full Name"] = "<https://evil.example/approve|Click to approve plan>"
    rows[5]["Work Email"] = "<https://evil.example/approve|Click>"
    _write(settings, rows)
    strict = dataclasses.replace(settings, sync=dataclasses.replace(settings.sync, max_held=0))
    with pytest.raises(InputRefused) as refused:
        read_export(strict)
    located = refused.value.located
    assert located, refused.value.problems
    assert any("Work Email" in line and "people.csv line" in line for line in located), located
    assert all(ceo not in line and "evil.example" not in line for line in located), located
    # The report for the person at the terminal still quotes what is wrong.
    assert any(ceo in p for p in refused.value.problems), refused.value.problems
