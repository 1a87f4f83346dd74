"""The docs' shape: every page under docs/ is in mkdocs.yml's nav, the README stays a short
front door whose first ```sh block is CI's two quick-start lines, and no file cites a
document outside the repository.

`mkdocs build --strict` (in CI) checks the links and anchors themselves.
"""

from __future__ import annotations

import re
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

ROOT = Path(__file__).resolve().parent.parent
DOCS = ROOT / "docs"
README = ROOT / "README.md"
README_MAX_LINES = 200

# The two documents the docs replaced, and the shared folder outside the repository.
# Written so that this file does not match itself.
OUTSIDE = re.compile(r"DESIGN\.md|ARCHITECTURE\.md|(?:\.\./)+share[d]\b|/work/share[d]\b")


def nav_pages(node: Any) -> Iterator[str]:
    if isinstance(node, str):
        yield node
    elif isinstance(node, list):
        for item in node:
            yield from nav_pages(item)
    elif isinstance(node, dict):
        for value in node.values():
            yield from nav_pages(value)


def test_every_page_is_in_the_nav_and_every_nav_entry_is_a_page() -> None:
    config = yaml.safe_load((ROOT / "mkdocs.yml").read_text(encoding="utf-8"))
    assert config.get("strict") is True
    listed = list(nav_pages(config["nav"]))
    assert len(listed) == len(set(listed)), "a page is in the nav twice"
    pages = {p.relative_to(DOCS).as_posix() for p in DOCS.rglob("*.md")}
    assert sorted(pages - set(listed)) == [], "pages missing from mkdocs.yml's nav"
    assert sorted(set(listed) - pages) == [], "nav entries with no page under docs/"


def tracked_files() -> list[str]:
    git = shutil.which("git")
    if git is None or not (ROOT / ".git").exists():
        pytest.skip("not a git checkout")
    listed = subprocess.run(
        [git, "ls-files", "-z"], cwd=ROOT, capture_output=True, check=True
    ).stdout.decode()
    return [name for name in listed.split("\0") if name]


def test_no_file_cites_a_document_outside_the_repository() -> None:
    found: dict[str, list[str]] = {}
    for name in tracked_files():
        path = ROOT / name
        if not path.is_file():
            continue  # deleted in the working tree, not yet committed
        try:
            text = path.read_text(encoding="utf-8")
        except UnicodeDecodeError:
            continue
        hits = sorted({m.group(0) for m in OUTSIDE.finditer(text)})
        if hits:
            found[name] = hits
    assert found == {}, "cite the page under docs/ instead"


def test_the_readme_is_a_short_front_door() -> None:
    lines = README.read_text(encoding="utf-8").splitlines()
    assert len(lines) <= README_MAX_LINES, f"README.md has {len(lines)} lines"


def test_the_readme_s_first_sh_block_is_the_two_quick_start_lines() -> None:
    # The same reading as .ci/run's `readme_line`: CI runs these two lines verbatim.
    lines = README.read_text(encoding="utf-8").splitlines()
    start = lines.index("```sh")
    end = lines.index("```", start + 1)
    block = lines[start + 1 : end]
    assert len(block) == 2, block
    assert all(line.strip() for line in block), block
