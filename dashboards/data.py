"""Where the dashboard's numbers come from, apart from how they are laid out.

Two sources give the same shape (a DataFrame of samples: ``name`` plus label columns plus ``value``):
* Prometheus' HTTP API (``/api/v1/query``, ``query_range``, ``/api/v1/alerts``): current values,
  history, and the alert states Prometheus evaluates from our rules;
* a running collector's ``/metrics``: current values only; alert states are then evaluated here by
  the rule table's Python evaluator (``monitor.rule_eval``), with the thresholds of the loaded
  ``monitor.yaml``, so the pages still show them.

The pages count "lagging", "overdue" and "at risk" from these alerts (``alerting``), never by comparing
a metric with a threshold themselves. Nothing here imports Streamlit; ``dashboards.ui`` caches these
calls for the refresh interval.
"""

from __future__ import annotations

import json
import os
import time
from dataclasses import dataclass
from pathlib import Path

import pandas as pd
import requests
from prometheus_client.parser import text_string_to_metric_families

from monitor.causes import fix_outline
from monitor.config import Thresholds, load_config
from monitor.rule_eval import Sample, evaluate, unknown_rules

PREFIX = "kafka_compaction_"
LABELS = ["cluster", "broker", "topic", "partition", "group", "section", "reason", "cause", "log_dir", "source",
          "kind", "error", "instance", "job", "check", "setting", "current", "suggested"]


class SourceError(RuntimeError):
    """The configured source cannot be read; the message names it and says why."""


@dataclass(frozen=True)
class Settings:
    prometheus_url: str | None = None
    collector_url: str | None = None
    audit_dir: str | None = None
    refresh_seconds: int = 30
    config_path: str | None = None
    thresholds: Thresholds = Thresholds()  # the loaded monitor.yaml's (its defaults when there is none)

    @property
    def mode(self) -> str:
        if self.prometheus_url:
            return "prometheus"
        if self.collector_url:
            return "collector"
        return "none"


def settings_from_env() -> Settings:
    """From ``monitor.yaml`` (COMPACTION_MONITOR_CONFIG) and COMPACTION_MONITOR_* overrides."""
    path = os.environ.get("COMPACTION_MONITOR_CONFIG")
    cfg = load_config(path)
    env = os.environ.get
    return Settings(
        prometheus_url=env("COMPACTION_MONITOR_PROMETHEUS_URL") or cfg.prometheus_url,
        collector_url=env("COMPACTION_MONITOR_COLLECTOR_URL") or cfg.collector_url,
        audit_dir=env("COMPACTION_MONITOR_AUDIT_DIR") or cfg.audit_dir,
        refresh_seconds=int(env("COMPACTION_MONITOR_REFRESH", "30")),
        config_path=path,
        thresholds=cfg.thresholds,
    )


def _frame(rows: list[dict]) -> pd.DataFrame:
    df = pd.DataFrame(rows)
    for col in ["name", *LABELS, "value"]:
        if col not in df.columns:
            df[col] = None
    return df


def _get(url: str, timeout: float = 5.0, **params) -> requests.Response:
    try:
        resp = requests.get(url, params=params or None, timeout=timeout)
    except requests.RequestException as exc:
        raise SourceError(f"{url}: cannot connect ({exc.__class__.__name__})") from None
    if resp.status_code != 200:
        raise SourceError(f"{url}: HTTP {resp.status_code}")
    return resp


# ------------------------------------------------------------------ collector


def collector_samples(url: str) -> pd.DataFrame:
    """Current samples from a collector's /metrics page."""
    text = _get(url).text
    rows = []
    try:
        for fam in text_string_to_metric_families(text):
            for s in fam.samples:
                if s.name.startswith(PREFIX):
                    rows.append({"name": s.name, **s.labels, "value": float(s.value)})
    except ValueError as exc:
        raise SourceError(f"{url}: not a Prometheus text page ({exc})") from None
    return _frame(rows)


# ----------------------------------------------------------------- prometheus


def _api(base: str, path: str, **params) -> dict:
    resp = _get(base.rstrip("/") + path, **params)
    try:
        data = resp.json()
    except ValueError:
        raise SourceError(f"{base}{path}: not JSON") from None
    if data.get("status") != "success":
        raise SourceError(f"{base}{path}: {data.get('error', 'query failed')}")
    return data["data"]


def prometheus_samples(base: str) -> pd.DataFrame:
    """Current samples of every kafka_compaction_* series."""
    data = _api(base, "/api/v1/query", query=f'{{__name__=~"{PREFIX}.+"}}')
    rows = [{"name": r["metric"].get("__name__"), **{k: v for k, v in r["metric"].items() if k != "__name__"},
             "value": float(r["value"][1])} for r in data["result"]]
    return _frame(rows)


def prometheus_range(base: str, query: str, seconds: int = 3600, step: int | None = None) -> pd.DataFrame:
    """A range query as long rows: labels, ``time`` (UTC datetime), ``value``."""
    end = time.time()
    step = step or max(int(seconds / 240), 1)
    data = _api(base, "/api/v1/query_range", query=query, start=end - seconds, end=end, step=step)
    rows = []
    for r in data["result"]:
        labels = {k: v for k, v in r["metric"].items() if k != "__name__"}
        for ts, v in r["values"]:
            rows.append({**labels, "time": pd.to_datetime(float(ts), unit="s", utc=True), "value": float(v)})
    return pd.DataFrame(rows)


ALERT_COLUMNS = ["alert", "severity", "state", "summary", "description", "runbook", "since", "cluster", "broker",
                 "topic", "partition", "group"]
FIRING = ("firing", "active")  # Prometheus' state past the rule's window; the evaluator's, which knows no window


def prometheus_alerts(base: str) -> pd.DataFrame:
    data = _api(base, "/api/v1/alerts")
    rows = []
    for a in data.get("alerts", []):
        lb = a.get("labels", {})
        if not lb.get("alertname"):
            continue
        rows.append({"alert": lb.get("alertname"), "severity": lb.get("severity", ""), "state": a.get("state"),
                     "summary": a.get("annotations", {}).get("summary", ""),
                     "description": a.get("annotations", {}).get("description", ""),
                     "runbook": a.get("annotations", {}).get("runbook", ""),
                     "since": a.get("activeAt"), **{k: lb.get(k) for k in ("cluster", "broker", "topic", "partition",
                                                                          "group")}})
    return pd.DataFrame(rows, columns=ALERT_COLUMNS)


def evaluated_alerts(samples: pd.DataFrame, t: Thresholds) -> pd.DataFrame:
    """The rule table evaluated on current samples (state ``active``; no history, so no
    TombstonesPilingUp: see ``monitor.rule_eval``)."""
    found = []
    for row in samples.to_dict("records"):
        labels = {k: str(v) for k, v in row.items() if k not in ("name", "value") and v is not None and v == v}
        found.append(Sample(row["name"], labels, float(row["value"])))
    rows = [{"alert": a.alert, "severity": a.severity, "state": a.state, **a.annotations, "since": None,
             **{k: a.labels.get(k) for k in ("cluster", "broker", "topic", "partition", "group")}}
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


# ------------------------------------------------------------------ the pages' view


def current(settings: Settings) -> pd.DataFrame:
    if settings.mode == "prometheus":
        return prometheus_samples(settings.prometheus_url)
    if settings.mode == "collector":
        return collector_samples(settings.collector_url)
    raise SourceError("no data source configured: set prometheus_url or collector_url in monitor.yaml "
                      "(or COMPACTION_MONITOR_PROMETHEUS_URL / COMPACTION_MONITOR_COLLECTOR_URL)")


def alerts(settings: Settings, samples: pd.DataFrame) -> pd.DataFrame:
    if settings.mode == "prometheus":
        return prometheus_alerts(settings.prometheus_url)
    return evaluated_alerts(samples, settings.thresholds)


def metric(samples: pd.DataFrame, name: str) -> pd.DataFrame:
    """The rows of one metric (full name or without the kafka_compaction_ prefix)."""
    full = name if name.startswith(PREFIX) else PREFIX + name
    return samples[samples["name"] == full].copy()


PARTITION = ["cluster", "broker", "topic", "partition"]


def partitions_table(samples: pd.DataFrame, alerts: pd.DataFrame | None = None) -> pd.DataFrame:
    """One row per partition with the figures the Partitions page shows; ``lagging`` where
    CompactionLagging is raised for it."""
    keys = PARTITION
    base = metric(samples, "partition_cleanable_ratio")
    if base.empty:
        return pd.DataFrame(columns=keys + ["lagging", "cleanable_ratio", "uncleaned_ratio", "threshold",
                                            "cleanable_bytes", "uncleaned_bytes", "log_bytes", "eligible_seconds",
                                            "tombstones", "oldest_tombstone_age_seconds",
                                            "tombstones_past_delete_horizon", "overdue_seconds", "blocked", "cause",
                                            "fix", "last_stable_offset", "open_transactions",
                                            "oldest_open_transaction_age_seconds", "first_dirty_offset",
                                            "first_uncleanable_offset", "log_end_offset"])
    out = base[keys].copy()
    out["cleanable_ratio"] = base["value"].values

    def join(name: str, col: str, **where):
        nonlocal out
        m = metric(samples, name)
        for k, v in where.items():
            m = m[m[k] == v]
        if m.empty:
            out[col] = None
            return
        m = m.groupby(keys, as_index=False)["value"].sum().rename(columns={"value": col})
        out = out.merge(m, on=keys, how="left")

    join("partition_uncleaned_ratio", "uncleaned_ratio")
    join("partition_min_cleanable_dirty_ratio", "threshold")
    join("partition_cleanable_bytes", "cleanable_bytes")
    join("partition_uncleaned_bytes", "uncleaned_bytes")
    join("partition_log_bytes", "log_bytes")
    join("partition_eligible_seconds", "eligible_seconds")
    join("partition_tombstones", "tombstones")
    join("partition_oldest_tombstone_age_seconds", "oldest_tombstone_age_seconds")
    join("partition_tombstones_past_delete_horizon", "tombstones_past_delete_horizon")
    join("partition_compaction_delay_seconds", "overdue_seconds")
    for name in ("last_stable_offset", "open_transactions", "oldest_open_transaction_age_seconds",
                 "first_dirty_offset", "first_uncleanable_offset", "log_end_offset"):
        join(f"partition_{name}", name)
    cause = metric(samples, "partition_compaction_cause")
    cause = cause[cause["value"] == 1] if not cause.empty else cause
    if cause.empty:
        out["cause"] = "unknown"
    else:
        c = cause.groupby(keys, as_index=False)["cause"].first()
        out = out.merge(c, on=keys, how="left")
        out["cause"] = out["cause"].fillna("unknown")
    out["fix"] = [fix_outline(c, t, int(p), last_stable_offset=None if lso != lso or lso is None else int(lso))
                  for c, t, p, lso in zip(out["cause"], out["topic"], out["partition"], out["last_stable_offset"])]
    blocked = metric(samples, "partition_compaction_blocked")
    out["blocked"] = ""
    if not blocked.empty:
        b = blocked.groupby(keys, as_index=False)["reason"].first().rename(columns={"reason": "blocked_by"})
        out = out.merge(b, on=keys, how="left")
        out["blocked"] = out["blocked_by"].fillna("")
        out = out.drop(columns=["blocked_by"])
    lagging = {tuple(r) for r in alerting(alerts, "CompactionLagging", keys).astype(str).values}
    out["lagging"] = [tuple(str(v) for v in r) in lagging for r in out[keys].values]
    out["partition"] = out["partition"].astype(int)
    return out.sort_values(["topic", "partition"]).reset_index(drop=True)


# ---------------------------------------------------------------------- audits


def audit_runs(audit_dir: str | None) -> list[str]:
    """Run folders under the audit output dir, newest first."""
    if not audit_dir or not Path(audit_dir).is_dir():
        return []
    return sorted((p.name for p in Path(audit_dir).iterdir() if p.name.startswith("run-") and
                   (p / "summary.json").exists()), reverse=True)


def audit_run(audit_dir: str, run: str) -> dict:
    import pyarrow.parquet as pq

    base = Path(audit_dir) / run
    out = {"summary": json.loads((base / "summary.json").read_text())}
    for table in ("partitions", "topics", "tombstone_buckets", "top_keys", "top_producers", "faults"):
        p = base / table
        out[table] = pq.read_table(p).to_pandas() if p.exists() else pd.DataFrame()
    return out
