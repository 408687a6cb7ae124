"""The secured 3-node cluster (tests/conftest.py ``kafka_cluster``): it forms, it replicates, it
authenticates and authorizes the way the least-privilege issue (#22) describes, and the collector
reads it: one collector over the three brokers' log dirs and JMX exporters plus the admin API as
the read-only ``monitor`` user.

Expected values come from outside the code under test: the configs this test sets, the offsets the
producer got back, Kafka's own kafka-metadata-quorum tool, and Kafka's error codes."""

from __future__ import annotations

import os
import re
import sys
import time

import pytest
from confluent_kafka import Consumer, KafkaError, KafkaException, Producer, TopicPartition
from confluent_kafka.admin import AdminClient, ConfigResource, NewTopic, ResourceType
from prometheus_client.parser import text_string_to_metric_families

from clirun import run_cli
from collecting import collect_once
from kafkatools import client_config, cluster_admin, cluster_brokers, localcluster, unique_topic, wait_for

pytestmark = pytest.mark.slow

RATIO, DELETE_RETENTION_MS = 0.37, 61_000  # not Kafka's defaults (0.5, 86400000)


def _rf3_topic(cluster, prefix: str, **configs) -> str:
    """A topic made by admin with the broker's default replication factor (3): wait until each of
    its partitions has all three replicas in sync."""
    name = unique_topic(prefix)
    admin = cluster_admin(cluster)
    admin.create_topics([NewTopic(name, 1, config={k: str(v) for k, v in configs.items()})])[name].result(60)

    def in_sync():
        t = admin.list_topics(name, timeout=10).topics.get(name)
        return bool(t and not t.error and t.partitions and all(
            sorted(p.replicas) == [1, 2, 3] and sorted(p.isrs) == [1, 2, 3] for p in t.partitions.values()))

    wait_for(in_sync, 90, f"three in-sync replicas of {name}")
    return name


def _produce(cluster, topic: str, n: int) -> list[int]:
    offsets = []
    p = Producer(client_config(cluster, "admin", **{"acks": "all", "linger.ms": 5}))
    for i in range(n):
        p.produce(topic, key=f"k{i % 7}".encode(), value=f"v{i}".encode(),
                  on_delivery=lambda err, msg: offsets.append(-1 if err else msg.offset()))
    assert p.flush(60) == 0
    return offsets


def _read_as(cluster, user: str, topic: str, timeout: float = 60) -> tuple[list, list]:
    """Records and errors a consumer of ``user`` gets from offset 0 (assigned, no group membership)."""
    c = Consumer(client_config(cluster, user, **{"group.id": unique_topic("g"), "enable.auto.commit": False}))
    records, errors = [], []
    try:
        c.assign([TopicPartition(topic, 0, 0)])
        end = time.monotonic() + timeout

        def done():
            m = c.poll(1.0)
            if m is not None:
                (errors if m.error() else records).append(m.error() or (m.offset(), m.key(), m.value()))
            return errors or len(records) >= 20 or time.monotonic() > end

        wait_for(done, timeout + 5, f"records or an error for {user} on {topic}")
    finally:
        c.close()
    return records, errors


def test_cluster_forms_three_voters_and_three_brokers(kafka_cluster):
    """Kafka's own kafka-metadata-quorum names three voters, and the admin API three brokers."""
    proc = localcluster.run_tool(kafka_cluster, "org.apache.kafka.tools.MetadataQuorumCommand", "describe", "--status")
    assert proc.returncode == 0, proc.stderr
    voters = next(line for line in proc.stdout.splitlines() if line.strip().startswith("CurrentVoters:"))
    assert sorted(int(i) for i in re.findall(r'"id":\s*(\d+)', voters)) == [1, 2, 3], voters
    admin = cluster_admin(kafka_cluster)  # must outlive its futures
    nodes = admin.describe_cluster().result(30).nodes
    assert sorted(n.id for n in nodes) == [1, 2, 3]
    print(f"cluster start: {kafka_cluster.start_seconds}s", file=sys.stderr)  # for the report (-s)


def test_admin_writes_and_reads_an_rf3_topic_over_sasl_ssl(kafka_cluster):
    topic = _rf3_topic(kafka_cluster, "rf3")
    offsets = _produce(kafka_cluster, topic, 20)
    assert offsets == list(range(20))
    records, errors = _read_as(kafka_cluster, "admin", topic)
    assert errors == []
    assert records == [(i, f"k{i % 7}".encode(), f"v{i}".encode()) for i in range(20)]


def test_monitor_describes_but_cannot_read_and_blind_sees_nothing(kafka_cluster):
    topic = _rf3_topic(kafka_cluster, "acl", **{"cleanup.policy": "compact", "min.cleanable.dirty.ratio": RATIO})
    _produce(kafka_cluster, topic, 3)
    res = ConfigResource(ResourceType.TOPIC, topic)

    monitor = cluster_admin(kafka_cluster, "monitor")
    assert topic in monitor.list_topics(timeout=30).topics
    assert monitor.describe_configs([res])[res].result(30)["min.cleanable.dirty.ratio"].value == str(RATIO)
    records, errors = _read_as(kafka_cluster, "monitor", topic)
    assert records == [] and [e.code() for e in errors][:1] == [KafkaError.TOPIC_AUTHORIZATION_FAILED]

    blind = cluster_admin(kafka_cluster, "blind")
    assert blind.list_topics(timeout=30).topics == {}
    with pytest.raises(KafkaException) as refused:
        blind.describe_configs([res])[res].result(30)
    assert refused.value.args[0].code() == KafkaError.TOPIC_AUTHORIZATION_FAILED


def test_plaintext_and_a_wrong_password_are_refused(kafka_cluster):
    seen = []
    wrong = AdminClient(client_config(kafka_cluster, "monitor", **{"sasl.password": "not-the-password",
                                                                   "error_cb": seen.append}))
    with pytest.raises(KafkaException):
        wrong.list_topics(timeout=5)
    # librdkafka hands errors to error_cb from poll()
    wait_for(lambda: wrong.poll(0.5) is not None and any(e.code() == KafkaError._AUTHENTICATION for e in seen), 60,
             "a SASL authentication error for a wrong password")

    plain = AdminClient({"bootstrap.servers": kafka_cluster.bootstrap, "socket.timeout.ms": 5000})
    with pytest.raises(KafkaException):
        plain.list_topics(timeout=5)


def _series(text: str) -> list:
    return [s for fam in text_string_to_metric_families(text) for s in fam.samples]


def test_collect_once_exports_each_replica_with_the_admin_topic_config(kafka_cluster, tmp_path):
    """One collector over three brokers (each its own log dir and JMX exporter) and the admin API as
    ``monitor``: every broker's replica of the RF-3 topic is a series of its own, labelled by broker,
    with the topic's config read through the admin API (not Kafka's defaults)."""
    topic = _rf3_topic(kafka_cluster, "collect", **{"cleanup.policy": "compact", "min.cleanable.dirty.ratio": RATIO,
                                                     "delete.retention.ms": DELETE_RETENTION_MS})
    n = len(_produce(kafka_cluster, topic, 30))
    brokers = kafka_cluster.brokers()
    cfg = {"clusters": [{
        "name": "c3", "bootstrap_servers": kafka_cluster.bootstrap,
        "client": {k: v for k, v in client_config(kafka_cluster, "monitor").items() if k != "bootstrap.servers"},
        "brokers": cluster_brokers(kafka_cluster)}],
        "granularity": "partition"}  # each replica's detail is compared, healthy or not
    proc = collect_once(cfg, tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert kafka_cluster.password("monitor") not in proc.stdout + proc.stderr
    series = _series(proc.stdout)
    up = {s.labels["source"]: s.value for s in series if s.name == "kafka_compaction_source_up"}
    assert up == {**{f"{k}:c3:{b.node_id}": 1.0 for b in brokers for k in ("jmx", "log_dirs")},
                  "admin:c3": 1.0, "consumer_groups:c3": 1.0}

    def per_broker(name):
        return {s.labels["broker"]: s.value for s in series
                if s.name == name and s.labels.get("topic") == topic and s.labels.get("partition") == "0"}

    assert per_broker("kafka_compaction_partition_log_end_offset") == {"1": n, "2": n, "3": n}
    assert per_broker("kafka_compaction_partition_min_cleanable_dirty_ratio") == {"1": RATIO, "2": RATIO, "3": RATIO}
    assert per_broker("kafka_compaction_partition_delete_retention_seconds") == {
        b: DELETE_RETENTION_MS / 1000 for b in ("1", "2", "3")}


def test_secrets_are_private_and_status_prints_none(kafka_cluster):
    """Every password file (and each node's server.properties, which holds the store password) is
    readable by its owner only; `broker status` names where the passwords are, never a password."""
    secret_files = [*kafka_cluster.password_files.values(), kafka_cluster.admin_properties,
                    *(os.path.join(d, "server.properties") for d in kafka_cluster.nodes)]
    assert {f: oct(os.stat(f).st_mode & 0o777) for f in secret_files} == {f: "0o600" for f in secret_files}
    proc = run_cli("broker", "status", "--dir", kafka_cluster.dir)
    assert proc.returncode == 0, proc.stderr
    assert "3 nodes, 3 running, sasl_ssl" in proc.stdout
    for user in ("admin", "monitor", "blind"):
        assert kafka_cluster.password(user) not in proc.stdout + proc.stderr
        assert kafka_cluster.password_files[user] in proc.stdout
