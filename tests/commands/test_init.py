"""`hrsync init --from EXPORT`: the sample org and nine HR systems' export shapes.

The fixtures in tests/fixtures/init/ are the sample org (config/sample-org.csv) written
in each system's shape as its public documentation shows it; each test checks the
proposed fields, then that the written config loads with hrsync's own loader and reads
every person with hrsync's own reader (teams mapped, no problem).
"""

from __future__ import annotations

import os
import tomllib
from pathlib import Path

import pytest

from hrsync.cli import main
from hrsync.config.loading import ConfigError, load_settings
from hrsync.sync.reading import map_teams, read_export

ROOT = Path(__file__).resolve().parents[2]
FIXTURES = ROOT / "tests" / "fixtures" / "init"
SAMPLE_FIELDS = {
    "employee_id": "Employee ID",
    "email": "Work Email",
    "name": "Full Name",
    "manager_id": "Manager ID",
    "department": "Department",
    "status": "Status",
}

# export -> (records_path, [source.fields], filter.active_status)
CASES: dict[Path, tuple[str | None, dict[str, str], list[str]]] = {
    ROOT / "config" / "sample-org.csv": (None, SAMPLE_FIELDS, ["Active", "Leave"]),
    ROOT / "config" / "sample-org.json": (
        "Report_Entry",
        {
            "employee_id": "Employee_ID",
            "email": "Email_-_Work",
            "name": "Worker",
            "manager_id": "Manager.ID",
            "department": "Supervisory_Organization",
            "status": "Worker_Status",
        },
        ["Active", "Leave"],
    ),
    # ADP Workforce Now: legal names, a preferred first name on a few rows, the manager
    # only by name ("Last, First"), a home department.
    FIXTURES / "adp-workforce-now.csv": (
        None,
        {
            "employee_id": "Associate ID",
            "email": "Work Contact: Work Email",
            "name": "{Preferred First Name || Legal First Name} {Legal Last Name}",
            "manager_id": "",
            "manager_name": "Reports To Name",
            "department": "Home Department Description",
            "status": "Position Status",
        },
        ["Active", "Leave"],
    ),
    FIXTURES / "workday-raas.json": (
        "Report_Entry",
        {
            "employee_id": "Employee_ID",
            "email": "Email_-_Work",
            "name": "Worker",
            "manager_id": "Positions_group[Is_Primary_Job=1].Manager_ID",
            "department": "Positions_group[Is_Primary_Job=1].Supervisory_Organization",
            "status": "Worker_Status",
        },
        ["Active", "On Leave"],
    ),
    FIXTURES / "bamboohr-report.json": (
        "employees",
        {
            "employee_id": "id",
            "email": "workEmail",
            "name": "displayName",
            "manager_id": "supervisorEId",
            "department": "department",
            "status": "status",
        },
        ["Active"],
    ),
    FIXTURES / "bamboohr-report.csv": (
        None,
        {
            "employee_id": "Employee #",
            "email": "Work Email",
            "name": "{First Name} {Last Name}",
            "manager_id": "Supervisor EID",
            "department": "Department",
            "status": "Status",
        },
        ["Active"],
    ),
    FIXTURES / "hibob-search.json": (
        "employees",
        {
            "employee_id": "id",
            "email": "email",
            "name": "displayName",
            "manager_id": "work.reportsTo.id",
            "department": "work.department",
            "status": "internal.lifecycleStatus",
        },
        ["employed"],
    ),
    FIXTURES / "hibob-people.csv": (
        None,
        {
            "employee_id": "Employee ID",
            "email": "Email",
            "name": "Display name",
            "manager_id": "",
            "manager_name": "Reports to",
            "department": "Department",
            "status": "Lifecycle status",
        },
        ["employed"],
    ),
    FIXTURES / "personio-employees.json": (
        "data",
        {
            "employee_id": "attributes.id.value",
            "email": "attributes.email.value",
            "name": "{attributes.first_name.value} {attributes.last_name.value}",
            "manager_id": "attributes.supervisor.value.attributes.id.value",
            "department": "attributes.department.value.attributes.name",
            "status": "attributes.status.value",
        },
        ["active", "leave"],
    ),
    FIXTURES / "rippling-workers.json": (
        "results",
        {
            "employee_id": "id",
            "email": "work_email",
            "name": "user.display_name",
            "manager_id": "manager_id",
            "department": "department.name",
            "status": "status",
        },
        ["ACTIVE"],
    ),
    FIXTURES / "graph-users.json": (
        "value",
        {
            "employee_id": "id",
            "email": "mail",
            "name": "displayName",
            "manager_id": "manager.id",
            "department": "department",
            "status": "accountEnabled",
        },
        ["true"],
    ),
    FIXTURES / "okta-users.json": (
        "",
        {
            "employee_id": "id",
            "email": "profile.email",
            "name": "{profile.firstName} {profile.lastName}",
            "manager_id": "profile.managerId",
            "department": "profile.department",
            "status": "status",
        },
        ["ACTIVE", "LOCKED_OUT"],
    ),
    FIXTURES / "google-users.json": (
        "users",
        {
            "employee_id": "id",
            "email": "primaryEmail",
            "name": "name.fullName",
            "manager_id": "",
            "manager_email": "relations[type=manager].value",
            "department": "organizations.department",
            "status": "suspended",
        },
        ["false"],
    ),
    FIXTURES / "scim-users.json": (
        "Resources",
        {
            "employee_id": "id",
            "email": "emails.value",
            "name": "displayName",
            "manager_id": (
                "urn:ietf:params:scim:schemas:extension:enterprise:2.0:User.manager.value"
            ),
            "department": "urn:ietf:params:scim:schemas:extension:enterprise:2.0:User.department",
            "status": "active",
        },
        ["true"],
    ),
}


def init(*args: str) -> int:
    return main(["init", *args])


@pytest.mark.parametrize("export", list(CASES), ids=lambda p: p.name)
def test_init_proposes_the_right_fields_and_a_config_that_reads_everyone(
    export: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    records_path, fields, active = CASES[export]
    out = tmp_path / "hrsync.toml"
    assert init("--from", str(export), "--out", str(out)) == 0
    written = tomllib.loads(out.read_text(encoding="utf-8"))
    assert {k: v for k, v in written["source"]["fields"].items() if v or k in fields} == fields
    assert written["source"].get("records_path") == records_path
    assert written["filter"]["active_status"] == active
    assert written["mapping"]["strategy"] == "manager"
    # Every guess is printed with its evidence.
    printed = capsys.readouterr().out
    for column in fields.values():
        if column:
            assert f'= "{column}"  <- ' in printed
    assert f"Wrote {out}." in printed
    # The config loads with hrsync's own loader, and its export maps with no problem.
    settings = load_settings(out, {"HRSYNC_DX_TOKEN": "t"})
    read = read_export(settings)
    assert not read.directory.held
    assert len(read.directory.people) >= 37
    assert map_teams(settings, read).team_map.teams


def test_the_config_says_why_for_every_guess(tmp_path: Path) -> None:
    out = tmp_path / "hrsync.toml"
    init("--from", str(ROOT / "config" / "sample-org.csv"), "--out", str(out))
    lines = out.read_text(encoding="utf-8").splitlines()
    at = lines.index('email = "Work Email"')
    assert lines[at - 1] == "# Work Email: 40 of 40 values are e-mail addresses"
    assert 'base_url = "http://127.0.0.1:8765"' in lines
    assert 'database_url = "sqlite:///hrsync.db"' in lines
    assert 'path = "../../' not in out.read_text()  # relative to the config's folder
    assert load_settings(out, {"HRSYNC_DX_TOKEN": "t"}).source.path == (
        ROOT / "config" / "sample-org.csv"
    )


def test_an_existing_config_is_never_overwritten_without_force(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "hrsync.toml"
    out.write_text("# mine\n")
    export = str(ROOT / "config" / "sample-org.csv")
    assert init("--from", export, "--out", str(out)) == 2
    assert "exists" in capsys.readouterr().err
    assert out.read_text() == "# mine\n"
    assert init("--from", export, "--out", str(out), "--force") == 0
    assert "[source.fields]" in out.read_text()


def test_the_default_is_hrsync_toml_in_the_current_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    assert init("--from", str(ROOT / "config" / "sample-org.csv")) == 0
    assert (tmp_path / "hrsync.toml").is_file()
    # Every command finds ./hrsync.toml: the next one is typed without --config.
    assert "Next: hrsync check   (" in capsys.readouterr().out


def test_out_dash_prints_the_config_and_tells_on_stderr(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    assert init("--from", str(ROOT / "config" / "sample-org.json"), "--out", "-") == 0
    captured = capsys.readouterr()
    assert tomllib.loads(captured.out)["source"]["records_path"] == "Report_Entry"
    assert "records_path" in captured.err
    assert not (tmp_path / "hrsync.toml").exists()


def test_what_init_cannot_decide_is_a_todo_the_loader_refuses_by_name(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    export = tmp_path / "people.csv"
    export.write_text("Person,Address,Boss\nA1,ann@example.com,\nA2,bob@example.com,\n")
    out = tmp_path / "hrsync.toml"
    assert init("--from", str(export), "--out", str(out)) == 0
    printed = capsys.readouterr().out
    assert "TODO source.fields.name" in printed
    assert "TODO source.fields.manager_id" in printed
    assert "Replace the 2 TODO values" in printed
    with pytest.raises(ConfigError) as info:
        load_settings(out, {"HRSYNC_DX_TOKEN": "t"})
    assert [p.split(" ", 1)[0] for p in info.value.problems] == [
        "source.fields.name",
        "source.fields.manager_id",
    ]
    assert "is a TODO left by hrsync init" in str(info.value)
    # Replaced through the environment, a TODO is replaced.
    fixed = load_settings(
        out,
        {
            "HRSYNC_DX_TOKEN": "t",
            "HRSYNC_SOURCE__FIELDS__NAME": "Person",
            "HRSYNC_SOURCE__FIELDS__MANAGER_ID": "Boss",
        },
    )
    assert fixed.source.fields.email == "Address"


def test_an_unreadable_export_is_a_usage_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert init("--from", str(tmp_path / "missing.csv"), "--out", str(tmp_path / "x.toml")) == 2
    assert "cannot read the export" in capsys.readouterr().err
    document = tmp_path / "answer.json"
    document.write_text('{"count": 3}')
    assert init("--from", str(document), "--out", str(tmp_path / "x.toml")) == 2
    assert "no list of records" in capsys.readouterr().err
    assert not (tmp_path / "x.toml").exists()


def test_the_how_to_shows_what_init_prints(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    page = (ROOT / "docs" / "how-to" / "start-from-export.md").read_text(encoding="utf-8")
    shown = page.split("it prints:\n\n```\n", 1)[1].split("```", 1)[0]
    monkeypatch.chdir(tmp_path)
    (tmp_path / "people.csv").write_bytes((ROOT / "config" / "sample-org.csv").read_bytes())
    assert init("--from", "people.csv") == 0
    assert capsys.readouterr().out == shown


def test_an_out_file_in_a_missing_folder_is_a_usage_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "nowhere" / "hrsync.toml"
    assert init("--from", str(ROOT / "config" / "sample-org.csv"), "--out", str(out)) == 2
    assert "does not exist" in capsys.readouterr().err


def test_an_export_in_another_encoding_is_read_with_encoding(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # Personio's CSV export in German, in Windows' encoding.
    export = tmp_path / "personio.csv"
    export.write_bytes(
        "ID;Vorname;Nachname;E-Mail;Vorgesetzte:r;Abteilung;Status\n"
        "1;Jürgen;Müller;j@example.com;;Vorstand;active\n"
        "2;Ana;Sousa;a@example.com;1;Technik;active\n"
        "3;Kai;Berg;k@example.com;2;Technik;inactive\n".encode("cp1252")
    )
    out = tmp_path / "hrsync.toml"
    assert init("--from", str(export), "--out", str(out)) == 2
    assert "pass --encoding" in capsys.readouterr().err
    assert init("--from", str(export), "--out", str(out), "--encoding", "cp1252") == 0
    written = tomllib.loads(out.read_text(encoding="utf-8"))
    assert written["source"]["encoding"] == "cp1252"
    assert written["source"]["fields"] == {
        "employee_id": "ID",
        "email": "E-Mail",
        "name": "{Vorname} {Nachname}",
        "manager_id": "Vorgesetzte:r",
        "manager_email": "",
        "manager_name": "",
        "department": "Abteilung",
        "status": "Status",
    }
    settings = load_settings(out, {"HRSYNC_DX_TOKEN": "t"})
    assert [p.name for p in read_export(settings).directory.people] == [
        "Jürgen Müller",
        "Ana Sousa",
    ]


@pytest.mark.parametrize("kind", ["fifo", "device"])
def test_init_from_a_fifo_or_a_device_is_refused_at_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], kind: str
) -> None:
    # A FIFO with no writer blocked `init --from` for ever; /dev/zero would never end.
    monkeypatch.chdir(tmp_path)
    if kind == "fifo":
        source = tmp_path / "people.csv"
        os.mkfifo(source)
    else:
        source = Path("/dev/zero")
    assert main(["init", "--from", str(source), "--out", str(tmp_path / "h.toml")]) == 2
    err = capsys.readouterr().err
    assert "is not a regular file" in err and str(source) in err, err


def test_init_out_force_does_not_follow_a_symbolic_link(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    # `--force` replaces the config named; through a link it would overwrite another file.
    monkeypatch.chdir(tmp_path)
    export = tmp_path / "people.csv"
    export.write_bytes((ROOT / "config" / "sample-org.csv").read_bytes())
    victim = tmp_path / "victim.txt"
    victim.write_text("keep me", encoding="utf-8")
    link = tmp_path / "hrsync.toml"
    link.symlink_to(victim)
    code = main(["init", "--from", str(export), "--out", str(link), "--force"])
    assert victim.read_text(encoding="utf-8") == "keep me"
    assert code == 2
    assert "symbolic link" in capsys.readouterr().err


def test_a_large_json_export_is_guessed_from_a_sample_and_says_so(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    import json

    import hrsync.commands.init as init_command

    # The sample's size made small, so that a small export is a large one.
    monkeypatch.setattr(init_command, "SAMPLE", 60)
    records = [
        {
            "Employee_ID": f"E{i:04d}",
            "Worker": f"Person {i}",
            "Email_-_Work": f"p{i}@example.com",
            **({"Manager": {"ID": f"E{(i - 1) // 4:04d}"}} if i else {}),
            "Supervisory_Organization": f"Org {i % 7}",
            "Worker_Status": "Active",
        }
        for i in range(400)
    ]
    export = tmp_path / "report.json"
    export.write_text(json.dumps({"Report_Entry": records}), encoding="utf-8")
    out = tmp_path / "hrsync.toml"
    assert init("--from", str(export), "--out", str(out)) == 0
    printed = capsys.readouterr().out
    assert "(json, 400 records, 6 columns; guessed from a sample of 60: the first 30" in printed
    # The manager column found in a sample that holds only some of the managers.
    assert 'source.fields.manager_id = "Manager.ID"  <- ' in printed
    assert "the sample holds 15% of the records" in printed
    written = out.read_text(encoding="utf-8")
    assert "from a sample of 60 of its 400 records" in " ".join(
        line.lstrip("# ") for line in written.splitlines()[:3]
    )
    assert tomllib.loads(written)["source"]["fields"]["employee_id"] == "Employee_ID"
