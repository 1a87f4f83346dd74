"""`read_export` over several sources, read from files as a run reads them (issue 26):
the acquisition recipe with precedence lists in the primary's fields and the union's."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from hrsync.config.loading import load_settings
from hrsync.sync.reading import InputRefused, read_export

ROOT = Path(__file__).resolve().parents[2]
RECIPE = ROOT / "config" / "recipes" / "acquisition.toml"
FIXTURES = ROOT / "tests" / "fixtures" / "acquisition"


def workspace(tmp_path: Path, recipe: str) -> Path:
    for name in ("workday.csv", "acquired.json"):
        shutil.copy(FIXTURES / name, tmp_path / name)
    config = tmp_path / "hrsync.toml"
    config.write_text(recipe + '\n[dx]\nbase_url = "https://api.getdx.com"\n', encoding="utf-8")
    return config


def with_home_emails(tmp_path: Path, blank: set[str]) -> None:
    """The acquired export with a home e-mail for everyone and no work e-mail for `blank`."""
    path = tmp_path / "acquired.json"
    document = json.loads(path.read_text(encoding="utf-8"))
    for person in document["employees"]:
        person["homeEmail"] = f"home.{person['id']}@acquired.example"
        if person["id"] in blank:
            person["workEmail"] = None
    path.write_text(json.dumps(document), encoding="utf-8")


def test_a_unions_own_list_ranks_its_columns(tmp_path: Path) -> None:
    recipe = RECIPE.read_text(encoding="utf-8").replace(
        'email = "workEmail"', 'email = ["workEmail", "acq.homeEmail"]'
    )
    config = workspace(tmp_path, recipe)
    with_home_emails(tmp_path, blank={"8"})
    export = read_export(load_settings(config, {}, require_token=False))
    emails = {p.employee_id: p.email for p in export.directory.people}
    assert emails["acq:7"] == "ada@acquired.example"  # the work e-mail first
    assert emails["acq:8"] == "home.8@acquired.example"  # none: the home e-mail
    assert emails["1"] == "pat.parent@parent.example"  # the primary reads its own column


def test_a_unions_list_naming_no_column_refuses_naming_the_union(tmp_path: Path) -> None:
    recipe = RECIPE.read_text(encoding="utf-8").replace(
        'email = "workEmail"', 'email = ["workEmail", "homeEmial"]'
    )
    config = workspace(tmp_path, recipe)
    with_home_emails(tmp_path, blank=set())
    with pytest.raises(InputRefused) as refused:
        read_export(load_settings(config, {}, require_token=False))
    [problem] = refused.value.problems
    assert problem.startswith("source.union[acq].fields.email entry 2 'homeEmial' is not a")
    assert "did you mean 'homeEmail'?" in problem


def test_the_primarys_list_and_a_union_merge(tmp_path: Path) -> None:
    recipe = RECIPE.read_text(encoding="utf-8").replace(
        'name = "Legal_Name"', 'name = ["Preferred_Name", "Legal_Name"]'
    )
    config = workspace(tmp_path, recipe)
    csv_path = tmp_path / "workday.csv"
    lines = csv_path.read_text(encoding="utf-8").splitlines()
    lines[0] += ",Preferred_Name"
    lines[1:] = [line + (",Patty" if line.startswith("1,") else ",") for line in lines[1:]]
    csv_path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    export = read_export(load_settings(config, {}, require_token=False))
    names = {p.employee_id: p.name for p in export.directory.people}
    assert names["1"] == "Patty" and names["2"] == "Ravi Rao"
    assert names["acq:7"] == "Ada Acquired"
    [listed] = export.precedence
    assert (listed.field, listed.sources[0].won) == ("name", 1)
