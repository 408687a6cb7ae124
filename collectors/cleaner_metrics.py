"""The broker's log-cleaner gauges, from a JMX exporter page or a Jolokia endpoint.

Both give the same MBeans (kafka.log:type=LogCleaner / LogCleanerManager); both
become one ``CleanerGauges`` with Kafka's units turned into base units: the dirty
percent into a 0..1 ratio, milliseconds into seconds.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field

from prometheus_client.parser import text_string_to_metric_families

from boundedhttp import FetchError
from monitor.config import ClusterConfig

GAUGE_KEYS = ("max_dirty_percent", "time_since_last_run_ms", "max_compaction_delay_secs", "max_clean_time_secs",
              "max_buffer_utilization_percent", "cleaner_recopy_percent", "dead_thread_count")
PER_LOG_DIR = ("uncleanable_partitions_count", "uncleanable_bytes")
LOG_DIR_LABELS = ("logdirectory", "logDirectory", "log_directory", "logdir")

# MBean name attribute -> our key (Jolokia gives MBean names, not Prometheus names)
MBEAN_NAMES = {
    "max-dirty-percent": "max_dirty_percent",
    "time-since-last-run-ms": "time_since_last_run_ms",
    "uncleanable-partitions-count": "uncleanable_partitions_count",
    "uncleanable-bytes": "uncleanable_bytes",
    "max-compaction-delay-secs": "max_compaction_delay_secs",
    "max-clean-time-secs": "max_clean_time_secs",
    "max-buffer-utilization-percent": "max_buffer_utilization_percent",
    "cleaner-recopy-percent": "cleaner_recopy_percent",
    "DeadThreadCount": "dead_thread_count",
}


@dataclass(frozen=True)
class CleanerGauges:
    """Raw values in Kafka's units, as the broker reports them (None: not on the page)."""

    values: dict = field(default_factory=dict)  # key -> float
    per_log_dir: dict = field(default_factory=dict)  # key -> {log_dir: float}

    @property
    def empty(self) -> bool:
        return not self.values and not self.per_log_dir

    # base units
    def dirty_ratio(self):
        v = self.values.get("max_dirty_percent")
        return None if v is None else v / 100.0

    def time_since_last_run_seconds(self):
        v = self.values.get("time_since_last_run_ms")
        return None if v is None else v / 1000.0

    def max_clean_time_seconds(self):
        v = self.values.get("max_clean_time_secs")
        # Kafka 4.x reports a large negative number before the first clean
        return None if v is None or v < 0 else v

    def buffer_utilization_ratio(self):
        v = self.values.get("max_buffer_utilization_percent")
        return None if v is None else v / 100.0

    def recopy_ratio(self):
        v = self.values.get("cleaner_recopy_percent")
        return None if v is None else v / 100.0

    def compaction_delay_seconds(self):
        return self.values.get("max_compaction_delay_secs")

    def dead_threads(self):
        return self.values.get("dead_thread_count")


def _clean_dir(value: str) -> str:
    """Kafka quotes the logDirectory key of its MBean names; the exporters keep the quotes."""
    return value.strip().strip('"').replace('\\"', "")


def parse_exposition(text: str, cluster: ClusterConfig, endpoint: str = "<page>") -> CleanerGauges:
    """Cleaner gauges out of a Prometheus text page (the JMX exporter's)."""
    wanted = {}
    for key in GAUGE_KEYS + PER_LOG_DIR:
        for name in cluster.metric_name_candidates(key):
            wanted[name] = key
    values, per_dir = {}, {}
    try:
        for family in text_string_to_metric_families(text):
            for sample in family.samples:
                key = wanted.get(sample.name)
                if key is None:
                    continue
                if key in PER_LOG_DIR:
                    d = next((sample.labels[label] for label in LOG_DIR_LABELS if label in sample.labels), "")
                    per_dir.setdefault(key, {})[_clean_dir(d)] = float(sample.value)
                else:
                    values.setdefault(key, float(sample.value))
    except (ValueError, TypeError, IndexError) as exc:
        raise FetchError(endpoint, "parse", f"not a Prometheus text page: {str(exc)[:200]}") from None
    gauges = CleanerGauges(values, per_dir)
    if gauges.empty:
        raise FetchError(endpoint, "no_cleaner_metrics", "the page has no log-cleaner metrics (check metric_names)")
    return gauges


MBEAN_PROPS = re.compile(r'(\w+)=("(?:[^"\\]|\\.)*"|[^,]*)')


def parse_jolokia(text: str, endpoint: str = "<jolokia>") -> CleanerGauges:
    """Cleaner gauges out of Jolokia ``read`` answers (one JSON object or a bulk list)."""
    try:
        data = json.loads(text)
    except ValueError:
        raise FetchError(endpoint, "parse", "not JSON") from None
    answers = data if isinstance(data, list) else [data]
    values, per_dir = {}, {}
    for ans in answers:
        if not isinstance(ans, dict):
            raise FetchError(endpoint, "parse", "unexpected Jolokia answer")
        if ans.get("status") != 200:
            raise FetchError(endpoint, "jolokia", f"Jolokia status {ans.get('status')}: {ans.get('error', '')[:200]}")
        value = ans.get("value") or {}
        for mbean, attrs in value.items():
            props = dict(MBEAN_PROPS.findall(mbean.split(":", 1)[-1]))
            key = MBEAN_NAMES.get(props.get("name", ""))
            if key is None or not isinstance(attrs, dict) or "Value" not in attrs:
                continue
            v = float(attrs["Value"])
            if key in PER_LOG_DIR:
                per_dir.setdefault(key, {})[_clean_dir(props.get("logDirectory", ""))] = v
            else:
                values[key] = v
    gauges = CleanerGauges(values, per_dir)
    if gauges.empty:
        raise FetchError(endpoint, "no_cleaner_metrics", "Jolokia returned no log-cleaner MBeans")
    return gauges


def jolokia_read_url(base: str) -> str:
    """One read of every LogCleaner / LogCleanerManager MBean's Value (an ObjectName pattern)."""
    return f"{base.rstrip('/')}/read/kafka.log:type=LogCleaner*,*/Value"
