"""The JMX exporter agent configs' shapes as the tests know them: for each config the shape the collector must
report and the test's own literal lookup of each cleaner MBean on the page, and the collector's series for
each MBean. Shared by the live test (tests/collectors/export/test_exporter_shapes_kafka.py) and the recorded
pages' (tests/collectors/test_recorded_pages.py), which are in different folders."""

from __future__ import annotations

from prometheus_client.parser import text_string_to_metric_families

# agent config -> (the shape the collector must report, how the test finds an MBean's value on the page:
# (sample name, labels) of kafka.log:type=T,name=N / of the throttler's Count)
CATCH_ALL_LOWER = {
    "max-clean-time-secs": ("kafka_log_logcleaner_value", {"name": "max-clean-time-secs"}),
    "DeadThreadCount": ("kafka_log_logcleaner_value", {"name": "DeadThreadCount"}),
    "max-buffer-utilization-percent": ("kafka_log_logcleaner_value", {"name": "max-buffer-utilization-percent"}),
    "cleaner-recopy-percent": ("kafka_log_logcleaner_value", {"name": "cleaner-recopy-percent"}),
    "cleaner-io": ("kafka_utils_throttler_count", {"name": "cleaner-io"}),
}
CATCH_ALL_KEEPCASE = {k: (n.replace("logcleaner_value", "LogCleaner_Value").replace("throttler_count", "Throttler_Count"),
                          lb) for k, (n, lb) in CATCH_ALL_LOWER.items()}
RULE_NAMED = {
    "max-clean-time-secs": ("kafka_log_logcleaner_max_clean_time_secs", {}),
    "DeadThreadCount": ("kafka_log_logcleaner_deadthreadcount", {}),
    "max-buffer-utilization-percent": ("kafka_log_logcleaner_max_buffer_utilization_percent", {}),
    "cleaner-recopy-percent": ("kafka_log_logcleaner_cleaner_recopy_percent", {}),
    "cleaner-io": ("kafka_utils_throttler_cleaner_io_count_total", {}),
}
CASES = {
    "jmx-exporter-catchall.yaml": ("catch_all", CATCH_ALL_LOWER),
    "jmx-exporter-catchall-keepcase.yaml": ("catch_all", CATCH_ALL_KEEPCASE),
    "jmx-exporter.yaml": ("rule_named", RULE_NAMED),
}
# the collector's series for each MBean and the factor from Kafka's unit to the series' base unit
EXPORTED = {
    "max-clean-time-secs": ("kafka_compaction_broker_cleaner_max_clean_time_seconds", 1.0),
    "DeadThreadCount": ("kafka_compaction_broker_cleaner_dead_threads", 1.0),
    "max-buffer-utilization-percent": ("kafka_compaction_broker_cleaner_max_buffer_utilization_ratio", 0.01),
    "cleaner-recopy-percent": ("kafka_compaction_broker_cleaner_recopy_ratio", 0.01),
    "cleaner-io": ("kafka_compaction_broker_cleaner_io_bytes_total", 1.0),
}


def page_value(page: str, name: str, labels: dict) -> float:
    """The value of the one sample called ``name`` whose labels include ``labels`` (the test's own lookup)."""
    hits = [s.value for f in text_string_to_metric_families(page) for s in f.samples
            if s.name == name and labels.items() <= s.labels.items()]
    assert len(hits) == 1, f"{name}{labels}: {len(hits)} samples on the page"
    return hits[0]
