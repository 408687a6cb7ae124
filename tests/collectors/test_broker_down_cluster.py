"""A broker of the 3-broker SASL_SSL cluster down (tests/conftest.py ``kafka_cluster``): its JMX
source goes down with an error naming its endpoint and is counted; the other brokers' sources and the
admin source keep answering, and their series keep flowing. The node is then started again and the
test waits until the cluster is whole (every ISR full), so the session's other tests find it as it was.

Expected values come from outside the code under test: the node the test stopped, its JMX exporter's
address from the cluster's state, and the admin client's metadata (which broker leads)."""

from __future__ import annotations

import pytest

from clusternodes import start_node, stop_node, wait_whole
from collectors.app import build
from kafkatools import client_config, cluster_admin, cluster_brokers, wait_for
from monitor.contract.metricnames import PREFIX
from monitor.settings.config import parse_config
from monitor.contract.rule_eval import Sample, evaluate_rule
from monitor.contract.rules import RULES

pytestmark = pytest.mark.slow

NS = PREFIX  # the exported series are named PREFIX + name (monitor.contract.metricnames)


def _up(reg, name: str, kind: str):
    return reg.get_sample_value(NS + "source_up", {"cluster": "c3", "source": name, "kind": kind})


def test_a_broker_down_takes_its_sources_down_and_the_others_keep_flowing(kafka_cluster):
    brokers = {b.node_id: b for b in kafka_cluster.brokers()}
    down = max(brokers)
    cfg = parse_config({"timeouts": {"jmx": 2}, "clusters": [{
        "name": "c3", "bootstrap_servers": kafka_cluster.bootstrap,
        "client": {k: v for k, v in client_config(kafka_cluster, "monitor").items() if k != "bootstrap.servers"},
        "brokers": cluster_brokers(kafka_cluster)}]})  # the exporters' basic auth by reference
    col = build(cfg)
    reg = col.registry
    cmd = None
    try:
        wait_for(col.runner.refresh_all, 60, "every source up with the whole cluster")
        before = {n: reg.get_sample_value(NS + "broker_cleaner_dead_threads", {"cluster": "c3", "broker": str(n)})
                  for n in brokers}
        assert before == {n: 0 for n in brokers}

        cmd = stop_node(brokers[down])
        admin = cluster_admin(kafka_cluster)
        wait_for(lambda: down not in admin.list_topics(timeout=10).brokers, 60,
                 f"the metadata to drop broker {down}")

        def only_its_source_down():
            # the cluster-wide sources may fail for a moment while leadership and group coordinators move
            # off the stopped broker (failover); then only the stopped broker's JMX source stays down
            assert not col.runner.refresh_all()
            down_now = {s.name for s in col.store.statuses() if not s.up}
            return down_now == {f"jmx:c3:{down}"}

        wait_for(only_its_source_down, 90, f"only broker {down}'s JMX source down once the cluster failed over")
        status = {s.name: s for s in col.store.statuses()}
        gone = status[f"jmx:c3:{down}"]
        assert not gone.up and brokers[down].jmx_url.split("/metrics")[0] in gone.last_error, gone.last_error
        assert kafka_cluster.password("monitor") not in gone.last_error
        assert _up(reg, f"jmx:c3:{down}", "jmx") == 0
        assert reg.get_sample_value(NS + "source_errors_total", {
            "cluster": "c3", "source": f"jmx:c3:{down}", "kind": "jmx", "error": "connect"}) >= 1
        # its broker-level series are withdrawn, not left stale
        assert reg.get_sample_value(NS + "broker_cleaner_dead_threads", {"cluster": "c3", "broker": str(down)}) is None
        # the others keep flowing: their JMX sources, the admin API (served by the two left), the log dirs
        for n in brokers:
            if n != down:
                assert _up(reg, f"jmx:c3:{n}", "jmx") == 1
                assert reg.get_sample_value(NS + "broker_cleaner_dead_threads",
                                            {"cluster": "c3", "broker": str(n)}) == 0
        assert _up(reg, "admin:c3", "admin") == 1
        # the log dir of the stopped broker is still on disk (a sidecar reads files, not the broker): up
        assert {n: _up(reg, f"log_dirs:c3:{n}", "log_dirs") for n in brokers} == {n: 1 for n in brokers}
        # and the alert says which source
        samples = [Sample(s.name, s.labels, s.value) for m in reg.collect() for s in m.samples]
        fired = [a.labels["source"] for r in RULES if r.alert == "CompactionMonitorDown"
                 for a in evaluate_rule(r, samples) or [] if a.labels.get("source")]
        assert fired == [f"jmx:c3:{down}"]
    finally:
        col.close()
        if cmd is not None:
            start_node(brokers[down], cmd, jmx_basic_auth=bool(kafka_cluster.jmx_username))
            wait_whole(kafka_cluster)
