"""Jolokia and the JMX exporter agree on one real broker; a collector outlives its broker's
restart: the source goes down (counted) while the broker is away and comes back with it."""

from __future__ import annotations

import pytest

from collectors.app import build
from kafkatools import localbroker as lk
from kafkatools import wait_for
from monitor.config import BrokerConfig, ClusterConfig, Config, Timeouts

pytestmark = pytest.mark.kafka


def _labels(kind, name):
    return {"cluster": "c", "source": name, "kind": kind}


def test_jolokia_reads_the_same_gauges_as_the_jmx_exporter(kafka):
    cfg = Config(clusters=(ClusterConfig(name="c", brokers=(
        BrokerConfig(id="jmx", jmx_url=kafka.jmx_url), BrokerConfig(id="jolokia", jolokia_url=kafka.jolokia_url))),))
    col = build(cfg)
    names = ("kafka_compaction_broker_cleaner_dead_threads", "kafka_compaction_broker_cleaner_recopy_ratio",
             "kafka_compaction_broker_cleaner_max_buffer_utilization_ratio",
             "kafka_compaction_broker_max_compaction_delay_seconds")

    def both():
        assert col.runner.refresh_all()
        return [(name, col.registry.get_sample_value(name, {"cluster": "c", "broker": "jmx"}),
                 col.registry.get_sample_value(name, {"cluster": "c", "broker": "jolokia"})) for name in names]

    try:
        # the two read the same MBeans one after the other: a clean finishing in between (of another
        # test's topic) changes a gauge, so they must agree on one refresh, not on every one
        pairs = wait_for(lambda: (lambda p: p if all(a is not None and a == b for _, a, b in p) else None)(both()),
                         30, "one refresh where Jolokia and the JMX exporter give the same cleaner gauges")
        assert pairs[0] == ("kafka_compaction_broker_cleaner_dead_threads", 0, 0)
        reg = col.registry
        d = kafka.log_dir
        assert reg.get_sample_value("kafka_compaction_broker_uncleanable_partitions",
                                    {"cluster": "c", "broker": "jolokia", "log_dir": d}) == 0
        assert reg.get_sample_value("kafka_compaction_broker_uncleanable_partitions",
                                    {"cluster": "c", "broker": "jmx", "log_dir": d}) == 0
    finally:
        col.close()


@pytest.mark.slow  # starts (and restarts) a broker of its own
def test_collector_survives_broker_restart(tmp_path):
    d = tmp_path / "kafka2"
    st = lk.start(d, progress=lambda *_: None)
    cfg = Config(clusters=(ClusterConfig(name="c", brokers=(
        BrokerConfig(id="1", jmx_url=st.jmx_url, jolokia_url=st.jolokia_url, log_dirs=(st.log_dir,)),)),),
        timeouts=Timeouts(jmx=2))
    col = build(cfg)
    try:
        assert col.runner.refresh_all()
        lk.stop(d, progress=lambda *_: None)
        assert not col.runner.refresh_all()
        reg = col.registry
        assert reg.get_sample_value("kafka_compaction_source_up", _labels("jmx", "jmx:c:1")) == 0
        assert reg.get_sample_value("kafka_compaction_source_up", _labels("jolokia", "jolokia:c:1")) == 0
        assert reg.get_sample_value("kafka_compaction_source_errors_total",
                                    {**_labels("jmx", "jmx:c:1"), "error": "connect"}) == 1
        # the log dir is still on disk: that source stays up
        assert reg.get_sample_value("kafka_compaction_source_up", _labels("log_dirs", "log_dirs:c:1")) == 1
        assert reg.get_sample_value("kafka_compaction_broker_max_dirty_ratio", {"cluster": "c", "broker": "1"}) is None

        st2 = lk.start(d, progress=lambda *_: None)
        assert st2.jmx_url == st.jmx_url  # a restarted broker keeps its addresses
        wait_for(col.runner.refresh_all, 30, "every source of the collector up after the broker's restart")
        assert reg.get_sample_value("kafka_compaction_source_up", _labels("jmx", "jmx:c:1")) == 1
        assert reg.get_sample_value("kafka_compaction_broker_cleaner_dead_threads",
                                    {"cluster": "c", "broker": "1"}) == 0
    finally:
        col.close()
        lk.stop(d, progress=lambda *_: None)
