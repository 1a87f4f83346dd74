"""The alert rules: one source (deploy/alerts/rules.yml), checked and unit-tested by
promtool, made into the Kubernetes PrometheusRule by a script, about real metrics, and
each explained in docs/how-to/alerts.md."""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.deploy.tools import (
    DEPLOY,
    ROOT,
    exposed_metric_names,
    promql_metric_names,
    require_tool,
)

ALERTS = DEPLOY / "alerts"
RULES = ALERTS / "rules.yml"
UNIT_TESTS = (ALERTS / "tests.yml", ALERTS / "tests-days.yml")
PROMETHEUS_RULE = DEPLOY / "kubernetes" / "base" / "prometheusrule.yaml"
HOW_TO = ROOT / "docs" / "how-to" / "alerts.md"


def rules() -> list[dict[str, Any]]:
    groups = yaml.safe_load(RULES.read_text(encoding="utf-8"))["groups"]
    return [rule for group in groups for rule in group["rules"]]


def promtool(*args: str) -> subprocess.CompletedProcess[str]:
    tool = require_tool("promtool", "prometheus")
    return subprocess.run(
        [tool, *args], cwd=ALERTS, capture_output=True, text=True, timeout=300, check=False
    )


def test_the_rules_pass_promtool_s_check() -> None:
    checked = promtool("check", "rules", RULES.name)
    assert checked.returncode == 0, checked.stdout + checked.stderr


def test_the_rules_pass_their_unit_tests() -> None:
    tested = promtool("test", "rules", *(path.name for path in UNIT_TESTS))
    assert tested.returncode == 0, tested.stdout + tested.stderr


def test_every_alert_is_unit_tested_firing_and_holding_back() -> None:
    fired: set[str] = set()
    held: set[str] = set()
    for path in UNIT_TESTS:
        for test in yaml.safe_load(path.read_text(encoding="utf-8"))["tests"]:
            for check in test.get("alert_rule_test", []):
                (fired if check.get("exp_alerts") else held).add(check["alertname"])
    names = {rule["alert"] for rule in rules()}
    assert names - fired == set(), "alerts no unit test sees firing"
    assert names - held == set(), "alerts no unit test sees holding back"


def test_the_prometheusrule_is_made_from_the_rules_file(tmp_path: Path) -> None:
    made = tmp_path / "prometheusrule.yaml"
    subprocess.run(["bash", str(ALERTS / "prometheusrule.sh"), str(made)], check=True, timeout=30)
    assert made.read_text(encoding="utf-8") == PROMETHEUS_RULE.read_text(encoding="utf-8"), (
        "deploy/kubernetes/base/prometheusrule.yaml differs from deploy/alerts/rules.yml: "
        "run `bash deploy/alerts/prometheusrule.sh`"
    )
    resource = yaml.safe_load(PROMETHEUS_RULE.read_text(encoding="utf-8"))
    assert resource["kind"] == "PrometheusRule"
    assert resource["spec"] == yaml.safe_load(RULES.read_text(encoding="utf-8"))


def test_the_rules_name_metrics_the_daemon_exposes() -> None:
    known = exposed_metric_names() | {"up"}
    for rule in rules():
        used = promql_metric_names(rule["expr"])
        assert used, rule["alert"]
        assert used <= known, f"{rule['alert']} queries {sorted(used - known)}"


def test_every_alert_is_explained_in_the_how_to() -> None:
    page = HOW_TO.read_text(encoding="utf-8")
    for rule in rules():
        assert f"## {rule['alert']}" in page, f"docs/how-to/alerts.md: no section {rule['alert']}"
        assert rule["labels"]["severity"] in ("critical", "warning", "info"), rule["alert"]


@pytest.mark.parametrize(
    ("expr", "names"),
    [
        pytest.param("up == 0", {"up"}, id="plain"),
        pytest.param(
            'sum by (outcome) (increase(hrsync_runs_total{job=~"$job"}[1h]))',
            {"hrsync_runs_total"},
            id="aggregation-function-matchers-range",
        ),
        pytest.param(
            "max_over_time((hrsync_deferred_until_timestamp_seconds > time() + 3600)[3d:1h])"
            " > time() - 172800",
            {"hrsync_deferred_until_timestamp_seconds"},
            id="subquery",
        ),
        pytest.param(
            "a_total unless on (job) b offset 2d and bool c",
            {"a_total", "b", "c"},
            id="keywords",
        ),
        pytest.param('absent(up{job=~".*hrsync.*"})', {"up"}, id="regex-in-string"),
    ],
)
def test_promql_metric_names(expr: str, names: set[str]) -> None:
    assert promql_metric_names(expr) == names
