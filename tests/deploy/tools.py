"""What the deploy/ tests share: the files' places, and the outside tools they run.

The tools come from Debian (kubectl, prometheus for promtool, systemd for
systemd-analyze; `.ci/run` installs those missing). Without one a test is skipped on a
developer's machine and fails in CI, where a skipped check would be a silent hole.
"""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest

from tests.conftest import in_ci

ROOT = Path(__file__).resolve().parents[2]
DEPLOY = ROOT / "deploy"


def require_tool(name: str, package: str) -> str:
    """The path of the command `name`; skipped without it, except in CI (failed)."""
    found = shutil.which(name)
    if found is not None:
        return found
    why = f"{name} is not installed (apt-get install {package}; .ci/run installs it)"
    if in_ci():
        pytest.fail(f"{why}: CI must run this check, not skip it", pytrace=False)
    pytest.skip(why)


# ------------------------------------------------------------------ PromQL's metric names

# PromQL's words that are not metric names: operators and modifiers. Functions and
# aggregations are told apart by the "(" after them.
_KEYWORDS = frozenset(
    {"and", "or", "unless", "by", "without", "on", "ignoring", "group_left", "group_right"}
    | {"offset", "bool", "inf", "nan"}
)
_STRING = re.compile(r'"(?:[^"\\]|\\.)*"|\'(?:[^\'\\]|\\.)*\'')
_MATCHERS = re.compile(r"\{[^{}]*\}")
_RANGE = re.compile(r"\[[^\]]*\]")
_LABEL_LIST = re.compile(r"\b(by|without|on|ignoring|group_left|group_right)\s*\([^()]*\)")
_WORD = re.compile(r"[A-Za-z_:][A-Za-z0-9_:]*")


def promql_metric_names(expr: str) -> set[str]:
    """The metric names a PromQL expression selects (a reading good for the expressions
    of this project's rules and dashboard, not a parser)."""
    text = _STRING.sub('""', expr)
    text = _MATCHERS.sub("", text)
    text = _RANGE.sub("", text)
    text = _LABEL_LIST.sub("", text)
    names: set[str] = set()
    for match in _WORD.finditer(text):
        word = match.group(0)
        after = text[match.end() :].lstrip()
        before = text[: match.start()].rstrip()
        if word.lower() in _KEYWORDS or after.startswith("("):
            continue
        if before and (before[-1].isdigit() or before[-1] == "."):
            continue  # a unit in a duration or a number: 5m, 1e3
        names.add(word)
    return names


def exposed_metric_names() -> set[str]:
    """Every series name the daemon's /metrics exposes (counters with _total,
    histograms as _bucket, _sum and _count)."""
    from hrsync.monitor.metrics import Metrics

    names: set[str] = set()
    for family in Metrics().registry.collect():
        if family.type == "counter":
            names.add(family.name + "_total")
        elif family.type == "histogram":
            names.update(family.name + suffix for suffix in ("_bucket", "_sum", "_count"))
        else:
            names.add(family.name)
    return names
