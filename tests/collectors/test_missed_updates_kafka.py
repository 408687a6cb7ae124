"""Consumer groups that may miss intermediate updates, on the real broker: groups that commit and stop
on a compacted topic the cleaner has cleaned, one of them declared latest-value-only. Expected values
come from what the test wrote (offsets, timestamps), the cleaner's checkpoint file and Kafka's rules
(the cleaner keeps, below the first uncleanable offset, each key's last record there)."""

from __future__ import annotations

import time

import pytest
from confluent_kafka import TopicPartition

from collectors.app import build
from dashboards import data
from kafkatools import (cleaner_checkpoint, commit_offsets, compacted, create_topic, partition_dir, produce_timed,
                        segment_bases, unique_topic, wait_cleaned_up_to_active)
from monitor.config import BrokerConfig, ClusterConfig, Config, Thresholds
from waiting import wait_for

pytestmark = pytest.mark.kafka

MIN_LAG_MS = 600_000
KEYS = 30
MISS = "kafka_compaction_consumer_group_may_miss_updates"


def test_groups_that_may_miss_updates_and_one_declared_latest_value_only(kafka):
    b = kafka.bootstrap
    t = create_topic(b, unique_topic("cdc"), **compacted(**{"min.compaction.lag.ms": MIN_LAG_MS}))
    now = int(time.time() * 1000)
    old = now - 7_200_000  # two hours ago: past min.compaction.lag.ms, so the cleaner may compact it
    rounds = [old, old + 60_000, now]  # a segment each: segment.ms (200 ms) rolls on the next round's append
    for r, ts in enumerate(rounds):
        produce_timed(b, t, [(f"k{i}".encode(), f"round {r}".encode(), ts) for i in range(KEYS)])
    third = 2 * KEYS  # the first offset of the recent round: min.compaction.lag.ms holds it (and it is active)
    # the cleaner may take the first two rounds in one pass or two (it can run between them): wait for the
    # checkpoint at the active segment, which the recent round is
    checkpoint = wait_cleaned_up_to_active(kafka.log_dir, t)
    assert checkpoint == third == segment_bases(partition_dir(kafka.log_dir, t))[-1]
    end = 3 * KEYS

    prefix = unique_topic("g")
    cdc, cache, recent, done = f"{prefix}-cdc", f"{prefix}-cache-1", f"{prefix}-recent", f"{prefix}-done"
    for group, offset in ((cdc, 10), (cache, 10), (recent, third), (done, end)):
        commit_offsets({"bootstrap.servers": b, "group.id": group}, [TopicPartition(t, 0, offset)])

    cfg = Config(clusters=(ClusterConfig(name="local", bootstrap_servers=b,
                                         latest_value_only_groups=(f"{prefix}-cache-*",),
                                         brokers=(BrokerConfig(id=str(kafka.node_id), log_dirs=(kafka.log_dir,)),)),))
    col = build(cfg)
    try:
        before = time.time()
        assert col.runner.refresh_all(), [s.last_error for s in col.store.statuses() if not s.up]
        after = time.time()
        reg = col.registry

        def miss(group, reason, latest="false"):
            return reg.get_sample_value(MISS, {"cluster": "local", "group": group, "topic": t, "partition": "0",
                                               "reason": reason, "latest_value_only": latest})

        def lag(group):
            return reg.get_sample_value("kafka_compaction_consumer_group_lag_seconds",
                                        {"cluster": "local", "group": group, "topic": t, "partition": "0",
                                         "method": "exact"})

        assert cleaner_checkpoint(kafka.log_dir, t) == checkpoint  # what the collector's join read
        # offset 10 was compacted away: the group's next record is the second round's k0 (offset 30), the
        # key's last record below the first uncleanable offset; its timestamp is 'old + 60 s'
        assert before - (old + 60_000) / 1000 - 1 <= lag(cdc) <= after - (old + 60_000) / 1000 + 1
        assert lag(cdc) > MIN_LAG_MS / 1000
        assert miss(cdc, "lag_past_min_compaction_lag") == 1 and miss(cdc, "below_first_dirty_offset") == 1
        # the same position, declared latest-value-only: the same facts, labelled so
        assert miss(cache, "lag_past_min_compaction_lag", "true") == 1
        assert miss(cache, "below_first_dirty_offset", "true") == 1
        assert miss(cache, "below_first_dirty_offset") is None
        # at the first dirty offset, on records written seconds ago: neither
        assert 0 < lag(recent) < MIN_LAG_MS / 1000
        assert miss(recent, "lag_past_min_compaction_lag") == 0 and miss(recent, "below_first_dirty_offset") == 0
        assert miss(done, "lag_past_min_compaction_lag") == 0 and miss(done, "below_first_dirty_offset") == 0

        # the rule table (as the dashboard evaluates it without Prometheus): the info alert for the group
        # that needs every update, none for the declared one
        samples = data.samples_from_text(col.exposition().decode(), "collector")
        alerts = data.evaluated_alerts(samples, Thresholds())
        ours = alerts[(alerts["alert"] == "ConsumerMayMissUpdates") & alerts["group"].str.startswith(prefix)]
        assert set(ours["group"]) == {cdc} and set(ours["severity"]) == {"info"}
        assert len(ours) == 2  # one per reason
        table = data.consumer_groups_table(samples, alerts)
        row = table[(table["group"] == cdc) & (table["topic"] == t)].iloc[0]
        assert row["may_miss_updates"] == "below_first_dirty_offset, lag_past_min_compaction_lag"
        row = table[(table["group"] == cache) & (table["topic"] == t)].iloc[0]
        assert row["may_miss_updates"] == "latest value only"
        row = table[(table["group"] == done) & (table["topic"] == t)].iloc[0]
        assert row["may_miss_updates"] == ""
    finally:
        col.close()
