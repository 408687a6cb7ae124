"""Render the Grafana dashboard from the panel table (``monitor.contract.panels``) and the thresholds in
``monitor.yaml``.

Every query, threshold line, unit and title comes from the table; this module only lays the panels out
in Grafana's dashboard JSON (rows of 24 columns, ``gridPos``), with a ``datasource`` variable (any
Prometheus) and a ``cluster`` variable. ``deploy/grafana/dashboards/compaction.json`` in the repository
is the render of the default thresholds; a test keeps it so, and another runs every query against a
real Prometheus. It sits beside the rule file's renderer because it is the same kind of artefact, for
the same Prometheus, and needs no more than the slim install (the Streamlit pages are behind an extra).
"""

from __future__ import annotations


from monitor.fileio import strictjson
from monitor.settings.config import Thresholds
from monitor.contract.metricnames import PREFIX
from monitor.contract.panels import PANELS, Panel

UID = "kafka-compaction"
# Grafana 11.0-11.2's dashboard schema version (the image deploy/docker-compose.yml pins); newer
# Grafanas migrate it on load.
SCHEMA_VERSION = 39
DATASOURCE = {"type": "prometheus", "uid": "${datasource}"}


def _thresholds(p: Panel, t: Thresholds) -> dict:
    return {"mode": "absolute",
            "steps": [{"color": "green", "value": None}]
            + [{"color": color, "value": value} for value, color in p.thresholds(t)]}


def _targets(p: Panel) -> list[dict]:
    out = []
    for i, q in enumerate(p.queries):
        target = {"datasource": DATASOURCE, "refId": chr(ord("A") + i), "expr": q.expr,
                  "legendFormat": q.legend or "__auto", "range": not q.instant, "instant": q.instant}
        if q.instant:
            target["format"] = "table"
        out.append(target)
    return out


def _table_transformations(p: Panel) -> list[dict]:
    """Each instant query's frame without its time and metric name, its value column named after the
    query's legend (or dropped: a query without one is a set of labels, its value 1), then one table:
    Grafana's merge joins frames on the label columns they share, so it comes after."""
    exclude: dict[str, bool] = {"Time": True, "__name__": True}
    rename: dict[str, str] = {}
    for i, q in enumerate(p.queries):
        column = "Value" if len(p.queries) == 1 else f"Value #{chr(ord('A') + i)}"
        if q.legend:
            rename[column] = q.legend
        else:
            exclude[column] = True
    out = [{"id": "organize", "options": {"excludeByName": exclude, "renameByName": rename}}]
    return out + ([{"id": "merge", "options": {}}] if len(p.queries) > 1 else [])


def _panel(p: Panel, pid: int, x: int, y: int, t: Thresholds) -> dict:
    defaults: dict = {"unit": p.unit, "thresholds": _thresholds(p, t)}
    options: dict = {}
    transformations: list = []
    if p.kind == "timeseries":
        defaults["custom"] = {"thresholdsStyle": {"mode": "dashed" if p.marks else "off"}}
        defaults["color"] = {"mode": "palette-classic"}
        options = {"legend": {"displayMode": "table", "placement": "bottom", "calcs": ["lastNotNull", "max"]},
                   "tooltip": {"mode": "multi", "sort": "desc"}}
    elif p.kind == "status-history":
        defaults["color"] = {"mode": "continuous-GrYlRd"}
        defaults["min"], defaults["max"] = 0, 1
        options = {"showValue": "never", "legend": {"showLegend": True}}
    elif p.kind == "table":
        transformations = _table_transformations(p)
    elif p.kind == "bargauge":
        options = {"displayMode": "basic", "orientation": "horizontal", "showUnfilled": True}
    return {"id": pid, "type": p.kind, "title": p.title, "description": p.description, "datasource": DATASOURCE,
            "gridPos": {"x": x, "y": y, "w": p.width, "h": p.height},
            "fieldConfig": {"defaults": defaults, "overrides": []}, "options": options,
            "transformations": transformations, "targets": _targets(p)}


def _variables() -> list[dict]:
    clusters = f"label_values({PREFIX}source_up, cluster)"  # every collector exports source_up
    return [
        {"name": "datasource", "label": "Prometheus", "type": "datasource", "query": "prometheus",
         "current": {}, "hide": 0, "refresh": 1, "regex": "", "options": []},
        {"name": "cluster", "label": "Kafka cluster", "type": "query", "datasource": DATASOURCE,
         "query": {"query": clusters, "refId": "cluster"}, "definition": clusters,
         "multi": True, "includeAll": True, "allValue": ".*", "current": {}, "refresh": 2, "sort": 1,
         "hide": 0, "regex": "", "options": []},
    ]


def dashboard(t: Thresholds | None = None) -> dict:
    """The dashboard as Grafana's JSON model: a collapsed-free row panel per section, the section's
    panels laid left to right, wrapping at 24 columns."""
    t = t or Thresholds()
    panels: list[dict] = []
    pid, y, row = 1, 0, None
    x, row_height = 0, 0
    for p in PANELS:
        if p.row != row:
            y += row_height
            panels.append({"id": pid, "type": "row", "title": p.row, "collapsed": False, "panels": [],
                           "gridPos": {"x": 0, "y": y, "w": 24, "h": 1}})
            pid, y, x, row_height, row = pid + 1, y + 1, 0, 0, p.row
        if x + p.width > 24:
            y, x, row_height = y + row_height, 0, 0
        panels.append(_panel(p, pid, x, y, t))
        pid, x, row_height = pid + 1, x + p.width, max(row_height, p.height)
    return {
        "uid": UID, "title": "Kafka compaction health", "tags": ["kafka", "compaction"],
        "description": "Generated by `compaction-monitor grafana render` from monitor/contract/panels.py and the rule "
                       "table's thresholds (monitor/contract/rules.py, monitor.yaml). Edit those, not this file.",
        "schemaVersion": SCHEMA_VERSION, "version": 1, "editable": True, "graphTooltip": 1,
        "time": {"from": "now-6h", "to": "now"}, "refresh": "1m", "timezone": "utc",
        "templating": {"list": _variables()},
        "annotations": {"list": []}, "links": [], "panels": panels,
    }


def render_dashboard(t: Thresholds | None = None) -> str:
    return strictjson.dumps(dashboard(t), indent=2, sort_keys=False) + "\n"
