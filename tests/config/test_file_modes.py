"""Files others on the machine can read or write (issue 27, finding 5): the state store
(and its -wal, -shm, its directory), the DX token file, the Google key file and the
config file are warned about, once per start and in `hrsync check`'s report, each with
its mode and the chmod that fixes it. Never refused: a Kubernetes secret is often
mounted 0644."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from hrsync.cli import main
from hrsync.commands.readiness import file_mode_checks
from hrsync.config.file_modes import OpenFile, not_private
from hrsync.core.settings import (
    DxSettings,
    GoogleServiceAccountSettings,
    Settings,
    SourceSettings,
    StateSettings,
)


def made(path: Path, mode: int, text: str = "x") -> Path:
    path.write_text(text)
    path.chmod(mode)
    return path


def store_settings(db: Path) -> Settings:
    return Settings(state=StateSettings(database_url=f"sqlite:///{db}"))


def found(settings: Settings, environ: dict[str, str] | None = None) -> dict[str, str]:
    return {f.path.name: f"{f.mode:04o}" for f in not_private(settings, environ or {})}


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    path = tmp_path / "private"
    path.mkdir(mode=0o700)
    path.chmod(0o700)
    return path


def test_a_private_installation_is_not_warned_about(folder: Path) -> None:
    db = made(folder / "state.db", 0o600)
    made(folder / "state.db-wal", 0o600)
    token = made(folder / "token", 0o400)
    config = made(folder / "hrsync.toml", 0o600)
    settings = Settings(
        dx=DxSettings(token_file=token),
        state=StateSettings(database_url=f"sqlite:///{db}"),
        config_path=config,
    )
    assert found(settings) == {}


@pytest.mark.parametrize("suffix", ["", "-wal", "-shm", "-journal"])
@pytest.mark.parametrize("mode", [0o644, 0o640, 0o604, 0o660, 0o666])
def test_a_store_file_readable_or_writable_by_others(folder: Path, suffix: str, mode: int) -> None:
    db = made(folder / "state.db", 0o600)
    made(folder / f"state.db{suffix}", mode)
    assert found(store_settings(db)) == {f"state.db{suffix}": f"{mode:04o}"}


@pytest.mark.parametrize(("mode", "warned"), [(0o755, False), (0o775, True), (0o1777, True)])
def test_the_store_directory_is_warned_about_when_others_can_write_to_it(
    tmp_path: Path, mode: int, warned: bool
) -> None:
    # Listing a directory shows names, not the store: only a directory others can write
    # to (replace or delete the store) is worth a warning.
    folder = tmp_path / "state"
    folder.mkdir()
    folder.chmod(mode)
    db = made(folder / "state.db", 0o600)
    assert found(store_settings(db)) == ({"state": f"{mode:04o}"} if warned else {})


def test_the_token_and_key_files(folder: Path) -> None:
    token = made(folder / "dx-token", 0o644)
    key = made(folder / "google-key.json", 0o640)
    settings = Settings(
        dx=DxSettings(token_file=token),
        source=SourceSettings(
            google_service_account=GoogleServiceAccountSettings(key_file_env="GOOGLE_KEY")
        ),
    )
    assert found(settings, {"GOOGLE_KEY": str(key)}) == {
        "dx-token": "0644",
        "google-key.json": "0640",
    }
    # A file that does not exist (yet) is the loader's or the reader's to report.
    assert found(settings, {"GOOGLE_KEY": str(folder / "nowhere.json")}) == {"dx-token": "0644"}


@pytest.mark.parametrize(
    ("mode", "text", "warned"),
    [
        (0o644, '[dx]\nbase_url = "https://api.getdx.com"\n', False),
        (0o664, '[dx]\nbase_url = "https://api.getdx.com"\n', True),  # others may change it
        (0o644, '[state]\ndatabase_url = "postgresql+psycopg://hr:pw@db/hrsync"\n', True),
        (0o600, '[state]\ndatabase_url = "postgresql+psycopg://hr:pw@db/hrsync"\n', False),
    ],
)
def test_the_config_file_when_others_may_change_it_or_read_a_password_in_it(
    folder: Path, mode: int, text: str, warned: bool
) -> None:
    # No token is ever in the config file (it is refused there): readable is only worth
    # a warning when a URL in it carries a password.
    config = made(folder / "hrsync.toml", mode, text)
    assert found(Settings(config_path=config)) == ({"hrsync.toml": f"{mode:04o}"} if warned else {})


def test_the_message_names_the_file_its_mode_and_the_chmod_that_fixes_it(tmp_path: Path) -> None:
    token = made(tmp_path / "dx token", 0o644)
    token_file = OpenFile("the DX token file", token, 0o644, 0o044, secret_mount=True)
    assert token_file.fix == f"chmod 600 '{token}'"
    assert token_file.message() == (
        f"the DX token file {token} is readable by group and others (mode 0644): run "
        f"`chmod 600 '{token}'` or, mounted from a Kubernetes secret or ConfigMap, set "
        "defaultMode: 0400 on its volume"
    )
    folder = OpenFile("the state store's directory", tmp_path, 0o777, 0o022)
    assert folder.fix == f"chmod 755 {tmp_path}"
    assert folder.message() == (
        f"the state store's directory {tmp_path} is writable by group and others (mode "
        f"0777): run `chmod 755 {tmp_path}`"
    )
    mixed = OpenFile("the state store", tmp_path / "s.db", 0o646, 0o046)
    assert mixed.access == "readable by group and others and writable by others"


# Files of another owner: hrsync reads them through their group (root:hrsync 0640, a
# Kubernetes secret or volume with the pod's fsGroup), which is no leak.
SOMEONE_ELSE = os.geteuid() + 1


@pytest.mark.parametrize(
    ("mode", "expected"),
    [
        (0o440, None),  # a secret with defaultMode 0400 and fsGroup
        (0o640, None),  # root:hrsync 0640
        (0o644, ("0644", "chmod 640")),  # the world can read it
        (0o460, ("0460", "chmod 440")),  # its group may change a file hrsync only reads
    ],
)
def test_a_credential_of_another_owner_may_be_read_through_its_group(
    folder: Path, mode: int, expected: tuple[str, str] | None
) -> None:
    token = made(folder / "token", mode)
    got = not_private(Settings(dx=DxSettings(token_file=token)), {}, uid=SOMEONE_ELSE)
    assert [(f"{f.mode:04o}", f.fix.rsplit(" ", 1)[0]) for f in got] == (
        [expected] if expected else []
    )


@pytest.mark.parametrize(("mode", "warned"), [(0o2775, False), (0o2777, True)])
def test_a_store_directory_of_another_owner_may_be_written_through_its_group(
    tmp_path: Path, mode: int, warned: bool
) -> None:
    # A volume with the pod's fsGroup: root-owned, group-writable, setgid.
    directory = tmp_path / "data"
    directory.mkdir()
    directory.chmod(mode)
    db = directory / "state.db"
    got = not_private(store_settings(db), {}, uid=SOMEONE_ELSE)
    assert [(f.path, f.fix) for f in got] == (
        [(directory, f"chmod 2775 {directory}")] if warned else []
    )


def test_check_reports_each_file_as_a_warning(tmp_path: Path) -> None:
    token = made(tmp_path / "dx-token", 0o644)
    [check] = file_mode_checks(Settings(dx=DxSettings(token_file=token)), {})
    assert check.ok and check.warning
    assert check.name == "file modes"
    assert str(token) in check.detail and "0644" in check.detail
    assert check.fix == f"chmod 600 {token}"


def test_each_command_warns_once_at_start(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    for name in [n for n in os.environ if n.startswith("HRSYNC_")]:
        monkeypatch.delenv(name)
    token = made(tmp_path / "dx-token", 0o644, "tok-1234567890")
    config = made(
        tmp_path / "hrsync.toml",
        0o600,
        f'[dx]\ntoken_file = "{token}"\n[state]\ndatabase_url = "sqlite:///{tmp_path}/s.db"\n',
    )
    # `status` only reads a store: one made first.
    assert main(["--config", str(config), "--log-format", "json", "db", "upgrade"]) == 0
    capsys.readouterr()
    assert main(["--config", str(config), "--log-format", "json", "status"]) == 0
    out, err = capsys.readouterr()
    events = [json.loads(line) for line in err.splitlines() if line.startswith("{")]
    warned = [e for e in events if e["event"] == "files.not_private"]
    assert len(warned) == 1, err
    (event,) = warned
    assert event["level"] == "warning"
    assert event["path"] == str(token) and event["mode"] == "0644"
    assert event["fix"] == f"chmod 600 {token}"
    assert "tok-1234567890" not in out + err
