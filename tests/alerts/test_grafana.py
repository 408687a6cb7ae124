"""The Grafana dashboard: the committed JSON is a fresh render of the panel table; its layout and
variables are what Grafana needs; every metric it names is one the collector exports; its threshold
lines are the numbers the rendered Prometheus rule file compares with; and the Streamlit pages that
draw the same charts send the same PromQL with the same lines. (That every query returns data from a
real Prometheus is tests/alerts/test_grafana_prometheus.py.)"""

from __future__ import annotations

import ast
import json
import re
import subprocess
from pathlib import Path

import pytest
import yaml

from alerts.render import recording_rules, render_rules
from clirun import run_cli
from collectors.export.metrics import METRICS
from dashboards import panelqueries
from alerts.grafana import dashboard, render_dashboard
from monitor.settings.config import Thresholds
from monitor.contract.panels import PANELS, alert_names, instantiate

ROOT = Path(__file__).resolve().parents[2]
COMMITTED = ROOT / "deploy" / "grafana" / "dashboards" / "compaction.json"
VIEWS = ROOT / "dashboards" / "views"


def panels_of(doc: dict) -> list[dict]:
    return [p for p in doc["panels"] if p["type"] != "row"]


def by_title(doc: dict) -> dict[str, dict]:
    return {p["title"]: p for p in panels_of(doc)}


def test_committed_dashboard_is_a_fresh_render():
    assert COMMITTED.read_text() == render_dashboard(), \
        "re-render: compaction-monitor grafana render --out deploy/grafana/dashboards/compaction.json"


def test_the_command_renders_the_same_file(tmp_path):
    out = tmp_path / "d.json"
    r = run_cli("grafana", "render", "--out", str(out), cwd=ROOT)
    assert r.returncode == 0, r.stderr
    assert out.read_text() == COMMITTED.read_text()


def test_variables_and_layout():
    doc = json.loads(COMMITTED.read_text())
    assert isinstance(doc["schemaVersion"], int) and doc["schemaVersion"] >= 39
    variables = {v["name"]: v for v in doc["templating"]["list"]}
    assert variables["datasource"]["type"] == "datasource" and variables["datasource"]["query"] == "prometheus"
    cluster = variables["cluster"]
    assert cluster["datasource"]["uid"] == "${datasource}" and cluster["includeAll"] and cluster["allValue"] == ".*"
    cells = set()
    for p in doc["panels"]:
        g = p["gridPos"]
        assert 0 <= g["x"] and g["x"] + g["w"] <= 24, p["title"]
        mine = {(x, y) for x in range(g["x"], g["x"] + g["w"]) for y in range(g["y"], g["y"] + g["h"])}
        assert not mine & cells, f"{p['title']} overlaps another panel"
        cells |= mine
    assert len({p["id"] for p in doc["panels"]}) == len(doc["panels"])
    for p in panels_of(doc):
        assert p["datasource"]["uid"] == "${datasource}" and p["targets"], p["title"]
        for t in p["targets"]:
            assert t["datasource"]["uid"] == "${datasource}"
            assert '$cluster' in t["expr"], f"{p['title']}: {t['expr']} ignores the cluster variable"


def test_every_metric_named_is_exported_or_recorded():
    exported = {name + ("_total" if kind == "counter" else "") for name, (kind, _, _) in METRICS.items()}
    recorded = {r["record"] for r in recording_rules()}
    for p in PANELS:
        for q in p.queries:
            names = set(re.findall(r"\b(kafka_compaction[:_][\w:]+)", q.expr))
            assert names or q.expr.startswith("ALERTS{"), q.expr
            assert names <= exported | recorded, (p.key, names - exported - recorded)


def test_alert_panel_lists_every_alert_of_the_rule_file():
    in_rules = {r["alert"] for g in yaml.safe_load(render_rules())["groups"] for r in g["rules"] if "alert" in r}
    assert set(alert_names()) == in_rules
    (target,) = by_title(dashboard())["Compaction alerts"]["targets"]
    assert set(re.search(r'alertname=~"([^"]+)"', target["expr"]).group(1).split("|")) == in_rules


def rule_bounds(rules_text: str) -> dict[str, list[float]]:
    """Per alert, the numbers its expression compares with (from the rendered rule file)."""
    out: dict[str, list[float]] = {}
    for g in yaml.safe_load(rules_text)["groups"]:
        for r in g["rules"]:
            if "alert" in r:
                out.setdefault(r["alert"], []).extend(
                    float(n) for n in re.findall(r"(?:>=|>|<|==)\s*([0-9][0-9.e+]*)\s*$", r["expr"], re.M))
    return out


@pytest.mark.parametrize("t", [Thresholds(), Thresholds(clean_time_seconds=60, buffer_utilization_ratio=0.5,
                                                           consumer_lag_warning_fraction=0.8,
                                                           tombstone_growth_per_hour=7)],
                         ids=["defaults", "configured"])
def test_threshold_lines_are_the_rule_files_numbers(t):
    """Each panel's lines, read from the dashboard JSON, against the numbers the rule file rendered
    from the same thresholds compares with."""
    bounds = rule_bounds(render_rules(t))
    panels = by_title(dashboard(t))
    expected = {  # panel title -> the alerts whose numbers it draws
        "Longest recent clean": [("CleanerSlow", 0)],
        "Dedupe buffer utilization": [("CleanerBufferSaturated", 0)],
        "Dead cleaner threads": [("LogCleanerThreadDead", 0)],
        "Tombstone growth over the last hour": [("TombstonesPilingUp", 0)],
        "Tombstones past their delete horizon": [("TombstonesPastDeleteHorizon", 0)],
        "Consumer groups: time lag against delete.retention.ms": [("ConsumerMayMissTombstones", 0),
                                                                   ("ConsumerMayMissTombstones", 2)],
    }
    for title, refs in expected.items():
        steps = [s["value"] for s in panels[title]["fieldConfig"]["defaults"]["thresholds"]["steps"][1:]]
        assert steps == sorted(bounds[a][i] for a, i in refs), title
    assert [s["value"] for s in panels["Longest recent clean"]["fieldConfig"]["defaults"]["thresholds"]["steps"][1:]] \
        == [t.clean_time_seconds]


def history_calls(source: str) -> list[ast.Call]:
    return [n for n in ast.walk(ast.parse(source)) if isinstance(n, ast.Call)
            and isinstance(n.func, ast.Attribute) and n.func.attr == "history"
            and isinstance(n.func.value, ast.Name) and n.func.value.id == "ui"]


def test_streamlit_pages_query_prometheus_only_through_the_panel_table():
    """Every range query a page sends is a panel's (``panelqueries.promql``): no page writes PromQL."""
    calls = [c for f in sorted(VIEWS.glob("*.py")) for c in history_calls(f.read_text())]
    assert calls
    for c in calls:
        q = c.args[1]
        assert isinstance(q, ast.Call) and ast.unparse(q.func) == "panelqueries.promql", ast.unparse(c)


@pytest.mark.parametrize("key", ["dirty_ratio", "since_last_run", "clean_time", "buffer_utilization", "recopy",
                                 "dead_threads", "tombstones", "lag_retention", "cleanable_ratio"])
def test_streamlit_and_grafana_agree(key):
    """The PromQL a page sends is the Grafana target with "All" clusters, and its lines are Grafana's."""
    t = Thresholds(clean_time_seconds=42)
    p = next(p for p in PANELS if p.key == key)
    target = by_title(dashboard(t))[p.title]
    assert panelqueries.promql(key) == instantiate(target["targets"][0]["expr"], cluster=".*")
    assert panelqueries.thresholds(key, t) == [s["value"] for s in
                                               target["fieldConfig"]["defaults"]["thresholds"]["steps"][1:]]


def test_one_partition_narrows_every_selector():
    q = panelqueries.promql("cleanable_ratio", topic="t", partition="3")
    assert q == 'kafka_compaction_partition_cleanable_ratio{cluster=~".*",topic="t",partition="3"}'


def test_an_unknown_template_variable_is_refused():
    with pytest.raises(ValueError, match=r"\$__range"):
        instantiate("rate(x[$__range])")


def test_tables_name_their_value_columns_and_merge_on_labels():
    """Grafana names an instant table query's value column "Value" (one query) or "Value #<refId>"; the
    two-query table renames both after the legends, before merging on the label columns they share."""
    panels = by_title(dashboard())
    ratio = panels["Cleanable ratio against min.cleanable.dirty.ratio"]
    assert [t["id"] for t in ratio["transformations"]] == ["organize", "merge"]
    assert ratio["transformations"][0]["options"]["renameByName"] == {
        f"Value #{t['refId']}": t["legendFormat"] for t in ratio["targets"]}
    assert all(t["instant"] and t["format"] == "table" for t in ratio["targets"])
    causes = panels["Why each partition is (not) compacting"]
    assert causes["transformations"][0]["options"]["excludeByName"]["Value"] is True  # 1 for every cause


# ALERTS series as Prometheus writes them: a collector that does not answer its scrape gives
# CompactionMonitorDown from up{job=...} == 0, a series with no cluster label (a collector may serve several)
MONITOR_DOWN = 'ALERTS{alertname="CompactionMonitorDown",alertstate="firing",instance="127.0.0.1:9",' \
               'job="kafka-compaction-monitor",severity="warning"}'
ALERT_SERIES = [
    MONITOR_DOWN,
    'ALERTS{alertname="CompactionMonitorDown",alertstate="pending",cluster="b",severity="warning",source="admin"}',
    'ALERTS{alertname="CleanerSlow",alertstate="firing",broker="1",cluster="a",severity="warning"}',
    'ALERTS{alertname="CleanerSlow",alertstate="firing",broker="1",cluster="b",severity="warning"}',
    'ALERTS{alertname="Watchdog",alertstate="firing",severity="none"}',  # another rule file's: not ours
]


@pytest.mark.parametrize("cluster, shown", [
    ("a", [ALERT_SERIES[0], ALERT_SERIES[2]]),
    (".*", ALERT_SERIES[:4]),
], ids=["one cluster picked", "all clusters"])
def test_the_alert_panel_keeps_the_monitor_down_alert_whichever_cluster_is_picked(tmp_path, cluster, shown):
    """The panel's query, with $cluster as Grafana substitutes it, evaluated by Prometheus' own engine
    (promtool's PromQL tests) over ALERTS series: the picked cluster's alerts and the monitor-down alert
    that has no cluster label; not another cluster's, nor another rule file's."""
    import shutil

    promtool = shutil.which("promtool")
    if promtool is None:
        pytest.fail("promtool is missing: ./dev installs Debian's prometheus package")
    (target,) = by_title(dashboard())["Compaction alerts"]["targets"]
    case = {"evaluation_interval": "1m", "tests": [{
        "interval": "1m",
        "input_series": [{"series": s, "values": "1"} for s in ALERT_SERIES],
        "promql_expr_test": [{"expr": instantiate(target["expr"], cluster=cluster), "eval_time": "0m",
                              "exp_samples": [{"labels": s, "value": 1} for s in shown]}]}]}
    (tmp_path / "alerts.test.yml").write_text(yaml.safe_dump(case))
    r = subprocess.run([promtool, "test", "rules", "alerts.test.yml"], capture_output=True, text=True, cwd=tmp_path)
    assert r.returncode == 0, r.stdout + r.stderr
