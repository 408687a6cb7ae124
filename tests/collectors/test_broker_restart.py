"""Jolokia and the JMX exporter agree on one real broker; a collector outlives its broker's
restart: the source goes down (counted) while the broker is away and comes back with it, the consumer
groups' lag with it (issue 35)."""

from __future__ import annotations

import logging
import time

import pytest
from confluent_kafka import TopicPartition

from collectors.app import build
from collectors.serving.runner import StateLog
from kafkatools import commit_offsets, compacted, create_topic, produce, unique_topic
from kafkatools import localbroker as lk
from kafkatools import wait_for
from monitor.settings.config import BrokerConfig, ClusterConfig, Config, Intervals, Timeouts

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


@pytest.mark.slow  # starts (and restarts) a broker of its own
def test_group_lag_is_back_within_two_refreshes_after_a_broker_restart(tmp_path, caplog):
    """Issue 35: after a broker restart librdkafka can keep the group's coordinator on a broker handle it
    has decommissioned, and every list_consumer_group_offsets of that client times out for good while
    the source said up. Served as ``collect`` does (the runner's threads, short intervals): the group's
    lag series are back within two refreshes that start after the broker answers again, and no refresh in
    which every group's offsets call failed is up."""
    d = tmp_path / "kafka-restart-groups"
    st = lk.start(d, progress=lambda *_: None)
    col = None
    try:
        topic = create_topic(st.bootstrap, unique_topic("restart-lag"), **compacted())
        produce(st.bootstrap, topic, [(f"k{i}".encode(), b"v") for i in range(20)])
        group = unique_topic("restart-group")
        commit_offsets({"bootstrap.servers": st.bootstrap, "group.id": group}, [TopicPartition(topic, 0, 5)])
        cfg = Config(clusters=(ClusterConfig(name="c", bootstrap_servers=st.bootstrap),),
                     intervals=Intervals(admin=1, consumer_groups=1), timeouts=Timeouts(admin=3))
        col = build(cfg)
        col.runner.state_log = StateLog(interval=0.5)
        src = next(s for s in col.runner.sources if s.kind == "consumer_groups")
        refreshes = []  # (started, ended, snapshot or None, error or None), in order
        refresh = src.refresh

        def recorded():
            t0 = time.monotonic()
            try:
                snap = refresh()
            except Exception as exc:
                refreshes.append((t0, time.monotonic(), None, exc))
                raise
            refreshes.append((t0, time.monotonic(), snap, None))
            return snap

        src.refresh = recorded
        lag = {"cluster": "c", "group": group, "topic": topic}
        reg = col.registry

        def has_lag(snap):
            return snap is not None and any(x.group == group and x.topic == topic for x in snap.lags)

        with caplog.at_level(logging.WARNING, logger="compaction_monitor"):
            col.runner.start()
            wait_for(lambda: reg.get_sample_value("kafka_compaction_consumer_group_topic_lag_records", lag) == 15, 60,
                     "the group's lag before the restart")
            lk.stop(d, progress=lambda *_: None)
            stopped = time.monotonic()
            wait_for(lambda: any(r[0] > stopped and r[3] is not None for r in refreshes), 60,
                     "a consumer-groups refresh failing while the broker is away")
            time.sleep(max(0.0, stopped + 8 - time.monotonic()))  # away ~8 s
            st2 = lk.start(d, progress=lambda *_: None)
            assert st2.bootstrap == st.bootstrap  # same ports
            answered = time.monotonic()
            wait_for(lambda: len([r for r in refreshes if r[0] >= answered]) >= 2, 120,
                     "two consumer-groups refreshes after the broker answers again")
            after = [r for r in refreshes if r[0] >= answered][:2]
            assert any(has_lag(snap) for _, _, snap, _ in after), \
                [(round(e - s, 1), err or getattr(snap, "errors", None)) for s, e, snap, err in after]
            wait_for(lambda: reg.get_sample_value("kafka_compaction_consumer_group_topic_lag_records", lag) == 15,
                     30, "the group's lag series exported again")
        for _, _, snap, _ in list(refreshes):  # a refresh that returned a snapshot made the source up
            if snap is not None and snap.listed:
                assert not all(g in snap.errors for g in snap.listed), snap.errors
        said = [r.getMessage() for r in caplog.records if r.name == "compaction_monitor.sources"]
        assert any("consumer_groups:c" in m and "is down: " in m for m in said), said
        assert any("consumer_groups:c" in m and "is up again" in m for m in said), said
        stderr_like = [r for r in caplog.records if r.name == "compaction_monitor.librdkafka"]
        assert stderr_like, "librdkafka's lines go through logging"
        # deduped: one line per kind per minute, so far fewer than librdkafka's ~19 a second while away
        assert len(stderr_like) < 60, [r.getMessage() for r in stderr_like][:20]
    finally:
        if col is not None:
            col.close()
        lk.stop(d, progress=lambda *_: None)
