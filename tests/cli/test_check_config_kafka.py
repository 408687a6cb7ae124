"""``compaction-monitor check-config`` against the session's real broker: one topic made the way each
pitfall of the configuration review describes it, each flagged with exactly that check, and a topic set
up well that passes (exit 0). Expected findings follow from the configs the test sets, the record
timestamps it writes and the consumer offset it commits."""

from __future__ import annotations

import json
import time

import pytest
from confluent_kafka import Consumer, TopicPartition

from clirun import run_cli
from kafkatools import compacted, create_topic, produce, producer, set_topic_config, unique_topic, wait_cleaned

pytestmark = pytest.mark.kafka

DAY, HOUR = 86_400_000, 3_600_000
# a topic set up well: Kafka's ratio, deletes kept a day, a clean forced within a day, hourly segments
WELL = {"cleanup.policy": "compact", "min.cleanable.dirty.ratio": 0.5, "delete.retention.ms": DAY,
        "max.compaction.lag.ms": DAY, "segment.ms": HOUR, "min.compaction.lag.ms": 0}


def produce_at(bootstrap: str, topic: str, items, ts_ms: int) -> None:
    """Keyed records (value None: a tombstone) with the given create time."""
    p = producer(bootstrap)
    for k, v in items:
        p.produce(topic, key=k, value=v, partition=0, timestamp=ts_ms)
    assert p.flush(30) == 0


def check_config(kafka, *topics: str):
    r = run_cli("check-config", *topics, "--bootstrap-server", kafka.bootstrap, "--log-dir", kafka.log_dir, "--format",
                "json")
    assert r.returncode in (0, 1), r.stderr[-3000:]
    return r.returncode, json.loads(r.stdout)


def test_check_config_flags_each_pitfall_and_passes_a_topic_set_up_well(kafka):
    b, now = kafka.bootstrap, int(time.time() * 1000)
    name = lambda what: unique_topic(f"review-{what}")  # noqa: E731
    good = create_topic(b, name("good"), **WELL)
    produce(b, good, [(f"k{i}".encode(), b"v" * 50) for i in range(50)])

    # a consumer group 2 h behind (the record at its committed offset is 2 h old), deletes kept 1 min
    lagged = create_topic(b, name("retention"), **{**WELL, "delete.retention.ms": 60_000})
    produce_at(b, lagged, [(f"k{i}".encode(), b"v" * 50) for i in range(20)], now - 2 * HOUR)
    group = unique_topic("review-group")
    c = Consumer({"bootstrap.servers": b, "group.id": group, "enable.auto.commit": False})
    c.commit(offsets=[TopicPartition(lagged, 0, 0)], asynchronous=False)
    c.close()

    ratio = create_topic(b, name("ratio"), **{**WELL, "min.cleanable.dirty.ratio": 0.01})

    # compact,delete whose retention.ms (1 h) is below its delete.retention.ms (1 day)
    both = create_topic(b, name("compact-delete"), **{**WELL, "cleanup.policy": "compact,delete", "retention.ms": HOUR})

    # a quiet topic holding tombstones, with max.compaction.lag.ms unbounded. Its whole history is old
    # (3 and 2 days), so the one-shot write rate over its dirty section is a trickle; segments roll on
    # the records' own timestamps (LogSegment.shouldRoll). 300 keys cleaned once; then a few deletes in
    # a rolled dirty segment far below min.cleanable.dirty.ratio 0.5, and no more writes.
    quiet = create_topic(b, name("quiet"), **compacted(**{"delete.retention.ms": DAY}))
    produce_at(b, quiet, [(f"k{i}".encode(), b"v" * 500) for i in range(300)], now - 3 * DAY)
    produce_at(b, quiet, [(b"k0", b"v")], now - 3 * DAY + 10_000)  # rolls the 300 keys' segment
    wait_cleaned(kafka.log_dir, quiet)
    set_topic_config(b, quiet, **{"min.cleanable.dirty.ratio": "0.5"})
    produce_at(b, quiet, [(f"k{i}".encode(), None) for i in range(1, 6)], now - 2 * DAY)
    produce_at(b, quiet, [(b"k0", b"w")], now - 2 * DAY + 10_000)  # rolls the deletes' segment
    set_topic_config(b, quiet, **{"segment.ms": str(HOUR)})

    # Kafka's default segment.ms (7 days) and segment.bytes (1 GiB) on a trickle (50 records an hour)
    slow = create_topic(b, name("segment"), **{k: v for k, v in WELL.items()
                                               if k not in ("segment.ms", "max.compaction.lag.ms")})
    produce_at(b, slow, [(f"k{i}".encode(), b"v" * 50) for i in range(50)], now - HOUR)

    code, out = check_config(kafka, good)
    assert code == 0 and out["passed"] and out["findings"] == [] and out["topics"] == [good], out
    code, out = check_config(kafka, lagged, ratio, both, quiet, slow)
    assert code == 1
    got = {(f["topic"], f["check"]) for f in out["findings"]}
    assert got == {(lagged, "delete_retention_below_consumer_lag"), (ratio, "dirty_ratio_too_low"),
                   (both, "retention_below_delete_retention"), (quiet, "unbounded_max_compaction_lag"),
                   (slow, "segment_roll_beyond_traffic")}, out
    by = {f["topic"]: f for f in out["findings"]}
    assert by[lagged]["evidence"]["slowest_group"] == group and by[lagged]["evidence"]["lag_seconds"] >= 2 * 3600
    assert by[quiet]["evidence"]["tombstones"] >= 5
    assert (by[both]["setting"], by[both]["current"], by[both]["suggested"]) == ("retention.ms", str(HOUR), str(DAY))
    assert all(f"--entity-name {f['topic']} --add-config {f['setting']}={f['suggested']}" in f["fix"]
               for f in out["findings"])
    nothing = run_cli("check-config", "no-such-topic", "--bootstrap-server", b, "--format", "json")
    assert nothing.returncode == 2 and "no-such-topic: no such compacted topic" in nothing.stderr
