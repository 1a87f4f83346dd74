"""Files hrsync reads whole (the DX token file, the config file, a service account's key
file) are capped and must be regular files: `/dev/zero` named as the token file was read
without end (11 GB in 30 s), and a FIFO blocked the start for ever."""

from __future__ import annotations

import os
import threading
from pathlib import Path

import pytest

from hrsync.config.loading import ConfigError, load_settings
from hrsync.config.small_files import MAX_TOKEN_FILE_BYTES, SmallFileError, read_small_file

BASE = """
[dx]
base_url = "https://api.example.test"
token_file = "{token}"

[source]
url = "https://hr.example.test/people.csv"
"""


def problems(tmp_path: Path, token: Path) -> list[str]:
    config = tmp_path / "hrsync.toml"
    config.write_text(BASE.format(token=token), encoding="utf-8")
    with pytest.raises(ConfigError) as caught:
        load_settings(config, {})
    return list(caught.value.problems)


@pytest.mark.parametrize("device", ["/dev/zero", "/dev/urandom"])
def test_a_device_as_the_token_file_is_refused_at_once(tmp_path: Path, device: str) -> None:
    found = problems(tmp_path, Path(device))
    assert any(
        p.startswith(f"dx.token_file {device!r}") and "not a regular file" in p for p in found
    ), found


def test_a_fifo_as_the_token_file_is_refused_without_blocking(tmp_path: Path) -> None:
    fifo = tmp_path / "token.fifo"
    os.mkfifo(fifo)
    result: list[list[str]] = []
    worker = threading.Thread(target=lambda: result.append(problems(tmp_path, fifo)))
    worker.start()
    worker.join(5)
    if worker.is_alive():  # unblock the reader so the test run can end
        with open(fifo, "w"):
            pass
        worker.join(5)
        pytest.fail("reading a FIFO as the token file blocked")
    assert any("not a regular file" in p and "FIFO" in p for p in result[0]), result


def test_a_token_file_over_the_cap_is_refused(tmp_path: Path) -> None:
    big = tmp_path / "token"
    big.write_text("t" * (MAX_TOKEN_FILE_BYTES + 1), encoding="utf-8")
    found = problems(tmp_path, big)
    assert any(f"over {MAX_TOKEN_FILE_BYTES:,} bytes" in p for p in found), found
    assert all("tttttttt" not in p for p in found), found


def test_a_config_file_that_is_a_device_is_refused(tmp_path: Path) -> None:
    with pytest.raises(ConfigError) as caught:
        load_settings(Path("/dev/zero"), {})
    assert "not a regular file" in str(caught.value)


def test_read_small_file_reads_a_regular_file(tmp_path: Path) -> None:
    path = tmp_path / "x"
    path.write_bytes(b"hello")
    assert read_small_file(path, 10) == b"hello"
    with pytest.raises(SmallFileError, match="over 4 bytes"):
        read_small_file(path, 4)
    with pytest.raises(SmallFileError, match="a directory"):
        read_small_file(tmp_path, 10)
