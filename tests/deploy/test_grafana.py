"""deploy/grafana/hrsync.json: a Grafana dashboard whose every query names metrics the
daemon exposes (and documents), parses as PromQL (promtool), and reads its Prometheus
from the dashboard's own variable, so it imports into any Grafana."""

from __future__ import annotations

import json
import re
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import yaml

from tests.deploy.tools import (
    DEPLOY,
    ROOT,
    exposed_metric_names,
    promql_metric_names,
    require_tool,
)

DASHBOARD = DEPLOY / "grafana" / "hrsync.json"
METRICS_PAGE = ROOT / "docs" / "reference" / "metrics.md"
# Grafana's variables, as a query would see them.
VARIABLES = {
    "$__rate_interval": "5m",
    "$__interval": "1m",
    "$__range": "1d",
    "$job": ".*",
}
# What the dashboard should show, by the metric that shows it.
MUST_SHOW = {
    "hrsync_runs_total",
    "hrsync_last_success_timestamp_seconds",
    "hrsync_attention_required",
    "hrsync_deferred_until_timestamp_seconds",
    "hrsync_people",
    "hrsync_teams",
    "hrsync_plan_changes",
    "hrsync_dx_requests_total",
    "hrsync_dx_retries_total",
    "hrsync_snapshot_ready",
    "hrsync_next_snapshot_timestamp_seconds",
}


def dashboard() -> dict[str, Any]:
    loaded = json.loads(DASHBOARD.read_text(encoding="utf-8"))
    assert isinstance(loaded, dict)
    return loaded


def panels(node: dict[str, Any]) -> Iterator[dict[str, Any]]:
    for panel in node.get("panels", []):
        yield panel
        yield from panels(panel)


def queries() -> list[tuple[str, str]]:
    """(panel title, expression) for every query, the variables' included."""
    found = [
        (panel["title"], target["expr"])
        for panel in panels(dashboard())
        for target in panel.get("targets", [])
    ]
    for variable in dashboard()["templating"]["list"]:
        if variable["type"] == "query":
            found.append((f"${variable['name']}", variable["query"]["query"]))
    return found


def plain(expr: str) -> str:
    for name, value in VARIABLES.items():
        expr = expr.replace(name, value)
    assert "$" not in expr, f"a Grafana variable this test does not know: {expr}"
    return expr


def label_values(expr: str) -> str:
    """`label_values(METRIC, label)` (a Grafana function) as the metric it reads."""
    found = re.fullmatch(r"label_values\((.+),\s*\w+\)", expr)
    return found.group(1) if found else expr


def test_every_query_names_metrics_the_daemon_exposes_and_documents() -> None:
    exposed = exposed_metric_names()
    page = METRICS_PAGE.read_text(encoding="utf-8")
    used: set[str] = set()
    for title, expr in queries():
        names = promql_metric_names(plain(label_values(expr)))
        assert names, f"{title}: {expr} selects no metric"
        for name in names - {"up"}:
            assert name in exposed, f"{title}: {name} is not a metric of the daemon"
            base = re.sub(r"_(bucket|sum|count)$", "", name)
            assert f"`{name}" in page or f"`{base}" in page, f"{name} is not in metrics.md"
        used |= names
    assert used >= MUST_SHOW, f"the dashboard does not show {sorted(MUST_SHOW - used)}"


def test_every_query_parses_as_promql(tmp_path: Path) -> None:
    # promtool checks a rules file's expressions: one recording rule per query.
    rules = [
        {"record": f"dashboard:query_{i}", "expr": plain(label_values(expr))}
        for i, (_, expr) in enumerate(queries())
    ]
    path = tmp_path / "dashboard-queries.yml"
    path.write_text(yaml.safe_dump({"groups": [{"name": "dashboard", "rules": rules}]}))
    tool = require_tool("promtool", "prometheus")
    checked = subprocess.run(
        [tool, "check", "rules", str(path)], capture_output=True, text=True, timeout=60
    )
    assert checked.returncode == 0, checked.stdout + checked.stderr


def test_it_imports_anywhere_its_prometheus_a_variable() -> None:
    d = dashboard()
    assert d["uid"] == "hrsync" and d["title"] == "hrsync"
    variables = {v["name"]: v for v in d["templating"]["list"]}
    assert variables["datasource"]["type"] == "datasource"
    assert variables["datasource"]["query"] == "prometheus"
    ids = [panel["id"] for panel in panels(d)]
    assert len(ids) == len(set(ids)), "panel ids repeat"
    for panel in panels(d):
        assert {"x", "y", "w", "h"} <= set(panel["gridPos"]), panel["title"]
        if panel["type"] == "row":
            continue
        assert panel["datasource"] == {"type": "prometheus", "uid": "${datasource}"}
        assert panel.get("description"), f"{panel['title']}: say what it shows"
        for target in panel["targets"]:
            assert target["datasource"] == panel["datasource"]
            assert 'job=~"$job"' in target["expr"], f"{panel['title']}: not filtered by $job"
