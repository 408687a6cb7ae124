"""Issue 16 in the collector, on the real broker: producer pitfalls counted on disk by the log-dir
reader (empty-string values, records without a key), and for a compact,delete topic the log start
the broker's next retention check moves to (``monitor.model.retention``) against the broker's own."""

from __future__ import annotations

import time

import pytest

from collecting import make_collector, pval, refresh
from collectors.export import metrics as M
from collectors.logdirs.scanner import LogDirScanner
from kafkatools import (create_topic, produce, produce_aged_segments, set_topic_config, unique_topic, watermarks)
from monitor.model.topicconfig import TopicConfig, effective_config
from waiting import wait_for

pytestmark = pytest.mark.kafka

HOUR = 3_600_000


def test_empty_values_and_keyless_records_on_disk_are_exported(kafka):
    t = create_topic(kafka.bootstrap, unique_topic("pitfall-collect"), **{"cleanup.policy": "delete"})
    produce(kafka.bootstrap, t, [(None, b"old, keyless")] * 4)  # before the topic became compacted
    set_topic_config(kafka.bootstrap, t, **{"cleanup.policy": "compact"})
    produce(kafka.bootstrap, t, [(f"k{i}".encode(), b"x") for i in range(10)])
    produce(kafka.bootstrap, t, [(b"k1", b""), (b"k2", b""), (b"k3", None), (b"k4", b"")])
    reg = refresh(make_collector(kafka))
    assert pval(reg, M.P_EMPTY_VALUES, t) == 3
    assert pval(reg, M.P_KEYLESS, t) == 4
    assert pval(reg, M.P_RETENTION_START, t) is None  # compact only: no retention to project


def test_compact_delete_projected_log_start_is_where_the_brokers_retention_moves_it(kafka):
    ages = [5 * HOUR, 4 * HOUR, HOUR // 4, 0]
    cfg = {"cleanup.policy": "compact,delete", "segment.ms": 60_000, "min.compaction.lag.ms": 24 * HOUR,
           "retention.ms": -1}
    t = create_topic(kafka.bootstrap, unique_topic("retention-collect"), **cfg)
    produce_aged_segments(kafka.bootstrap, t, ages, int(time.time() * 1000))
    reg = refresh(make_collector(kafka))  # the broker's config: no retention limit yet
    assert (pval(reg, M.P_RETENTION_START, t), pval(reg, M.P_RETENTION_BYTES, t)) == (0, 0)
    # the reader with the retention.ms the broker is about to get
    want = TopicConfig.from_strings({**cfg, "retention.ms": 2 * HOUR})
    scanner = LogDirScanner([kafka.log_dir], config_lookup=lambda topic, compacted: effective_config(
        topic, admin=want if topic == t else None, compacted=compacted))
    [rep] = [r for r in scanner.refresh().partitions if r.state.topic == t]
    assert rep.retention.moves and len(rep.retention.deleted) == 2  # the two groups older than 2 h
    set_topic_config(kafka.bootstrap, t, **{"retention.ms": 2 * HOUR})
    got = wait_for(lambda: (lambda s: s if s > 0 else None)(watermarks(kafka.bootstrap, t)[0]), 90,
                   f"the broker's retention check to move the log start of {t}-0")
    assert got == rep.retention.log_start_offset
