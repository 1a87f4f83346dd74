"""The command line: registered commands, config errors as exit 2, no token leaks."""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
from pathlib import Path

import pytest

from hrsync.cli import build_parser

COMMANDS = [
    "run",
    "sync",
    "plan",
    "history",
    "check",
    "healthcheck",
    "simulator",
    "demo",
    "db",
    "init",
]


def hrsync(
    *args: str, env: dict[str, str] | None = None, cwd: Path | None = None
) -> subprocess.CompletedProcess[str]:
    base = {k: v for k, v in os.environ.items() if not k.startswith("HRSYNC_")}
    return subprocess.run(
        [sys.executable, "-m", "hrsync", *args],
        env={**base, **(env or {})},
        capture_output=True,
        text=True,
        cwd=cwd,
        timeout=60,
    )


def test_every_command_has_help() -> None:
    parser = build_parser()
    for command in COMMANDS:
        with pytest.raises(SystemExit) as info:
            parser.parse_args([command, "--help"])
        assert info.value.code == 0


CONFIG = """
[dx]
base_url = "https://api.example.test"
[source]
path = "people.csv"
[state]
database_url = "sqlite:///{db}"
"""


@pytest.mark.parametrize(
    ("extra", "env", "needle"),
    [
        (
            "[sync]\nmax_archives = 3\n",
            {"HRSYNC_DX_TOKEN": "t0k3n-abcdef"},
            "sync.max_archives is not a known key; did you mean sync.max_archive?",
        ),
        ("", {}, "dx token is missing"),
        (
            "[sync]\nmax_archive_fraction = 1.5\n",
            {"HRSYNC_DX_TOKEN": "t0k3n-abcdef"},
            "sync.max_archive_fraction must be between 0 and 1, got 1.5",
        ),
        ("[dx.x]\n", {"HRSYNC_DX_TOKEN": "t0k3n-abcdef"}, "dx.x is not a known key"),
    ],
)
def test_config_problems_exit_2_with_one_line(
    tmp_path: Path, extra: str, env: dict[str, str], needle: str
) -> None:
    cfg = tmp_path / "c.toml"
    cfg.write_text(CONFIG.format(db=tmp_path / "s.db") + extra)
    result = hrsync("--config", str(cfg), "check", env=env)
    assert result.returncode == 2
    err = result.stderr.strip().splitlines()
    assert len(err) == 1 and needle in err[0], result.stderr


def test_token_in_toml_exit_2_and_never_echoed(tmp_path: Path) -> None:
    secret = "tok-written-in-toml-123456"
    cfg = tmp_path / "c.toml"
    cfg.write_text(CONFIG.format(db=tmp_path / "s.db").replace("[dx]", f'[dx]\ntoken = "{secret}"'))
    result = hrsync("--config", str(cfg), "db", "upgrade", env={"HRSYNC_DX_TOKEN": "x" * 10})
    assert result.returncode == 2
    assert "dx.token must not be written in the config file" in result.stderr
    assert secret not in result.stdout + result.stderr


def test_known_token_appears_nowhere(tmp_path: Path) -> None:
    token = "known-token-5f2a9c1e7b"
    cfg = tmp_path / "c.toml"
    cfg.write_text(CONFIG.format(db=tmp_path / "s.db") + '[log]\nlevel = "debug"\n')
    result = hrsync("--config", str(cfg), "db", "upgrade", env={"HRSYNC_DX_TOKEN": token})
    assert result.returncode == 0, result.stderr
    assert token not in result.stdout + result.stderr
    db = (tmp_path / "s.db").read_bytes()
    assert token.encode() not in db


def test_usage_error_is_exit_2() -> None:
    result = hrsync("sync", "--allow-archive", "-3")
    assert result.returncode == 2


# ------------------------------------------------ state.database_url (issue 9, item 7)


def database_problem(tmp_path: Path, url: str, *command: str, pre: str = "") -> str:
    cfg = tmp_path / "c.toml"
    cfg.write_text(CONFIG.replace('"sqlite:///{db}"', '"{db}"').format(db=url))
    (tmp_path / "people.csv").write_text("employee_id,email,name,manager_id\n")
    env = {"HRSYNC_DX_TOKEN": "t0k3n-abcdef"}
    if pre:
        # A missing package, as if never installed: None in sys.modules fails its import.
        args = [sys.executable, "-c", f"{pre}; from hrsync.cli import main; "
                f"raise SystemExit(main({['--config', str(cfg), *command]!r}))"]  # fmt: skip
        base = {k: v for k, v in os.environ.items() if not k.startswith("HRSYNC_")}
        result = subprocess.run(
            args, env={**base, **env}, capture_output=True, text=True, timeout=60
        )
    else:
        result = hrsync("--config", str(cfg), *command, env=env)
    assert result.returncode == 2, result.stderr
    assert "Traceback" not in result.stderr + result.stdout
    assert "sqlalche.me" not in result.stderr + result.stdout
    # `sync` logs on stderr beside its summary: its JSON warnings are not the error.
    lines = [line for line in result.stderr.strip().splitlines() if not line.startswith("{")]
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith("hrsync: configuration error: state.database_url ")
    return lines[0]


@pytest.mark.parametrize("command", [["sync"], ["history"], ["db", "upgrade"], ["healthcheck"]])
def test_a_directory_as_database_exits_2_naming_the_key(tmp_path: Path, command: list[str]) -> None:
    line = database_problem(tmp_path, f"sqlite:///{tmp_path}", *command)
    assert f"names the directory '{tmp_path}'; expected an SQLite file in it" in line


def test_an_unknown_dialect_exits_2_with_the_password_hidden(tmp_path: Path) -> None:
    line = database_problem(tmp_path, "http://hr:s3cret@db.example.test/hrsync", "sync")
    assert "'http://hr:***@db.example.test/hrsync'" in line
    assert "SQLAlchemy does not know ('http')" in line
    assert "s3cret" not in line


def test_a_missing_postgres_driver_exits_2_naming_the_extra(tmp_path: Path) -> None:
    line = database_problem(
        tmp_path,
        "postgresql+psycopg://hr:s3cret@db.example.test/hrsync",
        "sync",
        pre="import sys; sys.modules['psycopg'] = None",
    )
    assert line == (
        "hrsync: configuration error: state.database_url "
        "'postgresql+psycopg://hr:***@db.example.test/hrsync' needs the PostgreSQL driver "
        "psycopg, which is not installed: pip install 'hrsync[postgres]'"
    )


def test_a_path_that_cannot_be_created_exits_2(tmp_path: Path) -> None:
    blocker = tmp_path / "not-a-dir"
    blocker.write_text("")
    line = database_problem(tmp_path, f"sqlite:///{blocker}/state.db", "sync")
    assert f"because '{blocker}' is a file, not a directory" in line


def test_a_database_that_cannot_be_opened_exits_2(tmp_path: Path) -> None:
    # Passes every check made without connecting, then SQLite cannot open it (here: not a
    # database at all; a read-only file system or a permission the check cannot see is
    # the same path).
    bogus = tmp_path / "state.db"
    bogus.write_bytes(b"this is not an SQLite database, just bytes " * 100)
    line = database_problem(tmp_path, f"sqlite:///{bogus}", "sync")
    assert f"'sqlite:///{bogus}' cannot be opened:" in line
    assert "file is not a database" in line


def test_help_loads_no_settings_database_or_logging_libraries() -> None:
    # `--help` (and a usage error) only parse: the settings loader brings in SQLAlchemy,
    # which alone took most of a quarter second.
    probe = (
        "import sys\n"
        "from hrsync.cli import main\n"
        "try:\n"
        "    main(['--help'])\n"
        "except SystemExit:\n"
        "    pass\n"
        "heavy = {'sqlalchemy', 'structlog', 'httpx', 'hrsync.config.loading', 'hrsync.sync'}\n"
        "print(sorted(heavy & set(sys.modules)), file=sys.stderr)\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, timeout=60
    )
    assert result.stderr.strip() == "[]", result.stderr


@pytest.mark.parametrize("flag", ["--help", "--version"])
def test_help_and_version_import_nothing_heavy(flag: str) -> None:
    # `--help` within 5x a bare `python -c pass` (benchmarks/bench_cli.py): the parser
    # alone, no structlog, SQLAlchemy, Alembic, httpx or the settings loader.
    script = (
        "import sys\n"
        "from hrsync.cli import main\n"
        "try:\n"
        f"    main([{flag!r}])\n"
        "except SystemExit:\n"
        "    pass\n"
        "heavy = ('sqlalchemy', 'alembic', 'structlog', 'httpx', 'apscheduler',"
        " 'hrsync.config.loading', 'hrsync.logs', 'hrsync.sync')\n"
        "print('HEAVY', sorted(m for m in heavy if m in sys.modules), file=sys.stderr)\n"
    )
    child = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=30
    )
    assert "HEAVY []" in child.stderr, child.stderr


# ------------------------------------------------ a reader that stops (issue 24, item 4)


@pytest.mark.parametrize("command", [["status"], ["history"], ["history", "--format", "json"]])
def test_a_reader_that_stops_reading_ends_the_command_quietly(
    tmp_path: Path, command: list[str]
) -> None:
    # `hrsync status | head -1`: head exits after one line and the next write finds the
    # pipe closed. That is the reader's choice, not a crash: no traceback, no
    # hrsync.crashed, exit 0. The read end is closed before hrsync writes at all, so the
    # first write fails every time (with head it was 7 tries in 10).
    cfg = tmp_path / "c.toml"
    cfg.write_text(CONFIG.format(db=tmp_path / "state.db"))
    (tmp_path / "people.csv").write_text("employee_id,email,name,manager_id\n")
    made = hrsync("--config", str(cfg), "db", "upgrade", env={"HRSYNC_DX_TOKEN": "t0k3n-abc"})
    assert made.returncode == 0, made.stderr  # these commands only read a store
    base = {k: v for k, v in os.environ.items() if not k.startswith("HRSYNC_")}
    reader, writer = os.pipe()
    os.close(reader)
    try:
        result = subprocess.run(
            [sys.executable, "-m", "hrsync", "--config", str(cfg), *command],
            env={**base, "HRSYNC_DX_TOKEN": "t0k3n-abcdef"},
            stdout=writer,
            stderr=subprocess.PIPE,
            text=True,
            timeout=60,
        )
    finally:
        os.close(writer)
    assert result.returncode == 0, result.stderr
    assert result.stderr == ""


# ------------------------------------------------ where the config is (issue 24, item 8)


def test_no_config_at_all_is_told_as_such_not_as_a_missing_key(tmp_path: Path) -> None:
    result = hrsync("check", env={"HRSYNC_DX_TOKEN": "t0k3n-abcdef"}, cwd=tmp_path)
    assert result.returncode == 2
    (line,) = result.stderr.strip().splitlines()
    assert "no config file: pass --config PATH, set $HRSYNC_CONFIG" in line, line
    assert "dx.base_url is required" not in line


def test_the_config_in_the_current_folder_is_read_and_named_on_stderr(tmp_path: Path) -> None:
    # `hrsync init` writes ./hrsync.toml: the next command in that folder finds it.
    (tmp_path / "hrsync.toml").write_text(CONFIG.format(db=tmp_path / "s.db"))
    result = hrsync("db", "upgrade", env={"HRSYNC_DX_TOKEN": "t0k3n-abcdef"}, cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert (tmp_path / "s.db").exists()
    assert "hrsync: config hrsync.toml (found in the current folder)" in result.stderr
    assert "hrsync.toml" not in result.stdout
    told = hrsync("check", env={"HRSYNC_DX_TOKEN": "t0k3n-abcdef"}, cwd=tmp_path.parent)
    assert "hrsync init" in told.stderr  # no file anywhere: the way to write one is named


def test_settings_from_the_environment_alone_still_load(tmp_path: Path) -> None:
    # A container may set every key as HRSYNC_… variables and no file: that is a config.
    (tmp_path / "people.csv").write_text("employee_id,email,name,manager_id\n")
    env = {
        "HRSYNC_DX_TOKEN": "t0k3n-abcdef",
        "HRSYNC_DX__BASE_URL": "https://api.example.test",
        "HRSYNC_SOURCE__PATH": str(tmp_path / "people.csv"),
        "HRSYNC_STATE__DATABASE_URL": f"sqlite:///{tmp_path / 's.db'}",
    }
    result = hrsync("db", "upgrade", env=env, cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    partial = hrsync("check", env={"HRSYNC_DX_TOKEN": "t0k3n-abcdef", "HRSYNC_SOURCE__PATH": "x"})
    assert partial.returncode == 2
    assert "dx.base_url is required" in partial.stderr
    assert "no config file" in partial.stderr


@pytest.mark.parametrize("where", ["before", "after"])
def test_the_global_options_are_read_before_or_after_the_command(
    tmp_path: Path, where: str
) -> None:
    cfg = tmp_path / "c.toml"
    cfg.write_text(CONFIG.format(db=tmp_path / "s.db"))
    options = ["--config", str(cfg), "--log-level", "error"]
    args = [*options, "db", "upgrade"] if where == "before" else ["db", "upgrade", *options]
    result = hrsync(*args, env={"HRSYNC_DX_TOKEN": "t0k3n-abcdef"})
    assert result.returncode == 0, result.stderr
    assert (tmp_path / "s.db").exists()


# ------------------------------------------- plan --detailed-exitcode (issue 25, item 5)


@pytest.mark.parametrize(
    "setup",
    ["missing config", "bad value", "bad flag"],
)
def test_detailed_exitcode_says_1_for_every_error_never_2(tmp_path: Path, setup: str) -> None:
    """With --detailed-exitcode, 2 means "changes pending": a CI job must not read a broken
    config or a mistyped flag as that. Terraform's convention, which the docs promise."""
    cfg = tmp_path / "c.toml"
    cfg.write_text(CONFIG.format(db=tmp_path / "s.db"))
    args = ["--config", str(cfg), "plan", "--detailed-exitcode"]
    if setup == "missing config":
        args[1] = str(tmp_path / "nowhere.toml")
    elif setup == "bad value":
        cfg.write_text(CONFIG.format(db=tmp_path / "s.db") + "[mapping]\nmin_team_size = -1\n")
    else:
        args.append("--no-such-flag")
    result = hrsync(*args)
    assert result.returncode == 1, (result.returncode, result.stderr)
    assert result.stderr.strip(), "the error is still told"


# ------------------------------------------------- log levels in any case (issue 25, item 7)


@pytest.mark.parametrize("where", ["flag", "file", "environment"])
def test_a_log_level_is_read_in_any_case(tmp_path: Path, where: str) -> None:
    cfg = tmp_path / "c.toml"
    text = CONFIG.format(db=tmp_path / "s.db")
    env = {"HRSYNC_DX_TOKEN": "t0k3n-abcdef"}
    args = ["--config", str(cfg), "db", "upgrade"]
    if where == "flag":
        args[2:2] = ["--log-level", "ERROR", "--log-format", "JSON"]
    elif where == "file":
        text += '[log]\nlevel = "Warning"\n'
    else:
        env["HRSYNC_LOG__LEVEL"] = "INFO"
    cfg.write_text(text)
    result = hrsync(*args, env=env)
    assert result.returncode == 0, result.stderr


def test_an_unknown_level_is_still_refused_naming_the_choices(tmp_path: Path) -> None:
    cfg = tmp_path / "c.toml"
    cfg.write_text(CONFIG.format(db=tmp_path / "s.db") + '[log]\nlevel = "loud"\n')
    result = hrsync("--config", str(cfg), "db", "upgrade", env={"HRSYNC_DX_TOKEN": "t0k3n-abc"})
    assert result.returncode == 2
    assert "log.level" in result.stderr and "'debug'" in result.stderr


# ------------------------------------------ completion and help (issue 25, item 7)


def _complete(script: str, line: str) -> list[str]:
    """What bash offers for `line` (ending where the cursor is), with the script loaded."""
    words = line.split(" ")
    program = (
        f"{script}\n"
        f"COMP_WORDS=({' '.join(repr(w) for w in words)}); COMP_CWORD={len(words) - 1}; "
        f"COMP_LINE={line!r}; COMP_POINT={len(line)}; "
        "_shtab_hrsync hrsync; printf '%s\\n' \"${COMPREPLY[@]}\""
    )
    done = subprocess.run(
        ["bash", "--norc", "-c", program], capture_output=True, text=True, timeout=30
    )
    assert done.returncode == 0, done.stderr
    return [w.strip() for w in done.stdout.split() if w.strip()]


def test_bash_completion_offers_the_commands_and_their_options() -> None:
    result = hrsync("completion", "bash")
    assert result.returncode == 0, result.stderr
    assert "sync" in _complete(result.stdout, "hrsync sy")
    assert "--detailed-exitcode" in _complete(result.stdout, "hrsync plan --det")
    assert "--allow-archive" in _complete(result.stdout, "hrsync sync --allow-a")


@pytest.mark.parametrize("shell", ["zsh", "tcsh"])
def test_completion_for_other_shells_is_printed(shell: str) -> None:
    result = hrsync("completion", shell)
    assert result.returncode == 0, result.stderr
    assert "approve" in result.stdout
    if shell == "zsh":  # shtab's tcsh script completes the commands only
        assert "--detailed-exitcode" in result.stdout


def test_every_option_of_every_command_says_what_it_does() -> None:
    parser = build_parser()
    undocumented = [
        f"{command.prog} {'/'.join(action.option_strings) or action.dest}"
        for command in [parser, *_all_commands(parser)]
        for action in command._actions
        if not action.help and not isinstance(action, argparse._SubParsersAction)
    ]
    assert not undocumented


@pytest.mark.parametrize("command", ["sync", "plan", "check", "status", "approve", "healthcheck"])
def test_each_command_help_ends_with_its_exit_codes(command: str) -> None:
    result = hrsync(command, "--help")
    assert result.returncode == 0
    assert "exit codes:" in result.stdout, result.stdout


def _all_commands(parser: argparse.ArgumentParser) -> list[argparse.ArgumentParser]:
    found: list[argparse.ArgumentParser] = []
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for command in dict.fromkeys(action.choices.values()):
                found.extend([command, *_all_commands(command)])
    return found


# ------------------------------ read-only commands never create a store (issue 25, item 6)


@pytest.mark.parametrize(
    "command", [["status"], ["history"], ["approvals"], ["approve", "3f9c2a11"]]
)
def test_a_command_that_reads_the_store_never_creates_one(
    tmp_path: Path, command: list[str]
) -> None:
    """In an empty directory with no config, `status` used to create hrsync.db and say
    nothing needs a person: a wrong path read as all clear."""
    result = hrsync(*command, cwd=tmp_path)
    assert result.returncode == 2, (result.stdout, result.stderr)
    assert list(tmp_path.iterdir()) == [], "nothing is created"
    assert "no state store at " in result.stderr and "hrsync.db" in result.stderr
    assert "state.database_url" in result.stderr
    assert "nothing needs a person" not in result.stdout


def test_a_configured_store_path_that_is_missing_is_named(tmp_path: Path) -> None:
    cfg = tmp_path / "c.toml"
    missing = tmp_path / "data" / "s.db"
    cfg.write_text(CONFIG.format(db=missing))
    result = hrsync("--config", str(cfg), "status")
    assert result.returncode == 2
    assert str(missing) in result.stderr
    assert not missing.parent.exists()


def test_an_empty_postgres_database_is_not_given_tables_by_status(postgres_url: str) -> None:
    from sqlalchemy import create_engine, inspect

    result = hrsync("status", env={"HRSYNC_STATE__DATABASE_URL": postgres_url, "HRSYNC_CONFIG": ""})
    assert result.returncode == 2, result.stderr
    assert "no state store" in result.stderr and "no hrsync tables" in result.stderr
    engine = create_engine(postgres_url)
    try:
        assert inspect(engine).get_table_names() == []
    finally:
        engine.dispose()
