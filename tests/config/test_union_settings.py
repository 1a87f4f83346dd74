"""`[[source.union]]` in the config (issue 26): a union's export is described by the same
keys as `[source]`, its people by its own `[source.union.fields]`, and every problem names
the union and the key."""

from __future__ import annotations

from pathlib import Path

from hrsync.config.loading import ConfigError, Settings, load_settings

BASE = '[dx]\nbase_url = "https://api.getdx.com"\n[source]\npath = "people.csv"\n'
TOKEN = {"HRSYNC_DX_TOKEN": "tok-1234567890"}
UNION = '[[source.union]]\nname = "acq"\npath = "acquired.json"\n'


def load(tmp_path: Path, text: str, env: dict[str, str] | None = None) -> Settings:
    path = tmp_path / "hrsync.toml"
    path.write_text(BASE + text, encoding="utf-8")
    return load_settings(path, {**TOKEN, **(env or {})})


def problems(tmp_path: Path, text: str, env: dict[str, str] | None = None) -> list[str]:
    try:
        load(tmp_path, text, env)
    except ConfigError as exc:
        return exc.problems
    return []


def test_a_union_reads_its_export_with_the_source_keys_and_its_own_fields(
    tmp_path: Path,
) -> None:
    settings = load(
        tmp_path,
        UNION
        + 'records_path = "employees"\nattach_root_to = "E1001"\nnull_values = ["(none)"]\n'
        + '[source.union.fields]\nemployee_id = "id"\nemail = "workEmail"\n'
        + '[[source.union]]\nname = "beta"\nurl = "https://hr.beta.example/people"\n'
        + 'id_prefix = "B-"\nauth_header_env = "BETA_AUTH"\n'
        + '[source.union.pagination]\nstyle = "link_header"\n',
    )
    acq, beta = settings.source.union
    assert acq.name == "acq" and acq.prefix == "acq:" and acq.attach_root_to == "E1001"
    assert acq.table.path == tmp_path / "acquired.json"
    assert acq.table.records_path == "employees" and acq.table.null_values == ("(none)",)
    assert (acq.table.fields.employee_id, acq.table.fields.email) == ("id", "workEmail")
    assert acq.table.fields.name == "name"  # [source.fields]'s default
    assert beta.prefix == "B-" and beta.attach_root_to == ""
    assert beta.table.pagination.style == "link_header"
    assert settings.source.fields.employee_id == "employee_id"  # the primary's untouched


def test_no_union_is_no_union(tmp_path: Path) -> None:
    assert load(tmp_path, "").source.union == ()


def test_a_bad_name_is_named(tmp_path: Path) -> None:
    assert problems(tmp_path, '[[source.union]]\npath = "a.json"\n') == [
        'source.union[1].name must name the source (e.g. "acq"): its employee ids are read as '
        '"name:ID" unless id_prefix says otherwise'
    ]
    assert problems(tmp_path, '[[source.union]]\nname = "the acq"\npath = "a.json"\n') == [
        "source.union[1].name must be a word of letters, digits, _ and - (it names the source "
        "in messages and its ids' prefix), got 'the acq'"
    ]
    twice = problems(tmp_path, UNION + UNION.replace("acquired", "other"))
    assert any("source.union[acq] is declared twice" in p for p in twice), twice


def test_keys_a_union_cannot_have_are_named(tmp_path: Path) -> None:
    found = problems(
        tmp_path,
        UNION
        + 'unknown_manager = "top"\n'
        + '[[source.union.join]]\nname = "d"\npath = "d.csv"\non = { A = "A" }\n',
    )
    assert (
        "source.union[acq].unknown_manager is not allowed in a union: the primary export's "
        "source.unknown_manager applies to every person" in found
    )
    assert any(p.startswith("source.union[acq].join is not allowed in a union") for p in found)
    nested = problems(tmp_path, UNION + '[[source.union.union]]\nname = "x"\n')
    assert any(p.startswith("source.union[acq].union is not allowed in a union") for p in nested)
    typo = problems(tmp_path, UNION + 'atach_root_to = "1"\n')
    assert typo == [
        "source.union[acq].atach_root_to is not a known key; did you mean "
        "source.union[acq].attach_root_to?"
    ]


def test_attach_root_to_and_id_prefix_must_be_strings(tmp_path: Path) -> None:
    assert problems(tmp_path, UNION + "attach_root_to = 1001\n") == [
        "source.union[acq].attach_root_to must be a string: an employee id of the primary "
        'export, bare (e.g. "E1001"), got a number'
    ]
    assert problems(tmp_path, UNION + 'id_prefix = ""\n') == [
        "source.union[acq].id_prefix must not be empty: it keeps this source's employee ids "
        'apart from the primary export\'s (e.g. "acq:")'
    ]
    overlapping = UNION + 'id_prefix = "a"\n[[source.union]]\nname = "b"\npath = "b.json"\n'
    assert problems(tmp_path, overlapping + 'id_prefix = "ab"\n') == [
        "source.union[acq].id_prefix 'a' and source.union[b].id_prefix 'ab' overlap: one starts "
        "the other, so their ids could collide"
    ]


def test_the_source_rules_apply_to_a_unions_export_named_by_it(tmp_path: Path) -> None:
    assert problems(tmp_path, '[[source.union]]\nname = "acq"\n') == [
        "source.union[acq].path or source.union[acq].url is required: where the union's export "
        "is read"
    ]
    found = problems(
        tmp_path,
        '[[source.union]]\nname = "acq"\nurl = "http://hr.acq.example/people"\n'
        + 'format = "xml"\nheaders = { Authorization = "ACQ_AUTH" }\n'
        + '[source.union.fields]\nemail = ""\n',
    )
    assert any(p.startswith("source.union[acq].format must be one of") for p in found), found
    assert "source.union[acq].fields.email must name a column, got ''" in found
    assert any(p.startswith("source.union[acq].url ") for p in found), found


def test_a_credential_in_an_env_key_is_refused_unseen(tmp_path: Path) -> None:
    secret = "Bearer s3cr3t-value-0a9b8c"
    found = problems(tmp_path, UNION + f'headers = {{ Authorization = "{secret}" }}\n')
    assert found and all(secret not in p and "s3cr3t" not in p for p in found)
    assert any("source.union[acq].headers.Authorization" in p for p in found)


def test_the_environment_cannot_write_a_union(tmp_path: Path) -> None:
    found = problems(tmp_path, "", {"HRSYNC_SOURCE__UNION": "acq"})
    assert found == [
        "HRSYNC_SOURCE__UNION cannot set source.union: write [[source.union]] tables in the "
        "config file"
    ]


def test_a_union_is_not_named_as_the_primary_or_a_join(tmp_path: Path) -> None:
    """Counts and the shrink guard's baseline are kept by source name: a union named
    `source` would share the primary's."""
    said = problems(tmp_path, UNION.replace('name = "acq"', 'name = "source"'))
    assert any(
        "source.union[source].name 'source' is the primary export's name" in p for p in said
    ), said
    join = '[[source.join]]\nname = "acq"\npath = "d.csv"\non = { D = "D" }\n'
    said = problems(tmp_path, join + UNION)
    assert any("source.union[acq].name 'acq' is a join's name" in p for p in said), said
