"""What the exporter says about a real broker, checked against the broker's own files,
its JMX gauges and kafka-dump-log (issue 4's scenarios a-d)."""

from __future__ import annotations

import io
import json
import math
import time
from pathlib import Path

import pytest
from confluent_kafka import Consumer, TopicPartition
from confluent_kafka.admin import AdminClient, AlterConfigOpType, ConfigEntry, ConfigResource, ResourceType

from collectors.app import build, run_logdir
from kafkatools import (cleaner_checkpoint, compacted, create_topic, partition_dir, produce, roll, unique_topic,
                        wait_cleaned, wait_for)
from monitor.config import BrokerConfig, ClusterConfig, Config
from monitor.dump import DumpParser
from localkafka.broker import dump_log

pytestmark = pytest.mark.kafka


@pytest.fixture
def collector(kafka):
    cfg = Config(clusters=(ClusterConfig(
        name="local", bootstrap_servers=kafka.bootstrap,
        brokers=(BrokerConfig(id=str(kafka.node_id), jmx_url=kafka.jmx_url, log_dirs=(kafka.log_dir,)),)),))
    col = build(cfg)
    yield col
    col.close()


def refresh(col):
    assert col.runner.refresh_all(), [s.last_error for s in col.store.statuses() if not s.up]
    return col.registry


def pval(reg, name, topic, partition=0, **extra):
    return reg.get_sample_value(name, {"cluster": "local", "broker": "1", "topic": topic,
                                       "partition": str(partition), **extra})


def set_topic_config(bootstrap, topic, **cfg):
    admin = AdminClient({"bootstrap.servers": bootstrap})
    entries = [ConfigEntry(k.replace("_", "."), str(v), incremental_operation=AlterConfigOpType.SET)
               for k, v in cfg.items()]
    res = ConfigResource(ResourceType.TOPIC, topic, incremental_configs=entries)
    for fut in admin.incremental_alter_configs([res]).values():
        fut.result(30)
    time.sleep(0.5)  # the broker applies topic config changes asynchronously


def write_rounds(bootstrap, topic, rounds, keys=200, tombstones=()):
    for r in range(rounds):
        produce(bootstrap, topic, [(f"k{i}".encode(), f"value-{r}-{i}".encode() * 4) for i in range(keys)])
        roll(bootstrap, topic)
    if tombstones:
        produce(bootstrap, topic, [(f"k{i}".encode(), None) for i in tombstones])
        roll(bootstrap, topic)


def dump_tombstones(folder: Path) -> int:
    """Tombstones kafka-dump-log counts in a copy of the partition (the cleaner may swap files meanwhile)."""
    import shutil
    import tempfile

    for _ in range(5):
        with tempfile.TemporaryDirectory() as tmp:
            try:
                for f in sorted(folder.glob("*.log")):
                    shutil.copy2(f, tmp)
            except FileNotFoundError:
                time.sleep(0.5)
                continue
            files = sorted(Path(tmp).glob("*.log"))
            parser = DumpParser(dump_log(files, "--print-data-log").splitlines())
            return sum(1 for b in parser.batches() if not b.is_control for r in b.records() if r.value_size < 0)
    raise AssertionError(f"could not copy {folder} while the cleaner kept swapping its segments")


def test_a_healthy_topic_ratio_falls_after_clean_and_agrees_with_broker(kafka, collector):
    """A healthy compacted topic: dirty before the clean, clean after; our maximum ratio agrees with
    the broker's own max-dirty-percent at the same moment; logdir agrees with the checkpoint file."""
    t = create_topic(kafka.bootstrap, unique_topic("healthy"), **compacted(**{"min.cleanable.dirty.ratio": 1.0}))
    write_rounds(kafka.bootstrap, t, 4)
    reg = refresh(collector)
    before = pval(reg, "kafka_compaction_partition_cleanable_ratio", t)
    assert before == 1.0  # never cleaned: no clean section
    assert pval(reg, "kafka_compaction_partition_eligible", t) == 0.0  # 1.0 is not > 1.0
    assert pval(reg, "kafka_compaction_partition_min_cleanable_dirty_ratio", t) == 1.0  # from the admin API
    assert cleaner_checkpoint(kafka.log_dir, t) is None

    set_topic_config(kafka.bootstrap, t, **{"min.cleanable.dirty.ratio": 0.01})
    cp = wait_cleaned(kafka.log_dir, t)
    reg = refresh(collector)
    after = pval(reg, "kafka_compaction_partition_cleanable_ratio", t)
    assert after < before and after == 0.0
    assert pval(reg, "kafka_compaction_partition_first_dirty_offset", t) == cp
    assert pval(reg, "kafka_compaction_partition_clean_bytes", t) > 0

    # More dirty data, held below the threshold so the broker leaves it: a non-trivial ratio.
    set_topic_config(kafka.bootstrap, t, **{"min.cleanable.dirty.ratio": 1.0})
    write_rounds(kafka.bootstrap, t, 2)
    agreed = None
    for _ in range(40):
        reg = refresh(collector)
        ours = max(s.value for m in reg.collect() if m.name == "kafka_compaction_partition_cleanable_ratio"
                   for s in m.samples)
        broker = reg.get_sample_value("kafka_compaction_broker_max_dirty_ratio", {"cluster": "local", "broker": "1"})
        if broker is not None and abs(math.floor(ours * 100) / 100 - broker) <= 0.011:
            agreed = (ours, broker)
            break
        time.sleep(0.3)
    assert agreed, f"ours {ours} vs broker max-dirty-percent {broker}"
    print("agreement (ours, broker):", agreed)
    mine = pval(reg, "kafka_compaction_partition_cleanable_ratio", t)
    assert 0 < mine < 1

    out = io.StringIO()
    assert run_logdir([kafka.log_dir], config=Config(), fmt="json", out=out, err=io.StringIO()) in (0, 1)
    rows = {(r["topic"], r["partition"]): r for r in json.loads(out.getvalue())}
    assert rows[(t, 0)]["first_dirty_offset"] == cleaner_checkpoint(kafka.log_dir, t)
    assert rows[(t, 0)]["cleanable_ratio"] == pytest.approx(mine)
    # no admin API here: the cleaner's checkpoint says compacted, Kafka's default threshold applies,
    # until the command line overrides it (effective_config's precedence)
    assert rows[(t, 0)]["config_source"] == "default" and rows[(t, 0)]["min_cleanable_dirty_ratio"] == 0.5
    out = io.StringIO()
    run_logdir([kafka.log_dir], config=Config(), fmt="json", out=out, err=io.StringIO(),
               topic_overrides={t: {"min.cleanable.dirty.ratio": "0.01"}})
    row = next(r for r in json.loads(out.getvalue()) if (r["topic"], r["partition"]) == (t, 0))
    assert row["config_source"] == "command-line" and row["min_cleanable_dirty_ratio"] == 0.01


def test_b_topic_kept_dirty_by_min_compaction_lag(kafka, collector):
    """Uncleaned far above its threshold, yet not cleanable: min.compaction.lag.ms holds it back."""
    t = create_topic(kafka.bootstrap, unique_topic("lagged"),
                     **compacted(**{"min.compaction.lag.ms": 3_600_000, "min.cleanable.dirty.ratio": 0.1}))
    write_rounds(kafka.bootstrap, t, 3)
    time.sleep(2)  # several cleaner passes (backoff 500 ms)
    assert cleaner_checkpoint(kafka.log_dir, t) is None  # the broker really did not clean it
    reg = refresh(collector)
    assert pval(reg, "kafka_compaction_partition_uncleaned_ratio", t) == 1.0  # > 0.1 threshold
    assert pval(reg, "kafka_compaction_partition_cleanable_ratio", t) == 0.0  # Kafka's view: nothing cleanable
    assert pval(reg, "kafka_compaction_partition_compaction_blocked", t, reason="min_compaction_lag") == 1.0
    assert pval(reg, "kafka_compaction_partition_eligible", t) == 0.0
    assert pval(reg, "kafka_compaction_partition_cleanable_bytes", t) == 0.0
    logs = sorted(partition_dir(kafka.log_dir, t).glob("*.log"))
    assert len(logs) > 1 and pval(reg, "kafka_compaction_partition_uncleaned_bytes", t) == \
        sum(f.stat().st_size for f in logs[:-1])  # every segment below the active one
    assert pval(reg, "kafka_compaction_partition_not_yet_cleanable_bytes", t) == \
        pval(reg, "kafka_compaction_partition_log_bytes", t)


def test_c_tombstones_counted_then_gone(kafka, collector):
    """Tombstones with a short delete.retention.ms: counted while on disk (as kafka-dump-log counts
    them), past their delete horizon after the first clean, gone after the next."""
    t = create_topic(kafka.bootstrap, unique_topic("tombs"),
                     **compacted(**{"min.cleanable.dirty.ratio": 1.0, "delete.retention.ms": 1000}))
    write_rounds(kafka.bootstrap, t, 2, keys=100, tombstones=range(0, 90, 3))
    folder = partition_dir(kafka.log_dir, t)
    reg = refresh(collector)
    dirty = pval(reg, "kafka_compaction_partition_tombstones", t, section="dirty")
    assert dirty == 30 == dump_tombstones(folder)
    assert pval(reg, "kafka_compaction_partition_tombstones", t, section="clean") == 0
    assert pval(reg, "kafka_compaction_partition_delete_retention_seconds", t) == 1.0

    set_topic_config(kafka.bootstrap, t, **{"min.cleanable.dirty.ratio": 0.01})
    cp = wait_cleaned(kafka.log_dir, t)
    time.sleep(1.5)  # past the 1 s delete horizon the first clean stamped on the tombstones
    reg = refresh(collector)
    assert pval(reg, "kafka_compaction_partition_tombstones", t, section="clean") == 30
    assert pval(reg, "kafka_compaction_partition_tombstones_past_delete_horizon", t) == 30
    assert pval(reg, "kafka_compaction_partition_tombstones_past_retention", t) == 30
    assert pval(reg, "kafka_compaction_partition_oldest_tombstone_age_seconds", t) >= 1.0

    write_rounds(kafka.bootstrap, t, 1, keys=100)  # new dirty data makes the log eligible again
    wait_cleaned(kafka.log_dir, t, past=cp)
    wait_for(lambda: refresh(collector) and pval(collector.registry, "kafka_compaction_partition_tombstones",
                                                 t, section="clean") == 0, timeout=30, what="tombstones removed")
    reg = collector.registry
    assert pval(reg, "kafka_compaction_partition_tombstones_past_delete_horizon", t) == 0
    assert dump_tombstones(folder) == 0


def test_d_stopped_consumer_group_is_flagged_at_risk(kafka, collector):
    """A group that commits and stops while the topic keeps changing: its time lag grows past
    delete.retention.ms and it is flagged as at risk of missing tombstones."""
    t = create_topic(kafka.bootstrap, unique_topic("groups"), **compacted(**{"delete.retention.ms": 3000}))
    produce(kafka.bootstrap, t, [(f"k{i}".encode(), b"v") for i in range(50)])
    group = unique_topic("slow-group")
    c = Consumer({"bootstrap.servers": kafka.bootstrap, "group.id": group, "enable.auto.commit": False,
                  "auto.offset.reset": "earliest"})
    c.assign([TopicPartition(t, 0, 0)])
    got = 0
    deadline = time.time() + 20
    while got < 10 and time.time() < deadline:
        m = c.poll(0.5)
        if m is not None and not m.error():
            got += 1
    c.commit(offsets=[TopicPartition(t, 0, 10)], asynchronous=False)
    c.close()

    labels = {"cluster": "local", "group": group, "topic": t, "partition": "0"}
    reg = refresh(collector)
    assert reg.get_sample_value("kafka_compaction_consumer_group_lag_records", labels) == 40
    early = reg.get_sample_value("kafka_compaction_consumer_group_lag_seconds", labels)
    assert early is not None and early < 3
    assert reg.get_sample_value("kafka_compaction_consumer_group_tombstone_risk", labels) == 0.0

    for i in range(8):  # the topic keeps receiving updates
        produce(kafka.bootstrap, t, [(f"k{i}".encode(), b"new")])
        time.sleep(0.5)
    reg = refresh(collector)
    lag_s = reg.get_sample_value("kafka_compaction_consumer_group_lag_seconds", labels)
    assert lag_s > 3.0 and lag_s > early
    assert reg.get_sample_value("kafka_compaction_consumer_group_lag_records", labels) == 48
    assert reg.get_sample_value("kafka_compaction_consumer_group_lag_retention_ratio", labels) >= 1.0
    assert reg.get_sample_value("kafka_compaction_consumer_group_tombstone_risk", labels) == 1.0


def test_collect_once_cli_against_the_broker(kafka):
    """`collect --once` prints the exposition and exits 0 when every source answered."""
    import subprocess
    import sys

    proc = subprocess.run([sys.executable, "-m", "cli", "collect", "--once", "--bootstrap-servers",
                           kafka.bootstrap, "--jmx-url", kafka.jmx_url, "--log-dir", kafka.log_dir],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert 'kafka_compaction_source_up{cluster="default",kind="jmx",source="jmx:default:1"} 1.0' in proc.stdout
    assert "kafka_compaction_partition_cleanable_ratio{" in proc.stdout
    bad = subprocess.run([sys.executable, "-m", "cli", "collect", "--once", "--jmx-url",
                          "http://127.0.0.1:1/metrics"], capture_output=True, text=True, timeout=60)
    assert bad.returncode == 1 and "127.0.0.1:1" in bad.stderr
