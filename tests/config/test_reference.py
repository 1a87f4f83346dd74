"""The configuration's documents are generated from the settings and say the same; the
set of keys stays small, and every key is read by the code."""

from __future__ import annotations

import dataclasses
import json
import re
import subprocess
import sys
import tomllib
from pathlib import Path

import jsonschema
import pytest

from hrsync.config import reference
from hrsync.config.loading import load_settings
from hrsync.core.settings import Settings, is_key

ROOT = Path(__file__).resolve().parents[2]
TOKEN = {"HRSYNC_DX_TOKEN": "tok-1234567890"}
# A key is a decision a user must make: the reference lists at most this many.
MAX_KEYS = 85


@pytest.mark.parametrize("path", sorted(reference.documents()), ids=str)
def test_each_generated_document_is_what_the_settings_make(path: Path) -> None:
    committed = (ROOT / path).read_text(encoding="utf-8")
    made = reference.documents()[path]
    assert committed == made, (
        f"{path} differs from what hrsync/core/settings.py makes: run "
        f"`{reference.COMMAND}` and commit the result"
    )


def test_the_check_command_names_the_stale_document_and_the_fix(tmp_path: Path) -> None:
    for path, text in reference.documents().items():
        (tmp_path / path).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / path).write_text(text, encoding="utf-8")
    assert reference.stale(tmp_path) == []
    (tmp_path / reference.EXAMPLE).write_text("# edited by hand\n", encoding="utf-8")
    assert reference.stale(tmp_path) == [reference.EXAMPLE]
    done = subprocess.run(
        [sys.executable, "-m", "hrsync.config.reference", "--check"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stderr


def test_the_reference_lists_at_most_85_keys() -> None:
    keys = [key.dotted for key in reference.counted_keys()]
    assert len(keys) <= MAX_KEYS, keys
    page = (ROOT / reference.REFERENCE).read_text(encoding="utf-8")
    # Each key is one row of a key table (key, type, default, what it decides).
    rows = re.findall(r"^\| `[a-z_0-9]+` \| [^|]+ \| [^|]+ \| ", page, re.M)
    assert len(rows) == len(reference.all_keys())


# Read where the loader builds them, not by a name: sections and sub-tables.
_TABLES = {"pagination", "oauth2", "google_service_account", "fields", "join", "union"}


def _code() -> str:
    skip = {"settings.py", "loading.py", "reference.py", "deprecated.py"}
    return "\n".join(
        path.read_text(encoding="utf-8")
        for path in (ROOT / "hrsync").rglob("*.py")
        if path.name not in skip
    )


CODE = _code()


@pytest.mark.parametrize("key", [key.dotted for key in reference.all_keys()])
def test_each_key_is_read_by_the_code(key: str) -> None:
    name = key.rsplit(".", 1)[1]
    # An attribute read (`settings.sync.max_held`, `paging.style`) or a getattr by name.
    read = re.search(rf"\.{name}\b|getattr\([^)]*[\"']{name}[\"']", CODE)
    assert read, f"{key} is documented but nothing outside the settings reads it"


def test_every_section_and_table_is_a_documented_table() -> None:
    sections = [f.name for f in dataclasses.fields(Settings) if is_key(f.metadata)]
    shown = [table for table, _ in reference.tables()]
    assert set(sections) <= set(shown)
    assert {f"source.{name}" for name in _TABLES} <= set(shown)


def test_the_example_file_loads_and_names_its_schema() -> None:
    example = ROOT / reference.EXAMPLE
    first = example.read_text(encoding="utf-8").splitlines()[0]
    assert first == "#:schema ./hrsync.schema.json"
    settings = load_settings(example, TOKEN)
    assert settings.deprecations == ()
    assert settings.source.fields.employee_id == "Employee ID"


def _schema_errors(document: object) -> list[str]:
    schema = json.loads((ROOT / reference.SCHEMA).read_text(encoding="utf-8"))
    validator = jsonschema.Draft7Validator(schema)
    return [error.message for error in validator.iter_errors(document)]


def test_the_schema_takes_the_example_and_each_recipe() -> None:
    for path in [ROOT / reference.EXAMPLE, *sorted((ROOT / "config" / "recipes").glob("*.toml"))]:
        document = tomllib.loads(path.read_text(encoding="utf-8"))
        assert _schema_errors(document) == [], path


def test_the_schema_marks_a_misspelt_key_and_a_wrong_type() -> None:
    errors = _schema_errors({"sync": {"max_archives": 3, "max_archive": "ten"}})
    assert any("max_archives" in e for e in errors), errors
    assert any("'ten' is not of type 'integer'" in e for e in errors), errors


def test_the_schema_knows_each_deprecated_key_as_deprecated() -> None:
    schema = json.loads((ROOT / reference.SCHEMA).read_text(encoding="utf-8"))
    for old in reference.DEPRECATED:
        node = schema
        for part in old.key.split("."):
            node = node["properties"][part]
        assert node["deprecated"] is True and old.instead in node["description"]
