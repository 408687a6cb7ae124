"""``compaction-monitor explain --format json`` against the real broker: each case puts a topic of its own
in one state, and explain must name the cause with evidence equal to what the broker shows (its
READ_COMMITTED end offset, its cleaner-offset-checkpoint file, its segment file names, its described
configs)."""

from __future__ import annotations

import json

import pytest
from confluent_kafka import IsolationLevel, TopicPartition
from confluent_kafka.admin import AdminClient, OffsetSpec

from clirun import run_cli
from collecting import make_collector, pval, refresh
from kafkatools import (cleaner_checkpoint, compacted, create_topic, partition_dir, produce, producer,
                        roll, segment_bases, set_topic_config, unique_topic, wait_cleaned_up_to_active,
                        watermarks, write_rounds, write_rounds_min_lag)
from waiting import wait_for

pytestmark = pytest.mark.kafka


def explain(kafka, *targets: str) -> list[dict]:
    got = run_cli("explain", *targets, "--log-dir", kafka.log_dir, "--bootstrap-server", kafka.bootstrap, "--format",
                  "json")
    assert got.returncode in (0, 1), got.stderr  # 1: some other test's partition may be mid-swap
    return json.loads(got.stdout)


def one(kafka, topic: str) -> dict:
    [c] = explain(kafka, f"{topic}-0")
    assert (c["topic"], c["partition"]) == (topic, 0)
    return c


def segment_name(base: int) -> str:
    return f"{base:020d}.log"


def end_offset(bootstrap: str, topic: str, level=IsolationLevel.READ_COMMITTED) -> int:
    admin = AdminClient({"bootstrap.servers": bootstrap})
    tp = TopicPartition(topic, 0)
    return admin.list_offsets({tp: OffsetSpec.latest()}, isolation_level=level)[tp].result(30).offset


def test_clean_when_retention_left_only_an_empty_active_segment(kafka):
    """compact,delete with a short retention.ms: the broker deletes every segment and rolls an empty one
    (UnifiedLog.deleteSegments rolls when all would go); nothing is dirty."""
    b = kafka.bootstrap
    t = create_topic(b, unique_topic("explain-clean"), **compacted(**{"cleanup.policy": "compact,delete",
                                                                      "retention.ms": 1000}))
    produce(b, t, [(f"k{i}".encode(), b"v" * 50) for i in range(50)])
    folder = partition_dir(kafka.log_dir, t)
    hw = watermarks(b, t)[1]
    wait_for(lambda: segment_bases(folder) == [hw] and (folder / segment_name(hw)).stat().st_size == 0 or None, 90,
             f"the broker to delete {t}'s data and roll an empty segment at {hw}")
    c = one(kafka, t)
    assert c["cause"] == "clean", c["summary"]
    assert c["evidence"]["log_end_offset"] == hw == c["evidence"]["log_start_offset"]
    assert c["evidence"]["active_segment"] == segment_name(hw)


def test_below_threshold_after_a_clean(kafka):
    b = kafka.bootstrap
    t = create_topic(b, unique_topic("explain-below"), **compacted())
    write_rounds(b, t, 3, keys=200)
    cp = wait_cleaned_up_to_active(kafka.log_dir, t)
    set_topic_config(b, t, **{"min.cleanable.dirty.ratio": "0.99"})
    write_rounds(b, t, 1, keys=10)  # a little dirt, rolled below the active segment
    c = one(kafka, t)
    assert c["cause"] == "below_threshold", c["summary"]
    ev = c["evidence"]
    assert ev["checkpoint_offset"] == cleaner_checkpoint(kafka.log_dir, t) == cp == ev["first_dirty_offset"]
    bases = segment_bases(partition_dir(kafka.log_dir, t))
    assert ev["first_dirty_segment"] == segment_name(max(x for x in bases if x <= cp))
    assert ev["active_segment"] == segment_name(bases[-1])
    assert ev["configs"]["min.cleanable.dirty.ratio"] == {"value": "0.99", "source": "admin"}
    assert 0 < ev["cleanable_ratio"] < 0.99
    assert f"--bootstrap-server {b} " in c["fix"][0] and f"--entity-name {t} " in c["fix"][0]


def test_active_segment_only(kafka):
    b = kafka.bootstrap
    t = create_topic(b, unique_topic("explain-active"), **compacted(**{"segment.ms": 3_600_000}))
    produce(b, t, [(f"k{i}".encode(), b"v" * 50) for i in range(100)])
    c = one(kafka, t)
    assert c["cause"] == "active_segment_only", c["summary"]
    [base] = segment_bases(partition_dir(kafka.log_dir, t))
    assert c["evidence"]["active_segment"] == segment_name(base)
    assert c["evidence"]["log_end_offset"] == watermarks(b, t)[1]
    assert c["evidence"]["checkpoint_offset"] == cleaner_checkpoint(kafka.log_dir, t)  # none: never cleaned
    assert c["evidence"]["configs"]["segment.ms"] == {"value": "3600000", "source": "admin"}
    roll_at = c["forecast"]["active_segment_roll"]
    assert roll_at["at_ms"] == c["evidence"]["active_segment_first_timestamp"] + 3_600_000


def test_min_compaction_lag(kafka):
    b = kafka.bootstrap
    t = create_topic(b, unique_topic("explain-lag"), **compacted(**{"min.compaction.lag.ms": 3_600_000}))
    write_rounds_min_lag(b, t)
    c = one(kafka, t)
    assert c["cause"] == "min_compaction_lag", c["summary"]
    bases = segment_bases(partition_dir(kafka.log_dir, t))
    assert c["evidence"]["held_from_segment"] == segment_name(bases[0])
    assert c["evidence"]["configs"]["min.compaction.lag.ms"] == {"value": "3600000", "source": "admin"}
    assert c["evidence"]["cleanable_bytes"] == 0 and c["evidence"]["uncleaned_bytes"] > 0


@pytest.fixture
def collector(kafka):
    col = make_collector(kafka)
    yield col
    col.close()


def test_open_transaction_names_the_lso_and_the_abort(kafka, collector):
    """A confluent_kafka transactional producer left uncommitted: the cleaner stops at the LSO, which
    explain reports as the broker's READ_COMMITTED end offset, with the abort command for it."""
    b = kafka.bootstrap
    t = create_topic(b, unique_topic("explain-txn"), **compacted())
    folder = partition_dir(kafka.log_dir, t)
    produce(b, t, [(f"k{i}".encode(), b"plain" * 8) for i in range(50)])
    roll(b, t)
    p = producer(b, **{"transactional.id": f"{t}-open", "transaction.timeout.ms": 600_000})
    p.init_transactions(30)
    p.begin_transaction()
    try:
        for i in range(20):
            p.produce(t, key=f"open-{i}".encode(), value=b"open" * 8, partition=0)
        assert p.flush(30) == 0
        roll(b, t)
        produce(b, t, [(f"k{i}".encode(), b"later" * 8) for i in range(50)])
        roll(b, t)
        lso = end_offset(b, t)
        assert lso < end_offset(b, t, IsolationLevel.READ_UNCOMMITTED)
        lso_segment = max(x for x in segment_bases(folder) if x <= lso)
        cp = wait_for(lambda: (lambda v: v if v is not None and v >= lso_segment else None)(
            cleaner_checkpoint(kafka.log_dir, t)), 90, f"the cleaner to clean {t} up to its LSO's segment")
        c = one(kafka, t)
        assert c["cause"] == "open_transaction", c["summary"]
        ev = c["evidence"]
        assert ev["last_stable_offset"] == lso == ev["first_uncleanable_offset"] == ev["transaction"]["first_offset"]
        assert ev["checkpoint_offset"] == cp == cleaner_checkpoint(kafka.log_dir, t)
        assert f"abort --topic {t} --partition 0 --start-offset {lso}" in c["fix"][0]
        assert f"--bootstrap-server {b} " in c["fix"][0]
        assert c["forecast"]["threshold"]["at_ms"] is None  # nothing becomes cleanable while it stays open
        # the collector exports the same cause, one series for the partition
        reg = refresh(collector)
        assert pval(reg, "kafka_compaction_partition_compaction_cause", t, cause="open_transaction") == 1
        assert sum(1 for m in reg.collect() if m.name == "kafka_compaction_partition_compaction_cause"
                   for smp in m.samples if smp.labels["topic"] == t) == 1
    finally:
        p.abort_transaction(30)
