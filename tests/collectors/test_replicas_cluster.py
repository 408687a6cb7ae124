"""Replicas of one partition cleaned independently, on the shared 3-broker SASL_SSL cluster
(tests/conftest.py ``kafka_cluster``): one follower's copy damaged on disk, its peers intact.

Each broker runs its own LogCleaner over its own copy; a follower appends the leader's batches as they
are (Log.appendAsFollower) and compacts them on its own schedule. The damage is the one of
tests/collectors/test_uncleanable_kafka.py (the first record of a dirty segment declares one byte more
than it holds): that broker's cleaner marks its replica uncleanable (LogCleaner.CleanerThread.
tryCleanFilthiestLog), the two others clean theirs. The collector's series show it per broker, the
admin source names the replicas' roles (kafka_compaction_partition_replica_info), and ReplicasDisagree
fires for the damaged replica alone, in the Python evaluator and in promtool on the same real series.

Expected values come from outside the code under test: the metadata an admin client gets, each broker's
log-cleaner.log and cleaner-offset-checkpoint, and Kafka's own uncleanable-partitions-count."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

import pytest
from confluent_kafka import Producer
from confluent_kafka.admin import AlterConfigOpType, ConfigEntry, ConfigResource, NewTopic, ResourceType

from alerts.promtool_tests import Case, evaluated, sel
from alerts.render import dump_yaml
from collectors.app import build
from kafkatools import (cleaner_checkpoint, client_config, cluster_admin, cluster_brokers, damage_first_record,
                       partition_dir, segment_bases, unique_topic)
from monitor.contract.metricnames import PREFIX
from monitor.settings.config import Thresholds, parse_config
from monitor.contract.rule_eval import Sample, evaluate_rule
from monitor.contract.rules import RULES
from waiting import wait_for

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[2]
ROUNDS, KEYS = 3, 40
NS = PREFIX  # the exported series are named PREFIX + name (monitor.contract.metricnames)


def _topic_in_sync(cluster, admin, **configs) -> tuple[str, int]:
    """A 1-partition topic with three in-sync replicas; returns it and its leader (from the metadata)."""
    name = unique_topic("disagree")
    admin.create_topics([NewTopic(name, 1, config={k: str(v) for k, v in configs.items()})])[name].result(60)

    def in_sync():
        t = admin.list_topics(name, timeout=10).topics.get(name)
        p = t.partitions.get(0) if t and not t.error else None
        return p.leader if p and sorted(p.replicas) == [1, 2, 3] and sorted(p.isrs) == [1, 2, 3] else None

    return name, wait_for(in_sync, 90, f"three in-sync replicas of {name}")


def _write_rounds(cluster, topic: str) -> None:
    """ROUNDS rounds of one update to each of KEYS keys, each round in its own segment: the records'
    timestamps are 5 s apart against segment.ms 1000, and Kafka rolls on the incoming batch's timestamp
    against the segment's first (LogSegment.shouldRoll), leader and followers alike. A last record rolls
    the last round out of the active segment."""
    p = Producer(client_config(cluster, "admin", **{"acks": "all", "linger.ms": 5}))
    errors, base = [], int(time.time() * 1000)
    for r in range(ROUNDS + 1):
        keys = range(KEYS) if r < ROUNDS else range(1)
        for i in keys:
            p.produce(topic, key=f"k{i}".encode(), value=f"value-{r}-{i}".encode() * 4, timestamp=base + r * 5000,
                      on_delivery=lambda err, msg: errors.append(err) if err else None)
        assert p.flush(60) == 0 and errors == [], errors[:3]


def _set_config(admin, topic: str, **cfg) -> None:
    res = ConfigResource(ResourceType.TOPIC, topic, incremental_configs=[
        ConfigEntry(k, str(v), incremental_operation=AlterConfigOpType.SET) for k, v in cfg.items()])
    for fut in admin.incremental_alter_configs([res]).values():
        fut.result(30)


def _samples(registry, topic: str) -> list[Sample]:
    return [Sample(s.name, s.labels, s.value) for m in registry.collect() for s in m.samples
            if s.labels.get("topic") == topic]


def _marked_in_log(broker, topic: str) -> bool:
    return broker.cleaner_log.exists() and \
        f"Marking its partition ({topic}-0) as uncleanable" in broker.cleaner_log.read_text(errors="replace")


def test_one_uncleanable_follower_disagrees_with_its_clean_peers(kafka_cluster, tmp_path):
    admin = cluster_admin(kafka_cluster)  # must outlive its futures
    brokers = {b.node_id: b for b in kafka_cluster.brokers()}
    topic, leader = _topic_in_sync(kafka_cluster, admin, **{
        "cleanup.policy": "compact", "segment.ms": 1000, "min.compaction.lag.ms": 3_600_000})  # dirty until damaged
    _write_rounds(kafka_cluster, topic)
    wait_for(lambda: all(len(segment_bases(partition_dir(b.log_dir, topic))) >= ROUNDS + 1 for b in brokers.values()),
             60, f"{ROUNDS + 1} segments of {topic} on every replica")
    follower = min(n for n in brokers if n != leader)
    peers = sorted(n for n in brokers if n != follower)
    damage_first_record(partition_dir(brokers[follower].log_dir, topic))

    cfg = parse_config({"clusters": [{
        "name": "c3", "bootstrap_servers": kafka_cluster.bootstrap,
        "client": {k: v for k, v in client_config(kafka_cluster, "monitor").items() if k != "bootstrap.servers"},
        "brokers": [dict(c, cleaner_log=str(brokers[c["id"]].cleaner_log)) for c in cluster_brokers(kafka_cluster)]}]})
    col = build(cfg)
    try:
        _set_config(admin, topic, **{"min.compaction.lag.ms": 0})

        def disagreeing():
            assert col.runner.refresh_all(), [s.last_error for s in col.store.statuses() if not s.up]
            samples = _samples(col.registry, topic)
            marked = {s.labels["broker"] for s in samples if s.name == NS + "partition_uncleanable" and s.value > 0}
            cleaned = all((cleaner_checkpoint(brokers[n].log_dir, topic) or 0) > 0 for n in peers)
            # Kafka's own uncleanable-partitions-count too: one refresh can read the JMX page just before the
            # cleaner marks the partition and its log line just after
            count = col.registry.get_sample_value(NS + "broker_uncleanable_partitions", {
                "cluster": "c3", "broker": str(follower), "log_dir": brokers[follower].log_dir})
            return samples if marked and cleaned and _marked_in_log(brokers[follower], topic) and count else None

        samples = wait_for(disagreeing, 120, f"broker {follower}'s replica of {topic} marked uncleanable and "
                                             f"brokers {peers}' replicas cleaned")
        by_name = {}
        for s in (s for s in samples if "broker" in s.labels):  # per replica (the topic's own have none)
            by_name.setdefault(s.name, {})[s.labels["broker"]] = s
        # the collectors' series: the damaged follower marked, with its exception; its peers not
        assert {b: s.labels["exception"] for b, s in by_name[NS + "partition_uncleanable"].items()} == {
            str(follower): "InvalidRecordException"}
        assert [n for n in peers if _marked_in_log(brokers[n], topic)] == []  # the brokers' own logs agree
        count = col.registry.get_sample_value(NS + "broker_uncleanable_partitions", {
            "cluster": "c3", "broker": str(follower), "log_dir": brokers[follower].log_dir})
        assert count is not None and count >= 1  # Kafka's own uncleanable-partitions-count
        roles = {b: s.labels["role"] for b, s in by_name[NS + "partition_replica_info"].items()}
        assert roles == {str(n): "leader" if n == leader else "follower" for n in brokers}
        ratios = {b: s.value for b, s in by_name[NS + "partition_cleanable_ratio"].items()}
        print(f"replicas of {topic}: leader {leader}, cleanable ratios {ratios}, uncleanable {follower}",
              file=sys.stderr)

        # the rule, in Python
        t = Thresholds()
        alerts = [a for r in RULES if r.alert == "ReplicasDisagree" for a in evaluate_rule(r, samples, t) or []]
        assert [(a.labels["broker"], a.labels.get("exception")) for a in alerts] == [
            (str(follower), "InvalidRecordException")]
        assert f"on broker {follower}" in alerts[0].annotations["summary"]

        # and in promtool, on the same real series held for the rule's window
        keep = (NS + "partition_uncleanable", NS + "partition_replica_info", NS + "partition_cleanable_ratio")
        case = Case("ReplicasDisagree", "warning",
                    {sel(s.name, dict(s.labels)): f"{s.value:g}x600" for s in samples if s.name in keep}, True)
        exp = [{"exp_labels": {"severity": a.severity, **a.labels}, "exp_annotations": a.annotations}
               for a in evaluated(case, t)]
        assert [e["exp_labels"]["broker"] for e in exp] == [str(follower)]
        (tmp_path / "real.test.yml").write_text(dump_yaml({
            "rule_files": [str(ROOT / "alerts" / "compaction.rules.yml")], "evaluation_interval": "1m",
            "tests": [{"interval": "1m", "input_series": [{"series": k, "values": v} for k, v in case.series.items()],
                       "alert_rule_test": [{"eval_time": "100m", "alertname": "ReplicasDisagree",
                                            "exp_alerts": exp}]}]}))
        proc = subprocess.run(["promtool", "test", "rules", str(tmp_path / "real.test.yml")],
                              capture_output=True, text=True, timeout=120)
        assert proc.returncode == 0, proc.stdout + proc.stderr
    finally:
        col.close()
        # leave the shared cluster as found: Kafka forgets a deleted partition's uncleanable mark
        # (LogCleanerManager.maintainUncleanablePartitions, after each cleaner pass)
        admin.delete_topics([topic])[topic].result(60)
