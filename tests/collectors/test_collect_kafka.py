"""What the exporter says about a real broker, checked against the broker's own files (segment file
names and sizes, the cleaner's checkpoint), its JMX gauges and kafka-dump-log: a topic before and after
its first clean, one held back by min.compaction.lag.ms, tombstones until their delete horizon, and a
stopped consumer group. Each test owns its topics; the broker-wide gauge is checked on a broker of its own."""

from __future__ import annotations

import io
import json
import math
import re
import shutil
import time
from pathlib import Path

import pytest
from confluent_kafka import Consumer, TopicPartition

from clirun import run_cli
from collecting import make_collector, pval, refresh
from cli.logdir_cmd import run_logdir
from dumpcompare import dump_partition
from kafkatools import (cleaner_checkpoint, compacted, copy_partition, create_topic, own_broker,
                        partition_dir, produce, producer, roll, set_topic_config, unique_topic, wait_cleaned,
                        wait_cleaned_up_to_active, write_rounds)
from monitor.settings.config import Config
from waiting import wait_for

pytestmark = pytest.mark.kafka


@pytest.fixture
def collector(kafka):
    col = make_collector(kafka)
    yield col
    col.close()


def segment_sizes(folder: Path) -> dict[int, int]:
    """base offset (from the file name) -> size of each segment file, the active one last."""
    return {int(f.name[:-4]): f.stat().st_size for f in sorted(folder.glob("*.log"))}


def expected_ratio(folder: Path, first_dirty: int) -> tuple[int, int, float]:
    """Kafka's clean bytes, cleanable bytes and cleanable ratio, by hand from the segment files: clean
    are the segments below the first dirty offset, cleanable those from it to the active segment
    (min.compaction.lag.ms 0: nothing else holds data back)."""
    sizes = segment_sizes(folder)
    active = max(sizes)
    clean = sum(s for base, s in sizes.items() if base < first_dirty)
    cleanable = sum(s for base, s in sizes.items() if first_dirty <= base < active)
    return clean, cleanable, cleanable / (clean + cleanable)


def tombstones(batches) -> int:
    return sum(1 for b in batches if not b.is_control for r in b.records() if r.value_size < 0)


def test_cleanable_ratio_before_and_after_the_first_clean(kafka, collector, tmp_path):
    """Never cleaned: every byte below the active segment is cleanable (ratio 1). After the clean: ratio 0,
    the first dirty offset is the checkpoint. New rounds held back by a threshold of 1: the ratio the
    segment files give. ``logdir`` (no broker) says the same, with Kafka's default threshold."""
    t = create_topic(kafka.bootstrap, unique_topic("healthy"), **compacted(**{"min.cleanable.dirty.ratio": 1.0}))
    folder = partition_dir(kafka.log_dir, t)
    write_rounds(kafka.bootstrap, t, 4)
    reg = refresh(collector)
    assert cleaner_checkpoint(kafka.log_dir, t) is None
    assert pval(reg, "kafka_compaction_partition_cleanable_ratio", t) == 1.0  # no clean section
    assert pval(reg, "kafka_compaction_partition_eligible", t) == 0.0  # 1.0 is not > 1.0
    assert pval(reg, "kafka_compaction_partition_min_cleanable_dirty_ratio", t) == 1.0  # from the admin API
    assert pval(reg, "kafka_compaction_partition_cleanable_bytes", t) == expected_ratio(folder, 0)[1]

    set_topic_config(kafka.bootstrap, t, min_cleanable_dirty_ratio=0.01)
    cp = wait_cleaned_up_to_active(kafka.log_dir, t)
    reg = refresh(collector)
    assert pval(reg, "kafka_compaction_partition_cleanable_ratio", t) == 0.0
    assert pval(reg, "kafka_compaction_partition_first_dirty_offset", t) == cp
    assert pval(reg, "kafka_compaction_partition_clean_bytes", t) == expected_ratio(folder, cp)[0] > 0

    # More dirty data, held below the threshold so the broker leaves it: a ratio strictly between 0 and 1.
    set_topic_config(kafka.bootstrap, t, min_cleanable_dirty_ratio=1.0)
    write_rounds(kafka.bootstrap, t, 2)
    assert cleaner_checkpoint(kafka.log_dir, t) == cp  # a ratio below 1 is never above a threshold of 1
    clean, cleanable, ratio = expected_ratio(folder, cp)
    assert 0 < ratio < 1
    reg = refresh(collector)
    assert pval(reg, "kafka_compaction_partition_clean_bytes", t) == clean
    assert pval(reg, "kafka_compaction_partition_cleanable_bytes", t) == cleanable
    assert pval(reg, "kafka_compaction_partition_cleanable_ratio", t) == pytest.approx(ratio)

    # logdir over a copy of this partition and the cleaner's checkpoint: nothing of other tests is read
    log_dir = tmp_path / "logdir"
    copy_partition(folder, log_dir)
    shutil.copy(Path(kafka.log_dir) / "cleaner-offset-checkpoint", log_dir)
    out, err = io.StringIO(), io.StringIO()
    assert run_logdir([log_dir], config=Config(), fmt="json", out=out, err=err) == 0, err.getvalue()
    [row] = json.loads(out.getvalue())
    assert (row["topic"], row["partition"], row["first_dirty_offset"]) == (t, 0, cp)
    assert row["cleanable_ratio"] == pytest.approx(ratio)
    # no admin API here: the cleaner's checkpoint says compacted, Kafka's default threshold applies,
    # until the command line overrides it (effective_config's precedence)
    assert row["config_source"] == "default" and row["min_cleanable_dirty_ratio"] == 0.5
    out = io.StringIO()
    assert run_logdir([log_dir], config=Config(), fmt="json", out=out, err=io.StringIO(),
                      topic_overrides={t: {"min.cleanable.dirty.ratio": "0.01"}}) == 0
    [row] = json.loads(out.getvalue())
    assert row["config_source"] == "command-line" and row["min_cleanable_dirty_ratio"] == 0.01


@pytest.mark.slow  # a broker of its own (conftest marks the tests on the session's broker)
def test_max_dirty_ratio_agrees_with_the_brokers_gauge(tmp_path_factory):
    """Kafka's max-dirty-percent is broker-wide (the dirtiest compacted log), so it is checked on a broker
    of this test's own, where the one partition with data is this topic's: the broker's gauge is our
    cleanable ratio in whole percent, as Kafka truncates it."""
    with own_broker(tmp_path_factory.mktemp("kafka-max-dirty"), "kafka max-dirty") as state:
        col = make_collector(state)
        try:
            t = create_topic(state.bootstrap, unique_topic("dirtiest"), **compacted())
            folder = partition_dir(state.log_dir, t)
            write_rounds(state.bootstrap, t, 3)
            cp = wait_cleaned_up_to_active(state.log_dir, t)
            set_topic_config(state.bootstrap, t, min_cleanable_dirty_ratio=1.0)
            write_rounds(state.bootstrap, t, 2)
            ratio = expected_ratio(folder, cp)[2]
            assert 0 < ratio < 1

            def gauge_agrees():  # the gauge changes at the cleaner's next pass (every 500 ms)
                reg = refresh(col)
                ours = pval(reg, "kafka_compaction_partition_cleanable_ratio", t)
                broker = reg.get_sample_value("kafka_compaction_broker_max_dirty_ratio",
                                              {"cluster": "local", "broker": "1"})
                print("ours, broker's:", ours, broker)
                return broker is not None and round(broker * 100) == math.floor(ours * 100)

            wait_for(gauge_agrees, 60, f"max-dirty-percent to show {t}'s ratio {ratio:.4f}")
            reg = col.registry
            assert pval(reg, "kafka_compaction_partition_cleanable_ratio", t) == pytest.approx(ratio)
            every = [s.value for m in reg.collect() if m.name == "kafka_compaction_partition_cleanable_ratio"
                     for s in m.samples]
            assert max(every) == pytest.approx(ratio)  # this topic is the dirtiest log on this broker
        finally:
            col.close()


def test_topic_kept_dirty_by_min_compaction_lag(kafka, collector):
    """Uncleaned far above its threshold, yet not cleanable: min.compaction.lag.ms holds it back."""
    t = create_topic(kafka.bootstrap, unique_topic("lagged"),
                     **compacted(**{"min.compaction.lag.ms": 3_600_000, "min.cleanable.dirty.ratio": 0.1}))
    write_rounds(kafka.bootstrap, t, 3)
    # The broker really leaves it: a control topic written after it is cleaned twice. The cleaner takes
    # the dirtiest cleanable log first, and at the control's second clean its ratio is below 1 while
    # ours, never cleaned, would be 1 were anything in it cleanable.
    control = create_topic(kafka.bootstrap, unique_topic("control"), **compacted())
    write_rounds(kafka.bootstrap, control, 2)
    first = wait_cleaned_up_to_active(kafka.log_dir, control)
    write_rounds(kafka.bootstrap, control, 1)
    wait_cleaned(kafka.log_dir, control, past=first)
    assert cleaner_checkpoint(kafka.log_dir, t) is None

    reg = refresh(collector)
    assert pval(reg, "kafka_compaction_partition_uncleaned_ratio", t) == 1.0  # > 0.1 threshold
    assert pval(reg, "kafka_compaction_partition_cleanable_ratio", t) == 0.0  # Kafka's view: nothing cleanable
    assert pval(reg, "kafka_compaction_partition_compaction_blocked", t, reason="min_compaction_lag") == 1.0
    assert pval(reg, "kafka_compaction_partition_eligible", t) == 0.0
    assert pval(reg, "kafka_compaction_partition_cleanable_bytes", t) == 0.0
    sizes = segment_sizes(partition_dir(kafka.log_dir, t))
    assert len(sizes) >= 4  # at least: three rounds, each rolled, and the active segment
    assert pval(reg, "kafka_compaction_partition_uncleaned_bytes", t) == sum(sizes.values()) - sizes[max(sizes)]
    held = {h: pval(reg, "kafka_compaction_partition_not_yet_cleanable_bytes", t, held_by=h)
            for h in ("active_segment", "min_compaction_lag", "last_stable_offset")}
    assert held == {"active_segment": sizes[max(sizes)], "min_compaction_lag": sum(sizes.values()) - sizes[max(sizes)],
                    "last_stable_offset": 0}
    assert sum(held.values()) == pval(reg, "kafka_compaction_partition_log_bytes", t) == sum(sizes.values())


def test_tombstones_counted_until_past_their_delete_horizon(kafka, collector, tmp_path):
    """Tombstones with a short delete.retention.ms: counted while on disk (as kafka-dump-log counts
    them), past the delete horizon the first clean stamps on them, gone after the next clean although
    no newer record supersedes them."""
    t = create_topic(kafka.bootstrap, unique_topic("tombs"),
                     **compacted(**{"min.cleanable.dirty.ratio": 1.0, "delete.retention.ms": 1000}))
    deleted = range(0, 90, 3)  # 30 keys of 100
    write_rounds(kafka.bootstrap, t, 2, keys=100, tombstones=deleted)
    folder = partition_dir(kafka.log_dir, t)
    reg = refresh(collector)
    assert pval(reg, "kafka_compaction_partition_tombstones", t, section="dirty") == len(deleted)
    assert tombstones(dump_partition(folder, tmp_path / "before")[1]) == len(deleted)
    assert pval(reg, "kafka_compaction_partition_tombstones", t, section="clean") == 0
    assert pval(reg, "kafka_compaction_partition_delete_retention_seconds", t) == 1.0

    set_topic_config(kafka.bootstrap, t, min_cleanable_dirty_ratio=0.01)
    cp = wait_cleaned_up_to_active(kafka.log_dir, t)
    batches = dump_partition(folder, tmp_path / "cleaned")[1]
    assert tombstones(batches) == len(deleted)  # kept by the first clean, with a delete horizon
    horizon = max(b.delete_horizon_ms for b in batches if b.has_delete_horizon)
    time.sleep(max(0.0, horizon / 1000 - time.time()) + 0.05)  # time passes on purpose: past that horizon
    reg = refresh(collector)
    assert pval(reg, "kafka_compaction_partition_tombstones", t, section="clean") == len(deleted)
    assert pval(reg, "kafka_compaction_partition_tombstones_past_delete_horizon", t) == len(deleted)
    assert pval(reg, "kafka_compaction_partition_tombstones_past_retention", t) == len(deleted)
    assert pval(reg, "kafka_compaction_partition_oldest_tombstone_age_seconds", t) >= 1.0  # horizon - 1 s

    # new dirty data on other keys makes the log eligible again; the next clean drops the tombstones
    produce(kafka.bootstrap, t, [(f"other{i}".encode(), b"v") for i in range(100)])
    roll(kafka.bootstrap, t)
    assert wait_cleaned_up_to_active(kafka.log_dir, t) > cp
    reg = refresh(collector)
    assert pval(reg, "kafka_compaction_partition_tombstones", t, section="clean") == 0
    assert pval(reg, "kafka_compaction_partition_tombstones_past_delete_horizon", t) == 0
    assert tombstones(dump_partition(folder, tmp_path / "after")[1]) == 0


def test_group_at_risk_once_its_time_lag_passes_delete_retention(kafka, collector):
    """A group's time lag is now minus the timestamp of the record at its committed offset; past
    delete.retention.ms (10 min here) it is at risk of missing tombstones. Records carry timestamps of
    the test's choosing, so the lags are known without waiting: a group committed at a record twenty
    minutes old is at risk, one committed at a record written now is not."""
    t = create_topic(kafka.bootstrap, unique_topic("groups"), **compacted(**{"delete.retention.ms": 600_000}))
    start_ms = int(time.time() * 1000)
    old_ms = start_ms - 1_200_000
    p = producer(kafka.bootstrap)
    for i in range(50):  # offsets 0..39 twenty minutes old, 40..49 with the producer's clock
        p.produce(t, key=f"k{i}".encode(), value=b"v", partition=0, **({"timestamp": old_ms + i} if i < 40 else {}))
    assert p.flush(30) == 0
    end_ms = int(time.time() * 1000)
    stale, fresh = unique_topic("stale-group"), unique_topic("fresh-group")
    for group, offset in ((stale, 10), (fresh, 45)):
        c = Consumer({"bootstrap.servers": kafka.bootstrap, "group.id": group, "enable.auto.commit": False})
        c.commit(offsets=[TopicPartition(t, 0, offset)], asynchronous=False)
        c.close()

    def value(name, group):
        extra = {"method": "exact"} if name == "lag_seconds" else {}  # read as a super user: exact
        return reg.get_sample_value(f"kafka_compaction_consumer_group_{name}",
                                    {"cluster": "local", "group": group, "topic": t, "partition": "0", **extra})

    before = time.time()
    reg = refresh(collector)
    after = time.time()
    lag_s = value("lag_seconds", stale)
    assert before - (old_ms + 10) / 1000 <= lag_s <= after - (old_ms + 10) / 1000  # the record at offset 10
    assert value("lag_records", stale) == 40
    assert value("lag_retention_ratio", stale) == pytest.approx(lag_s / 600)
    assert value("tombstone_risk", stale) == 1.0
    fresh_lag = value("lag_seconds", fresh)  # the record at offset 45, stamped between start_ms and end_ms
    assert before - end_ms / 1000 <= fresh_lag <= after - start_ms / 1000
    assert fresh_lag < 600 and value("tombstone_risk", fresh) == 0.0
    assert value("lag_records", fresh) == 5

    produce(kafka.bootstrap, t, [(f"k{i}".encode(), b"new") for i in range(8)])  # the topic keeps changing
    reg = refresh(collector)
    assert value("lag_records", stale) == 48 and value("lag_records", fresh) == 13
    assert value("tombstone_risk", stale) == 1.0


def test_collect_once_cli_against_the_broker(kafka):
    """`collect --once` prints the exposition, this test's topic among it, and exits 0 when every source
    answered and no partition had a fault; 1, naming the endpoint, when one did not."""
    t = create_topic(kafka.bootstrap, unique_topic("once"), **compacted(**{"min.cleanable.dirty.ratio": 1.0}))
    write_rounds(kafka.bootstrap, t, 1)  # one rolled segment, never cleaned: cleanable ratio 1
    proc = run_cli("collect", "--once", "--bootstrap-servers", kafka.bootstrap, "--jmx-url", kafka.jmx_url, "--log-dir",
                   kafka.log_dir)
    # 1 only for a partition's fault, named (the log dir is every test's, as logdir's), never a source's
    assert proc.returncode in (0, 1) and " failed: " not in proc.stderr, proc.stderr
    assert proc.returncode == 0 or re.search(r"^\S+-\d+: ", proc.stderr, re.M), proc.stderr
    assert not [x for x in proc.stderr.splitlines() if x.startswith(f"{t}-")], proc.stderr
    assert 'kafka_compaction_source_up{cluster="default",kind="jmx",source="jmx:default:1"} 1.0' in proc.stdout
    line = next(x for x in proc.stdout.splitlines()
                if x.startswith("kafka_compaction_partition_cleanable_ratio{") and f'topic="{t}"' in x)
    assert line.endswith(" 1.0"), line
    bad = run_cli("collect", "--once", "--jmx-url", "http://127.0.0.1:1/metrics")
    assert bad.returncode == 1 and "127.0.0.1:1" in bad.stderr
