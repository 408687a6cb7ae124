"""A follower offline past delete.retention.ms keeps the keys its leader deleted, on the shared 3-broker
SASL_SSL cluster (tests/conftest.py ``kafka_cluster``).

One follower of an RF-3 compacted topic is stopped (as tests/collectors/test_broker_down_cluster.py does,
and started again the same way before the test ends). While it is down, tombstones are written for half
the keys and the leader's cleaner runs: the first clean keeps them and stamps their delete horizon
(KIP-534), a clean after the horizon (``delete.retention.ms``, short here) removes them. The collector's
admin source sees the follower out of the ISR; its series cross the warning fraction, then 1, and
ReplicaMayResurrectDeletes fires at warning, then critical, in the Python evaluator and in promtool on
the scraped series. The follower is started again, catches up (every ISR full), and the comparison of
the two copies finds exactly the keys whose tombstones the leader cleaned away: alive on the follower.

Expected values come from outside the code under test: the keys the test deleted, the metadata's ISR, the
leader's cleaner checkpoint and its segments (no tombstone left), and the follower's segments."""

from __future__ import annotations

import io
import json
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest
from confluent_kafka import Producer
from confluent_kafka.admin import NewTopic

from alerts.promtool_tests import Case, evaluated, sel
from alerts.render import dump_yaml
from cli.replicas_cmd import run_compare
from clusternodes import start_node, stop_node, wait_whole
from collectors.export import metrics as M
from collectors.app import build
from kafkatools import cleaner_checkpoint, client_config, cluster_admin, partition_dir, unique_topic
from monitor.contract.rule_eval import Sample, evaluate_rule
from monitor.contract.rules import RULES
from monitor.kafka.replicakeys import read_keys
from monitor.model.replicasafety import resurrected
from monitor.settings.config import Thresholds, parse_config
from waiting import wait_for

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[2]
RETENTION_MS = 15_000  # delete.retention.ms: the limit, and the horizon the leader's cleaner stamps
KEYS, DELETED = 10, 5
ALERT = "ReplicaMayResurrectDeletes"


def _produce(cluster, topic: str, items, ts: int) -> None:
    p = Producer(client_config(cluster, "admin", **{"acks": "all", "linger.ms": 5}))
    errors = []
    for k, v in items:
        p.produce(topic, key=k, value=v, timestamp=ts, on_delivery=lambda e, m: errors.append(e) if e else None)
    assert p.flush(60) == 0 and errors == [], errors[:3]


def _samples(registry, topic: str) -> list[Sample]:
    return [Sample(s.name, s.labels, s.value) for m in registry.collect() for s in m.samples
            if s.labels.get("topic") == topic]


def _fired(samples, t: Thresholds) -> list:
    return [a for r in RULES if r.alert == ALERT for a in evaluate_rule(r, samples, t) or []]


def _promtool_case(samples, severity: str, t: Thresholds) -> dict:
    """One promtool test: the scraped series held for the rule's window, the alerts the Python evaluator
    finds on them expected."""
    keep = (M.P_REPLICA_OUT_RATIO, M.P_REPLICA_OUT_PID_RATIO)
    case = Case(ALERT, severity, {sel(s.name, dict(s.labels)): f"{s.value:g}x600" for s in samples
                                  if s.name in keep}, True)
    exp = [{"exp_labels": {"severity": a.severity, **a.labels}, "exp_annotations": a.annotations}
           for a in evaluated(case, t)]
    assert [e["exp_labels"]["severity"] for e in exp] == [severity]
    return {"interval": "1m", "input_series": [{"series": k, "values": v} for k, v in case.series.items()],
            "alert_rule_test": [{"eval_time": "100m", "alertname": ALERT, "exp_alerts": exp}]}


def test_a_follower_down_past_delete_retention_keeps_the_keys_its_leader_deleted(kafka_cluster, tmp_path):
    started = time.monotonic()
    t = Thresholds()
    admin = cluster_admin(kafka_cluster)  # must outlive its futures
    brokers = {b.node_id: b for b in kafka_cluster.brokers()}
    topic = unique_topic("replicasafety")
    admin.create_topics([NewTopic(topic, 1, 3, config={
        "cleanup.policy": "compact", "delete.retention.ms": str(RETENTION_MS), "segment.ms": "1000",
        "min.cleanable.dirty.ratio": "0.01", "min.compaction.lag.ms": "0"})])[topic].result(60)

    def isr():
        tm = admin.list_topics(topic, timeout=10).topics.get(topic)
        p = tm.partitions.get(0) if tm and not tm.error else None
        return (p.leader, sorted(p.isrs)) if p else (None, [])

    leader = wait_for(lambda: isr()[0] if isr()[1] == [1, 2, 3] else None, 90, f"three in-sync replicas of {topic}")
    follower = max(n for n in brokers if n != leader)
    base = int(time.time() * 1000)
    keys = [f"k{i}".encode() for i in range(KEYS)]
    deleted = sorted(keys[:DELETED])
    _produce(kafka_cluster, topic, [(k, b"value-" + k) for k in keys], base)  # acks=all: on all three

    cfg = parse_config({"clusters": [{
        "name": "c3", "bootstrap_servers": kafka_cluster.bootstrap,
        "client": {k: v for k, v in client_config(kafka_cluster, "monitor").items() if k != "bootstrap.servers"}}]})
    col = build(cfg)
    cmd = None
    labels = {"cluster": "c3", "broker": str(follower), "topic": topic, "partition": "0", "lower_bound": "false",
              "offline": "true"}
    try:
        assert col.runner.refresh_all()
        assert [s for s in _samples(col.registry, topic) if s.name == M.P_REPLICA_OUT_SECONDS] == []  # in sync

        cmd = stop_node(brokers[follower])
        wait_for(lambda: follower not in isr()[1], 60, f"broker {follower} out of the ISR of {topic}")
        # while it is down: tombstones for half the keys, in a segment of their own (a later timestamp rolls
        # it: LogSegment.shouldRoll against segment.ms), then a record that rolls them out of the active one
        _produce(kafka_cluster, topic, [(k, None) for k in deleted], base + 5_000)
        _produce(kafka_cluster, topic, [(b"roll", b"1")], base + 10_000)
        leader_dir = partition_dir(brokers[leader].log_dir, topic)
        wait_for(lambda: (cleaner_checkpoint(brokers[leader].log_dir, topic) or 0) > 0, 60,
                 f"the leader's first clean of {topic}")

        def ratio():
            assert col.runner.refresh_all(), [s.last_error for s in col.store.statuses() if not s.up]
            samples = _samples(col.registry, topic)
            return samples, col.registry.get_sample_value(M.P_REPLICA_OUT_RATIO, labels)

        def warning():
            samples, r = ratio()
            return samples if r is not None and t.replica_out_warning_fraction < r < 1 else None

        warned = wait_for(warning, 60, f"broker {follower}'s replica out for over half of delete.retention.ms",
                          interval=0.5)
        assert [(a.severity, a.labels["broker"]) for a in _fired(warned, t)] == [("warning", str(follower))]

        # the leader's cleaner removes the tombstones once their horizon has passed; a record now and then
        # makes the log dirty again so a clean comes (each later timestamp rolls the segment)
        rolls = [base + 10_000]

        def tombstones_gone():
            latest = read_keys(leader_dir).latest
            if not any(k in latest for k in deleted):
                return latest
            if time.time() * 1000 > base + RETENTION_MS and len(rolls) < 40:
                rolls.append(rolls[-1] + 5_000)
                _produce(kafka_cluster, topic, [(b"roll", b"%d" % len(rolls))], rolls[-1])
            return None

        wait_for(tombstones_gone, 120, f"the leader's cleaner to remove the tombstones of {topic}", interval=1.0)

        def critical():
            samples, r = ratio()
            return samples if r is not None and r >= 1 else None

        crit = wait_for(critical, 60, f"broker {follower}'s replica out past delete.retention.ms", interval=0.5)
        assert [(a.severity, a.labels["broker"]) for a in _fired(crit, t)] == [("critical", str(follower))]
        seconds = col.registry.get_sample_value(M.P_REPLICA_OUT_SECONDS, labels)
        assert seconds is not None and seconds >= RETENTION_MS / 1000

        # the same scraped series in promtool, against the rendered rule file
        (tmp_path / "real.test.yml").write_text(dump_yaml({
            "rule_files": [str(ROOT / "alerts" / "compaction.rules.yml")], "evaluation_interval": "1m",
            "tests": [_promtool_case(warned, "warning", t), _promtool_case(crit, "critical", t)]}))
        proc = subprocess.run(["promtool", "test", "rules", str(tmp_path / "real.test.yml")],
                              capture_output=True, text=True, timeout=120)
        assert proc.returncode == 0, proc.stdout + proc.stderr

        # the follower back: it catches up from its own log end, and never sees the removed tombstones
        brokers[follower] = start_node(brokers[follower], cmd, jmx_basic_auth=bool(kafka_cluster.jmx_username))
        cmd = None
        wait_whole(kafka_cluster)
        lead = read_keys(leader_dir)
        wait_for(lambda: read_keys(partition_dir(brokers[follower].log_dir, topic)).log_end >= lead.log_end, 60,
                 f"broker {follower}'s copy of {topic} caught up")
        back = read_keys(partition_dir(brokers[follower].log_dir, topic))
        assert lead.whole and back.whole, lead.faults + back.faults
        found = resurrected(lead.latest, back.latest, lead.log_start, lead.log_end)
        assert list(found.keys) == deleted  # exactly the keys it warned about
        out = io.StringIO()  # and as the runbook has the user ask it
        assert run_compare(str(leader_dir), str(partition_dir(brokers[follower].log_dir, topic)), fmt="json",
                           out=out) == 1
        got = json.loads(out.getvalue())
        assert ([k["key"].encode() for k in got["resurrected"]], got["leader"], got["follower"]) == (
            deleted, str(leader), str(follower))
        # the cluster's own view agrees: the ISR is full again, so the alert's series are gone
        assert col.runner.refresh_all()
        assert col.registry.get_sample_value(M.P_REPLICA_OUT_SECONDS, labels) is None
        print(found.explain(topic, 0, str(leader), str(follower)), file=sys.stderr)

        # the runbook's fix, as Kafka does it: the follower stopped, its folder of the partition deleted, started
        # again: the broker makes the replica anew and fetches it whole from the leader; nothing comes back
        cmd = stop_node(brokers[follower])
        wait_for(lambda: follower not in isr()[1], 60, f"broker {follower} out of the ISR of {topic} again")
        shutil.rmtree(partition_dir(brokers[follower].log_dir, topic))
        start_node(brokers[follower], cmd, jmx_basic_auth=bool(kafka_cluster.jmx_username))
        cmd = None
        wait_whole(kafka_cluster)
        rebuilt = wait_for(lambda: (r := read_keys(partition_dir(brokers[follower].log_dir, topic))).log_end
                           >= lead.log_end and r, 60, f"broker {follower}'s copy of {topic} fetched again")
        assert resurrected(read_keys(leader_dir).latest, rebuilt.latest).keys == ()
        assert not any(k in rebuilt.latest for k in deleted)
        print(f"replica safety on the cluster: {time.monotonic() - started:.0f} s", file=sys.stderr)
    finally:
        col.close()
        if cmd is not None:
            start_node(brokers[follower], cmd, jmx_basic_auth=bool(kafka_cluster.jmx_username))
            wait_whole(kafka_cluster)
        admin.delete_topics([topic])[topic].result(60)
