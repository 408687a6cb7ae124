"""Smoke test of the foundation: the real broker compacts a topic and its JMX exporter shows it."""

from __future__ import annotations

import urllib.request

import pytest

from kafkatools import compacted, consume_all, create_topic, produce, roll, unique_topic, wait_cleaned, wait_for

pytestmark = pytest.mark.kafka


def test_broker_compacts_and_exports_cleaner_gauges(kafka):
    """A platform engineer starts the local broker, writes keyed updates and tombstones to a
    compacted topic, and sees the cleaner run: checkpoint moves, log-cleaner.log records it,
    the JMX exporter shows the gauges, and a consumer from the start reads fewer records."""
    topic = create_topic(kafka.bootstrap, unique_topic("smoke"), **compacted())
    produced = 0
    for rnd in range(4):  # several segments: each round rolls the previous one
        produced += produce(kafka.bootstrap, topic, [(f"k{i}".encode(), f"v{rnd}-{i}".encode()) for i in range(200)])
        roll(kafka.bootstrap, topic)
        produced += 1
    produced += produce(kafka.bootstrap, topic, [(f"k{i}".encode(), None) for i in range(0, 200, 10)])
    roll(kafka.bootstrap, topic)
    produced += 1

    checkpoint = wait_cleaned(kafka.log_dir, topic)
    assert checkpoint > 0

    wait_for(lambda: f"cleaned log {topic}-0" in kafka.cleaner_log.read_text(errors="replace"),
             timeout=30, what="log-cleaner.log to record the clean")

    page = urllib.request.urlopen(kafka.jmx_url, timeout=10).read().decode()
    gauges = {}
    for line in page.splitlines():
        if line.startswith("kafka_log_logcleaner") and not line.startswith("#"):
            name, value = line.rsplit(" ", 1)
            gauges[name.split("{")[0]] = float(value)
    for name in ("kafka_log_logcleanermanager_max_dirty_percent", "kafka_log_logcleanermanager_time_since_last_run_ms",
                 "kafka_log_logcleaner_max_clean_time_secs", "kafka_log_logcleaner_max_buffer_utilization_percent",
                 "kafka_log_logcleaner_cleaner_recopy_percent", "kafka_log_logcleaner_deadthreadcount",
                 "kafka_log_logcleanermanager_uncleanable_partitions_count"):
        assert name in gauges, f"{name} missing from the JMX exporter page"
    # Before any clean Kafka 4.x reports a large negative clean time; after one it is >= 0.
    assert gauges["kafka_log_logcleaner_max_clean_time_secs"] >= 0 or \
        gauges["kafka_log_logcleaner_max_buffer_utilization_percent"] > 0
    assert gauges["kafka_log_logcleaner_deadthreadcount"] == 0

    seen = consume_all(kafka.bootstrap, topic)
    assert 0 < len(seen) < produced
