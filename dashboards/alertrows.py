"""The alerts the pages show, in one shape whatever the source: Prometheus' own alert states (its
``/api/v1/alerts``, evaluated from the rendered rules), or, with a collector as the source, the rule
table evaluated here on the current samples (``monitor.contract.rule_eval``: the same rules, no history).

Why a module of its own: the pages count "lagging", "overdue" and "at risk" from these alerts
(``alerting``), never by comparing a metric with a threshold themselves, so the rule table stays the
one place a threshold is applied.
"""

from __future__ import annotations

import pandas as pd

from monitor.settings.config import Thresholds
from monitor.contract.rule_eval import Sample, evaluate, unknown_rules

WHERE = ("cluster", "broker", "topic", "partition", "group", "source", "log_dir")  # the labels that say where
ALERT_COLUMNS = ["alert", "severity", "state", "summary", "description", "runbook", "since", *WHERE]
FIRING = ("firing", "active")  # Prometheus' state past the rule's window; the evaluator's, which knows no window


def alert_rows(data: dict) -> pd.DataFrame:
    """Prometheus' ``/api/v1/alerts`` answer as rows of ``ALERT_COLUMNS`` (an alert without a name is left out)."""
    rows = []
    for a in data.get("alerts", []):
        lb = a.get("labels", {})
        if not lb.get("alertname"):
            continue
        rows.append({"alert": lb.get("alertname"), "severity": lb.get("severity", ""), "state": a.get("state"),
                     "summary": a.get("annotations", {}).get("summary", ""),
                     "description": a.get("annotations", {}).get("description", ""),
                     "runbook": a.get("annotations", {}).get("runbook", ""),
                     "since": a.get("activeAt"), **{k: lb.get(k) for k in WHERE}})
    return pd.DataFrame(rows, columns=ALERT_COLUMNS)


def evaluated_alerts(samples: pd.DataFrame, t: Thresholds) -> pd.DataFrame:
    """The rule table evaluated on current samples (state ``active``; no history, so no
    TombstonesPilingUp: see ``monitor.contract.rule_eval``)."""
    found = []
    for row in samples.to_dict("records"):
        labels = {k: str(v) for k, v in row.items() if k not in ("name", "value") and v is not None and v == v}
        found.append(Sample(row["name"], labels, float(row["value"])))
    rows = [{"alert": a.alert, "severity": a.severity, "state": a.state, **a.annotations, "since": None,
             **{k: a.labels.get(k) for k in WHERE}}
            for a in evaluate(found, t)]
    out = pd.DataFrame(rows, columns=ALERT_COLUMNS)
    out.attrs["unknown"] = unknown_rules()  # alert -> why it cannot be evaluated here
    return out


def alerting(alerts: pd.DataFrame | None, name: str, keys: list[str], states=FIRING) -> pd.DataFrame:
    """The distinct ``keys`` (e.g. a partition's labels) that alert ``name`` is raised for."""
    if alerts is None or alerts.empty:
        return pd.DataFrame(columns=keys)
    a = alerts[(alerts["alert"] == name) & alerts["state"].isin(states)]
    return a[keys].drop_duplicates().reset_index(drop=True)
