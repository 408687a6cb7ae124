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
from boundedhttp import FetchError, get_text
from prometheus_client.parser import text_string_to_metric_families

from monitor.causes import fix_outline
from monitor.redact import redact_url
from monitor.auditrun import (COMPLETE, DAMAGED, IN_PROGRESS, MARKER, RUN_PREFIX, SUMMARY, TABLES, RunDamaged,
                              read_summary, run_status)
from monitor.config import Thresholds, load_config
from monitor.rule_eval import Sample, evaluate, unknown_rules

PREFIX = "kafka_compaction_"
LABELS = ["cluster", "broker", "topic", "partition", "group", "section", "reason", "cause", "log_dir", "source",
          "kind", "error", "instance", "job", "held_by", "by", "latest_value_only", "check", "setting", "current",
          "suggested"]


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
    """The kafka_compaction_* samples of a Prometheus text page (``where``: its URL, for the error)."""
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
    """Current samples of every kafka_compaction_* series."""
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


ALERT_COLUMNS = ["alert", "severity", "state", "summary", "description", "runbook", "since", "cluster", "broker",
                 "topic", "partition", "group"]
FIRING = ("firing", "active")  # Prometheus' state past the rule's window; the evaluator's, which knows no window


def prometheus_alerts(base: str, limits: Settings = Settings()) -> pd.DataFrame:
    data = _api(base, "/api/v1/alerts", limits)
    try:
        return _alert_rows(data)
    except (KeyError, TypeError, ValueError, AttributeError) as exc:
        raise SourceError(f"{base}/api/v1/alerts: not a Prometheus alerts answer ({type(exc).__name__})",
                          "parse") from None


def _alert_rows(data: dict) -> pd.DataFrame:
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
    """The rows of one metric (full name or without the kafka_compaction_ prefix)."""
    full = name if name.startswith(PREFIX) else PREFIX + name
    return samples[samples["name"] == full].copy()


PARTITION = ["cluster", "broker", "topic", "partition"]
# the active segment against its roll settings, and the duplicates stuck in it
ACTIVE_COLUMNS = ["active_segment_bytes", "active_segment_age_seconds", "segment_bytes", "max_segment_age_seconds",
                  "roll_seconds", "roll_unknown", "active_duplicate_records", "active_duplicate_bytes",
                  "held_by_min_compaction_lag_bytes"]


def stuck_in_active_segment(table: pd.DataFrame) -> pd.DataFrame:
    """The partitions whose active segment holds duplicates (records a later one of the same key in it
    supersedes), the most duplicated bytes first, with how far the segment is from its roll."""
    if table.empty or "active_duplicate_records" not in table:
        return table.iloc[:0]
    dup = table[table["active_duplicate_records"].fillna(0) > 0]
    return dup.sort_values("active_duplicate_bytes", ascending=False).reset_index(drop=True)


def _label_per_row(out: pd.DataFrame, series: pd.DataFrame, label: str, keys: list[str], default: str) -> list:
    """For each row of ``out``, the ``label`` of the first of ``series`` (a ``metric`` frame) with the
    same ``keys``, ``default`` where there is none (a reason or cause a partition's series names)."""
    if series.empty:
        return [default] * len(out)
    first = series.groupby(keys, as_index=False)[label].first().rename(columns={label: "_label"})
    return out[keys].merge(first, on=keys, how="left")["_label"].fillna(default).tolist()


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
                                            "first_uncleanable_offset", "log_end_offset", *ACTIVE_COLUMNS])
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
    join("partition_active_segment_bytes", "active_segment_bytes")
    join("partition_active_segment_age_seconds", "active_segment_age_seconds")
    join("partition_segment_bytes", "segment_bytes")
    join("partition_max_segment_age_seconds", "max_segment_age_seconds")
    join("partition_active_segment_roll_seconds", "roll_seconds")
    join("partition_active_segment_duplicate_records", "active_duplicate_records")
    join("partition_active_segment_duplicate_bytes", "active_duplicate_bytes")
    join("partition_not_yet_cleanable_bytes", "held_by_min_compaction_lag_bytes", held_by="min_compaction_lag")
    out["roll_unknown"] = _label_per_row(out, metric(samples, "partition_active_segment_roll_unknown"), "reason",
                                         keys, "")
    cause = metric(samples, "partition_compaction_cause")
    out["cause"] = _label_per_row(out, cause[cause["value"] == 1] if not cause.empty else cause, "cause", keys,
                                  "unknown")
    out["fix"] = [fix_outline(c, t, int(p), last_stable_offset=None if lso != lso or lso is None else int(lso))
                  for c, t, p, lso in zip(out["cause"], out["topic"], out["partition"], out["last_stable_offset"])]
    out["blocked"] = _label_per_row(out, metric(samples, "partition_compaction_blocked"), "reason", keys, "")
    lagging = {tuple(r) for r in alerting(alerts, "CompactionLagging", keys).astype(str).values}
    out["lagging"] = [tuple(str(v) for v in r) in lagging for r in out[keys].values]
    out["partition"] = out["partition"].astype(int)
    return out.sort_values(["topic", "partition"]).reset_index(drop=True)


GROUP = ["cluster", "group", "topic", "partition"]


def consumer_groups_table(samples: pd.DataFrame, alerts: pd.DataFrame | None = None) -> pd.DataFrame:
    """One row per group and partition of a compacted topic: lag in records and in time, and
    ``may_miss_updates``: the reasons it may read an already compacted history (``monitor.consumers``),
    "latest value only" for a group declared so (no alert for it), "" when neither reason holds,
    "unknown" when neither could be told, "not exported" for a healthy group's partition at granularity
    topic (the collector's default sends its ``GROUP_DEFAULT`` series only: no lag in records either).
    ``alert``: ConsumerMayMissUpdates raised for it. ``lag_method``: how the time lag was told (exact,
    interpolated, extrapolated: the method label); ``lag_unknown``: the reason it could not be
    (consumer_group_lag_seconds_unknown), "" when it was."""
    cols = GROUP + ["lag_records", "lag_seconds", "lag_method", "lag_unknown", "may_miss_updates", "alert"]
    # one row per group's partition with any of its series: lag_records goes out for a healthy one at
    # granularity partition only, its time lag (or why unknown) and ratio at every granularity
    rows = [metric(samples, n) for n in ("consumer_group_lag_records", "consumer_group_lag_seconds",
                                         "consumer_group_lag_seconds_unknown", "consumer_group_lag_retention_ratio")]
    rows = [r[GROUP].astype(str) for r in rows if not r.empty]
    if not rows:
        return pd.DataFrame(columns=cols)
    out = pd.concat(rows).drop_duplicates().reset_index(drop=True)
    records = metric(samples, "consumer_group_lag_records")
    out = out.merge(records.astype({k: str for k in GROUP})[GROUP + ["value"]].rename(
        columns={"value": "lag_records"}), on=GROUP, how="left") if not records.empty else out.assign(
        lag_records=float("nan"))
    secs = metric(samples, "consumer_group_lag_seconds")
    if secs.empty:
        out["lag_seconds"], out["lag_method"] = None, None
    else:
        secs = secs.assign(method=secs["method"] if "method" in secs.columns else None).astype({k: str for k in GROUP})
        out = out.merge(secs[GROUP + ["value", "method"]].rename(columns={"value": "lag_seconds",
                                                                          "method": "lag_method"}),
                        on=GROUP, how="left")
    # consumer_group_lag_seconds_unknown{reason}: why a lagging group's time lag cannot be told
    unknown = metric(samples, "consumer_group_lag_seconds_unknown")
    unknown = unknown[unknown["value"] == 1] if not unknown.empty else unknown
    reasons = {tuple(str(r[k]) for k in GROUP): str(r.get("reason", "")) for r in unknown.to_dict("records")}
    out["lag_unknown"] = [reasons.get(tuple(str(v) for v in row), "") for row in out[GROUP].values]
    miss = metric(samples, "consumer_group_may_miss_updates")
    found: dict[tuple, list] = {}
    for r in miss.to_dict("records"):
        found.setdefault(tuple(str(r[k]) for k in GROUP), []).append(r)

    cut = {tuple(str(v) for v in row) for row, n in zip(out[GROUP].values, out["lag_records"]) if n != n}

    def why(key) -> str:
        rows = found.get(key)
        if not rows:
            return "not exported" if key in cut else "unknown"
        if any(r["latest_value_only"] == "true" for r in rows):
            return "latest value only"
        return ", ".join(sorted(r["reason"] for r in rows if r["value"] == 1))

    keys = [tuple(str(v) for v in row) for row in out[GROUP].values]
    out["may_miss_updates"] = [why(k) for k in keys]
    raised = {tuple(r) for r in alerting(alerts, "ConsumerMayMissUpdates", GROUP).astype(str).values}
    out["alert"] = [k in raised for k in keys]
    return out[cols].reset_index(drop=True)


# ---------------------------------------------------------------------- audits


def audit_runs(audit_dir: str | None) -> list[str]:
    """Run folders under the audit output dir, newest first: complete, in progress and damaged alike
    (``audit_run`` tells which)."""
    if not audit_dir or not Path(audit_dir).is_dir():
        return []
    return sorted((p.name for p in Path(audit_dir).iterdir() if p.name.startswith(RUN_PREFIX) and p.is_dir()),
                  reverse=True)


def _sizes(base: Path) -> dict[str, int]:
    sizes = {str(f.relative_to(base)): f.stat().st_size for f in base.rglob("*") if f.is_file()}
    sizes.pop(MARKER, None)  # the run's own marker (each table's Spark _SUCCESS is a file of the run)
    return sizes


def _read_bytes(path: Path, limit: int = 64 << 20) -> bytes:
    """A run's small file (the marker, the summary), refused past ``limit``: a summary is kilobytes."""
    with path.open("rb") as fh:
        raw = fh.read(limit + 1)
    if len(raw) > limit:
        raise RunDamaged(path.name, f"larger than {limit} bytes")
    return raw


def audit_status(audit_dir: str, run: str) -> tuple[str, list[str]]:
    """A run's status from its marker alone (cheap: no table is read): complete, in progress (no
    marker) or damaged (a file missing or of another size than the marker says), with the problems
    (``monitor.auditrun.run_status``)."""
    base = Path(audit_dir) / run
    try:
        if not (base / MARKER).is_file():
            return run_status(None, {})
        return run_status(_read_bytes(base / MARKER), _sizes(base))
    except RunDamaged as exc:
        return DAMAGED, [str(exc)]
    except OSError as exc:
        return DAMAGED, [f"{exc.filename or run}: cannot read ({exc.strerror or exc})"]


def audit_run(audit_dir: str, run: str) -> dict:
    """One run: ``status`` (complete, in progress, damaged), ``problems`` (``file: why``, each naming the
    run's file), and when complete its ``summary`` and tables. Never raises for what is in the folder."""
    import pyarrow.parquet as pq

    base = Path(audit_dir) / run
    out = {"status": COMPLETE, "problems": [], "summary": None, **{t: pd.DataFrame() for t in TABLES}}
    status, problems = audit_status(audit_dir, run)
    if status != COMPLETE:
        return {**out, "status": status, "problems": problems}
    try:
        out["summary"] = read_summary(_read_bytes(base / SUMMARY))
        for table in TABLES:
            p = base / table
            if p.exists():
                try:
                    out[table] = pq.read_table(p).to_pandas()
                except Exception as exc:  # noqa: BLE001 - pyarrow's many errors for a damaged file
                    raise RunDamaged(table, f"cannot read the Parquet table ({str(exc).splitlines()[0]})") from None
    except RunDamaged as exc:
        return {**out, "status": DAMAGED, "summary": None, "problems": [str(exc)]}
    except OSError as exc:
        return {**out, "status": DAMAGED, "summary": None,
                "problems": [f"{exc.filename or run}: cannot read ({exc.strerror or exc})"]}
    return out


def records(df: pd.DataFrame) -> list[dict]:
    """A run's table as plain rows, a missing value (NaN in pandas) as None."""
    return [{k: (None if (v is not None and not isinstance(v, (str, bytes)) and pd.isna(v)) else v)
             for k, v in r.items()} for r in df.to_dict("records")]


def audit_accuracy(before: pd.DataFrame, after: pd.DataFrame) -> tuple[pd.DataFrame, dict]:
    """Two runs' partition tables paired (``monitor.accuracy``): one row per partition of the earlier
    run, and the totals over the partitions the cleaner has been over."""
    from monitor.accuracy import compare_runs, totals

    rows = compare_runs(records(before), records(after))
    return pd.DataFrame([r.as_dict() for r in rows]), totals(rows).as_dict()
