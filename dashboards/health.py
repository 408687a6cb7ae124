"""The alert rules evaluated in Python on current samples, for when there is no Prometheus.

Same conditions and thresholds as ``alerts/compaction.rules.yml`` (rendered from the same
``Thresholds``), minus what needs history: no ``for`` windows (a condition shows as ``active``,
not ``firing``) and no TombstonesPilingUp (a rate over hours).
"""

from __future__ import annotations

import pandas as pd

from monitor.config import Thresholds

P = "kafka_compaction_"
COLUMNS = ["alert", "severity", "state", "summary", "description", "runbook", "since", "cluster", "broker", "topic",
           "partition", "group"]


def _rows(samples: pd.DataFrame, name: str) -> pd.DataFrame:
    return samples[samples["name"] == P + name]


def evaluate(samples: pd.DataFrame, t: Thresholds | None = None) -> pd.DataFrame:
    t = t or Thresholds()
    out: list[dict] = []

    def add(alert, severity, row, summary, description=""):
        out.append({"alert": alert, "severity": severity, "state": "active", "summary": summary,
                    "description": description, "runbook": f"{t.runbook_base}#{alert.lower()}", "since": None,
                    **{k: (row.get(k) if row is not None else None) for k in
                       ("cluster", "broker", "topic", "partition", "group")}})

    if samples.empty:
        return pd.DataFrame(columns=COLUMNS)
    samples = samples.copy()
    for col in ("cluster", "broker", "topic", "partition", "group", "log_dir", "source"):
        if col not in samples.columns:
            samples[col] = None
    for _, r in _rows(samples, "broker_cleaner_dead_threads").iterrows():
        if r["value"] > 0:
            add("LogCleanerThreadDead", "critical", r, f"{int(r['value'])} dead cleaner thread(s) on broker {r['broker']}")
    eligible = _rows(samples, "partition_eligible")
    eligible_brokers = set(zip(eligible[eligible["value"] == 1]["cluster"], eligible[eligible["value"] == 1]["broker"]))
    for _, r in _rows(samples, "broker_cleaner_time_since_last_run_seconds").iterrows():
        if r["value"] > t.cleaner_stalled_seconds and (r["cluster"], r["broker"]) in eligible_brokers:
            add("LogCleanerStalled", "critical", r, f"cleaner idle {r['value']:.0f}s on broker {r['broker']}")
    ratio = _rows(samples, "partition_dirty_ratio").set_index(["cluster", "broker", "topic", "partition"])["value"]
    thr = _rows(samples, "partition_min_cleanable_dirty_ratio").set_index(
        ["cluster", "broker", "topic", "partition"])["value"]
    for key, v in (ratio - thr).dropna().items():
        if v > t.dirty_ratio_margin:
            row = dict(zip(["cluster", "broker", "topic", "partition"], key))
            add("CompactionLagging", "warning", row,
                f"{row['topic']}-{row['partition']} dirty ratio {ratio[key]:.2f} > threshold {thr[key]:.2f} + "
                f"{t.dirty_ratio_margin:g}")
    for _, r in _rows(samples, "partition_compaction_delay_seconds").iterrows():
        if r["value"] > 0:
            add("CompactionOverdue", "warning", r, f"{r['topic']}-{r['partition']} overdue by {r['value']:.0f}s")
    for _, r in _rows(samples, "broker_max_compaction_delay_seconds").iterrows():
        if r["value"] > 0:
            add("CompactionOverdue", "warning", r, f"broker {r['broker']}: compaction overdue by {r['value']:.0f}s")
    for name in ("broker_uncleanable_partitions", "broker_uncleanable_bytes"):
        for _, r in _rows(samples, name).iterrows():
            if r["value"] > 0:
                add("UncleanablePartitions", "critical", r, f"broker {r['broker']} {r['log_dir']}: {name[7:]} {r['value']:.0f}")
    for _, r in _rows(samples, "broker_cleaner_max_buffer_utilization_ratio").iterrows():
        if r["value"] > t.buffer_utilization_ratio:
            add("CleanerBufferSaturated", "warning", r, f"buffer {r['value']:.0%} on broker {r['broker']}")
    for _, r in _rows(samples, "broker_cleaner_max_clean_time_seconds").iterrows():
        if r["value"] > t.clean_time_seconds:
            add("CleanerSlow", "warning", r, f"clean took {r['value']:.0f}s on broker {r['broker']}")
    for _, r in _rows(samples, "partition_tombstones_past_delete_horizon").iterrows():
        if r["value"] > 0:
            add("TombstonesPastRetention", "warning", r,
                f"{int(r['value'])} tombstone(s) past their delete horizon on {r['topic']}-{r['partition']}")
    for _, r in _rows(samples, "consumer_group_lag_retention_ratio").iterrows():
        v = r["value"]
        if v >= 1:
            add("ConsumerMayMissTombstones", "critical", r,
                f"group {r['group']} lags {v:.0%} of delete.retention.ms on {r['topic']}-{r['partition']}")
        elif v > t.consumer_lag_warning_fraction:
            add("ConsumerMayMissTombstones", "warning", r,
                f"group {r['group']} lags {v:.0%} of delete.retention.ms on {r['topic']}-{r['partition']}")
    for _, r in _rows(samples, "source_up").iterrows():
        if r["value"] == 0:
            add("CompactionMonitorDown", "warning", r, f"source {r['source']} is down")
    return pd.DataFrame(out, columns=COLUMNS)
