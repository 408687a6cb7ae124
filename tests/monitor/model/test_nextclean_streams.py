"""``monitor.model.nextclean`` against a real broker's first clean of data this project did not write:
a Kafka Streams exactly_once_v2 application's changelogs and output (commits every 200 ms, a stream
thread failed once so that one transaction is aborted, tombstones from null input values and from an
aggregate going null, input timestamps that go back) and the Java producer's transactions with each
codec (tests/streamsapp/). The partitions are held from the cleaner while written (``cleanpairs.HELD``),
copied, cleaned once, copied again; the projection of the first copy at the clean's own start must be
the bytes the clean left: exactly uncompressed, within 0.5% compressed (``TOLERANCE``), batch by batch
as ``kafka-dump-log`` prints both copies.

Every topic is written, cleaned and copied once for the module."""

from __future__ import annotations

import random
import time
from pathlib import Path

import pytest
from confluent_kafka import Consumer, TopicPartition

from cleanpairs import CODECS, HELD, RELEASED, Pair, _clean_all, projection_inputs, roll
from dumpcompare import dump
from kafkatools import (copy_partition, create_topic, partition_dir, produce_timed, set_topic_config,
                       transactional_producer, unique_topic)
from monitor.model.nextclean import project_partition
from streamsapp import compile_app, produce, streams_app
from waiting import wait_for

pytestmark = pytest.mark.kafka

# What the issue holds the projections to (see test_nextclean_kafka.TOLERANCE for snappy's own rounding).
TOLERANCE = {"none": 0.0, "gzip": 0.005, "snappy": 0.005, "lz4": 0.005, "zstd": 0.005}
APP_STORES = ("latest-store", "agg-store")


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


def big_transactions(bootstrap: str, topic: str, codec: str, seed: int) -> None:
    """librdkafka's transactional producer with ``codec``: a partition of a few large batches (over
    LZ4's and snappy's 64 KiB and 32 KiB blocks when uncompressed), values part text and part random
    bytes (blocks that do not compress), a committed load, an aborted overwrite, a committed overwrite
    of a third of the keys with tombstones."""
    rnd = random.Random(seed)
    tx = transactional_producer(bootstrap, f"{topic}-tx", **{"compression.type": codec, "linger.ms": 200,
                                                             "batch.size": 4 << 20})

    def value(i: int, phase: int) -> bytes:
        return f"phase-{phase}-{i}-".encode() * (i % 7) + rnd.randbytes(40 + i % 90)

    for phase, (keys, commit) in enumerate(((range(600), True), (range(0, 600, 2), False),
                                            (range(0, 600, 3), True))):
        tx.begin_transaction()
        errors = []
        for i in keys:
            tombstone = phase == 2 and i % 5 == 0
            tx.produce(topic, key=f"key-{i:04d}".encode(), value=None if tombstone else value(i, phase),
                       partition=0, on_delivery=lambda err, msg: errors.append(err) if err else None)
        assert tx.flush(30) == 0 and not errors, errors[:3]
        if commit:
            tx.commit_transaction(30)
        else:
            tx.abort_transaction(30)


def build(kafka, root: Path) -> dict[str, Pair]:
    b = kafka.bootstrap
    app = unique_topic("streamsapp")
    cp = compile_app(root / "classes")
    log = root / "java.log"
    source = create_topic(b, f"{app}-input")
    output = create_topic(b, f"{app}-output", **HELD)
    topics = {"streams-output": output}
    with streams_app(cp, b, app, source, output, root / "state", log, HELD):
        sent = 0
        for burst in range(3):
            now = int(time.time() * 1000)
            sent += produce_timed(b, source, _input(burst, now))
            wait_for(lambda: _committed(b, app, source) >= sent, 120,
                     f"the Streams application to commit its input up to {sent}")
    text = log.read_text(errors="replace")
    assert "REPLACE_THREAD" in text and "CLOSED" in text, text[-3000:]
    for store in APP_STORES:
        topics[f"streams-{store}"] = f"{app}-{store}-changelog"
    for codec in CODECS:
        topics[f"java-{codec}"] = t = create_topic(b, unique_topic(f"javatxn-{codec}"), **HELD)
        produce(cp, b, t, codec, f"{t}-tx", log)
    for codec in ("none", "lz4"):
        topics[f"java-appendtime-{codec}"] = t = create_topic(b, unique_topic(f"javatxn-appendtime-{codec}"), **HELD,
                                                              **{"message.timestamp.type": "LogAppendTime"})
        produce(cp, b, t, codec, f"{t}-tx", log)
    for n, codec in enumerate(CODECS):
        topics[f"big-{codec}"] = t = create_topic(b, unique_topic(f"bigtxn-{codec}"), **HELD)
        big_transactions(b, t, codec, n)
    for t in topics.values():
        roll(b, t)
    pairs = {label: Pair(label, t, copy_partition(partition_dir(kafka.log_dir, t), root / "before" / label))
             for label, t in topics.items()}
    for t in topics.values():
        set_topic_config(b, t, **RELEASED)
    _clean_all(kafka, pairs, root, "after-1", {}, {})
    return pairs


@pytest.fixture(scope="module")
def pairs(kafka, tmp_path_factory):
    return build(kafka, tmp_path_factory.mktemp("streamsapp"))


@pytest.fixture(scope="module")
def dumps(pairs):
    folders = [p.before for p in pairs.values()] + [p.cleans[0].copy for p in pairs.values()]
    files = [f for d in folders for f in sorted(d.glob("*.log"))]
    _, batches = dump(files, "--deep-iteration")
    out: dict[Path, list] = {d: [] for d in folders}
    for b in batches:
        out[Path(b.file).parent].append(b)
    return out


LABELS = ["streams-output", *(f"streams-{s}" for s in APP_STORES), *(f"java-{c}" for c in CODECS),
          "java-appendtime-none", "java-appendtime-lz4", *(f"big-{c}" for c in CODECS)]


def codec_of(label: str) -> str:
    return label.rsplit("-", 1)[1] if label.startswith(("java-", "big-")) else "none"


@pytest.mark.parametrize("label", LABELS)
def test_next_clean_projection_is_what_the_broker_left(pairs, dumps, label):
    p = pairs[label]
    first = p.cleans[0]
    before, after = dumps[p.before], dumps[first.copy]
    inputs = projection_inputs(p.before, first.now_ms)
    assert inputs["upper"] == first.checkpoint
    proj = project_partition(**inputs)
    assert proj.unknown_reason is None, proj.unknown_reason
    codec = codec_of(label)
    tol = TOLERANCE[codec]
    ok = proj.next_clean_bytes == first.bytes if tol == 0 else abs(proj.next_clean_bytes - first.bytes) <= tol * first.bytes
    assert ok, (label, proj.next_clean_bytes, first.bytes, proj.as_dict(),
                [(x.base_offset, x.size, x.records_count, x.delete_horizon_ms) for x in after])
