"""Rehearsing with your own org (issue 24): `hrsync simulator --rehearse CONFIG` serves a
DX whose users are the export's people, with no teams, and prints what to point a config
at; a sync against it applies the export's own teams."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.e2e.conftest import CONFIG, CONFIG_TEMPLATE, ROOT
from tests.e2e.rehearsing import HRSYNC, clean_env, hrsync, rehearsing, sh_blocks
from tests.fakes import serve
from tests.fakes.hr_apis import OktaApi
from tests.simulating import seed_args

pytestmark = pytest.mark.slow


@pytest.fixture
def org(tmp_path: Path) -> Path:
    """A folder with the sample org's export and a config that points at a real DX."""
    export = tmp_path / "people.csv"
    shutil.copy(CONFIG / "sample-org.csv", export)
    config = tmp_path / "hrsync.toml"
    config.write_text(
        CONFIG_TEMPLATE.format(
            base_url="https://api.getdx.com", export="people.csv", db="hrsync.db"
        ),
        encoding="utf-8",
    )
    return tmp_path


def test_a_rehearsal_of_your_own_export_syncs_its_own_teams(org: Path) -> None:
    with rehearsing(org, "--rehearse", "hrsync.toml") as rehearsal:
        assert rehearsal.teams() == {}, "a rehearsal starts with no teams"
        assert rehearsal.token.startswith("rehearse-")
        assert "# 37 of 37 people are DX users; no teams yet" in rehearsal.printed
        assert any('[dx] base_url = "http://127.0.0.1:' in line for line in rehearsal.printed)

        assert hrsync(org, rehearsal, "--config", "hrsync.toml", "check").code == 0
        run = hrsync(org, rehearsal, "--config", "hrsync.toml", "sync")
        assert run.code == 0, run.stdout[-3000:] + run.stderr[-3000:]
        assert run.finished["outcome"] == "applied"
        assert run.finished["counts"]["create"] == 13
        teams = rehearsal.teams()
        assert {"Engineering", "Developer Experience", "Platform"} <= set(teams)
        assert len(teams) == 13

    # The rehearsal kept its own store beside the config; the real one was never made.
    assert (org / "rehearsal.db").exists()
    assert not (org / "hrsync.db").exists()


def test_people_not_in_dx_yet_are_named_and_the_run_still_applies(org: Path) -> None:
    # DX lists no team's members, only counts: a first import shows that 3 e-mails went
    # uncounted, not whose. DX's answer to an attribute update names them (user_not_found).
    config = org / "hrsync.toml"
    config.write_text(config.read_text() + '\n[attributes]\n"Title" = "{Title}"\n')
    with rehearsing(org, "--rehearse", "hrsync.toml", "--in-dx", "0.9") as rehearsal:
        assert "# 34 of 37 people are DX users; no teams yet" in rehearsal.printed
        (left_out_line,) = [line for line in rehearsal.printed if "not DX users yet" in line]
        left_out = set(left_out_line.partition("hrsync names them): ")[2].split(", "))
        assert len(left_out) == 3

        run = hrsync(org, rehearsal, "--config", "hrsync.toml", "sync")
        assert run.code == 0, run.stdout[-3000:] + run.stderr[-3000:]
        finished = run.finished
        assert finished["outcome"] == "applied"
        assert finished["counts"]["create"] == 13, "every lead is a DX user"
        (settled,) = run.named("verify.counts_settled")
        assert "3 contributors in 3 teams not counted by DX" in settled["detail"]
        assert finished["counts"]["attributes_updated"] == 34

        status = json.loads(
            hrsync(org, rehearsal, "--config", "hrsync.toml", "status", "--format", "json").stdout
        )
        assert {p["email"] for p in status["not_in_dx"]} == left_out
        again = hrsync(org, rehearsal, "--config", "hrsync.toml", "sync")
        assert again.finished["outcome"] == "in_sync"
        assert again.finished["counts"]["not_in_dx"] == 3
        assert set(again.finished["not_in_dx"].split(", ")) == left_out

    # The same export leaves the same people out, whatever its row order.
    rows = (org / "people.csv").read_text(encoding="utf-8").splitlines()
    (org / "people.csv").write_text("\n".join([rows[0], *rows[:0:-1]]) + "\n", encoding="utf-8")
    with rehearsing(org, "--rehearse", "hrsync.toml", "--in-dx", "0.9") as reordered:
        (line,) = [line for line in reordered.printed if "not DX users yet" in line]
        assert set(line.partition("hrsync names them): ")[2].split(", ")) == left_out


def test_users_from_a_file_with_the_default_columns_and_no_config(tmp_path: Path) -> None:
    export = tmp_path / "staff.csv"
    export.write_text(
        "employee_id,name,email,manager_id\n"
        "1,Ana Lead,ana@corp.example,\n"
        "2,Ben Dev,ben@corp.example,1\n"
        "3,Cy Dev,cy@corp.example,1\n",
        encoding="utf-8",
    )
    with rehearsing(tmp_path, "--users-from", str(export)) as rehearsal:
        assert "# 3 of 3 people are DX users; no teams yet" in rehearsal.printed
        assert rehearsal.env["HRSYNC_SOURCE__PATH"] == str(export)
        assert (
            f"# next: hrsync init --from {export}, then hrsync check, then plan, then sync"
            in rehearsal.printed
        )


@pytest.mark.parametrize("name", ["workday-raas.json", "bamboohr-report.csv"])
def test_users_from_any_export_init_reads_with_no_config_guesses_its_columns(
    tmp_path: Path, name: str
) -> None:
    # Columns named as the HR system names them, a JSON answer around the list: guessed
    # as `hrsync init` guesses them, and the guesses printed.
    export = tmp_path / name
    shutil.copy(ROOT / "tests" / "fixtures" / "init" / name, export)
    with rehearsing(tmp_path, "--users-from", name) as rehearsal:
        printed = "\n".join(rehearsal.printed)
        assert f"# no config: the columns of {name} as hrsync init guesses them" in printed
        assert "#   source.fields.email = " in printed
        (counted,) = [line for line in rehearsal.printed if "people are DX users" in line]
        assert not counted.startswith("# 0 of")
        assert f"# next: hrsync init --from {name}, then hrsync check" in printed


def test_users_from_a_file_read_through_the_config_s_own_fields(org: Path) -> None:
    shutil.copy(CONFIG / "sample-org-reorg.csv", org / "next-quarter.csv")
    with rehearsing(
        org, "--users-from", "next-quarter.csv", env={"HRSYNC_CONFIG": "hrsync.toml"}
    ) as rehearsal:
        assert rehearsal.env["HRSYNC_SOURCE__PATH"] == str(org / "next-quarter.csv")
        assert "# next: hrsync --config hrsync.toml check, then plan, then sync" in (
            rehearsal.printed
        ), "the config of $HRSYNC_CONFIG"
        run = hrsync(org, rehearsal, "sync")
        assert run.code == 0, run.stdout[-3000:] + run.stderr[-3000:]
        assert run.finished["outcome"] == "applied"
        assert "Developer Productivity" in rehearsal.teams(), "the reorganised export's teams"


def test_an_hr_api_source_is_read_as_the_sync_reads_it(tmp_path: Path) -> None:
    okta = OktaApi()
    env = {"OKTA_API_AUTH": f"SSWS {okta.api_token}"}
    with serve(okta) as api:
        recipe = (ROOT / "config" / "recipes" / "okta.toml").read_text(encoding="utf-8")
        config = recipe.replace("https://acme.okta.com", api.base_url) + (
            '\n[dx]\nbase_url = "https://api.getdx.com"\n'
            '\n[mapping]\nteam_name = "{department}"\n'
            '\n[sync]\nverify_timeout_s = 20\nnotify_email = "people-ops@example.com"\n'
        )
        (tmp_path / "okta.toml").write_text(config, encoding="utf-8")
        with rehearsing(tmp_path, "--rehearse", "okta.toml", env=env) as rehearsal:
            (counted,) = [line for line in rehearsal.printed if "people are DX users" in line]
            run = hrsync(tmp_path, rehearsal, "--config", "okta.toml", "sync")
            assert run.code == 0, run.stdout[-3000:] + run.stderr[-3000:]
            assert run.finished["outcome"] == "applied"
            people = run.named("export.read")[0]["people"]
            assert counted == f"# {people} of {people} people are DX users; no teams yet"
            assert len(rehearsal.teams()) == run.finished["counts"]["create"] > 1
        assert api.requests, "the simulator and the sync both read the HR API"


def test_an_export_that_cannot_be_read_is_told_and_nothing_is_served(tmp_path: Path) -> None:
    export = tmp_path / "staff.csv"
    export.write_text("Work Email,Full Name\nana@corp.example,Ana\n", encoding="utf-8")
    proc = subprocess.run(
        [*HRSYNC, "simulator", "--users-from", str(export), "--port", "0", *seed_args()],
        env=clean_env(),
        capture_output=True,
        text=True,
        timeout=30,
        cwd=tmp_path,
    )
    assert proc.returncode == 2
    assert proc.stdout == ""
    assert "cannot rehearse with staff.csv" in proc.stderr
    assert "email" in proc.stderr


def test_the_how_to_s_commands_rehearse_a_sync_a_reorganisation_and_a_refusal(
    tmp_path: Path,
) -> None:
    """Runs the page's own commands in order, as a reader would: a page that drifts from
    what hrsync does fails here."""
    page = ROOT / "docs" / "how-to" / "rehearse.md"
    (tmp_path / "config").symlink_to(CONFIG)
    path = f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}"
    blocks = sh_blocks(page)
    setup, start = blocks[0], blocks[1]
    assert start == "hrsync simulator --rehearse rehearsal/hrsync.toml"
    subprocess.run(["bash", "-e", "-c", setup], cwd=tmp_path, check=True, env=clean_env())
    codes: list[tuple[str, int]] = []
    outputs: list[str] = []
    with rehearsing(tmp_path, *start.split()[2:]) as rehearsal:
        for block in blocks[2:]:
            if block.startswith(("hrsync simulator", "unset")):
                continue  # a second rehearsal (the test above), and leaving the shell
            for command in block.splitlines():
                proc = subprocess.run(
                    ["bash", "-c", command],
                    cwd=tmp_path,
                    env={**clean_env(), **rehearsal.env, "PATH": path},
                    capture_output=True,
                    text=True,
                    timeout=90,
                )
                assert rehearsal.token not in proc.stdout + proc.stderr
                codes.append((command, proc.returncode))
                outputs.append(proc.stdout)
        teams = rehearsal.teams()
    refused = "hrsync --config rehearsal/hrsync.toml sync"
    # check, plan, sync; the move: sed, plan, sync; the removal: sed, sync; the refusal.
    expected = [(command, 4 if i == 9 else 0) for i, (command, _) in enumerate(codes)]
    assert codes[9][0] == refused, codes
    assert codes == expected
    assert "people.csv: 37 people kept, 3 excluded by filters, 0 warnings" in outputs[0]
    assert outputs[0].rstrip().endswith("ready")
    assert '> move "Growth"' in outputs[4]
    assert "would archive 3 of 12 current teams (25%)" in outputs[9]
    assert codes[-1][0] == "hrsync --config rehearsal/hrsync.toml sync --allow-archive 3"
    assert len(teams) == 9
    assert not {"Mobile Android", "Growth", "Developer Experience"} & set(teams)
