"""Least privilege on the real 3-broker SASL_SSL cluster (tests/conftest.py ``kafka_cluster``, issue #22):
the read-only ``monitor`` user (Describe, DescribeConfigs; no Read) still gets a time lag for every
lagging partition, interpolated, or an explicit unknown with its reason; the ``blind`` user (no ACL)
never gets Kafka's defaults passed off as a topic's config, and the refusal shows in /metrics and in
the log.

Expected values come from outside the code under test: the offsets the producer got back, the record
timestamps the test set, the times the test's clock gave the admin snapshots, the configs the test set
on the topics, and the cleaner's checkpoint file."""

from __future__ import annotations

import logging

import pytest
from confluent_kafka import TopicPartition
from confluent_kafka.admin import NewTopic
from prometheus_client import CollectorRegistry, generate_latest
from prometheus_client.parser import text_string_to_metric_families

from clirun import run_cli
from collectors.admin.source import AdminFetcher
from collectors.export.exporter import register_all
from collectors.logdirs.snapshot import offsets_topic_groups
from collectors.logdirs.scanner import LogDirScanner
from collectors.serving.runner import Store
from collecting import collect_once
from kafkatools import (cleaner_checkpoint, client_config, cluster_admin, commit_offsets, produce,
                        unique_topic, wait_cleaned, wait_for)
from dashboards import alertrows, sources
from monitor.contract.metricnames import PREFIX
from monitor.settings.config import ClusterConfig, Thresholds

pytestmark = pytest.mark.slow

NS = PREFIX  # the exported series are named PREFIX + name (monitor.contract.metricnames)


def _client(cluster, user: str) -> dict:
    return {k: v for k, v in client_config(cluster, user).items() if k != "bootstrap.servers"}


def _topic(cluster, prefix: str, partitions: int = 1, **configs) -> str:
    name = unique_topic(prefix)
    admin = cluster_admin(cluster)
    admin.create_topics([NewTopic(name, partitions, config={k: str(v) for k, v in configs.items()})])[name].result(60)
    wait_for(lambda: (lambda t: t is not None and not t.error and len(t.partitions) == partitions)(
        admin.list_topics(name, timeout=10).topics.get(name)), 60, f"{name} in the metadata")
    return name


def _produce(cluster, topic: str, partition: int, n: int, timestamp_ms: int | None = None) -> None:
    produce(cluster.bootstrap, topic, [(f"k{i % 3}".encode(), f"v{i}".encode()) for i in range(n)],
            partition=partition, timestamp_ms=timestamp_ms, **_client(cluster, "admin"))


def _series(text: str, name: str, **labels) -> dict:
    """{frozenset of the other labels: value} of the samples of ``name`` whose labels include ``labels``."""
    return {frozenset((k, v) for k, v in s.labels.items() if k not in labels): s.value
            for fam in text_string_to_metric_families(text) for s in fam.samples
            if s.name == name and all(s.labels.get(k) == v for k, v in labels.items())}


def test_without_read_every_lagging_partition_has_an_interpolated_time_lag_or_an_unknown(kafka_cluster, caplog):
    """Partition 0: the log end offset is sampled at 5 (clock 1000 s) and 15 (clock 1100 s), the group
    committed 5: the record at offset 5 made the log end pass 5 a tenth of the way, at 1010 s, so at
    1200 s the lag is 190 s, interpolated. Partition 1: nothing written between the samples, so a
    committed offset below both cannot be dated: unknown, no_writes_sampled. The same group read by a
    super user is exact: 1200 s minus the timestamp the test gave the record at offset 5."""
    topic = _topic(kafka_cluster, "lp-lag", partitions=2, **{"cleanup.policy": "compact"})
    group = unique_topic("lp-group")
    stamp_ms = 1_005_000  # the records' CreateTime: offset 5's record is the first of the second write
    _produce(kafka_cluster, topic, 0, 5, timestamp_ms=stamp_ms - 5000)
    _produce(kafka_cluster, topic, 1, 5)
    clock = [1000.0]
    users = {}
    for user in ("monitor", "admin"):
        cluster = ClusterConfig(name="c3", bootstrap_servers=kafka_cluster.bootstrap,
                                client=_client(kafka_cluster, user))
        users[user] = (AdminFetcher(cluster, clock=lambda: clock[0]), AdminFetcher(cluster, clock=lambda: clock[0]))
    try:
        first = {u: t.topics() for u, (t, g) in users.items()}
        for u, (t, g) in users.items():
            assert first[u].topics[topic].partitions[0].latest == 5  # the sample the interpolation starts from
            g.group_lags(first[u].topics, first[u].taken_at)
        commit_offsets(client_config(kafka_cluster, "admin", **{"group.id": group}),
                       [TopicPartition(topic, 0, 5), TopicPartition(topic, 1, 2)])
        _produce(kafka_cluster, topic, 0, 10, timestamp_ms=stamp_ms)
        clock[0] = 1100.0
        second = {u: t.topics() for u, (t, g) in users.items()}
        clock[0] = 1200.0
        with caplog.at_level(logging.WARNING, logger="compaction_monitor.admin"):
            lags = {u: g.group_lags(second[u].topics, second[u].taken_at) for u, (t, g) in users.items()}
    finally:
        for t, g in users.values():
            t.close()
            g.close()

    mine = {u: {lag.partition: lag for lag in snap.lags if lag.group == group} for u, snap in lags.items()}
    assert {p: lag.lag_records for p, lag in mine["monitor"].items()} == {0: 10, 1: 3}
    assert (mine["monitor"][0].lag_seconds, mine["monitor"][0].lag_method) == (pytest.approx(190.0), "interpolated")
    assert (mine["monitor"][1].lag_seconds, mine["monitor"][1].lag_unknown_reason) == (None, "no_writes_sampled")
    assert (mine["admin"][0].lag_seconds, mine["admin"][0].lag_method) == (pytest.approx(1200 - stamp_ms / 1000),
                                                                             "exact")
    assert "unauthorized" in lags["monitor"].error_kinds and "unauthorized" not in lags["admin"].error_kinds
    # monitor has Describe on the groups: ListGroups hides none of those __consumer_offsets holds
    on_disk = offsets_topic_groups(LogDirScanner([b.log_dir], broker_id=str(b.node_id)).refresh()
                                   for b in kafka_cluster.brokers())
    assert group in on_disk and on_disk <= lags["monitor"].listed
    assert lags["monitor"].listed == lags["admin"].listed
    refused = [r.getMessage() for r in caplog.records if f"Read on TOPIC {topic} for User:monitor" in r.getMessage()]
    assert len(refused) == 1, caplog.text  # once, though two partitions lag

    # what /metrics shows for the monitor user: every lagging partition has a lag or an unknown
    store = Store()
    store.register("consumer_groups:c3", "consumer_groups", "c3")
    store.success("consumer_groups:c3", lags["monitor"], 0.0, 0.0)
    reg = CollectorRegistry(auto_describe=False)
    register_all(reg, store)
    text = generate_latest(reg).decode()
    g = {"group": group, "topic": topic}
    assert _series(text, NS + "consumer_group_lag_seconds", **g) == {
        frozenset({("cluster", "c3"), ("partition", "0"), ("method", "interpolated")}): pytest.approx(190.0)}
    assert _series(text, NS + "consumer_group_lag_seconds_unknown", **g) == {
        frozenset({("cluster", "c3"), ("partition", "1"), ("reason", "no_writes_sampled")}): 1.0}
    assert _series(text, NS + "source_errors_total", source="consumer_groups:c3", error="unauthorized")


def test_blind_never_gets_kafkas_defaults_as_a_topics_config(kafka_cluster, tmp_path):
    """``blind`` sees no topic and is refused every describe. A compacted topic the cleaner has cleaned
    (its log dirs know it is compacted) is exported with its config unknown: no threshold, eligibility
    or delete-retention series, cause unknown; a topic named in monitor.yaml gets the file's values,
    marked as coming from there. The refusal is in /metrics and in the log."""
    ratio, retention_ms = 0.1, 60_000  # the topics' own, not Kafka's defaults (0.5, 86400000)
    cleaned = _topic(kafka_cluster, "lp-blind", **{"cleanup.policy": "compact", "min.cleanable.dirty.ratio": ratio,
                                                   "delete.retention.ms": retention_ms, "segment.ms": 1000})
    named = _topic(kafka_cluster, "lp-named", **{"cleanup.policy": "compact", "min.cleanable.dirty.ratio": ratio})
    _produce(kafka_cluster, cleaned, 0, 30, timestamp_ms=1_000_000)
    _produce(kafka_cluster, cleaned, 0, 1, timestamp_ms=1_000_000 + 5000)  # past segment.ms: a roll
    _produce(kafka_cluster, named, 0, 10)
    groups = [unique_topic("lp-blind-group") for _ in range(2)]  # offsets blind's ListGroups will not show
    for g in groups:
        commit_offsets(client_config(kafka_cluster, "admin", **{"group.id": g}), [TopicPartition(named, 0, 3)])
    brokers = kafka_cluster.brokers()
    wait_cleaned(brokers[0].log_dir, cleaned, timeout=120)
    cfg = {"clusters": [{
        "name": "c3", "bootstrap_servers": kafka_cluster.bootstrap, "client": _client(kafka_cluster, "blind"),
        "topics": {named: {"min.cleanable.dirty.ratio": str(ratio)}},
        "brokers": [{"id": b.node_id, "log_dirs": [b.log_dir]} for b in brokers]}]}
    proc = collect_once(cfg, tmp_path)
    assert proc.returncode == 0, proc.stderr
    out = proc.stdout
    b1 = str(brokers[0].node_id)
    assert cleaner_checkpoint(brokers[0].log_dir, cleaned) is not None  # what made the collector take it as compacted

    def values(name, topic):
        return {s.labels.get("broker"): s.value for fam in text_string_to_metric_families(out) for s in fam.samples
                if s.name == NS + name and s.labels.get("topic") == topic}

    # the cleaned topic: exported (its offsets), its config unknown, nothing made from Kafka's defaults
    assert values("partition_log_end_offset", cleaned)[b1] == 31
    for name in ("partition_min_cleanable_dirty_ratio", "partition_eligible", "partition_cleanable_ratio",
                 "partition_delete_retention_seconds", "partition_tombstones_past_retention",
                 "partition_segment_bytes", "partition_max_segment_age_seconds"):
        assert values(name, cleaned) == {}, name
    assert _series(out, NS + "partition_compaction_cause", topic=cleaned, broker=b1) == {
        frozenset({("cluster", "c3"), ("partition", "0"), ("cause", "unknown")}): 1.0}
    assert _series(out, NS + "topic_config_source_info", topic=cleaned) == {
        frozenset({("cluster", "c3"), ("source", "unknown"), ("reason", "not_listed")}): 1.0}
    # the topic named in monitor.yaml: the file's threshold, said to come from there; the rest unknown
    assert values("partition_min_cleanable_dirty_ratio", named) == {str(b.node_id): ratio for b in brokers}
    assert values("partition_delete_retention_seconds", named) == {}  # not in the file: unknown
    assert _series(out, NS + "topic_config_source_info", topic=named) == {
        frozenset({("cluster", "c3"), ("source", "config"), ("reason", "not_listed")}): 1.0}
    # no partition of either topic carries Kafka's defaults as its config
    for topic in (cleaned, named):
        assert 0.5 not in values("partition_min_cleanable_dirty_ratio", topic).values()
        assert 86400.0 not in values("partition_delete_retention_seconds", topic).values()
    # the refusal: in /metrics and in the log
    assert _series(out, NS + "admin_listed_topics") == {frozenset({("cluster", "c3")}): 0.0}
    assert _series(out, NS + "source_errors_total", source="admin:c3", error="unauthorized")[
        frozenset({("cluster", "c3"), ("kind", "admin")})] >= 3  # DescribeConfigs on CLUSTER, once per broker
    assert "DescribeConfigs on CLUSTER for User:blind" in proc.stderr
    assert "lists no topic at all for User:blind, yet the log dirs hold compacted partitions" in proc.stderr
    assert kafka_cluster.password("blind") not in out + proc.stderr
    # the groups: ListGroups gives blind none, with no error; __consumer_offsets in the log dirs holds them
    assert _series(out, NS + "admin_listed_groups") == {frozenset({("cluster", "c3")}): 0.0}
    (on_disk,) = _series(out, NS + "offsets_topic_groups").values()
    assert on_disk >= len(groups)
    assert _series(out, NS + "admin_unlisted_groups") == {frozenset({("cluster", "c3")}): on_disk}
    # the rule table, as the dashboard evaluates it without Prometheus: the alert for the blind cluster
    fired = alertrows.evaluated_alerts(sources.samples_from_text(out, "collect --once"), Thresholds())
    hidden = fired[fired["alert"] == "ConsumerGroupsHidden"]
    assert list(hidden["cluster"]) == ["c3"] and list(hidden["severity"]) == ["warning"]
    assert "consumer group(s) have committed offsets in __consumer_offsets" in hidden["description"].iloc[0]
    assert (f"ListGroups gives 0 consumer group(s) to User:blind, yet __consumer_offsets in the log dirs read "
            f"holds live committed offsets of {on_disk:.0f} group(s), {on_disk:.0f} of them not listed") in proc.stderr
    assert "grant Describe on the GROUP resources" in proc.stderr

    # explain, as blind: the config unknown, with the reason, never a default
    proc = run_cli("explain", cleaned, "--config", str(tmp_path / "monitor.yaml"))
    assert proc.returncode == 0, proc.stderr
    assert "cause:     unknown" in proc.stdout
    assert f"does not list {cleaned} for User:blind: no Describe on TOPIC {cleaned}" in proc.stdout
    assert "min.cleanable.dirty.ratio=unknown (unknown)" in proc.stdout
    assert "delete.retention.ms=unknown (unknown)" in proc.stdout
    assert "=0.5" not in proc.stdout and "86400000" not in proc.stdout
