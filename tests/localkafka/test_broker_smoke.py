"""Smoke test of the foundation: the real broker compacts a topic and its JMX exporter shows it."""

from __future__ import annotations

import urllib.request

import pytest

from kafkatools import (ROLL_KEY, compacted, consume_all, create_topic, unique_topic, wait_cleaned_up_to_active,
                        wait_for, write_rounds)

pytestmark = pytest.mark.kafka

CLEANER_GAUGES = ("kafka_log_logcleanermanager_max_dirty_percent", "kafka_log_logcleanermanager_time_since_last_run_ms",
                  "kafka_log_logcleaner_max_clean_time_secs", "kafka_log_logcleaner_max_buffer_utilization_percent",
                  "kafka_log_logcleaner_cleaner_recopy_percent", "kafka_log_logcleaner_deadthreadcount",
                  "kafka_log_logcleanermanager_uncleanable_partitions_count")


def _cleaner_gauges(jmx_url: str) -> dict[str, float]:
    page = urllib.request.urlopen(jmx_url, timeout=10).read().decode()
    gauges = {}
    for line in page.splitlines():
        if line.startswith("kafka_log_logcleaner"):
            name, value = line.rsplit(" ", 1)
            gauges[name.split("{")[0]] = float(value)
    return gauges


def test_broker_compacts_and_exports_cleaner_gauges(kafka):
    """A platform engineer starts the local broker, writes keyed updates and tombstones to a
    compacted topic, and sees the cleaner run: checkpoint moves, log-cleaner.log records it,
    the JMX exporter shows the gauges, and a consumer from the start reads each key's last record."""
    topic = create_topic(kafka.bootstrap, unique_topic("smoke"), **compacted())
    produced = write_rounds(kafka.bootstrap, topic, 4, keys=200, tombstones=range(0, 200, 10),
                            value=lambda r, i: f"v{r}-{i}".encode())
    # by hand: round r is k0..k199 at offsets 201r..201r+199 and a roll record at 201r+200; the
    # tombstones of k0, k10, .., k190 are at 804..823, the last roll record at 824 (the active segment)
    assert produced == 825
    assert wait_cleaned_up_to_active(kafka.log_dir, topic) == 824

    wait_for(lambda: f"cleaned log {topic}-0" in kafka.cleaner_log.read_text(errors="replace"),
             30, "log-cleaner.log to record the clean")

    gauges = _cleaner_gauges(kafka.jmx_url)
    for name in CLEANER_GAUGES:
        assert name in gauges, f"{name} missing from the JMX exporter page"
    assert gauges["kafka_log_logcleaner_deadthreadcount"] == 0
    # Kafka 4.x reports a large negative clean time until a cleaner thread has finished a clean
    wait_for(lambda: _cleaner_gauges(kafka.jmx_url)["kafka_log_logcleaner_max_clean_time_secs"] >= 0, 30,
             "a clean time of at least 0 s after a finished clean")

    seen = [(m.offset(), m.key(), m.value()) for m in consume_all(kafka.bootstrap, topic)]
    live = [(o, k, v) for o, k, v in seen if v is not None]
    assert live == [(603 + i, f"k{i}".encode(), f"v3-{i}".encode()) for i in range(200) if i % 10] \
        + [(803, ROLL_KEY, b"x"), (824, ROLL_KEY, b"x")]
    # the tombstones stay for delete.retention.ms after the clean that stamped them; a later clean
    # may already have removed them (all of a kind, never a live key's older value)
    tombstones = [(o, k) for o, k, v in seen if v is None]
    assert set(tombstones) <= {(804 + j, f"k{10 * j}".encode()) for j in range(20)}
