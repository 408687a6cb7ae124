"""Consumer groups that may miss intermediate updates, on the real broker: groups that commit and stop
on a compacted topic the cleaner has cleaned, one of them declared latest-value-only. Expected values
come from what the test wrote (offsets, timestamps), the cleaner's checkpoint file and Kafka's rules
(the cleaner keeps, below the first uncleanable offset, each key's last record there). The facts are read
at granularity partition; the same store through the default granularity (topic) keeps every series of
the groups alerted and only collectors.export.metrics.GROUP_DEFAULT's of the others."""

from __future__ import annotations

import time

import pytest

from monitor.contract.metricnames import PREFIX
from confluent_kafka import TopicPartition

from prometheus_client import CollectorRegistry, generate_latest

from collectors.export import metrics as M
from collectors.app import build
from collectors.export.exporter import View, register_all
from dashboards import alertrows, sources, tables
from kafkatools import (cleaner_checkpoint, commit_offsets, compacted, create_topic, partition_dir, produce_timed,
                        roll_at, segment_bases, transactional_producer, unique_topic, wait_cleaned_up_to_active,
                        watermarks)
from monitor.settings.config import BrokerConfig, ClusterConfig, Config, Thresholds
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

    cfg = Config(granularity="partition", clusters=(ClusterConfig(name="local", bootstrap_servers=b,
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
        # offset 10 was compacted away: its timestamp is gone with it, and the next record's (the second
        # round's k0, 'old + 60 s') is not the group's (issue 41: it understated a stopped group's lag); with
        # no write between two log-end-offset samples to interpolate along, the time lag is unknown, and so
        # is whether it is past min.compaction.lag.ms. Below the first dirty offset is told from offsets.
        assert lag(cdc) is None and reg.get_sample_value("kafka_compaction_consumer_group_lag_seconds_unknown", {
            "cluster": "local", "group": cdc, "topic": t, "partition": "0", "reason": "record_compacted"}) == 1
        assert miss(cdc, "lag_past_min_compaction_lag") is None and miss(cdc, "below_first_dirty_offset") == 1
        # the same position, declared latest-value-only: the same facts, labelled so
        assert miss(cache, "lag_past_min_compaction_lag", "true") is None
        assert miss(cache, "below_first_dirty_offset", "true") == 1
        assert miss(cache, "below_first_dirty_offset") is None
        # at the first dirty offset, on records written seconds ago: neither
        assert 0 < lag(recent) < MIN_LAG_MS / 1000
        assert miss(recent, "lag_past_min_compaction_lag") == 0 and miss(recent, "below_first_dirty_offset") == 0
        assert miss(done, "lag_past_min_compaction_lag") == 0 and miss(done, "below_first_dirty_offset") == 0

        # the rule table (as the dashboard evaluates it without Prometheus): the info alert for the group
        # that needs every update, none for the declared one
        samples = sources.samples_from_text(col.exposition().decode(), "collector")
        alerts = alertrows.evaluated_alerts(samples, Thresholds())
        ours = alerts[(alerts["alert"] == "ConsumerMayMissUpdates") & alerts["group"].str.startswith(prefix)]
        assert set(ours["group"]) == {cdc} and set(ours["severity"]) == {"info"}
        assert len(ours) == 1  # one per reason told: below the first dirty offset
        table = tables.consumer_groups_table(samples, alerts)
        row = table[(table["group"] == cdc) & (table["topic"] == t)].iloc[0]
        assert row["may_miss_updates"] == "below_first_dirty_offset"
        row = table[(table["group"] == cache) & (table["topic"] == t)].iloc[0]
        assert row["may_miss_updates"] == "latest value only"
        row = table[(table["group"] == done) & (table["topic"] == t)].iloc[0]
        assert row["may_miss_updates"] == ""

        # the same store at the default granularity: a group alerted at granularity partition (the rule
        # evaluator's verdict: cdc's ConsumerMayMissUpdates; delete.retention.ms is 1 s here, so any time
        # lag of a second or more is ConsumerMayMissTombstones too) keeps its every series, the others
        # (done, caught up) their time lag and ratio only; the alerts are the same
        default = CollectorRegistry()
        register_all(default, col.store, view=View("topic", Thresholds()))
        cut = sources.samples_from_text(generate_latest(default).decode(), "default granularity")
        cut_alerts = alertrows.evaluated_alerts(cut, Thresholds())

        def per_group(s):
            s = s[(s["topic"] == t) & s["group"].isin([cdc, cache, recent, done]) & s["partition"].notna()]
            return {g: sorted(s[s["group"] == g]["name"]) for g in (cdc, cache, recent, done)}

        def alerted(a):
            return sorted(map(tuple, a[a["group"].isin([cdc, cache, recent, done])][["alert", "severity", "group"]]
                              .astype(str).values))

        assert alerted(cut_alerts) == alerted(alerts)
        flagged = {g for _, _, g in alerted(alerts)}
        # cache: latest-value-only (no ConsumerMayMissUpdates) and its time lag unknown (record_compacted), so no
        # ConsumerMayMissTombstones either: not alerted, it keeps the default series, its lag's unknown among them
        assert cdc in flagged and cache not in flagged and done not in flagged
        full, kept = per_group(samples), per_group(cut)
        for g in (cdc, recent, done):
            assert kept[g] == (full[g] if g in flagged else sorted([M.G_LAG_SECONDS, M.G_RETENTION_FRACTION])), g
        assert kept[cache] == sorted([M.G_LAG_SECONDS_UNKNOWN]), kept[cache]
        assert len(full[done]) > len(kept[done])
        table = tables.consumer_groups_table(cut, cut_alerts)
        shown = {g: table[(table["group"] == g) & (table["topic"] == t)].iloc[0]["may_miss_updates"]
                 for g in (cdc, cache, done)}
        # cache not alerted: at the default granularity its may-miss series are not exported, as done's
        assert shown == {cdc: "below_first_dirty_offset", cache: "not exported", done: "not exported"}
        aggregate = {(r["name"], r["group"]): r["value"] for r in cut[(cut["topic"] == t)].to_dict("records")
                     if r["partition"] != r["partition"] and r.get("group") in (cdc, done)}
        assert aggregate[(M.GT_LAG, cdc)] == end - 10 and aggregate[(M.GT_LAG, done)] == 0
        assert aggregate[(M.GT_UNHEALTHY, cdc)] == 1 and aggregate[(M.GT_UNHEALTHY, done)] == 0
        # its one partition's time lag unknown: no topic maximum is made of it, the unknown partition counted
        assert (M.GT_MAX_LAG_SECONDS, cdc) not in aggregate
        assert aggregate[(PREFIX + "consumer_group_topic_lag_seconds_unknown_partitions", cdc)] == 1
    finally:
        col.close()


def test_a_group_behind_only_inside_the_active_segment_misses_nothing_until_it_rolls(kafka):
    """At min.compaction.lag.ms 0 (Kafka's default) any time lag is past it; the records the group has
    not read may be compacted only once they leave the active segment, which Kafka never cleans
    (LogCleanerManager.cleanableOffsets). With the leader's log dirs the reason waits for the roll; a
    collector without them keeps the coarse answer (the time lag alone)."""
    b = kafka.bootstrap
    segment_ms = 600_000
    t = create_topic(b, unique_topic("busy"), **compacted(**{"min.compaction.lag.ms": 0, "segment.ms": segment_ms}))
    written = int(time.time() * 1000) - 2 * segment_ms  # one timestamp for all: no roll among them
    produce_timed(b, t, [(f"k{i}".encode(), b"v", written) for i in range(20)])
    assert segment_bases(partition_dir(kafka.log_dir, t)) == [0]  # all of it in the active segment
    group = unique_topic("g-behind")
    commit_offsets({"bootstrap.servers": b, "group.id": group}, [TopicPartition(t, 0, 15)])  # 5 records behind

    with_dirs = Config(granularity="partition", clusters=(ClusterConfig(
        name="local", bootstrap_servers=b, brokers=(BrokerConfig(id=str(kafka.node_id), log_dirs=(kafka.log_dir,)),)),))
    without = Config(granularity="partition", clusters=(ClusterConfig(name="local", bootstrap_servers=b),))

    def lag_reason(cfg):
        col = build(cfg)
        try:
            assert col.runner.refresh_all(), [s.last_error for s in col.store.statuses() if not s.up]
            labels = {"cluster": "local", "group": group, "topic": t, "partition": "0"}
            seconds = col.registry.get_sample_value("kafka_compaction_consumer_group_lag_seconds",
                                                    {**labels, "method": "exact"})
            assert seconds is not None and seconds >= 2 * segment_ms / 1000 - 1  # the records' own timestamp
            return col.registry.get_sample_value(MISS, {**labels, "reason": "lag_past_min_compaction_lag",
                                                        "latest_value_only": "false"})
        finally:
            col.close()

    assert lag_reason(with_dirs) == 0  # offsets 15..19 are in the active segment (base 0): nothing to clean
    assert lag_reason(without) == 1  # the leader's log not read: the time lag alone

    # a record timestamped now, more than segment.ms after the segment's first batch: Kafka rolls on it
    # (LogSegment.shouldRoll compares the record timestamps), so offsets 0..19 are in a rolled segment
    roll_at(b, t, written + 2 * segment_ms)
    assert segment_bases(partition_dir(kafka.log_dir, t)) == [0, 20]
    assert lag_reason(with_dirs) == 1  # the cleaner may now take the records the group has not read


def test_a_group_behind_an_open_transaction_misses_nothing_until_it_ends(kafka):
    """Kafka's cleaner never passes the last stable offset either (LogCleanerManager.cleanableOffsets): a
    group whose unread records all lie at or past an open transaction's first offset misses nothing yet,
    even in a rolled segment; once the transaction commits the LSO moves on and the reason holds."""
    b = kafka.bootstrap
    segment_ms = 600_000
    t = create_topic(b, unique_topic("txn-held"), **compacted(**{"min.compaction.lag.ms": 0, "segment.ms": segment_ms}))
    written = int(time.time() * 1000) - 2 * segment_ms
    produce_timed(b, t, [(f"k{i}".encode(), b"v", written) for i in range(10)])  # offsets 0..9
    tx = transactional_producer(b, unique_topic("tx-held"))
    ended = False
    try:
        tx.begin_transaction()
        tx.produce(t, key=b"k-tx", value=b"v", partition=0, timestamp=written)  # offset 10, left open
        assert tx.flush(30) == 0
        produce_timed(b, t, [(f"k{i}".encode(), b"w", written) for i in range(10)])  # offsets 11..20
        roll_at(b, t, written + 2 * segment_ms)  # offset 21 starts a segment: 0..20 are in a rolled one
        assert segment_bases(partition_dir(kafka.log_dir, t)) == [0, 21]
        group = unique_topic("g-held")
        commit_offsets({"bootstrap.servers": b, "group.id": group}, [TopicPartition(t, 0, 15)])
        cfg = Config(granularity="partition", clusters=(ClusterConfig(
            name="local", bootstrap_servers=b,
            brokers=(BrokerConfig(id=str(kafka.node_id), log_dirs=(kafka.log_dir,)),)),))
        labels = {"cluster": "local", "group": group, "topic": t, "partition": "0"}

        def lag_reason(lso):
            col = build(cfg)
            try:
                assert col.runner.refresh_all(), [s.last_error for s in col.store.statuses() if not s.up]
                reg = col.registry
                assert reg.get_sample_value("kafka_compaction_partition_last_stable_offset",
                                            {"cluster": "local", "broker": str(kafka.node_id), "topic": t,
                                             "partition": "0"}) == lso
                return reg.get_sample_value(MISS, {**labels, "reason": "lag_past_min_compaction_lag",
                                                   "latest_value_only": "false"})
            finally:
                col.close()

        assert watermarks(b, t)[1] == 22
        # offset 15 is below the active segment (21) but past the LSO (10): the cleaner may not take 15..20
        assert lag_reason(lso=10) == 0
        tx.commit_transaction(30)
        ended = True
        wait_for(lambda: watermarks(b, t)[1] == 23, 60, "the commit marker")  # the LSO is the log end now
        assert lag_reason(lso=23) == 1  # 15..20 lie below the LSO and the active segment: the cleaner may take them
    finally:
        if not ended:  # no transaction left open on the shared broker
            tx.abort_transaction(30)
