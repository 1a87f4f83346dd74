"""Exports that would lose people or reach DX corrupted: `hrsync sync` refuses them (exit 4)
and sends nothing, against the simulator over HTTP."""

from __future__ import annotations

import pytest

from tests.e2e.conftest import CONFIG, Run, Workspace

pytestmark = pytest.mark.slow

SAMPLE = (CONFIG / "sample-org.csv").read_bytes()
HEADER, _, BODY = SAMPLE.partition(b"\n")


def assert_refused_and_nothing_sent(run: Run, workspace: Workspace, *phrases: str) -> None:
    assert run.code == 4, run.stdout[-2000:] + run.stderr[-2000:]
    assert run.finished["outcome"] == "refused"
    reason = run.finished["reason"]
    for phrase in phrases:
        assert phrase in reason, reason
    assert len(reason) < 2000
    assert workspace.process_requests() == []


def test_a_short_row_is_refused_naming_file_line_and_counts(workspace: Workspace) -> None:
    # Status and Title missing: the row used to read blanks there, the blank status
    # filtered the director out, and the rest was sent with exit 0.
    lines = SAMPLE.splitlines(keepends=True)
    assert lines[5].startswith(b"E012,Mei-Ling Chen,")
    lines[5] = b"E012,Mei-Ling Chen,meiling.chen@example.com,E002,Data\n"
    workspace.export.write_bytes(b"".join(lines))
    run = workspace.hrsync("sync")
    assert_refused_and_nothing_sent(
        run, workspace, "people.csv line 6 has 5 values, expected 7 like the header"
    )


def test_an_export_cut_off_inside_its_last_row_is_refused(workspace: Workspace) -> None:
    cut = SAMPLE.rstrip(b"\r\n")
    cut = cut[: cut.rindex(b",", 0, cut.rindex(b",") - 1)]  # two values short, no line end
    workspace.export.write_bytes(cut)
    run = workspace.hrsync("sync")
    assert_refused_and_nothing_sent(
        run, workspace, "people.csv line 41 has 5 values", "looks cut off inside its last row"
    )


def test_a_nul_in_a_value_that_names_a_team_is_refused(workspace: Workspace) -> None:
    workspace.export.write_bytes(SAMPLE.replace(b",Platform,", b",Plat\x00form,", 1))
    run = workspace.hrsync("sync")
    assert_refused_and_nothing_sent(
        run, workspace, "people.csv line 4: Department must not contain control characters"
    )
    assert "\x00" not in run.stdout + run.stderr


def test_a_header_only_export_is_refused_even_when_dx_has_no_teams(workspace: Workspace) -> None:
    workspace.export.write_bytes(HEADER + b"\n")
    assert workspace.sim.dx.teams_view() == []
    run = workspace.hrsync("sync")
    assert_refused_and_nothing_sent(run, workspace, "people.csv", "must hold at least one person")


def test_an_export_over_max_bytes_is_refused(workspace: Workspace) -> None:
    run = workspace.hrsync("sync", env={"HRSYNC_SOURCE__MAX_BYTES": "1000"})
    assert_refused_and_nothing_sent(
        run, workspace, f"people.csv is {len(SAMPLE):,} bytes, over 1,000 bytes", "max_bytes"
    )


def test_an_absurdly_long_value_is_refused_quickly(workspace: Workspace) -> None:
    lines = SAMPLE.splitlines(keepends=True)
    lines[3] = lines[3].replace(b"Priya Raman", b"P" * 20_000_000)
    workspace.export.write_bytes(b"".join(lines))
    run = workspace.hrsync("sync", timeout=20)
    assert_refused_and_nothing_sent(
        run, workspace, "people.csv line 4: Full Name has a value longer than 65,536 characters"
    )


def test_a_100k_column_header_gives_short_messages(workspace: Workspace) -> None:
    columns = [f"Column {i}" for i in range(100_000)]
    workspace.export.write_text(
        ",".join(columns) + "\n" + ",".join("x" for _ in columns) + "\n", encoding="utf-8"
    )
    run = workspace.hrsync("sync")
    # The stored reason (hence the log and a webhook) says where, without the values read;
    # the report at the terminal lists the columns found, capped.
    assert_refused_and_nothing_sent(run, workspace, "Employee ID", "'Work Email'")
    assert "Column 0, Column 1" in run.stdout and "Column 19 and 99980 more" in run.stdout
    assert len(run.stdout) + len(run.stderr) < 20_000
