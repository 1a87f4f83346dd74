"""The container rules, checked by reading the Dockerfile (no Docker engine needed).

Slim base, multi-stage (wheel built in one stage, installed into a venv in the
next), non-root, tini as PID 1 with exec-form ENTRYPOINT/CMD, /data volume,
HEALTHCHECK through `hrsync healthcheck`, configuration by file and environment,
and a .dockerignore that keeps the build context to what the build needs.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import subprocess
import sys
import tomllib
import zipfile
from dataclasses import dataclass
from pathlib import Path

import pytest

from hrsync.cli import build_parser
from hrsync.config.loading import CONFIG_ENV, load_settings

ROOT = Path(__file__).resolve().parent.parent
DOCKERFILE = ROOT / "Dockerfile"
DOCKERIGNORE = ROOT / ".dockerignore"


# ------------------------------------------------------------------ Dockerfile parsing


@dataclass(frozen=True)
class Instruction:
    keyword: str
    args: str
    comments: tuple[str, ...]  # the comment lines directly above it


def parse(text: str) -> list[Instruction]:
    instructions: list[Instruction] = []
    comments: list[str] = []
    pending: list[str] = []
    for raw in text.splitlines():
        line = raw.strip()
        if line.startswith("#"):
            if not pending:
                comments.append(line)
            continue
        if not line:
            if not pending:
                comments = []
            continue
        pending.append(line[:-1].strip() if line.endswith("\\") else line)
        if line.endswith("\\"):
            continue
        keyword, _, args = " ".join(pending).partition(" ")
        instructions.append(Instruction(keyword.upper(), args.strip(), tuple(comments)))
        pending, comments = [], []
    assert not pending, "the Dockerfile ends inside a line continuation"
    return instructions


def stages(instructions: list[Instruction]) -> list[list[Instruction]]:
    result: list[list[Instruction]] = []
    for ins in instructions:
        if ins.keyword == "FROM":
            result.append([])
        if result:
            result[-1].append(ins)
    return result


def global_args(instructions: list[Instruction]) -> dict[str, str]:
    found: dict[str, str] = {}
    for ins in instructions:
        if ins.keyword == "FROM":
            break
        if ins.keyword == "ARG" and "=" in ins.args:
            name, _, value = ins.args.partition("=")
            found[name] = value
    return found


def env_of(stage: list[Instruction]) -> dict[str, str]:
    env: dict[str, str] = {}
    for ins in stage:
        if ins.keyword == "ENV":
            for token in shlex.split(ins.args):
                assert "=" in token, f"ENV should use KEY=value, got {token!r}"
                name, _, value = token.partition("=")
                env[name] = value
    return env


def only(stage: list[Instruction], keyword: str) -> Instruction:
    found = [i for i in stage if i.keyword == keyword]
    assert len(found) == 1, f"expected one {keyword} in the stage, found {len(found)}"
    return found[0]


def run_command(ins: Instruction) -> str:
    """A RUN's shell command without its --mount/--network options."""
    assert ins.keyword == "RUN"
    words = ins.args.split(" ")
    while words and words[0].startswith("--"):
        words.pop(0)
    return " ".join(words)


def marked_command(instructions: list[Instruction], marker: str) -> str:
    marked = [i for i in instructions if f"# ci:{marker}" in i.comments]
    assert len(marked) == 1, f"expected one instruction marked '# ci:{marker}'"
    return run_command(marked[0])


# What CI runs to get the same commands (kept here so a change to the markers is caught).
CI_EXTRACT = 'awk -v m="# ci:$1" \'$0==m {getline; sub(/^RUN( --[^ ]+)* /, ""); print; exit}\' "$2"'


@pytest.fixture(scope="module")
def instructions() -> list[Instruction]:
    return parse(DOCKERFILE.read_text(encoding="utf-8"))


@pytest.fixture(scope="module")
def final(instructions: list[Instruction]) -> list[Instruction]:
    return stages(instructions)[-1]


# ------------------------------------------------------------------ the rules


def test_multi_stage_on_a_slim_python_base(instructions: list[Instruction]) -> None:
    all_stages = stages(instructions)
    assert len(all_stages) >= 2
    args = global_args(instructions)
    for stage in all_stages:
        image = stage[0].args.split()[0]
        image = re.sub(r"\$\{(\w+)\}", lambda m: args[m.group(1)], image)
        assert re.fullmatch(r"python:3\.1[1-9]-slim(-\w+)?(@sha256:[0-9a-f]{64})?", image), image


def test_the_base_image_is_pinned_by_digest(instructions: list[Instruction]) -> None:
    # A tag moves (every Debian or Python patch release); a digest names one image, so
    # two builds of one commit start from the same bytes.
    args = global_args(instructions)
    image = args["PYTHON_IMAGE"]
    assert re.fullmatch(r"python:3\.11-slim-bookworm@sha256:[0-9a-f]{64}", image), image
    for stage in stages(instructions):
        assert stage[0].args.split()[0] == "${PYTHON_IMAGE}"
    (arg,) = [i for i in instructions if i.keyword == "ARG" and i.args.startswith("PYTHON_")]
    said = " ".join(arg.comments)
    assert "python:3.11-slim-bookworm" in said  # the tag it was taken from
    assert "docker buildx imagetools inspect python:3.11-slim-bookworm" in said  # refresh


def test_the_build_stage_makes_a_wheel_and_the_runtime_gets_only_the_wheel(
    instructions: list[Instruction], final: list[Instruction]
) -> None:
    build = stages(instructions)[0]
    assert "pip wheel" in marked_command(build, "build-wheel")
    runtime_copies = [i.args for i in final if i.keyword in ("COPY", "ADD")]
    assert runtime_copies == [], "the runtime stage must not copy the source in"
    install = [i for i in final if i.keyword == "RUN" and "from=build" in i.args]
    assert len(install) == 1
    command = run_command(install[0])
    assert "python -m venv" in command and ".whl" in command


def test_dependencies_come_from_the_lock_with_hashes_then_the_wheel_without(
    instructions: list[Instruction],
) -> None:
    build = stages(instructions)[0]
    copied = [src for ins in build if ins.keyword == "COPY" for src in ins.args.split()[:-1]]
    assert "requirements.lock" in copied
    assert 'cp requirements.lock "$WHEEL_DIR/"' in marked_command(build, "build-wheel")
    steps = [step.strip() for step in marked_command(instructions, "install-wheel").split("&&")]
    pip_installs = [step for step in steps if " install " in f" {step} "]
    assert len(pip_installs) == 2, pip_installs
    from_lock, wheel = pip_installs
    assert "--require-hashes" in from_lock.split()
    assert '-r "$WHEEL_DIR/requirements.lock"' in from_lock
    assert ".whl" not in from_lock
    assert "--no-deps" in wheel.split() and wheel.endswith('"$WHEEL_DIR"/hrsync-*.whl')
    # The lock must satisfy what the wheel declares, or the build fails here.
    assert steps[-1] == '"$VENV_DIR/bin/pip" check'


def test_the_build_backend_comes_from_a_lock_with_hashes(instructions: list[Instruction]) -> None:
    # `pip wheel` with build isolation fetched whatever hatchling was newest that day.
    build = stages(instructions)[0]
    copied = [src for ins in build if ins.keyword == "COPY" for src in ins.args.split()[:-1]]
    assert "requirements-build.lock" in copied
    steps = [step.strip() for step in marked_command(build, "build-wheel").split("&&")]
    (tools,) = [step for step in steps if " install " in f" {step} "]
    (wheel,) = [step for step in steps if "pip wheel" in step]
    assert steps.index(tools) < steps.index(wheel)
    assert {"--require-hashes", "--only-binary"} <= set(tools.split())
    assert "-r requirements-build.lock" in tools
    # The wheel is built with those tools, and fetches nothing of its own.
    assert {"--no-build-isolation", "--no-deps"} <= set(wheel.split())


def test_the_build_lock_pins_the_build_system_with_hashes() -> None:
    from packaging.requirements import Requirement
    from packaging.utils import canonicalize_name

    from tests.test_lock import parse_lock

    pins = parse_lock((ROOT / "requirements-build.lock").read_text(encoding="utf-8"))
    assert pins, "requirements-build.lock pins nothing"
    for pin in pins.values():
        assert pin.hashes, f"{pin.name} has no hash"
    pyproject = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    wanted = [Requirement(r) for r in pyproject["build-system"]["requires"]]
    source = (ROOT / "requirements-build.in").read_text(encoding="utf-8")
    named = [Requirement(line) for line in source.splitlines() if line and line[0] != "#"]
    assert {str(r) for r in named} == {str(r) for r in wanted}, "requirements-build.in"
    for requirement in wanted:
        pin = pins[canonicalize_name(requirement.name)]
        assert requirement.specifier.contains(pin.version), (requirement, pin.version)


def test_tini_is_pinned_to_the_bookworm_package(final: list[Instruction]) -> None:
    installs = [i.args for i in final if i.keyword == "RUN" and "apt-get install" in i.args]
    pinned = [m for args in installs for m in re.findall(r"\btini=(\S+)", args)]
    # Debian 12's tini is a binNMU: 0.19.0-1 alone is in no bookworm archive.
    assert pinned == ["0.19.0-1+b3"]


def test_ci_commands_use_variables_not_image_paths(instructions: list[Instruction]) -> None:
    build = marked_command(instructions, "build-wheel")
    install = marked_command(instructions, "install-wheel")
    assert '"$WHEEL_DIR"' in build
    assert '"$VENV_DIR"' in install and '"$WHEEL_DIR"' in install
    for command in (build, install):
        assert "/dist" not in command and "/opt" not in command


def test_ci_extraction_snippet_yields_the_same_commands(instructions: list[Instruction]) -> None:
    for marker in ("build-wheel", "install-wheel"):
        shell = subprocess.run(
            ["bash", "-c", CI_EXTRACT, "extract", marker, str(DOCKERFILE)],
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
        assert shell == marked_command(instructions, marker)


def test_runs_as_a_non_root_user(final: list[Instruction]) -> None:
    users = [i.args for i in final if i.keyword == "USER"]
    assert users, "the runtime stage has no USER"
    user = users[-1].split(":")[0]
    assert user not in ("root", "0")
    assert user.isdigit(), "a numeric uid lets Kubernetes' runAsNonRoot verify it"
    # Nothing runs as root after the switch.
    last_user = max(i for i, ins in enumerate(final) if ins.keyword == "USER")
    assert all(ins.keyword != "RUN" for ins in final[last_user:])


def test_tini_is_pid_1_and_the_default_command_is_hrsync_run(final: list[Instruction]) -> None:
    entrypoint = json.loads(only(final, "ENTRYPOINT").args)
    cmd = json.loads(only(final, "CMD").args)
    assert entrypoint == ["tini", "--", "hrsync"]
    assert cmd == ["run"]
    installs = [i.args for i in final if i.keyword == "RUN" and "apt-get install" in i.args]
    assert any(re.search(r"\btini\b", args) for args in installs)
    assert build_parser().parse_args(cmd).command == "run"


def test_healthcheck_runs_hrsync_healthcheck_in_exec_form(final: list[Instruction]) -> None:
    args = only(final, "HEALTHCHECK").args
    options, _, command = args.partition(" CMD ")
    assert json.loads(command) == ["hrsync", "healthcheck"]
    flags = dict(opt.lstrip("-").split("=", 1) for opt in options.split())
    assert {"interval", "timeout"} <= flags.keys()
    assert build_parser().parse_args(["healthcheck"]).command == "healthcheck"


def test_state_lives_on_the_data_volume(final: list[Instruction]) -> None:
    volume = only(final, "VOLUME").args
    volumes = json.loads(volume) if volume.startswith("[") else volume.split()
    assert volumes == ["/data"]
    env = env_of(final)
    assert env["HRSYNC_STATE__DATABASE_URL"] == "sqlite:////data/hrsync.db"


def test_configuration_comes_from_a_mounted_file_and_the_environment(
    final: list[Instruction],
) -> None:
    env = env_of(final)
    assert env[CONFIG_ENV] == "/config/hrsync.toml"
    # The variables the image sets are ones hrsync really reads.
    overrides = {k: v for k, v in env.items() if k.startswith("HRSYNC_") and "__" in k}
    settings = load_settings(
        None, overrides, require_token=False, require_source=False, require_dx=False
    )
    assert settings.state.database_url == "sqlite:////data/hrsync.db"


def test_exec_form_everywhere_signals_reach_hrsync(final: list[Instruction]) -> None:
    for keyword in ("ENTRYPOINT", "CMD"):
        assert only(final, keyword).args.startswith("[")
    assert only(final, "STOPSIGNAL").args == "SIGTERM"


# ------------------------------------------------------------------ .dockerignore


def _segment(seg: str) -> str:
    out, i = "", 0
    while i < len(seg):
        ch = seg[i]
        if ch == "*":
            out += "[^/]*"
        elif ch == "?":
            out += "[^/]"
        elif ch == "[":
            end = seg.index("]", i + 1)
            body = seg[i + 1 : end]
            out += "[" + ("^" + body[1:] if body[:1] in ("!", "^") else body) + "]"
            i = end
        else:
            out += re.escape(ch)
        i += 1
    return out


def _pattern(pattern: str) -> re.Pattern[str]:
    segments = pattern.strip("/").split("/")
    regex = ""
    for index, seg in enumerate(segments):
        last = index == len(segments) - 1
        if seg == "**":
            regex += ".*" if last else "(?:[^/]+/)*"
        else:
            regex += _segment(seg) + ("" if last else "/")
    return re.compile(regex + r"\Z")


def dockerignore_rules() -> list[tuple[bool, re.Pattern[str]]]:
    rules = []
    for raw in DOCKERIGNORE.read_text(encoding="utf-8").splitlines():
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        negated = line.startswith("!")
        rules.append((negated, _pattern(line.lstrip("!").strip())))
    return rules


def ignored(path: str, rules: list[tuple[bool, re.Pattern[str]]]) -> bool:
    """Docker's rule: the last pattern matching the path or one of its parents wins."""
    parts = path.split("/")
    prefixes = ["/".join(parts[: n + 1]) for n in range(len(parts))]
    result = False
    for negated, regex in rules:
        if any(regex.match(p) for p in prefixes):
            result = not negated
    return result


@pytest.mark.parametrize(
    "path",
    [
        ".git/HEAD",
        ".venv/bin/python",
        ".pytest_cache/v/cache/nodeids",
        ".mypy_cache/3.11/x.json",
        "tests/daemon/test_service.py",
        "benchmarks/generate.py",
        "hrsync.db",
        "hrsync.db-wal",
        "hrsync/__pycache__/cli.cpython-311.pyc",
        "hrsync/dx/__pycache__/client.cpython-311.pyc",
        "migrations/versions/__pycache__/x.cpython-311.pyc",
        "config/state.db",
        "dist/hrsync-0.1.0-py3-none-any.whl",
    ],
)
def test_dockerignore_keeps_out(path: str) -> None:
    assert ignored(path, dockerignore_rules())


@pytest.mark.parametrize(
    "path",
    [
        "pyproject.toml",
        "requirements.lock",
        "requirements-build.lock",
        "README.md",
        "hrsync/cli.py",
        "hrsync/simulator/core.py",
        "migrations/env.py",
        "config/hrsync.example.toml",
    ],
)
def test_dockerignore_lets_in(path: str) -> None:
    assert not ignored(path, dockerignore_rules())


def test_every_file_the_build_copies_is_in_the_context(instructions: list[Instruction]) -> None:
    rules = dockerignore_rules()
    build = stages(instructions)[0]
    sources = [src for ins in build if ins.keyword == "COPY" for src in ins.args.split()[:-1]]
    needed = {"pyproject.toml", "requirements.lock", "README.md", "hrsync", "migrations", "config"}
    needed.add("requirements-build.lock")
    assert needed <= set(sources)
    for source in sources:
        top = ROOT / source
        files = [top] if top.is_file() else [p for p in top.rglob("*") if p.is_file()]
        for file in files:
            rel = file.relative_to(ROOT).as_posix()
            if "__pycache__" in rel or rel.endswith((".pyc", ".db")):
                continue
            assert not ignored(rel, rules), f"{rel} is needed by the build but ignored"


# ------------------------------------------------------------------ the build itself


@pytest.mark.slow
def test_the_marked_build_command_makes_a_wheel_with_migrations_and_config(
    instructions: list[Instruction], tmp_path: Path
) -> None:
    wheel_dir = tmp_path / "dist"
    env = {**os.environ, "WHEEL_DIR": str(wheel_dir), "PIP_DISABLE_PIP_VERSION_CHECK": "1"}
    command = marked_command(instructions, "build-wheel").replace(
        "python -m venv", f"{shlex.quote(sys.executable)} -m venv"
    )
    subprocess.run(["bash", "-c", command], cwd=ROOT, env=env, check=True, capture_output=True)
    (wheel,) = wheel_dir.glob("hrsync-*.whl")
    names = set(zipfile.ZipFile(wheel).namelist())
    assert "hrsync/daemon/__init__.py" in names
    assert "hrsync/_migrations/env.py" in names
    assert "hrsync/_config/hrsync.example.toml" in names
