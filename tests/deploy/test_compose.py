"""deploy/compose.yaml, the local trial, checked without a Docker engine: its services,
build context, volumes and healthchecks read against the Dockerfile, every HRSYNC_*
variable loaded through hrsync's own config loading with the files the containers
mount, and the simulator's command run as it is, with the daemon's environment syncing
against it."""

from __future__ import annotations

import os
import re
import shlex
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import pytest
import yaml

from hrsync.config.loading import ConfigError, Settings, load_settings
from hrsync.core import defaults
from tests.deploy.tools import DEPLOY, ROOT
from tests.test_dockerfile import parse as parse_dockerfile

COMPOSE = DEPLOY / "compose.yaml"
SERVICES = {"hrsync", "postgres", "simulator"}
IMAGE_SERVICES = ("hrsync", "simulator")  # built from the repository's Dockerfile


def compose() -> dict[str, Any]:
    loaded = yaml.safe_load(COMPOSE.read_text(encoding="utf-8"))
    assert isinstance(loaded, dict)
    return loaded


def service(name: str) -> dict[str, Any]:
    found = compose()["services"][name]
    assert isinstance(found, dict)
    return found


def image_env() -> dict[str, str]:
    """The ENV the Dockerfile's runtime stage sets for HRSYNC_* (the compose services'
    environment starts from it)."""
    env: dict[str, str] = {}
    for instruction in parse_dockerfile((ROOT / "Dockerfile").read_text(encoding="utf-8")):
        if instruction.keyword == "FROM":
            env = {}
        if instruction.keyword == "ENV":
            for word in shlex.split(instruction.args):
                name, _, value = word.partition("=")
                if name.startswith("HRSYNC_"):
                    env[name] = value
    return env


def test_three_services_one_command() -> None:
    doc = compose()
    assert set(doc["services"]) == SERVICES
    assert "docker compose -f deploy/compose.yaml up" in COMPOSE.read_text(encoding="utf-8")


def test_the_hrsync_image_is_built_from_the_repository_s_dockerfile() -> None:
    for name in IMAGE_SERVICES:
        build = service(name)["build"]
        context = (DEPLOY / build["context"]).resolve()
        assert context == ROOT, name
        assert (context / build["dockerfile"]).resolve() == ROOT / "Dockerfile", name
    assert service("hrsync")["image"] == service("simulator")["image"]


def test_every_volume_is_declared_or_a_file_that_exists() -> None:
    doc = compose()
    declared = set(doc.get("volumes") or {})
    used: set[str] = set()
    for name, svc in doc["services"].items():
        for volume in svc.get("volumes", []):
            source, target = volume.split(":")[:2]
            assert target.startswith("/"), (name, volume)
            if source.startswith((".", "/")):
                assert (DEPLOY / source).exists(), f"{name}: {source} does not exist"
            else:
                used.add(source)
    assert used == declared


def test_every_service_has_a_healthcheck_and_hrsync_s_is_the_dockerfile_s() -> None:
    doc = compose()
    for name, svc in doc["services"].items():
        assert svc.get("healthcheck", {}).get("test"), f"{name} has no healthcheck"
    dockerfile = (ROOT / "Dockerfile").read_text(encoding="utf-8")
    healthcheck = next(i for i in parse_dockerfile(dockerfile) if i.keyword == "HEALTHCHECK")
    command = re.search(r"CMD (\[.*\])", healthcheck.args)
    assert command is not None
    assert service("hrsync")["healthcheck"]["test"] == ["CMD", *yaml.safe_load(command.group(1))]
    # The daemon starts once what it needs answers, not merely once it was started.
    assert service("hrsync")["depends_on"] == {
        "postgres": {"condition": "service_healthy"},
        "simulator": {"condition": "service_healthy"},
    }


def test_the_daemon_has_more_time_to_stop_than_its_shutdown_grace(tmp_path: Path) -> None:
    load_as_the_container_would("hrsync", tmp_path)
    grace = service("hrsync")["stop_grace_period"]
    assert grace.endswith("s") and float(grace[:-1]) > defaults.SHUTDOWN_GRACE_S


# ------------------------------------------------------------------ the environment


def container_root(name: str, tmp_path: Path) -> Path:
    """The service's mounts laid out under tmp_path: each bound file linked where the
    container sees it, each named volume an empty folder."""
    root = tmp_path / name
    for volume in service(name).get("volumes", []):
        source, target = volume.split(":")[:2]
        where = root / target.lstrip("/")
        where.parent.mkdir(parents=True, exist_ok=True)
        if source.startswith((".", "/")):
            where.symlink_to((DEPLOY / source).resolve())
        else:
            shared = tmp_path / "volumes" / source
            shared.mkdir(parents=True, exist_ok=True)
            where.symlink_to(shared)
    return root


def rerooted(env: Mapping[str, str], root: Path) -> dict[str, str]:
    moved: dict[str, str] = {}
    for name, value in env.items():
        if value.startswith("/"):
            value = str(root / value.lstrip("/"))
        elif value.startswith("sqlite:////"):
            value = f"sqlite:///{root / value.removeprefix('sqlite:////')}"
        moved[name] = value
    return moved


def service_env(name: str) -> dict[str, str]:
    env = {**image_env(), **{k: str(v) for k, v in service(name).get("environment", {}).items()}}
    return env


def load_as_the_container_would(name: str, tmp_path: Path) -> Settings:
    root = container_root(name, tmp_path)
    env = rerooted(service_env(name), root)
    token_file = env.get("HRSYNC_DX__TOKEN_FILE")
    if token_file:  # the simulator's product, on the shared volume
        Path(token_file).write_text("rehearse-stand-in\n", encoding="utf-8")
    return load_settings(None, env)


def test_every_hrsync_variable_is_a_config_key_the_daemon_loads(tmp_path: Path) -> None:
    settings = load_as_the_container_would("hrsync", tmp_path)
    env = service_env("hrsync")
    assert settings.state.database_url == env["HRSYNC_STATE__DATABASE_URL"]
    assert settings.state.database_url.startswith("postgresql+psycopg://")
    assert settings.dx.base_url == "http://simulator:8765"
    assert settings.token is not None
    assert settings.daemon.listen == "0.0.0.0:9464"
    for name in service("hrsync")["environment"]:
        assert name.startswith("HRSYNC_") and "__" in name, name
        section, _, key = name.removeprefix("HRSYNC_").lower().partition("__")
        assert hasattr(getattr(settings, section), key), f"{name} names no config key"


def test_plain_http_to_the_simulator_is_allowed_by_name_only(tmp_path: Path) -> None:
    # http://simulator:8765 is another host on the compose network: without the key the
    # daemon would refuse to send its (stand-in) token there.
    assert load_as_the_container_would("hrsync", tmp_path).dx.allow_insecure_http
    env = rerooted(service_env("hrsync"), container_root("hrsync", tmp_path / "again"))
    Path(env["HRSYNC_DX__TOKEN_FILE"]).write_text("rehearse-stand-in\n", encoding="utf-8")
    del env["HRSYNC_DX__ALLOW_INSECURE_HTTP"]
    with pytest.raises(ConfigError) as refused:
        load_settings(None, env)
    assert refused.value.problems == [
        "dx.base_url is plain http:// to simulator: the DX token would cross the network "
        "readable by anyone on the way; use https://, or set dx.allow_insecure_http = true "
        "for a network you trust"
    ]


def test_the_simulator_and_the_daemon_meet_on_the_port_and_the_token_file() -> None:
    command = service("simulator")["command"][0]
    assert "hrsync simulator --rehearse /config/hrsync.toml" in command
    port = re.search(r"--port (\d+)", command)
    assert port is not None and "--host 0.0.0.0" in command
    env = service("hrsync")["environment"]
    assert env["HRSYNC_DX__BASE_URL"] == f"http://simulator:{port.group(1)}"
    token_written = re.search(r"> (/\S+)$", command)
    assert token_written is not None
    # The same named volume: where the simulator writes, the daemon reads.
    written = Path(token_written.group(1))
    simulator_mounts = {v.split(":")[1]: v.split(":")[0] for v in service("simulator")["volumes"]}
    hrsync_mounts = {v.split(":")[1]: v.split(":")[0] for v in service("hrsync")["volumes"]}
    read = Path(env["HRSYNC_DX__TOKEN_FILE"])
    assert simulator_mounts[str(written.parent)] == hrsync_mounts[str(read.parent)]
    assert written.name == read.name


# ------------------------------------------------------------------ the trial, without Docker


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


@pytest.fixture
def simulator(tmp_path: Path) -> Iterator[tuple[str, Path]]:
    """The simulator service's own shell command, its paths under tmp_path, on a free
    port of this machine; yields its base URL and the daemon's root."""
    command = service("simulator")["command"][0]
    sim_root = container_root("simulator", tmp_path)
    hrsync_root = container_root("hrsync", tmp_path)
    port = free_port()
    command = command.replace("--host 0.0.0.0 --port 8765", f"--host 127.0.0.1 --port {port}")
    command = re.sub(r"(?<=[ >])/(config|data)/", lambda m: f"{sim_root}/{m.group(1)}/", command)
    bin_dir = Path(sys.executable).parent
    env = {**os.environ, "PATH": f"{bin_dir}{os.pathsep}{os.environ.get('PATH', '')}"}
    env = {k: v for k, v in env.items() if not k.startswith("HRSYNC_")}
    process = subprocess.Popen(
        ["sh", "-c", command],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    try:
        token = sim_root / "data" / "dx-token"
        deadline = time.monotonic() + 30
        while not (token.exists() and token.stat().st_size) and process.poll() is None:
            assert time.monotonic() < deadline, "the simulator wrote no token in 30 s"
            time.sleep(0.05)
        assert process.poll() is None, "the simulator's command ended"
        yield f"http://127.0.0.1:{port}", hrsync_root
    finally:
        os.killpg(process.pid, signal.SIGTERM)
        process.wait(timeout=10)


def test_the_trial_syncs_the_sample_org_against_the_simulator(
    simulator: tuple[str, Path], tmp_path: Path
) -> None:
    base_url, root = simulator
    env = rerooted(service_env("hrsync"), root)
    env["HRSYNC_DX__BASE_URL"] = base_url
    # The trial's store is PostgreSQL; this test is about the simulator, the token and
    # the config, so a SQLite file stands in.
    env["HRSYNC_STATE__DATABASE_URL"] = f"sqlite:///{tmp_path / 'trial.db'}"
    plain = {k: v for k, v in os.environ.items() if not k.startswith("HRSYNC_")}
    done = subprocess.run(
        [sys.executable, "-m", "hrsync", "sync"],
        env={**plain, **env},
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=90,
        check=False,
    )
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    # Piped, `sync` prints its summary on stdout and logs on stderr.
    finished = [line for line in done.stderr.splitlines() if '"sync.finished"' in line]
    assert finished and '"outcome": "applied"' in finished[-1]
