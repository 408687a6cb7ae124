"""Where the dashboard's numbers come from: the configured source read into one shape, a DataFrame of
samples (``name`` plus label columns plus ``value``).

Two sources give that shape:
* Prometheus' HTTP API (``/api/v1/query``, ``query_range``, ``/api/v1/alerts``): current values,
  history, and the alert states Prometheus evaluates from our rules;
* a running collector's ``/metrics``: current values only; alert states are then evaluated by the rule
  table's Python evaluator (``dashboards.alertrows``), with the thresholds of the loaded
  ``monitor.yaml``, so the pages still show them.

Every fetch goes through boundedhttp with the settings' deadline and byte cap, and a source that cannot
be read is a ``SourceError`` naming it (its password redacted) and saying why. Nothing here imports
Streamlit; ``dashboards.ui`` caches these calls for the refresh interval. The tables the pages show are
built from the samples in ``dashboards.tables``; the audit runs are read by ``dashboards.auditruns``.
"""

from __future__ import annotations

import json
import os
import time
from dataclasses import dataclass

import pandas as pd
from boundedhttp import FetchError, get_text
from prometheus_client.parser import text_string_to_metric_families

from dashboards.alertrows import alert_rows, evaluated_alerts
from monitor.settings.config import Thresholds, load_config
from monitor.contract.metricnames import PREFIX, full_name
from monitor.settings.redact import redact_url

LABELS = ["cluster", "broker", "topic", "partition", "group", "section", "reason", "cause", "log_dir", "source",
          "kind", "error", "instance", "job", "held_by", "by", "latest_value_only", "check", "setting", "current",
          "suggested", "state"]


class SourceError(RuntimeError):
    """The configured source cannot be read; the message names it and says why, ``kind`` says how
    (boundedhttp's kinds: connect, timeout, deadline, too_large, http, read; or parse)."""

    def __init__(self, message: str, kind: str = "error"):
        super().__init__(redact_url(message))  # messages name the configured URL: never its password
        self.kind = kind


@dataclass(frozen=True)
class Settings:
    prometheus_url: str | None = None
    collector_url: str | None = None
    audit_dir: str | None = None
    refresh_seconds: int = 30
    config_path: str | None = None
    thresholds: Thresholds = Thresholds()  # the loaded monitor.yaml's (its defaults when there is none)
    fetch_deadline: float = 10.0  # seconds for one whole fetch (timeouts.dashboard, within the refresh interval)
    max_page_bytes: int = 16 * 1024 * 1024  # timeouts.max_page_bytes, as for the collector

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
    refresh = int(env("COMPACTION_MONITOR_REFRESH", "30"))
    return Settings(
        prometheus_url=env("COMPACTION_MONITOR_PROMETHEUS_URL") or cfg.prometheus_url,
        collector_url=env("COMPACTION_MONITOR_COLLECTOR_URL") or cfg.collector_url,
        audit_dir=env("COMPACTION_MONITOR_AUDIT_DIR") or cfg.audit_dir,
        refresh_seconds=refresh,
        config_path=path,
        thresholds=cfg.thresholds,
        fetch_deadline=fetch_deadline(cfg.timeouts.dashboard, refresh),
        max_page_bytes=cfg.timeouts.max_page_bytes,
    )


def fetch_deadline(configured: float, refresh_seconds: int) -> float:
    """A fetch ends within the refresh interval, so a source that hangs or drips is shown down, with
    the reason, before the page's next refresh."""
    return min(configured, refresh_seconds) if refresh_seconds > 0 else configured


def _frame(rows: list[dict]) -> pd.DataFrame:
    df = pd.DataFrame(rows)
    for col in ["name", *LABELS, "value"]:
        if col not in df.columns:
            df[col] = None
    return df


def _get(url: str, limits: Settings, **params) -> str:
    """The page at ``url`` through the one bounded fetch (boundedhttp), with the settings' deadline
    and byte cap; SourceError naming the endpoint, the reason and the kind."""
    try:
        return get_text(url, deadline=limits.fetch_deadline, max_bytes=limits.max_page_bytes, params=params or None)
    except FetchError as exc:
        raise SourceError(str(exc), exc.kind) from None


# ------------------------------------------------------------------ collector


def collector_samples(url: str, limits: Settings = Settings()) -> pd.DataFrame:
    """Current samples from a collector's /metrics page."""
    return samples_from_text(_get(url, limits), url)


def samples_from_text(text: str, where: str) -> pd.DataFrame:
    """The samples of our series (``monitor.contract.metricnames.PREFIX``) on a Prometheus text page (``where``: its URL, for the error)."""
    rows = []
    try:
        for fam in text_string_to_metric_families(text):
            for s in fam.samples:
                if s.name.startswith(PREFIX):
                    rows.append({"name": s.name, **s.labels, "value": float(s.value)})
    except ValueError as exc:
        raise SourceError(f"{where}: not a Prometheus text page ({str(exc)[:200]})", "parse") from None
    return _frame(rows)


# ----------------------------------------------------------------- prometheus


def _api(base: str, path: str, limits: Settings, **params) -> dict:
    text = _get(base.rstrip("/") + path, limits, **params)
    try:
        data = json.loads(text)
    except ValueError:
        raise SourceError(f"{base}{path}: not JSON", "parse") from None
    if not isinstance(data, dict) or data.get("status") != "success" or not isinstance(data.get("data"), dict):
        why = data.get("error", "query failed") if isinstance(data, dict) else "not a Prometheus API answer"
        raise SourceError(f"{base}{path}: {str(why)[:200]}", "parse")
    return data["data"]


def prometheus_samples(base: str, limits: Settings = Settings()) -> pd.DataFrame:
    """Current samples of every series of ours (``monitor.contract.metricnames.PREFIX``)."""
    data = _api(base, "/api/v1/query", limits, query=f'{{__name__=~"{PREFIX}.+"}}')
    try:
        rows = [{"name": r["metric"].get("__name__"), **{k: v for k, v in r["metric"].items() if k != "__name__"},
                 "value": float(r["value"][1])} for r in data["result"]]
    except (KeyError, TypeError, ValueError, IndexError, AttributeError) as exc:
        raise SourceError(f"{base}/api/v1/query: not a Prometheus vector ({type(exc).__name__})", "parse") from None
    return _frame(rows)


def prometheus_range(base: str, query: str, seconds: int = 3600, step: int | None = None,
                     limits: Settings = Settings()) -> pd.DataFrame:
    """A range query as long rows: labels, ``time`` (UTC datetime), ``value``."""
    end = time.time()
    step = step or max(int(seconds / 240), 1)
    data = _api(base, "/api/v1/query_range", limits, query=query, start=end - seconds, end=end, step=step)
    rows = []
    try:
        for r in data["result"]:
            labels = {k: v for k, v in r["metric"].items() if k != "__name__"}
            for ts, v in r["values"]:
                rows.append({**labels, "time": pd.to_datetime(float(ts), unit="s", utc=True), "value": float(v)})
    except (KeyError, TypeError, ValueError, IndexError, AttributeError) as exc:
        raise SourceError(f"{base}/api/v1/query_range: not a Prometheus matrix ({type(exc).__name__})",
                          "parse") from None
    return pd.DataFrame(rows)


def prometheus_alerts(base: str, limits: Settings = Settings()) -> pd.DataFrame:
    data = _api(base, "/api/v1/alerts", limits)
    try:
        return alert_rows(data)
    except (KeyError, TypeError, ValueError, AttributeError) as exc:
        raise SourceError(f"{base}/api/v1/alerts: not a Prometheus alerts answer ({type(exc).__name__})",
                          "parse") from None


# ------------------------------------------------------------------ the pages' view


def current(settings: Settings) -> pd.DataFrame:
    if settings.mode == "prometheus":
        return prometheus_samples(settings.prometheus_url, settings)
    if settings.mode == "collector":
        return collector_samples(settings.collector_url, settings)
    raise SourceError("no data source configured: set prometheus_url or collector_url in monitor.yaml "
                      "(or COMPACTION_MONITOR_PROMETHEUS_URL / COMPACTION_MONITOR_COLLECTOR_URL)")


def alerts(settings: Settings, samples: pd.DataFrame) -> pd.DataFrame:
    if settings.mode == "prometheus":
        return prometheus_alerts(settings.prometheus_url, settings)
    return evaluated_alerts(samples, settings.thresholds)


def metric(samples: pd.DataFrame, name: str) -> pd.DataFrame:
    """The rows of one metric (full name or without the prefix)."""
    return samples[samples["name"] == full_name(name)].copy()
