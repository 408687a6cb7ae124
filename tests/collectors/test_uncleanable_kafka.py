"""A partition made uncleanable by damage on disk, on a real Kafka 4.3 broker of the test's own.

The damage: the first record of a dirty segment declares one byte more than it holds (its length
varint + 1). Kafka 4.3's cleaner reads it while building the offset map; DefaultRecord.readFrom throws
InvalidRecordException ("Invalid record size: expected to read N bytes in record payload, but instead
read M"), LogCleaner.CleanerThread.tryCleanFilthiestLog logs it and marks the partition uncleanable.
(A corrupted batch CRC is not such a damage: the 4.3 cleaner does not check CRCs and cleans past it.)

A dead cleaner thread cannot be made on a real broker: since KIP-346 (Kafka 2.1) every error while
cleaning marks the partition uncleanable instead, and what is left (an Error outside a clean, such as
an OutOfMemoryError) cannot be provoked reliably. Thread deaths are tested with the line shapes of
Kafka's ShutdownableThread in tests/monitor/kafka/test_cleanerlog.py."""

from __future__ import annotations

import pytest

from collectors.app import build
from kafkatools import (compacted, create_topic, damage_first_record, localbroker, own_broker, partition_dir,
                       set_topic_config, write_rounds)
from monitor.settings.config import BrokerConfig, ClusterConfig, Config
from waiting import wait_for

pytestmark = pytest.mark.slow  # a broker of its own, restarted



def uncleanable_series(reg) -> dict:
    return {(s.labels["topic"], s.labels["partition"]): s.labels["exception"]
            for m in reg.collect() for s in m.samples if s.name == "kafka_compaction_partition_uncleanable"}


def test_damaged_record_marks_exactly_its_partition_uncleanable_until_restart(tmp_path):
    d = tmp_path / "broker"
    with own_broker(d, "uncleanable broker") as st:
        held = compacted(**{"min.compaction.lag.ms": 3_600_000})  # dirty until the damage is in place
        damaged = create_topic(st.bootstrap, "damaged", **held)
        healthy = create_topic(st.bootstrap, "healthy", **held)
        for t in (damaged, healthy):
            write_rounds(st.bootstrap, t, 3, keys=50)
        seg, original = damage_first_record(partition_dir(st.log_dir, damaged))

        cfg = Config(clusters=(ClusterConfig(name="local", brokers=(BrokerConfig(
            id=str(st.node_id), jmx_url=st.jmx_url, cleaner_log=str(st.cleaner_log)),)),))
        col = build(cfg)
        try:
            for t in (damaged, healthy):
                set_topic_config(st.bootstrap, t, **{"min.compaction.lag.ms": 0})
            broker_gauge = {"cluster": "local", "broker": str(st.node_id), "log_dir": st.log_dir}

            def marked():
                # both sources: a refresh may read the JMX page just before the cleaner marks the partition
                # and its log line just after, so wait until the log and Kafka's own gauge both show it
                assert col.runner.refresh_all(), [s.last_error for s in col.store.statuses() if not s.up]
                reg = col.registry
                series = uncleanable_series(reg)
                count = reg.get_sample_value("kafka_compaction_broker_uncleanable_partitions", broker_gauge)
                return (series, count) if series and count else None

            series, count = wait_for(marked, 120, "the collector to read the partition marked uncleanable, in "
                                                  "log-cleaner.log and in the broker's uncleanable-partitions-count")
            assert series == {(damaged, "0"): "InvalidRecordException"}
            assert count == 1  # Kafka's own uncleanable-partitions-count for the log dir agrees
            u = col.store.snapshot(f"cleaner_log:local:{st.node_id}").state.uncleanable[(damaged, 0)]
            assert u.message.startswith("Invalid record size") and u.log_dir == st.log_dir
            line = int(u.source.rsplit(":", 1)[1])
            assert "Marking its partition (damaged-0) as uncleanable" in \
                st.cleaner_log.read_text().splitlines()[line - 1]

            localbroker.stop(d, progress=lambda *_: None)
            seg.write_bytes(original)  # repaired while the broker is down
            localbroker.start(d, progress=lambda *_: None)

            def cleared():
                if not col.runner.refresh_all():
                    return None
                reg = col.registry
                gauge = reg.get_sample_value("kafka_compaction_broker_uncleanable_partitions", broker_gauge)
                return not uncleanable_series(reg) and gauge == 0

            wait_for(cleared, 120, "the uncleanable mark gone from both the collector and the broker after a restart")
            assert col.store.snapshot(f"cleaner_log:local:{st.node_id}").state.broker_starts == 2
        finally:
            col.close()
