"""``explain`` on a path holding two brokers' log dirs (issue 42): each partition replica is judged with
its own broker's settings, not the first node's. Two nodes of the 3-node cluster (tests/conftest.py
``kafka_cluster``) hold replicas of a compacted topic; node A's log.cleaner.threads is raised to 2 for
the test (a per-broker dynamic config, as ``kafka-configs --alter --entity-type brokers --entity-name A``
sets it; removed after), node B keeps Kafka's 1. Both nodes' log dirs are copied under one path (a
copy: the live cleaner must not clean what explain reads), then the topic's min.cleanable.dirty.ratio
is lowered so that explain, reading the live configs, finds each replica eligible and waiting: its fix
doubles its own broker's thread count (``monitor.verdicts.fixes.more_threads``). Expected values come
from what the test set on each broker."""

from __future__ import annotations

import json
import shutil

import pytest
from confluent_kafka.admin import AlterConfigOpType, ConfigEntry, ConfigResource, NewTopic, ResourceType

from kafkatools import cli_main, client_config, cluster_admin, copy_partition, partition_dir, produce, unique_topic
from waiting import wait_for

pytestmark = pytest.mark.slow

PARTITIONS = 2


def _alter(admin, res: ConfigResource) -> None:
    for fut in admin.incremental_alter_configs([res]).values():
        fut.result(60)


def test_explain_judges_each_brokers_replica_with_that_brokers_settings(kafka_cluster, tmp_path, capsys):
    admin = cluster_admin(kafka_cluster)
    conf = {k: v for k, v in client_config(kafka_cluster, "admin").items() if k != "bootstrap.servers"}
    topic = unique_topic("explain-brokers")
    admin.create_topics([NewTopic(topic, PARTITIONS, config={
        "cleanup.policy": "compact", "min.cleanable.dirty.ratio": "1",  # never cleaned while written
        "segment.ms": "1000", "min.compaction.lag.ms": "0"})])[topic].result(60)
    wait_for(lambda: (lambda t: t is not None and not t.error and len(t.partitions) == PARTITIONS)(
        admin.list_topics(topic, timeout=10).topics.get(topic)), 60, f"{topic} in the metadata")
    base = 1_700_000_000_000
    for p in range(PARTITIONS):
        for r in range(3):  # record times 10 s apart, past segment.ms: each round rolls a segment
            produce(kafka_cluster.bootstrap, topic, [(f"k{i}", f"v{r}") for i in range(50)], p,
                    timestamp_ms=base + r * 10_000, **conf)
    a, b = sorted(kafka_cluster.brokers(), key=lambda n: n.node_id)[:2]
    threads = {a.node_id: 2, b.node_id: 1}
    raised = ConfigResource(ResourceType.BROKER, str(a.node_id), incremental_configs=[
        ConfigEntry("log.cleaner.threads", "2", incremental_operation=AlterConfigOpType.SET)])
    _alter(admin, raised)
    try:
        def described(node) -> str:
            res = ConfigResource(ResourceType.BROKER, str(node.node_id))
            return admin.describe_configs([res])[res].result(60)["log.cleaner.threads"].value

        wait_for(lambda: {n.node_id: described(n) for n in (a, b)} == {k: str(v) for k, v in threads.items()}, 60,
                 "each broker describing its own log.cleaner.threads")
        root = tmp_path / "brokers"
        for node in (a, b):
            data = root / f"node-{node.node_id}" / "data"
            data.mkdir(parents=True)
            shutil.copy(f"{node.log_dir}/meta.properties", data / "meta.properties")
            for p in range(PARTITIONS):
                wait_for(lambda: len(list(partition_dir(node.log_dir, topic, p).glob("*.log"))) >= 3, 60,
                         f"three segments of {topic}-{p} on node {node.node_id}")
                copy_partition(partition_dir(node.log_dir, topic, p), data)
        _alter(admin, ConfigResource(ResourceType.TOPIC, topic, incremental_configs=[
            ConfigEntry("min.cleanable.dirty.ratio", "0.01", incremental_operation=AlterConfigOpType.SET)]))
        config = tmp_path / "monitor.yaml"
        config.write_text(json.dumps({"clusters": [{"name": "c3", "bootstrap_servers": kafka_cluster.bootstrap,
                                                    "client": conf}]}))
        config.chmod(0o600)
        capsys.readouterr()
        code = cli_main(["explain", "--log-dir", str(root), "--config", str(config), "--format", "json", topic])
        out = capsys.readouterr()
    finally:
        _alter(admin, ConfigResource(ResourceType.BROKER, str(a.node_id), incremental_configs=[
            ConfigEntry("log.cleaner.threads", None, incremental_operation=AlterConfigOpType.DELETE)]))
    assert code == 0, out.err
    rows = json.loads(out.out)
    node_of = {str(root / f"node-{n.node_id}" / "data"): n.node_id for n in (a, b)}
    seen = {(row["partition"], node_of[row["log_dir"]]): row for row in rows}
    assert sorted(seen) == sorted((p, n) for p in range(PARTITIONS) for n in threads), sorted(seen)
    for (p, node), row in seen.items():
        assert row["cause"] == "waiting", row
        # the fix doubles this broker's own log.cleaner.threads: 4 on A, 2 on B
        assert any(f"log.cleaner.threads={2 * threads[node]}" in fix for fix in row["fix"]), (node, row["fix"])
    assert kafka_cluster.password("admin") not in out.out + out.err
