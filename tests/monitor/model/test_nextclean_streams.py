"""``monitor.model.nextclean`` against a real broker's first clean of data this project did not write:
a Kafka Streams exactly_once_v2 application's changelogs (a table, an aggregate, a windowed count) and
output (commits every 200 ms, a stream thread failed once and an instance crashed mid-transaction, so
two transactions aborted, tombstones from null input values and from an aggregate going null, input
timestamps that go back), the Java producer's transactions with each codec (two under LogAppendTime),
and librdkafka's transactions of a few large batches with each codec, one left open at the clean
(tests/streamsapp/). The partitions are held from the cleaner while written (``cleanpairs.HELD``),
copied, cleaned once, copied again; the projection of the first copy at the clean's own start must be
what the clean left batch by batch as ``kafka-dump-log`` prints both copies, the bytes exactly
uncompressed, within 0.5% compressed (``TOLERANCE``).

Every topic is written, cleaned and copied once for the module."""

from __future__ import annotations

import random
import time
from pathlib import Path

import pytest
from confluent_kafka import Consumer, IsolationLevel, TopicPartition
from confluent_kafka.admin import AdminClient, OffsetSpec

from cleanpairs import (CODECS, DELETE_RETENTION_MS, HELD, RELEASED, Clean, Pair, cleans_begun, horizons, log_end,
                        projection_inputs, roll)
from dumpcompare import dump_by_folder
from kafkatools import (cleaner_checkpoint, copy_partition, create_topic, partition_dir, produce_timed, set_topic_config,
                       transactional_producer, unique_topic)
from monitor.model.nextclean import project_partition
from streamsapp import compile_app, produce, streams_app
from waiting import wait_for

pytestmark = pytest.mark.kafka

# What the issue holds the projections to (see test_nextclean_kafka.TOLERANCE for snappy's own rounding).
TOLERANCE = {"none": 0.0, "gzip": 0.005, "snappy": 0.005, "lz4": 0.005, "zstd": 0.005}
APP_STORES = ("latest-store", "agg-store", "window-store")
# the changelogs held from the cleaner like the other topics; the producer's transactions time out in 5 s
# (a crashed instance's open transaction is aborted by then even if no restart fences it); the consumer's
# session times out in 6 s, the broker's least (group.min.session.timeout.ms), not 45: Streams leaves its
# group on no close, so a failed thread's replacement and the restart after the kill each waited out the
# dead member's session before the rebalance (44 s each)
STREAMS_CONFIGS = {**{f"topic.{k}": v for k, v in HELD.items()}, "producer.transaction.timeout.ms": 5000,
                   "consumer.session.timeout.ms": 6000, "consumer.heartbeat.interval.ms": 1500}


def _committed(bootstrap: str, group: str, topic: str) -> int:
    c = Consumer({"bootstrap.servers": bootstrap, "group.id": group, "enable.auto.commit": False})
    try:
        [tp] = c.committed([TopicPartition(topic, 0)], timeout=10)
        return tp.offset
    finally:
        c.close()


def _input(burst: int, now_ms: int) -> list:
    """One burst of the application's input: (key, value or None, timestamp). Keys overwritten across
    bursts, some deleted (None: a tombstone in the latest-store changelog; "delete": the aggregate goes
    null), timestamps going back by up to ~9 s within a burst."""
    out = []
    for i in range(60):
        k = f"user-{(i * 7 + burst * 3) % 23:02d}".encode()
        if i % 11 == 5:
            v = None
        elif i % 13 == 7:
            v = b"delete"
        else:
            v = f"event-{burst}-{i}-".encode() * (1 + i % 3)
        ts = now_ms - (i % 4) * 3_000 + burst * 10
        out.append((k, v, ts))
    if burst == 1:
        out.insert(30, (b"user-poison", b"boom", now_ms))  # fails the thread once: that transaction aborts
    return out


def big_transactions(bootstrap: str, topic: str, codec: str, seed: int):
    """librdkafka's transactional producer with ``codec``: a partition of a few large batches (over
    LZ4's and snappy's 64 KiB and 32 KiB blocks when uncompressed), values part text and part random
    bytes (blocks that do not compress), a committed load, an aborted overwrite, a committed overwrite
    of a third of the keys with tombstones, then a transaction left open (the producer is returned):
    the cleaner stops at its first offset (the last stable offset), in the middle of a segment."""
    rnd = random.Random(seed)
    tx = transactional_producer(bootstrap, f"{topic}-tx", **{"compression.type": codec, "linger.ms": 200,
                                                             "batch.size": 4 << 20})

    def value(i: int, phase: int) -> bytes:
        return f"phase-{phase}-{i}-".encode() * (i % 7) + rnd.randbytes(40 + i % 90)

    for phase, (keys, commit) in enumerate(((range(600), True), (range(0, 600, 2), False),
                                            (range(0, 600, 3), True), (range(0, 600, 4), None))):
        if commit is None:
            roll(bootstrap, topic)  # the open transaction in a segment of its own: the clean stops below it
        tx.begin_transaction()
        errors = []
        for i in keys:
            tombstone = phase == 2 and i % 5 == 0
            tx.produce(topic, key=f"key-{i:04d}".encode(), value=None if tombstone else value(i, phase),
                       partition=0, on_delivery=lambda err, msg: errors.append(err) if err else None)
        assert tx.flush(30) == 0 and not errors, errors[:3]
        if commit:
            tx.commit_transaction(30)
        elif commit is not None:
            tx.abort_transaction(30)
    return tx


def build(kafka, root: Path) -> dict[str, Pair]:
    b = kafka.bootstrap
    app = unique_topic("streamsapp")
    cp = compile_app(root / "classes")
    log = root / "java.log"
    source = create_topic(b, f"{app}-input")
    output = create_topic(b, f"{app}-output", **HELD)
    topics = {"streams-output": output}
    sent = 0

    def burst(n: int, extra=()):
        nonlocal sent
        sent += produce_timed(b, source, _input(n, int(time.time() * 1000)) + list(extra))

    def processed():
        wait_for(lambda: _committed(b, app, source) >= sent, 120,
                 f"the Streams application to commit its input up to {sent}")

    with streams_app(cp, b, app, source, output, root / "state", root / "streams-1.log", STREAMS_CONFIGS) as run:
        for n in range(3):
            burst(n)
            processed()
        burst(3, [(b"user-hang", b"hang", int(time.time() * 1000))])
        wait_for(lambda: run.said("HANGING"), 120, "the Streams application to hang in a transaction")
        run.kill()  # a crash: its transaction stays open until the restart fences it
    text = (root / "streams-1.log").read_text(errors="replace")
    assert "REPLACE_THREAD" in text, text[-3000:]
    with streams_app(cp, b, app, source, output, root / "state", root / "streams-2.log", STREAMS_CONFIGS):
        processed()
        burst(4)
        processed()
    assert "CLOSED" in (root / "streams-2.log").read_text(errors="replace")
    for store in APP_STORES:
        topics[f"streams-{store}"] = f"{app}-{store}-changelog"
    for codec in CODECS:
        topics[f"java-{codec}"] = t = create_topic(b, unique_topic(f"javatxn-{codec}"), **HELD)
        produce(cp, b, t, codec, f"{t}-tx", log)
    for codec in ("none", "lz4"):
        topics[f"java-appendtime-{codec}"] = t = create_topic(b, unique_topic(f"javatxn-appendtime-{codec}"), **HELD,
                                                              **{"message.timestamp.type": "LogAppendTime"})
        produce(cp, b, t, codec, f"{t}-tx", log)
    for t in topics.values():  # the crashed instance's transaction is aborted: nothing open
        wait_for(lambda: stable(b, t), 60, f"no open transaction on {t}")
    still_open = []
    for n, codec in enumerate(CODECS):
        topics[f"big-{codec}"] = t = create_topic(b, unique_topic(f"bigtxn-{codec}"), **HELD)
        still_open.append(big_transactions(b, t, codec, n))
    for t in topics.values():
        roll(b, t)
    pairs = {label: Pair(label, t, copy_partition(partition_dir(kafka.log_dir, t), root / "before" / label))
             for label, t in topics.items()}
    for t in topics.values():
        set_topic_config(b, t, **RELEASED)
    for p in pairs.values():
        clean_once(kafka, p, root)
    for tx in still_open:
        tx.abort_transaction(30)
    return pairs


def stable(bootstrap: str, topic: str) -> bool:
    """No transaction open on the topic's partition: its last stable offset is its high watermark."""
    admin = AdminClient({"bootstrap.servers": bootstrap})
    tp = TopicPartition(topic, 0)
    ends = [admin.list_offsets({tp: OffsetSpec.latest()}, isolation_level=level)[tp].result(30).offset
            for level in (IsolationLevel.READ_COMMITTED, IsolationLevel.READ_UNCOMMITTED)]
    return ends[0] == ends[1]


def clean_once(kafka, p: Pair, root: Path) -> None:
    """Wait for the cleaner's checkpoint to reach the upper bound the audit derives from the copy (the
    active segment, or the last stable offset where a transaction is open), copy what it left, and read
    the clean's start from the horizon it stamped (``cleanpairs``' way; else from log-cleaner.log)."""
    upper = projection_inputs(p.before, int(time.time() * 1000))["upper"]
    cp = wait_for(lambda: cleaner_checkpoint(kafka.log_dir, p.topic) == upper, 90,
                  f"the cleaner to clean {p.topic} up to {upper}")
    copy = copy_partition(partition_dir(kafka.log_dir, p.topic), root / "after-1" / p.codec)
    new = horizons(copy)
    assert len(new) <= 1, f"{p.topic}: one clean stamped several horizons {sorted(new)}"
    stamped = bool(new)  # a clean that stamps nothing: log-cleaner.log's time (nothing it does depends on it)
    now = new.pop() - DELETE_RETENTION_MS if stamped else cleans_begun(kafka.cleaner_log, p.topic)[-1]
    p.cleans.append(Clean(copy, upper, now, stamped))


@pytest.fixture(scope="module")
def pairs(kafka, tmp_path_factory):
    return build(kafka, tmp_path_factory.mktemp("streamsapp"))


@pytest.fixture(scope="module")
def dumps(pairs):
    folders = [p.before for p in pairs.values()] + [p.cleans[0].copy for p in pairs.values()]
    return dump_by_folder(folders)


LABELS = ["streams-output", *(f"streams-{s}" for s in APP_STORES), *(f"java-{c}" for c in CODECS),
          "java-appendtime-none", "java-appendtime-lz4", *(f"big-{c}" for c in CODECS)]


def codec_of(label: str) -> str:
    return label.rsplit("-", 1)[1] if label.startswith(("java-", "big-")) else "none"


def left(b) -> tuple:
    """A batch's fields as kafka-dump-log prints them and ``BatchLeft`` projects them, size aside."""
    return (b.base_offset, b.last_offset, b.records_count if hasattr(b, "records_count") else b.records,
            b.delete_horizon_ms, b.producer_id, b.producer_epoch, b.is_control)


@pytest.mark.parametrize("label", LABELS)
def test_next_clean_projection_is_what_the_broker_left(pairs, dumps, label):
    """The copy made before the clean, projected at the clean's own start: batch by batch what
    kafka-dump-log prints of the cleaned log (base and last offset, record count, delete horizon,
    producer id and epoch, control or data; the size exactly when uncompressed), the bytes within
    ``TOLERANCE`` in all, and the counts of batches dropped, rewritten and stamped and of records removed."""
    p = pairs[label]
    first = p.cleans[0]
    before, after = dumps[p.before], dumps[first.copy]
    inputs = projection_inputs(p.before, first.now_ms)
    assert inputs["upper"] == first.checkpoint
    trace: list = []
    proj = project_partition(**inputs, trace=trace)
    assert proj.unknown_reason is None, proj.unknown_reason
    assert [left(b) for b in trace] == [left(b) for b in after]
    codec = codec_of(label)
    if codec == "none":
        assert [b.size for b in trace] == [b.size for b in after]
    assert sum(b.size for b in trace) == proj.next_clean_bytes
    tol = TOLERANCE[codec]
    assert abs(proj.next_clean_bytes - first.bytes) <= tol * first.bytes, (proj.next_clean_bytes, first.bytes)
    was = {b.base_offset: b for b in before}
    now = {b.base_offset: b for b in after}
    assert proj.batches_dropped == len(set(was) - set(now))
    assert proj.batches_rewritten == sum((b.records_count, b.delete_horizon_ms) != (was[o].records_count,
                                         was[o].delete_horizon_ms) for o, b in now.items())
    assert proj.batches_stamped == sum(b.has_delete_horizon and not was[b.base_offset].has_delete_horizon
                                       for b in after)
    assert proj.removable_records == (sum(b.records_count for b in before) - sum(b.records_count for b in after))


def test_the_data_holds_what_real_applications_write(pairs, dumps):
    """What the comparison above stands on, as kafka-dump-log prints the copies before the clean: the
    Streams changelogs hold two aborted transactions (the failed thread's, the crashed instance's that its
    restart fenced) among commits, from two producer ids whose epochs the commits bumped (transactions
    v2), tombstones (but in the windowed count's), and records older than the one before them in a batch; the Java producer's topics
    one abort each, their codec and, for two, LogAppendTime; librdkafka's topics a transaction still
    open at the clean, which stopped below it."""
    for store in APP_STORES:
        before = dumps[pairs[f"streams-{store}"].before]
        markers = [r.control_type for b in before if b.is_control for r in b.records()]
        assert markers.count("ABORT") == 2 and markers.count("COMMIT") >= 4, markers
        data = [b for b in before if not b.is_control and b.producer_id >= 0]
        assert len({b.producer_id for b in data}) == 2 and max(b.producer_epoch for b in data) >= 3
        if store != "window-store":  # a count never deletes
            assert any(r.is_tombstone for b in data for r in b.records())
        assert any(r2.timestamp < r1.timestamp for b in data for r1, r2 in zip(b.records(), b.records()[1:]))
    for codec in CODECS:
        before = dumps[pairs[f"java-{codec}"].before]
        assert [r.control_type for b in before if b.is_control for r in b.records()].count("ABORT") == 1
        assert {b.compression for b in before if not b.is_control and b.producer_id >= 0} == {codec}
    for codec in ("none", "lz4"):
        before = dumps[pairs[f"java-appendtime-{codec}"].before]
        assert {b.timestamp_type for b in before if b.producer_id >= 0} == {"log_append"}
    for codec in CODECS:
        p = pairs[f"big-{codec}"]
        last_data = max(b.base_offset for b in dumps[p.before] if b.is_transactional)
        assert p.cleans[0].checkpoint <= last_data < log_end(p.before) - 1  # the open transaction, not cleaned
