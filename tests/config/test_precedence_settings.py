"""`[source.fields]` entries written as a list of columns, the first non-empty of which
wins (issue 26): how the config reads them, and what it refuses."""

from __future__ import annotations

from pathlib import Path

import pytest

from hrsync.config.loading import ConfigError, load_settings

BASE = """
[dx]
base_url = "https://api.getdx.com"
[source]
path = "people.csv"
{source}
[source.fields]
employee_id = "ID"
{fields}
{joins}
"""
ENTRA = """
[[source.join]]
name = "entra"
path = "entra.json"
on = { ID = "employeeId" }
match = "optional"
"""


def load(tmp_path: Path, fields: str, source: str = "", joins: str = ENTRA):  # type: ignore[no-untyped-def]
    cfg = tmp_path / "c.toml"
    cfg.write_text(BASE.format(fields=fields, source=source, joins=joins))
    return load_settings(cfg, {}, require_token=False)


def problems(tmp_path: Path, fields: str, source: str = "", joins: str = ENTRA) -> list[str]:
    with pytest.raises(ConfigError) as caught:
        load(tmp_path, fields, source, joins)
    return caught.value.problems


def test_a_list_is_kept_by_field_and_the_field_names_its_column(tmp_path: Path) -> None:
    settings = load(
        tmp_path,
        'email = ["entra.mail", "workday.Work_Email"]\nname = ["entra.displayName", "Name"]',
        source='name = "workday"',
    )
    src = settings.source
    assert src.first_of == {
        "email": ("entra.mail", "workday.Work_Email"),
        "name": ("entra.displayName", "Name"),
    }
    assert src.fields.email == "first of entra.mail, workday.Work_Email"
    assert src.fields.employee_id == "ID"  # a plain column stays one
    assert src.name == "workday"


@pytest.mark.parametrize(
    ("written", "expected"),
    [
        ("[]", "got an empty list"),
        ('["entra.mail", ""]', "got a list of 2 with 1 empty"),
        ('["entra.mail", 3]', "got a list of 2 with 1 not text"),
        ('["{First}.{Last}@example.com", "Work_Email"]', "lists columns, not templates"),
        ('["Work_Email", "Work_Email"]', "names a column twice"),
    ],
)
def test_a_list_that_is_no_list_of_columns_is_refused(
    tmp_path: Path, written: str, expected: str
) -> None:
    said = problems(tmp_path, f"email = {written}")
    assert any(p.startswith("source.fields.email ") and expected in p for p in said), said


def test_a_list_cannot_be_a_joins_key(tmp_path: Path) -> None:
    join = ENTRA.replace('on = { ID = "employeeId" }', 'on = { email = "mail" }')
    said = problems(tmp_path, 'email = ["Work_Email", "Home_Email"]', joins=join)
    assert any(
        "source.join[entra].on joins on the e-mail" in p and "list of columns" in p for p in said
    ), said


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ('"two words"', "source.name must be a word"),
        ('"entra"', "source.name 'entra' is also a join's name"),
    ],
)
def test_the_exports_name_is_one_word_and_no_joins(
    tmp_path: Path, name: str, expected: str
) -> None:
    said = problems(tmp_path, 'email = "Work_Email"', source=f"name = {name}")
    assert any(expected in p for p in said), said


def test_first_of_is_not_a_key_anyone_writes(tmp_path: Path) -> None:
    said = problems(tmp_path, 'email = "Work_Email"', source='first_of = { email = ["a"] }')
    assert any("source.first_of is not a known key" in p for p in said), said
