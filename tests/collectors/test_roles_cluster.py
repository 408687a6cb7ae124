"""One cluster-role and three broker-role collectors against the single all-role process, on the shared
3-broker SASL_SSL cluster (tests/conftest.py ``kafka_cluster``): the same series, each exported once, and
the same alerts (issue #30, part 2).

A compacted topic of 3 partitions, 3 replicas each, written in rounds whose old timestamps roll a segment
each (segment.ms 1000, Kafka rolls on the incoming batch's timestamp, leader and followers alike), then
cleaned by every replica's cleaner; a consumer group committed near the start of each partition, below
the leaders' cleaned section: ConsumerMayMissUpdates holds for it, a judgement against the *leader's*
replica that the broker-role collector reading that leader makes. Nothing is written after the cleans, so
the figures compared stand still (a clean of another replica would move them: the test waits them out).
The collectors read as the admin user: the exact time lag needs Read on the topic (the monitor user has
Describe only, its lag is interpolated from samples, of which one refresh has too few)."""

from __future__ import annotations

import time

import pytest
from confluent_kafka import Producer, TopicPartition
from confluent_kafka.admin import NewTopic

from collectors.app import build
from collectors.export.metrics import NEEDS_ALL_ROLE, OWNER
from kafkatools import cleaner_checkpoint, client_config, cluster_admin, cluster_brokers, commit_offsets, unique_topic
from monitor.contract.metricnames import PREFIX
from monitor.contract.rule_eval import Sample, evaluate
from monitor.settings.config import parse_config
from monitor.settings.roles import BOTH, BROKER, CLUSTER
from waiting import wait_for

pytestmark = pytest.mark.slow

PARTITIONS, ROUNDS, KEYS = 3, 3, 10
COMMITTED = 2  # the group's offset on each partition: inside the first, cleaned, segment


def _topic(cluster, admin) -> str:
    name = unique_topic("roles")
    admin.create_topics([NewTopic(name, PARTITIONS, 3, config={
        "cleanup.policy": "compact", "segment.ms": "1000", "min.cleanable.dirty.ratio": "0.01"})])[name].result(60)

    def in_sync():
        t = admin.list_topics(name, timeout=10).topics.get(name)
        return t and not t.error and len(t.partitions) == PARTITIONS and all(
            sorted(p.isrs) == [1, 2, 3] for p in t.partitions.values())

    wait_for(in_sync, 90, f"three in-sync replicas of each partition of {name}")
    p = Producer(client_config(cluster, "admin", **{"acks": "all", "linger.ms": 5}))
    errors, base = [], int(time.time() * 1000) - 2 * 3600 * 1000  # two hours old: past min.compaction.lag.ms 0
    for part in range(PARTITIONS):
        for r in range(ROUNDS + 1):  # a last record rolls the last round out of the active segment
            for i in range(KEYS if r < ROUNDS else 1):
                p.produce(name, key=f"k{i}".encode(), value=f"v-{r}-{i}".encode() * 8, partition=part,
                          timestamp=base + r * 5000, on_delivery=lambda err, msg: errors.append(err) if err else None)
            assert p.flush(60) == 0 and errors == [], errors[:3]
    return name


def _config(cluster, topic: str, role: str, brokers: list[dict]) -> dict:
    # the catch-all JMX exporter page is large: on a busy machine it takes more than the 5 s default
    return {"role": role, "granularity": "partition", "topics_allow": [topic], "timeouts": {"jmx": 60}, "clusters": [{
        "name": "c3", "bootstrap_servers": cluster.bootstrap,
        "client": {k: v for k, v in client_config(cluster, "admin").items() if k != "bootstrap.servers"},
        "brokers": brokers}]}


def _page(col) -> list[Sample]:
    assert col.runner.refresh_all(), [(s.name, s.last_error) for s in col.store.statuses() if not s.up]
    return [Sample(s.name, s.labels, s.value) for m in col.registry.collect() for s in m.samples]


def _key(s: Sample) -> tuple:
    return s.name, tuple(sorted(s.labels.items()))


def _family(name: str) -> str:
    """The declared family of a sample (a counter's sample carries ``_total``, its declaration not)."""
    return name[: -len("_total")] if name not in OWNER and name.endswith("_total") else name


def _alerts(samples) -> list[tuple]:
    return sorted((a.alert, a.severity, tuple(sorted(a.labels.items()))) for a in evaluate(samples))


def test_one_cluster_and_three_broker_collectors_export_what_one_process_does(kafka_cluster):
    admin = cluster_admin(kafka_cluster)  # must outlive its futures
    brokers = {b.node_id: b for b in kafka_cluster.brokers()}
    topic = _topic(kafka_cluster, admin)
    group = unique_topic("roles-group")
    commit_offsets(client_config(kafka_cluster, "admin", **{"group.id": group}),
                   [TopicPartition(topic, p, COMMITTED) for p in range(PARTITIONS)])
    # every replica cleaned up to its active segment: nothing moves after this
    wait_for(lambda: all((cleaner_checkpoint(b.log_dir, topic, p) or 0) >= ROUNDS * KEYS
                         for b in brokers.values() for p in range(PARTITIONS)),
             120, f"every replica of {topic} cleaned")

    per_broker = {int(c["id"]): dict(c, cleaner_log=str(brokers[c["id"]].cleaner_log))
                  for c in cluster_brokers(kafka_cluster)}
    configs = {"all": _config(kafka_cluster, topic, "all", list(per_broker.values())),
               "cluster": _config(kafka_cluster, topic, CLUSTER, [])}
    configs.update({f"broker-{n}": _config(kafka_cluster, topic, BROKER, [c]) for n, c in per_broker.items()})
    cols = {}
    try:
        for name, cfg in configs.items():
            cols[name] = build(parse_config(cfg))
        pages = {name: _page(col) for name, col in cols.items()}
    finally:
        for col in cols.values():
            col.close()

    split = [s for name, page in pages.items() if name != "all" for s in page]
    # nothing exported twice across the four collectors, their own health included (named per collector)
    seen: dict[tuple, int] = {}
    for s in split:
        seen[_key(s)] = seen.get(_key(s), 0) + 1
    assert [k for k, n in seen.items() if n > 1] == []
    # each page holds only its role's families
    for name, page in pages.items():
        role = name.split("-")[0]
        wrong = {s.name for s in page if role != "all" and OWNER[_family(s.name)] not in (role, BOTH)}
        assert wrong == set(), name

    # the same series as the one process (the collector's own health apart: its sources are named per role)
    def series(samples):
        return {_key(s) for s in samples if OWNER[_family(s.name)] != BOTH}

    # ... but the hidden groups' counts, which need the log dirs and the group list in one process
    assert {k[0] for k in series(pages["all"]) - series(split)} == set(NEEDS_ALL_ROLE)
    # and the config checks that need a log dir, which the cluster role (no log dir) names as not run: the
    # broker role does not review configs, so in two roles those checks are not run, and said so
    whole = {k for k in series(pages["all"]) if k[0] not in NEEDS_ALL_ROLE}
    not_run = {k for k in series(split) - whole if k[0] == PREFIX + "topic_config_check_not_run"
               and dict(k[1])["needs"] == "log_dir"}
    assert series(split) - not_run == whole
    group_series = {k for k in series(split) if dict(k[1]).get("group") == group}
    assert {k[0] for k in group_series} >= {PREFIX + "consumer_group_lag_records",
                                           PREFIX + "consumer_group_may_miss_updates"}
    replicas = {(dict(k[1])["broker"], dict(k[1])["partition"]) for k in series(split)
                if k[0] == PREFIX + "partition_log_end_offset"}
    assert replicas == {(str(b), str(p)) for b in brokers for p in range(PARTITIONS)}  # every replica's series
    # the judgement against the leader's replica is the broker role's: made by the leader's collector alone
    may_miss = [s for name, page in pages.items() if name.startswith("broker") for s in page
                if s.name == PREFIX + "consumer_group_may_miss_updates" and s.labels["group"] == group]
    assert {s.labels["partition"] for s in may_miss} == {str(p) for p in range(PARTITIONS)}

    # the same alerts over the union of the four pages as over the one process's page
    alerts = _alerts(split)
    assert alerts == _alerts(pages["all"])
    fired = {dict(labels)["partition"] for alert, _, labels in alerts
             if alert == "ConsumerMayMissUpdates" and dict(labels).get("group") == group}
    assert fired == {str(p) for p in range(PARTITIONS)}, alerts
